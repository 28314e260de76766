//! A RabbitMQ server for the `rabbitmq` provider's tests: Debian's
//! `rabbitmq-server` with its management plugin, one per test run, on free
//! loopback ports with everything it writes (database, logs, the Erlang
//! cookie, its private epmd) in a temporary directory. Every test works in
//! virtual hosts and users of its own ([`RabbitMq::name`]), so tests share
//! the server and never each other's objects.
//!
//! The package's own service is left alone: nothing here reads or writes
//! `/var/lib/rabbitmq` or `/etc/rabbitmq`, the node has a name of its own,
//! and every port (AMQP, management HTTP, Erlang distribution, epmd) is one
//! the kernel just handed out as free.
//!
//! The server is stopped, its epmd ended and its directory removed when the
//! test process ends (however it ends): a shell started with it waits for
//! its standard input to close, which happens when this process exits.

use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, ChildStdin};
use std::sync::OnceLock;
use std::time::Duration;

use crate::{shell_quote, spawn_until_stdin_closes};

/// Where Debian installs the server's own start script (the one in
/// `/usr/sbin` insists on running as the package's `rabbitmq` user, in its
/// directories).
const RABBITMQ_SERVER: &str = "/usr/lib/rabbitmq/bin/rabbitmq-server";

/// The user every fresh RabbitMQ has, allowed from loopback only.
pub const ADMIN_USER: &str = "guest";
/// [`ADMIN_USER`]'s password.
pub const ADMIN_PASSWORD: &str = "guest";

/// The test run's RabbitMQ.
pub struct RabbitMq {
    /// The management HTTP API's loopback port.
    pub management_port: u16,
    /// The AMQP listener's loopback port.
    pub amqp_port: u16,
    /// Holds the shell's standard input open while this process lives.
    _stop: ChildStdin,
    /// The shell that stops the server; never waited for: it ends after
    /// this process.
    _shell: Child,
}

/// What one request to the management API answered.
#[derive(Debug)]
pub struct Answer {
    /// The HTTP status.
    pub status: u16,
    /// The body, as text.
    pub body: String,
}

impl Answer {
    /// The body parsed as JSON; panics, with the body, when it is not.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

impl RabbitMq {
    /// The test run's server, started on first use (about ten seconds).
    ///
    /// # Panics
    ///
    /// When RabbitMQ is not installed (the test fails, it does not skip:
    /// `scripts/test.sh` installs it), or when it does not start.
    pub fn shared() -> &'static RabbitMq {
        static SERVER: OnceLock<RabbitMq> = OnceLock::new();
        SERVER.get_or_init(RabbitMq::start)
    }

    fn start() -> RabbitMq {
        assert!(
            Path::new(RABBITMQ_SERVER).exists(),
            "{RABBITMQ_SERVER} is missing: the rabbitmq provider's tests need Debian's rabbitmq-server. \
             Run the tests with scripts/test.sh, which installs it (apt-get install rabbitmq-server)."
        );
        let dir =
            tempfile::Builder::new().prefix("cairn-rabbitmq-").tempdir().expect("a temporary directory can be made");
        // Kept until the server stops: the shell below removes it.
        let dir = dir.keep();
        // Four distinct free ports: all held at once while they are read,
        // then released for the server.
        let held: Vec<TcpListener> =
            (0..4).map(|_| TcpListener::bind("127.0.0.1:0").expect("a loopback port is free")).collect();
        let ports: Vec<u16> =
            held.iter().map(|l| l.local_addr().expect("a bound port has an address").port()).collect();
        drop(held);
        let (amqp_port, management_port, dist_port, epmd_port) = (ports[0], ports[1], ports[2], ports[3]);

        std::fs::write(
            dir.join("rabbitmq.conf"),
            format!(
                "listeners.tcp.1 = 127.0.0.1:{amqp_port}\n\
                 management.tcp.ip = 127.0.0.1\n\
                 management.tcp.port = {management_port}\n"
            ),
        )
        .expect("the server's configuration can be written");
        std::fs::write(dir.join("enabled_plugins"), "[rabbitmq_management].\n")
            .expect("the server's plugin list can be written");

        let text = |p: &Path| p.to_string_lossy().into_owned();
        let env = [
            // The Erlang cookie is written in $HOME.
            ("HOME", text(&dir)),
            ("RABBITMQ_NODENAME", format!("cairn-test-{management_port}@localhost")),
            ("RABBITMQ_CONFIG_FILE", text(&dir.join("rabbitmq.conf"))),
            ("RABBITMQ_ENABLED_PLUGINS_FILE", text(&dir.join("enabled_plugins"))),
            ("RABBITMQ_MNESIA_BASE", text(&dir.join("mnesia"))),
            ("RABBITMQ_LOG_BASE", text(&dir.join("log"))),
            ("RABBITMQ_PLUGINS_EXPAND_DIR", text(&dir.join("plugins-expand"))),
            ("RABBITMQ_DIST_PORT", dist_port.to_string()),
            // The node's distribution listener on loopback only.
            ("RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS", "-kernel inet_dist_use_interface {127,0,0,1}".to_string()),
            // A private epmd on loopback, never the machine's own.
            ("ERL_EPMD_PORT", epmd_port.to_string()),
            ("ERL_EPMD_ADDRESS", "127.0.0.1".to_string()),
        ];
        let exports: String = env.iter().map(|(k, v)| format!("{k}={} ", shell_quote(v))).collect();
        // The start script turns TERM into an orderly stop; epmd, which the
        // node started as a daemon, is ended after it, then the directory
        // goes.
        let script = format!(
            "export {exports}; {server} >{log} 2>&1 & pid=$!; cat >/dev/null; kill -TERM $pid; wait $pid; \
             epmd -kill >/dev/null 2>&1; rm -rf {dir}",
            server = shell_quote(RABBITMQ_SERVER),
            log = shell_quote(&text(&dir.join("server.log"))),
            dir = shell_quote(&text(&dir)),
        );
        let (shell, stop) = spawn_until_stdin_closes(&script);
        let server = RabbitMq { management_port, amqp_port, _stop: stop, _shell: shell };
        // Ready when the management API answers; 600 tries of 100 ms at
        // most (it takes about ten seconds on an idle machine).
        for _ in 0..600 {
            if server
                .try_request("GET", "/api/overview", None, (ADMIN_USER, ADMIN_PASSWORD))
                .is_some_and(|a| a.status == 200)
            {
                return server;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let log = std::fs::read_to_string(dir.join("server.log")).unwrap_or_default();
        panic!("RabbitMQ's management API did not answer on 127.0.0.1:{management_port} within 60 s:\n{log}");
    }

    /// `http://127.0.0.1:PORT`: the management API, as the provider's
    /// `endpoint` and its `http` grant name it.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.management_port)
    }

    /// A name no other test of this run uses, from `test`: for virtual
    /// hosts and users.
    pub fn name(&self, test: &str) -> String {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        format!("{test}-{n}")
    }

    /// A request to the management API as the administrator: how a test
    /// looks at the server, or changes it behind cairn's back. `path` is
    /// `/api/…` with its parts already percent-encoded.
    pub fn request(&self, method: &str, path: &str, body: Option<&serde_json::Value>) -> Answer {
        self.request_as((ADMIN_USER, ADMIN_PASSWORD), method, path, body)
    }

    /// [`RabbitMq::request`] as `user` with `password`.
    pub fn request_as(
        &self,
        credentials: (&str, &str),
        method: &str,
        path: &str,
        body: Option<&serde_json::Value>,
    ) -> Answer {
        let body = body.map(serde_json::Value::to_string);
        self.try_request(method, path, body.as_deref(), credentials)
            .unwrap_or_else(|| panic!("RabbitMQ did not answer {method} {path}"))
    }

    /// The object at `path` (`GET`), or None when the server says 404.
    pub fn get(&self, path: &str) -> Option<serde_json::Value> {
        let answer = self.request("GET", path, None);
        match answer.status {
            200 => Some(answer.json()),
            404 => None,
            status => panic!("GET {path}: {status} {}", answer.body),
        }
    }

    /// One HTTP/1.0 request (so the answer is never chunked), or None when
    /// the server cannot be reached or answers garbage.
    fn try_request(
        &self,
        method: &str,
        path: &str,
        body: Option<&str>,
        (user, password): (&str, &str),
    ) -> Option<Answer> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.management_port)).ok()?;
        stream.set_read_timeout(Some(Duration::from_secs(30))).ok()?;
        let body = body.unwrap_or("");
        let request = format!(
            "{method} {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Basic {auth}\r\n\
             Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n{body}",
            port = self.management_port,
            auth = basic_auth(user, password),
            length = body.len(),
        );
        stream.write_all(request.as_bytes()).ok()?;
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).ok()?;
        let answer = String::from_utf8_lossy(&answer);
        let (head, body) = answer.split_once("\r\n\r\n")?;
        let status = head.split_whitespace().nth(1)?.parse().ok()?;
        Some(Answer { status, body: body.to_string() })
    }
}

/// `user:password` in base64, as an `Authorization: Basic` header carries
/// it.
pub fn basic_auth(user: &str, password: &str) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let bytes = format!("{user}:{password}").into_bytes();
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// `text` percent-encoded for one segment of a management API path: `/`
/// (the default virtual host) is `%2F`.
pub fn segment(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_auth_is_base64_of_user_and_password() {
        assert_eq!(basic_auth("guest", "guest"), "Z3Vlc3Q6Z3Vlc3Q=");
        assert_eq!(basic_auth("a", "b"), "YTpi");
        assert_eq!(basic_auth("ab", "c"), "YWI6Yw==");
    }

    #[test]
    fn segments_encode_slashes() {
        assert_eq!(segment("/"), "%2F");
        assert_eq!(segment("team-a/q.1"), "team-a%2Fq.1");
    }
}
