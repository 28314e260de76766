//! The JavaScript SDK and the `http` provider written with it
//! (`providers/sdk-js`, `providers/http`), built from source with
//! componentize-js and driven through the real binary against a loopback
//! server: the host checks its answers exactly as it checks a Rust
//! provider's.
//!
//! `http` has only a data source, which has no update or replacement of its
//! own: it is read again on every plan. What a changed answer does is shown
//! through a `local_file` that copies the response (replaced when the
//! answer changes), and a changed URL is simply read anew.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::process::Command;
use std::sync::{Arc, Mutex};

use cairn_e2e::Workdir;
use cairn_e2e::languages::{Lang, lang_component};
use cairn_e2e::repo_root;

/// One request as the server saw it.
#[derive(Clone, Debug)]
struct Seen {
    /// `METHOD /path`.
    line: String,
    /// Header lines, names lowercased.
    headers: Vec<String>,
    body: String,
}

/// A loopback HTTP server whose answer a test can change: `GET /echo`-style
/// paths are answered with the current `body` (status 200, with an `x-served-by`
/// header), and every request is recorded.
struct Server {
    port: u16,
    body: Arc<Mutex<String>>,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Server {
    fn start(body: &str) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let answer = Arc::new(Mutex::new(body.to_string()));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (answer2, seen2) = (Arc::clone(&answer), Arc::clone(&seen));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let mut reader = BufReader::new(stream);
                let mut line = String::new();
                if reader.read_line(&mut line).is_err() {
                    continue;
                }
                let mut headers = Vec::new();
                let mut length = 0;
                loop {
                    let mut h = String::new();
                    if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                        break;
                    }
                    let h = h.trim_end().to_string();
                    let (name, value) = h.split_once(':').unwrap_or((&h, ""));
                    if name.eq_ignore_ascii_case("content-length") {
                        length = value.trim().parse().unwrap_or(0);
                    }
                    headers.push(format!("{}:{value}", name.to_ascii_lowercase()));
                }
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                let line = line.split(' ').take(2).collect::<Vec<_>>().join(" ");
                seen2.lock().unwrap().push(Seen { line, headers, body: String::from_utf8_lossy(&body).into_owned() });
                let text = answer2.lock().unwrap().clone();
                let response = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\nx-served-by: loopback\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
                    text.len()
                );
                let _ = reader.get_mut().write_all(response.as_bytes());
            }
        });
        Server { port, body: answer, seen }
    }

    fn answer(&self, body: &str) {
        *self.body.lock().unwrap() = body.to_string();
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

fn config(port: u16) -> String {
    format!(
        r#"
terraform {{
  required_providers {{
    http = {{ source = "./http.wasm" }}
  }}
}}

provider "http" {{
  sandbox {{
    http {{
      url = "http://127.0.0.1:{port}"
    }}
  }}
}}

provider "local" {{
  sandbox {{
    read_write = ["./out"]
  }}
}}

variable "page" {{
  default = "page"
}}

data "http" "page" {{
  url             = "http://127.0.0.1:{port}/${{var.page}}"
  request_headers = {{ Accept = "text/plain" }}
}}

data "http" "post" {{
  url          = "http://127.0.0.1:{port}/echo"
  method       = "POST"
  request_body = "ping"
}}

resource "local_file" "copy" {{
  filename = "out/page.txt"
  content  = data.http.page.response_body
}}

output "status" {{
  value = data.http.page.status_code
}}

output "served_by" {{
  value = data.http.post.response_headers["x-served-by"]
}}
"#
    )
}

fn workdir(port: u16) -> Workdir {
    let w = Workdir::new();
    std::fs::copy(lang_component(Lang::JavaScript, "http"), w.path().join("http.wasm")).unwrap();
    w.write("out/.keep", "");
    w.write("main.tf", &config(port));
    w
}

#[test]
fn http_data_source_reads_through_the_grant_and_follows_the_server() {
    let server = Server::start("hello");
    let w = workdir(server.port);

    // The build wrote the provider's name and version into the file.
    let run = w.cairn_here(&["providers", "inspect", "http.wasm"]).success();
    assert!(run.stdout.contains("provider \"http\"\n") && run.stdout.contains("  version: 0.1.0\n"), "{}", run.all());

    w.cairn(&["validate"]).success();
    let plan = w.cairn(&["plan"]).success();
    assert!(plan.stdout.contains("Plan: 1 to add, 0 to change, 0 to destroy."), "{}", plan.all());

    let run = w.cairn(&["apply", "-auto-approve"]).success();
    assert!(run.stdout.contains("status = 200"), "{}", run.all());
    assert!(run.stdout.contains("served_by = \"loopback\""), "{}", run.all());
    assert_eq!(w.read("out/page.txt"), "hello");
    let page = server.seen().into_iter().find(|s| s.line == "GET /page").expect("the page was requested");
    assert!(page.headers.iter().any(|h| h == "accept: text/plain"), "{page:?}");
    let post = server.seen().into_iter().find(|s| s.line == "POST /echo").expect("the POST was sent");
    assert_eq!(post.body, "ping");

    let again = w.cairn(&["plan", "-detailed-exitcode"]);
    assert_eq!(again.code, 0, "a second plan must find nothing to do:\n{}", again.all());
    assert!(again.stdout.contains("No changes."), "{}", again.all());

    // The server's answer changes: the data source reads the new body, and
    // the file that copies it is replaced.
    server.answer("hello again");
    let plan = w.cairn(&["plan", "-detailed-exitcode"]);
    assert_eq!(plan.code, 2, "{}", plan.all());
    assert!(plan.stdout.contains("# local_file.copy must be replaced"), "{}", plan.all());
    w.cairn(&["apply", "-auto-approve"]).success();
    assert_eq!(w.read("out/page.txt"), "hello again");

    // A different URL is simply read anew.
    let requests = server.seen().len();
    w.cairn(&["apply", "-auto-approve", "-var", "page=other"]).success();
    assert!(server.seen()[requests..].iter().any(|s| s.line == "GET /other"), "{:?}", server.seen());

    let run = w.cairn(&["destroy", "-auto-approve", "-var", "page=other"]).success();
    assert!(run.stdout.contains("Destroy complete! Resources: 1 destroyed."), "{}", run.all());
    assert!(!w.exists("out/page.txt"));
}

#[test]
fn http_data_source_outside_the_grant_fails_saying_what_to_grant() {
    let server = Server::start("hello");
    let ungranted = TcpListener::bind("127.0.0.1:0").unwrap();
    let other = ungranted.local_addr().unwrap().port();
    let w = workdir(server.port);
    w.write("main.tf", &config(server.port).replace(&format!("{}/${{var.page}}", server.port), &format!("{other}/x")));
    let run = w.cairn(&["plan"]).failure();
    assert!(
        run.stderr.contains(&format!("data.http.page: Request to http://127.0.0.1:{other}/x failed")),
        "{}",
        run.all()
    );
    assert!(run.stderr.contains(&format!("http {{ url = \"http://127.0.0.1:{other}\" }}")), "{}", run.all());
    // Issue 32, item 6: cairn says what its sandbox refused, whatever the
    // provider made of it ("NetworkError when attempting to fetch resource").
    let denied =
        format!("data.http.page: the sandbox denied: HTTP request to http://127.0.0.1:{other} (granted HTTP: ");
    assert!(run.stderr.contains(&denied), "{}", run.all());
    ungranted.set_nonblocking(true).unwrap();
    assert!(ungranted.accept().is_err(), "the ungranted listener saw a connection");

    w.write("main.tf", &config(server.port).replace("method       = \"POST\"", "method       = \"BREW\""));
    let run = w.cairn(&["plan"]).failure();
    assert!(run.stderr.contains("data.http.post: Unsupported method \"BREW\""), "{}", run.all());
}

/// The SDK's own unit tests (`providers/sdk-js/test`), run by Node.
#[test]
fn js_sdk_unit_tests_pass() {
    let root = repo_root();
    let out = Command::new("node")
        .current_dir(&root)
        .args(["--test", "providers/sdk-js/test/"])
        .output()
        .unwrap_or_else(|e| panic!("cannot run node (it comes with npm, which scripts/test.sh needs): {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the JavaScript SDK's unit tests failed:\n{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("# fail 0") && !stdout.contains("# pass 0"), "{stdout}");
}

/// What `jstoken` (`providers/testing/jstoken`) POSTed to its store: `(path,
/// body)` in the order it came.
#[derive(Clone, Default)]
struct TokenStore {
    posts: Arc<Mutex<Vec<(String, String)>>>,
}

impl TokenStore {
    /// Starts the store on a loopback port; returns it and the port.
    fn start() -> (TokenStore, u16) {
        let store = TokenStore::default();
        let posts = Arc::clone(&store.posts);
        let port = cairn_e2e::loopback_http::serve_json(move |request| {
            posts.lock().unwrap().push((request.path, request.body));
            ("200 OK", "{}".to_string())
        });
        (store, port)
    }

    /// The bodies POSTed to `path`, in order.
    fn bodies(&self, path: &str) -> Vec<String> {
        self.posts.lock().unwrap().iter().filter(|(p, _)| p == path).map(|(_, b)| b.clone()).collect()
    }
}

/// An ephemeral `jstoken_token` whose value reaches a write-only attribute
/// of `jstoken_sink.app`. (Not a provider block: cairn does not take
/// ephemeral resources there yet.)
fn token_config(port: u16) -> String {
    format!(
        r#"
terraform {{
  required_providers {{
    jstoken = {{ source = "./jstoken.wasm" }}
  }}
}}

provider "jstoken" {{
  store = "http://127.0.0.1:{port}"
  sandbox {{
    http {{
      url = "http://127.0.0.1:{port}"
    }}
  }}
}}

variable "audience" {{
  default = "db"
}}

ephemeral "jstoken_token" "db" {{
  audience = var.audience
}}

resource "jstoken_sink" "app" {{
  name   = "app"
  secret = ephemeral.jstoken_token.db.value
}}
"#
    )
}

fn token_workdir(port: u16) -> Workdir {
    let w = Workdir::new();
    std::fs::copy(lang_component(Lang::JavaScript, "testing/jstoken"), w.path().join("jstoken.wasm")).unwrap();
    w.write("main.tf", &token_config(port));
    w
}

#[test]
fn js_ephemeral_token_is_opened_renewed_closed_and_stored_nowhere() {
    let (store, port) = TokenStore::start();
    let w = token_workdir(port);
    let info = [("CAIRN_LOG", "info")];
    let plan = w.cairn_here_env(&["plan", "-json", "-out=p.bin"], &info).success();
    // Opened for the plan (renewed at once, as it asked), closed after it.
    assert_eq!(store.bodies("/events"), ["open db", "renew db 1", "close db 1"], "{}", plan.all());
    let apply = w.cairn_here_env(&["apply", "-json", "p.bin"], &info).success();
    assert_eq!(
        store.bodies("/events"),
        ["open db", "renew db 1", "close db 1", "open db", "renew db 1", "close db 1"],
        "{}",
        apply.all()
    );

    // Each run made a token of its own; the apply's reached the write-only
    // attribute.
    let values = store.bodies("/values");
    assert_eq!(values.len(), 2, "{values:?}");
    assert_ne!(values[0], values[1]);
    let token = &values[1];
    assert_eq!(
        store.bodies("/sink/app"),
        std::slice::from_ref(token),
        "the write-only attribute got the apply's token"
    );
    let app = w.attributes("jstoken_sink.app");
    assert_eq!(app["secret_length"], token.len(), "{app:#}");
    assert!(app["secret"].is_null(), "a write-only attribute is stored null: {app:#}");

    // Every token starts with `jstok-`: none of the plan's or the apply's
    // is there.
    w.assert_stored_nowhere("jstok-", &plan, &apply, "p.bin");
    w.cairn(&["destroy", "-auto-approve"]).success();
    assert!(w.addresses().is_empty());
    let events = store.bodies("/events");
    assert_eq!(
        events.iter().filter(|e| e.starts_with("open")).count(),
        events.iter().filter(|e| e.starts_with("close")).count(),
        "every open token was closed: {events:?}"
    );
}

#[test]
fn js_ephemeral_errors_are_diagnostics_at_the_block() {
    let (store, port) = TokenStore::start();
    let w = token_workdir(port);
    // The provider's validateEphemeral, on the attribute.
    let run = w.cairn(&["plan", "-var", "audience="]).failure();
    assert!(run.stderr.contains("`audience` must not be empty"), "{}", run.all());
    assert!(run.stderr.contains("ephemeral.jstoken_token.db"), "{}", run.all());
    // A throw in open: an error naming it, nothing opened to close, nothing
    // applied.
    let run = w.cairn(&["apply", "-auto-approve", "-var", "audience=unreachable"]).failure();
    assert!(run.stderr.contains("Provider bug: Error: the token service is unreachable"), "{}", run.all());
    assert!(!store.bodies("/events").iter().any(|e| e.starts_with("close")), "{}", run.all());
    assert!(store.bodies("/sink/app").is_empty(), "{}", run.all());
}
