//! Test support: components built from source on demand, once per process,
//! the same way `build.rs` builds the bundled providers. Used by the
//! runtime's own tests and by the end-to-end tests in `tests/`.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use super::wasm_build;

/// Builds the provider crate `package` of this workspace (e.g.
/// `cairn-provider-misbehave`) into a component and returns the `.wasm`'s
/// path. Builds once per process; later calls return the same path.
///
/// # Panics
///
/// When the build fails, with the nested cargo's output: this is for tests.
pub fn build_component(package: &str) -> PathBuf {
    static BUILT: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
    // Holding the lock during the build makes concurrent tests wait for
    // one build instead of racing several.
    let mut built = BUILT.get_or_init(Mutex::default).lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(path) = built.get(package) {
        return path.clone();
    }
    let cargo = std::env::var_os("CARGO").map_or_else(|| PathBuf::from(env!("CARGO")), PathBuf::from);
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the host crate is in a workspace");
    // Where build.rs builds the bundled providers: sharing it shares their
    // compiled dependencies.
    let target_dir = Path::new(env!("CAIRN_WASM_TARGET_DIR"));
    let path = wasm_build::build_component(&cargo, workspace, target_dir, package).unwrap_or_else(|e| panic!("{e}"));
    built.insert(package.to_string(), path.clone());
    path
}

/// A plain HTTP server on 127.0.0.1 for sandbox tests: it answers `hello` to
/// every request, one at a time, and keeps the head of each request it saw.
pub struct HttpServer {
    /// The port it listens on.
    pub port: u16,
    /// The head (request line and headers) of every request, in order.
    pub requests: Arc<Mutex<Vec<String>>>,
}

impl HttpServer {
    /// Starts the server on a thread that lives as long as the process.
    pub fn start() -> HttpServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port is free");
        let port = listener.local_addr().expect("a bound listener has an address").port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&requests);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                    head.push(byte[0]);
                }
                seen.lock().unwrap_or_else(PoisonError::into_inner).push(String::from_utf8_lossy(&head).into_owned());
                let _ = stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\nconnection: close\r\n\r\nhello");
            }
        });
        HttpServer { port, requests }
    }
}
