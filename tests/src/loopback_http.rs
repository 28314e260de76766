//! A small HTTP/1.1 server on a loopback port, for the tests of providers
//! that manage something over HTTP (`httpkv`, the Terraform framework
//! provider `tfhttp`): the test gives the answer to each request; this
//! module reads the requests and writes the answers.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};

/// One request as the server received it.
#[derive(Clone, Debug)]
pub struct Request {
    /// `GET`, `PUT`, …
    pub method: String,
    /// The request target, `/items/alpha`.
    pub path: String,
    /// The headers in the order they came, names as sent.
    pub headers: Vec<(String, String)>,
    /// The body, as text.
    pub body: String,
}

impl Request {
    /// The value of the header `name` (any case), if it was sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// Starts the server on a free loopback port and returns the port. Each
/// connection carries one request; `answer` gives its status line (`"200
/// OK"`) and JSON body, and the answer closes the connection. The server
/// lives as long as the test process.
pub fn serve_json<F>(answer: F) -> u16
where
    F: Fn(Request) -> (&'static str, String) + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port is free");
    let port = listener.local_addr().expect("a bound listener has an address").port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            answer_one(stream, &answer);
        }
    });
    port
}

fn answer_one(stream: TcpStream, answer: &impl Fn(Request) -> (&'static str, String)) {
    let mut reader = BufReader::new(stream);
    let Some(request) = read_request(&mut reader) else { return };
    let (status, body) = answer(request);
    let response = format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = reader.get_mut().write_all(response.as_bytes());
}

/// Reads the request line, the headers and a body of `content-length`
/// bytes; `None` when the client went away first.
fn read_request(reader: &mut BufReader<TcpStream>) -> Option<Request> {
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split(' ');
    let (method, path) = (parts.next().unwrap_or("").to_string(), parts.next().unwrap_or("").to_string());
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
            break;
        }
        let (name, value) = h.trim_end().split_once(':').unwrap_or((h.trim_end(), ""));
        headers.push((name.to_string(), value.trim().to_string()));
    }
    let mut request = Request { method, path, headers, body: String::new() };
    let length = request.header("content-length").and_then(|v| v.parse().ok()).unwrap_or(0);
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
    request.body = String::from_utf8_lossy(&body).into_owned();
    Some(request)
}
