//! The sandbox policy of a provider: what it may touch (granted directories,
//! environment variables, HTTP origins, TCP connection targets) and how much
//! it may use (memory, time per call, answer size, handles…).
//!
//! This is the one policy type: the configuration's `sandbox` block is read
//! into it (and checked there, with the block's locations), the engine adds
//! what needs the run (header values from variables, read-only mounts for a
//! plan), and the runtime only maps it to a WASI context (`wasi`) and to
//! wasmtime's limits (`instance`, `pool`).
//!
//! Deny by default: a provider gets no files, no environment, no arguments,
//! no standard input, no network. Its standard output and error go to the
//! host's log (see `output`), never to the host's own terminal.

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The default memory cap of a provider instance.
pub const DEFAULT_MEMORY_LIMIT: u64 = 512 << 20;

/// The default time limit of one provider call.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// The default limit on the size of one answer (see `answer`).
pub const DEFAULT_MAX_ANSWER_BYTES: u64 = 32 << 20;

/// The deepest nesting a value in an answer may have; also the default.
/// The host's own code recurses over values, so it is not raised.
pub const MAX_ANSWER_DEPTH: usize = 256;

/// The default number of instances of one provider, and so of its calls
/// that run at once.
pub const DEFAULT_MAX_CONCURRENCY: usize = 8;

/// The default number of files, directories and sockets one instance may
/// hold open (besides its granted directories). Every open file and socket
/// is a descriptor of the cairn process, whose limit all providers and
/// cairn itself share.
pub const DEFAULT_MAX_DESCRIPTORS: usize = 64;

/// The default number of handles (resources: files, streams, pollables,
/// HTTP requests…) one instance may hold, in the host's table and in
/// wasmtime's. Each costs host memory.
pub const DEFAULT_MAX_HANDLES: usize = 10_000;

/// The default number of elements one WebAssembly table may grow to.
pub const DEFAULT_MAX_TABLE_ELEMENTS: usize = 1 << 20;

/// The default number of core WebAssembly instances one component instance
/// may create. A Rust component has a handful; interpreters (Python,
/// JavaScript) a few dozen.
pub const DEFAULT_MAX_CORE_INSTANCES: usize = 64;

/// The default number of lines one call may log (standard output, standard
/// error and the `log` import together).
pub const DEFAULT_MAX_LOG_LINES: usize = 1000;

/// Every budget of a sandbox: what the `sandbox` block calls it, its
/// default, and what a provider over it is told. The one list SECURITY.md's
/// table and the README follow.
pub const BUDGETS: &[(&str, &str, &str)] = &[
    ("memory", "512 MiB", "exceeded its memory limit of …"),
    ("timeout", "60s", "exceeded its time limit of …"),
    ("max_concurrency", "8", "(calls wait for a free instance)"),
    ("max_descriptors", "64", "exceeded its limit of … open files (… open files and sockets)"),
    ("max_handles", "10000", "exceeded its limit of … handles"),
    ("max_table_elements", "1048576", "(the growth fails inside the provider, which decides what to do)"),
    ("max_instances", "64", "(the provider cannot be started)"),
    (
        "max_answer_size",
        "32 MiB",
        "returned an answer of …, more than the limit of … (as lifted); returned an answer that decodes to more \
         than the limit of … (as decoded)",
    ),
    ("max_answer_depth", "256", "returned a malformed value: nested deeper than the limit of …"),
    ("max_log_lines", "1000", "… N lines dropped (a provider call may log at most … lines)"),
];

/// The most an operator may grant of each budget that has a ceiling: what
/// the `sandbox` block calls it, and the ceiling.
pub const CEILINGS: &[(&str, u64)] = &[
    // Each instance is a whole provider in memory.
    ("max_concurrency", 64),
    // The host's own code recurses over values.
    ("max_answer_depth", MAX_ANSWER_DEPTH as u64),
    // cairn and every provider share the process's descriptors (often 1024 or 4096).
    ("max_descriptors", 1024),
    // wasmtime's own default for a store.
    ("max_handles", 100_000),
    // 10 M elements, 80 MiB of host memory.
    ("max_table_elements", 10_000_000),
    ("max_instances", 1000),
    ("max_log_lines", 1_000_000),
];

/// What a provider may touch and use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sandbox {
    /// Directories the provider may read and write.
    pub read_write: Vec<Grant>,
    /// Directories the provider may only read.
    pub read_only: Vec<Grant>,
    /// The read-write grants of a run that changes nothing (validate,
    /// plan), which [`Sandbox::inspect_only`] mounted read-only (or not at
    /// all, where the directory does not exist yet): kept so that a
    /// provider refused a write there is told why, not told to grant what
    /// is granted.
    pub read_write_held: Vec<Grant>,
    /// Environment variables the provider sees (none by default).
    pub env: Vec<(String, String)>,
    /// The most linear memory one instance may have, in bytes.
    pub memory_limit: u64,
    /// The longest one call may run.
    pub call_timeout: Duration,
    /// The largest answer one call may return, in bytes as the host holds
    /// it (every node and every string counted).
    pub max_answer_bytes: u64,
    /// The deepest a value in an answer may be nested (at most
    /// [`MAX_ANSWER_DEPTH`]).
    pub max_answer_depth: usize,
    /// The most instances of the provider at once, and so the most calls
    /// to it that run in parallel, when the operator set it
    /// (`max_concurrency`); see [`Sandbox::concurrency`]. Only a limit the
    /// operator set also bounds how many of the provider's steps apply runs
    /// at once.
    pub max_concurrency: Option<usize>,
    /// The origins the provider may send HTTP requests to (wasi:http), with
    /// the headers the host adds to them.
    pub http: Vec<HttpGrant>,
    /// The targets the provider may open TCP connections to (wasi:sockets),
    /// each pinned to the addresses the host resolved for it once per run
    /// ([`Sandbox::pin_connect_targets`]). Nothing else: no listening, no
    /// UDP, no name lookup but of a granted name.
    pub connect: Vec<ConnectGrant>,
    /// The most files, directories and sockets one instance may hold open
    /// at once (`max_descriptors`).
    pub max_descriptors: usize,
    /// The most resource handles one instance may hold (`max_handles`).
    pub max_handles: usize,
    /// The most elements one table may grow to (`max_table_elements`).
    pub max_table_elements: usize,
    /// The most core instances one instance may create (`max_instances`).
    pub max_instances: usize,
    /// The most lines one call may log (`max_log_lines`).
    pub max_log_lines: usize,
}

/// Outgoing HTTP granted to one origin: `scheme://host:port`.
#[derive(Clone, PartialEq, Eq)]
pub struct HttpGrant {
    /// `http` or `https`.
    pub scheme: String,
    /// A lower-case host name or address; `*.example.com` matches every
    /// name ending in `.example.com`.
    pub host: String,
    /// The port.
    pub port: u16,
    /// Headers the host sets on every request to this origin, replacing any
    /// the provider set. The provider never sees them.
    pub headers: Vec<(String, String)>,
}

impl HttpGrant {
    /// Whether a request to `scheme://host:port` is granted by this.
    pub fn matches(&self, scheme: &str, host: &str, port: u16) -> bool {
        let host = host.to_ascii_lowercase();
        let host_matches = match self.host.strip_prefix("*.") {
            Some(domain) => host.strip_suffix(domain).is_some_and(|sub| sub.len() > 1 && sub.ends_with('.')),
            None => host == self.host,
        };
        scheme.eq_ignore_ascii_case(&self.scheme) && host_matches && port == self.port
    }

    /// Adds a header the host sets on every granted request; fails when it
    /// cannot be sent as an HTTP header.
    pub fn add_header(&mut self, name: &str, value: &str) -> Result<(), String> {
        valid_header(name, value)?;
        self.headers.push((name.to_ascii_lowercase(), value.to_string()));
        Ok(())
    }

    /// `https://api.example.com:443`.
    pub fn origin(&self) -> String {
        format!("{}://{}:{}", self.scheme, self.host, self.port)
    }
}

/// Header values are secrets: never printed.
impl std::fmt::Debug for HttpGrant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("HttpGrant").field("origin", &self.origin()).field("header_names", &names).finish()
    }
}

/// Outgoing TCP granted to one target, `host:port`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectGrant {
    /// A lower-case host name without a final dot, or an IP address as
    /// Rust writes it (`127.0.0.1`, `::1`: no brackets).
    pub host: String,
    /// The port (never 0).
    pub port: u16,
    /// The addresses the provider may reach the target at.
    pub pinned: Pinned,
}

/// The addresses a connect target is pinned to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pinned {
    /// The target is an address: itself.
    Address(IpAddr),
    /// A name the host has not resolved yet (see
    /// [`Sandbox::pin_connect_targets`]); until then, nothing.
    Pending,
    /// A name, and what the host resolved it to when the run started.
    Resolved(Vec<IpAddr>),
    /// A name the host could not resolve, and why: nothing.
    Failed(String),
}

impl ConnectGrant {
    /// The grant of `written`: `db.internal:5432`, `127.0.0.1:5432` or
    /// `[::1]:5432`. Only that: no scheme, user, path, wildcard or
    /// unspecified address, and a port from 1 to 65535.
    pub fn parse(written: &str) -> Result<ConnectGrant, String> {
        let example = "such as \"db.internal:5432\"";
        if written.contains("://") {
            return Err(format!("{written:?} is a URL; a connect target is host:port, {example}"));
        }
        if written.contains(['/', '@', '?', '#', '*']) || written.trim() != written || written.is_empty() {
            return Err(format!("{written:?} is not host:port, {example}"));
        }
        let (host, port) = if let Some(rest) = written.strip_prefix('[') {
            let (ip, port) = rest.split_once(']').ok_or_else(|| {
                format!("{written:?} opens a bracket it does not close; write an IPv6 target as \"[::1]:5432\"")
            })?;
            let ip: std::net::Ipv6Addr =
                ip.parse().map_err(|_| format!("{ip:?} in {written:?} is not an IPv6 address"))?;
            let port = port.strip_prefix(':').ok_or_else(|| no_port(written))?;
            (IpAddr::V6(ip).to_string(), port)
        } else {
            let (host, port) = written.rsplit_once(':').ok_or_else(|| no_port(written))?;
            if host.contains(':') {
                return Err(format!("{written:?}: an IPv6 address is written in brackets, as \"[::1]:5432\""));
            }
            (host.trim_end_matches('.').to_ascii_lowercase(), port)
        };
        let port: u16 =
            port.parse().map_err(|_| format!("the port {port:?} of {written:?} is not a number from 1 to 65535"))?;
        if port == 0 {
            return Err(format!("the port of {written:?} is 0, which no server listens on; grant the server's port"));
        }
        let pinned = match host.parse::<IpAddr>() {
            Ok(ip) if ip.is_unspecified() || ip.is_multicast() || ip == IpAddr::from([255, 255, 255, 255]) => {
                return Err(format!("{written:?} is not the address of one server"));
            }
            Ok(ip) => Pinned::Address(ip.to_canonical()),
            Err(_) => {
                let label_ok = |l: &str| {
                    !l.is_empty() && !l.starts_with('-') && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                };
                if host.is_empty() || !host.split('.').all(label_ok) {
                    return Err(format!("{host:?} in {written:?} is not a host name or IP address"));
                }
                Pinned::Pending
            }
        };
        Ok(ConnectGrant { host, port, pinned })
    }

    /// The target as it is granted: `db.internal:5432`, `[::1]:5432`.
    pub fn target(&self) -> String {
        match self.host.parse::<IpAddr>() {
            Ok(ip) => SocketAddr::new(ip, self.port).to_string(),
            Err(_) => format!("{}:{}", self.host, self.port),
        }
    }

    /// The addresses the provider may reach the target at.
    pub fn addresses(&self) -> &[IpAddr] {
        match &self.pinned {
            Pinned::Address(ip) => std::slice::from_ref(ip),
            Pinned::Resolved(addresses) => addresses,
            Pinned::Pending | Pinned::Failed(_) => &[],
        }
    }

    /// Whether a connection to `addr` is granted by this.
    pub fn allows(&self, addr: SocketAddr) -> bool {
        addr.port() == self.port && self.addresses().contains(&addr.ip().to_canonical())
    }

    /// Whether this grants the name `name` (as a provider may write it:
    /// any case, a final dot).
    pub fn names(&self, name: &str) -> bool {
        !matches!(self.pinned, Pinned::Address(_)) && name.trim_end_matches('.').eq_ignore_ascii_case(&self.host)
    }
}

/// What a connect target without a port is told.
fn no_port(written: &str) -> String {
    format!("{written:?} has no port; write host:port, such as \"db.internal:5432\"")
}

/// One directory granted to a provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// The directory on the host (absolute).
    pub host: PathBuf,
    /// The name the provider opens it by: `out` for a grant of `./out`, so
    /// that `out/site.txt` in the provider's code means `<config>/out/site.txt`;
    /// the path itself for an absolute grant.
    pub guest: String,
}

impl Default for Sandbox {
    /// Nothing granted, default limits.
    fn default() -> Sandbox {
        Sandbox {
            read_write: Vec::new(),
            read_only: Vec::new(),
            read_write_held: Vec::new(),
            env: Vec::new(),
            memory_limit: DEFAULT_MEMORY_LIMIT,
            call_timeout: DEFAULT_CALL_TIMEOUT,
            max_answer_bytes: DEFAULT_MAX_ANSWER_BYTES,
            max_answer_depth: MAX_ANSWER_DEPTH,
            max_concurrency: None,
            http: Vec::new(),
            connect: Vec::new(),
            max_descriptors: DEFAULT_MAX_DESCRIPTORS,
            max_handles: DEFAULT_MAX_HANDLES,
            max_table_elements: DEFAULT_MAX_TABLE_ELEMENTS,
            max_instances: DEFAULT_MAX_CORE_INSTANCES,
            max_log_lines: DEFAULT_MAX_LOG_LINES,
        }
    }
}

impl Sandbox {
    /// A sandbox with directories granted as the operator wrote them in the
    /// configuration in `config_dir` (see [`Sandbox::grant_read_write`] and
    /// [`Sandbox::grant_read_only`]). Environment and limits are the defaults.
    pub fn resolve(config_dir: &Path, read_write: &[String], read_only: &[String]) -> Result<Sandbox, String> {
        let config_dir = absolute_dir(config_dir)?;
        let mut sandbox = Sandbox::default();
        for written in read_write {
            sandbox.grant_read_write(&config_dir, written)?;
        }
        for written in read_only {
            sandbox.grant_read_only(&config_dir, written)?;
        }
        Ok(sandbox)
    }

    /// Grants the directory written `written` in a configuration in
    /// `config_dir` (absolute; see [`absolute_dir`]) to read and write. It
    /// need not exist: it is created by [`Sandbox::create_writable_dirs`]
    /// when a run is about to change things, so that validating or planning
    /// leaves no trace.
    pub fn grant_read_write(&mut self, config_dir: &Path, written: &str) -> Result<(), String> {
        self.read_write.push(Grant::resolve(config_dir, written)?);
        Ok(())
    }

    /// Grants the directory written `written` in a configuration in
    /// `config_dir` (absolute) to read only. It must exist.
    pub fn grant_read_only(&mut self, config_dir: &Path, written: &str) -> Result<(), String> {
        let grant = Grant::resolve(config_dir, written)?;
        if !grant.host.is_dir() {
            return Err(format!(
                "the read-only directory {written:?} ({}) does not exist or is not a directory",
                grant.host.display()
            ));
        }
        self.read_only.push(grant);
        Ok(())
    }

    /// Passes the environment variable `name` with cairn's own value; one
    /// that cairn does not have is left out, as the provider would see it
    /// unset either way.
    pub fn grant_env(&mut self, name: &str) -> Result<(), String> {
        if name.is_empty() || name.contains('=') || name.contains('\0') {
            return Err(format!("{name:?} is not an environment variable name"));
        }
        if let Ok(value) = std::env::var(name) {
            self.env.push((name.to_string(), value));
        }
        Ok(())
    }

    /// Grants outgoing TCP connections to `written`, `host:port` (an IPv6
    /// address in brackets: `[::1]:5432`). A target granted twice is an
    /// error: the operator meant something else by one of them.
    pub fn grant_connect(&mut self, written: &str) -> Result<(), String> {
        let grant = ConnectGrant::parse(written)?;
        if self.connect.iter().any(|g| g.host == grant.host && g.port == grant.port) {
            return Err(format!("the connect target {} is granted twice", grant.target()));
        }
        self.connect.push(grant);
        Ok(())
    }

    /// Resolves every granted name not resolved yet, and pins it to the
    /// addresses found: the provider reaches the name only at those, for
    /// the whole run, whatever the DNS says later. A name that does not
    /// resolve is pinned to nothing, with the reason, which a refused
    /// connection or lookup tells.
    pub async fn pin_connect_targets(&mut self) {
        for grant in self.connect.iter_mut().filter(|g| g.pinned == Pinned::Pending) {
            grant.pinned = match tokio::net::lookup_host((grant.host.as_str(), grant.port)).await {
                Ok(found) => {
                    let mut addresses: Vec<IpAddr> = Vec::new();
                    for ip in found.map(|a| a.ip().to_canonical()) {
                        if !addresses.contains(&ip) {
                            addresses.push(ip);
                        }
                    }
                    Pinned::Resolved(addresses)
                }
                Err(e) => Pinned::Failed(e.to_string()),
            };
        }
    }

    /// How many instances of the provider may run at once.
    pub fn concurrency(&self) -> usize {
        self.max_concurrency.unwrap_or(DEFAULT_MAX_CONCURRENCY)
    }

    /// The sandbox of a run that changes nothing (validate, plan): what the
    /// operator granted to read and write is mounted read-only where it
    /// exists, and created nowhere, since the operator approved no change yet.
    pub fn inspect_only(&mut self) {
        let writable = std::mem::take(&mut self.read_write);
        self.read_only.extend(writable.iter().filter(|g| g.host.is_dir()).cloned());
        self.read_write_held = writable;
    }
}

/// `config_dir` made absolute, to resolve grants against.
pub fn absolute_dir(config_dir: &Path) -> Result<PathBuf, String> {
    std::path::absolute(config_dir)
        .map_err(|e| format!("cannot resolve the configuration directory {}: {e}", config_dir.display()))
}

/// Whether `name: value` can be sent as an HTTP header.
pub(crate) fn valid_header(name: &str, value: &str) -> Result<(), String> {
    http::HeaderName::try_from(name).map_err(|_| format!("{name:?} is not a valid HTTP header name"))?;
    http::HeaderValue::try_from(value)
        .map_err(|_| format!("the value of header {name:?} is not a valid header value"))?;
    Ok(())
}

impl Sandbox {
    /// Creates the read-write directories that do not exist yet: a grant
    /// of `./out` lets a provider write `out/site.txt` on the first apply.
    pub fn create_writable_dirs(&self) -> Result<(), String> {
        for grant in &self.read_write {
            std::fs::create_dir_all(&grant.host).map_err(|e| {
                format!("cannot create the directory {:?} ({}): {e}", grant.guest, grant.host.display())
            })?;
        }
        Ok(())
    }
}

impl Grant {
    /// The grant of a directory written `written` in a configuration in
    /// `config_dir` (absolute).
    ///
    /// The guest name is how the path was written, less a leading `./` and
    /// trailing slashes: `./out` and `out/` are both `out`, `.` is `.`,
    /// `/srv/www` stays `/srv/www`. wasi-libc resolves a provider's relative
    /// paths against its working directory `/` and matches them against
    /// preopen names with leading `/` and `./` stripped, so `out/site.txt`,
    /// `./out/site.txt` and `/out/site.txt` all land in the `out` grant.
    /// `..` is kept as written: a grant of `../shared` is the operator's
    /// choice, and is visible to the provider as `../shared`.
    pub fn resolve(config_dir: &Path, written: &str) -> Result<Grant, String> {
        if written.trim().is_empty() {
            return Err("an empty directory grant".to_string());
        }
        let host = std::path::absolute(config_dir.join(written))
            .map_err(|e| format!("cannot resolve the directory {written:?}: {e}"))?;
        Ok(Grant { host, guest: guest_name(written) })
    }
}

fn guest_name(written: &str) -> String {
    let mut name = written;
    while let Some(rest) = name.strip_prefix("./") {
        name = rest.trim_start_matches('/');
    }
    let trimmed = name.trim_end_matches('/');
    match trimmed {
        "" if written.starts_with('/') => "/".to_string(),
        "" => ".".to_string(),
        _ => trimmed.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guest_names_are_what_the_operator_wrote() {
        assert_eq!(guest_name("out"), "out");
        assert_eq!(guest_name("./out"), "out");
        assert_eq!(guest_name("./out/"), "out");
        assert_eq!(guest_name(".//out"), "out");
        assert_eq!(guest_name("out/sub"), "out/sub");
        assert_eq!(guest_name("."), ".");
        assert_eq!(guest_name("./"), ".");
        assert_eq!(guest_name("/srv/www/"), "/srv/www");
        assert_eq!(guest_name("/"), "/");
        assert_eq!(guest_name("../shared"), "../shared");
    }

    #[test]
    fn relative_grants_are_under_the_config_dir() {
        let config = tempfile::tempdir().unwrap();
        let sandbox = Sandbox::resolve(config.path(), &["./out".into()], &[]).unwrap();
        let out = &sandbox.read_write[0];
        assert_eq!(out.host, config.path().join("./out"));
        assert!(out.host.is_absolute());
        assert!(!out.host.exists(), "resolving a grant changes nothing on disk");
        sandbox.create_writable_dirs().unwrap();
        assert!(out.host.is_dir(), "read-write dirs are created before an apply");
        assert_eq!(out.guest, "out");
        assert!(sandbox.env.is_empty() && sandbox.read_only.is_empty());
        assert_eq!((sandbox.memory_limit, sandbox.call_timeout), (512 << 20, Duration::from_secs(60)));
    }

    #[test]
    fn absolute_grants_keep_their_path() {
        let config = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let written = elsewhere.path().to_str().unwrap().to_string();
        let sandbox = Sandbox::resolve(config.path(), &[], std::slice::from_ref(&written)).unwrap();
        assert_eq!(sandbox.read_only[0], Grant { host: elsewhere.path().to_path_buf(), guest: written });
    }

    #[test]
    fn read_only_dirs_must_exist() {
        let config = tempfile::tempdir().unwrap();
        let err = Sandbox::resolve(config.path(), &[], &["./data".into()]).unwrap_err();
        assert!(err.contains("\"./data\"") && err.contains("does not exist"), "{err}");
        assert!(!config.path().join("data").exists());
    }

    #[test]
    fn relative_config_dirs_become_absolute() {
        let sandbox = Sandbox::resolve(Path::new("some/config"), &[], &[]).unwrap();
        assert!(sandbox.read_write.is_empty());
        let grant = Grant::resolve(&std::path::absolute("some/config").unwrap(), "../shared").unwrap();
        assert!(grant.host.is_absolute());
        assert_eq!(grant.guest, "../shared");
    }

    #[test]
    fn http_grants_match_their_origin_only() {
        let grant =
            |host: &str| HttpGrant { scheme: "https".into(), host: host.into(), port: 443, headers: Vec::new() };
        let api = grant("api.example.com");
        assert!(api.matches("https", "API.example.com", 443));
        assert!(!api.matches("http", "api.example.com", 443));
        assert!(!api.matches("https", "api.example.com", 8443));
        assert!(!api.matches("https", "api.example.com.evil.net", 443));
        let any = grant("*.example.com");
        assert!(any.matches("https", "a.b.example.com", 443));
        assert!(!any.matches("https", "example.com", 443));
        assert!(!any.matches("https", "evilexample.com", 443));
        let secret = HttpGrant { headers: vec![("authorization".into(), "hunter2".into())], ..api };
        assert!(!format!("{secret:?}").contains("hunter2"));
    }

    #[test]
    fn every_budget_is_documented_with_its_default() {
        let security = include_str!("../../../SECURITY.md");
        let readme = include_str!("../../../README.md");
        for (key, default, _) in BUDGETS {
            let row = format!("| `{key}` | {default}");
            assert!(security.contains(&row), "SECURITY.md has no row {row:?}");
            assert!(readme.contains(&format!("# {key} ")), "the README's sandbox block does not show {key}");
        }
        for (key, ceiling) in CEILINGS {
            let documented = security.lines().find(|l| l.starts_with(&format!("| `{key}` |")));
            let row = documented.unwrap_or_else(|| panic!("SECURITY.md has no row for {key}"));
            assert!(row.contains(&format!("(at most {ceiling})")), "SECURITY.md's row {row:?} misses the ceiling");
        }
        let defaults = Sandbox::default();
        assert_eq!(defaults.max_descriptors, DEFAULT_MAX_DESCRIPTORS);
        assert_eq!((defaults.max_handles, defaults.max_log_lines), (DEFAULT_MAX_HANDLES, DEFAULT_MAX_LOG_LINES));
    }

    #[test]
    fn headers_are_checked() {
        assert!(valid_header("Authorization", "Bearer x").is_ok());
        assert!(valid_header("bad header", "x").is_err());
        assert!(valid_header("x", "line\nbreak").is_err());
    }

    #[test]
    fn connect_targets_are_host_and_port() {
        let grant = ConnectGrant::parse("DB.Internal.:5432").unwrap();
        assert_eq!((grant.host.as_str(), grant.port, &grant.pinned), ("db.internal", 5432, &Pinned::Pending));
        assert_eq!(grant.target(), "db.internal:5432");
        assert!(grant.names("db.internal.") && grant.names("DB.INTERNAL") && !grant.names("db"));
        assert!(grant.addresses().is_empty(), "a name not resolved yet reaches nothing");
        let v6 = ConnectGrant::parse("[::1]:5432").unwrap();
        assert_eq!((v6.host.as_str(), v6.target()), ("::1", "[::1]:5432".to_string()));
        assert!(v6.allows("[::1]:5432".parse().unwrap()) && !v6.allows("[::1]:5433".parse().unwrap()));
        let v4 = ConnectGrant::parse("127.0.0.1:5432").unwrap();
        assert!(v4.allows("127.0.0.1:5432".parse().unwrap()));
        assert!(v4.allows("[::ffff:127.0.0.1]:5432".parse().unwrap()), "an IPv4-mapped address is the address");
        assert!(!v4.allows("127.0.0.2:5432".parse().unwrap()) && !v4.names("127.0.0.1"));
        for (bad, why) in [
            ("db.internal", "has no port"),
            ("db.internal:", "is not a number"),
            ("db.internal:0", "is 0"),
            ("db.internal:65536", "is not a number"),
            ("postgres://db.internal:5432", "is a URL"),
            ("db.internal:5432/app", "is not host:port"),
            ("*.internal:5432", "is not host:port"),
            ("::1:5432", "in brackets"),
            ("[::1]", "has no port"),
            ("[db]:5432", "is not an IPv6 address"),
            ("0.0.0.0:5432", "not the address of one server"),
            ("db_1:5432", "is not a host name"),
            ("", "is not host:port"),
        ] {
            let err = ConnectGrant::parse(bad).unwrap_err();
            assert!(err.contains(why), "{bad:?}: {err}");
        }
        let mut sandbox = Sandbox::default();
        sandbox.grant_connect("localhost:5432").unwrap();
        let err = sandbox.grant_connect("LOCALHOST:5432").unwrap_err();
        assert_eq!(err, "the connect target localhost:5432 is granted twice");
        sandbox.grant_connect("localhost:5433").unwrap();
    }

    #[tokio::test]
    async fn granted_names_are_pinned_once() {
        let mut sandbox = Sandbox::default();
        sandbox.grant_connect("localhost:5432").unwrap();
        sandbox.grant_connect("127.0.0.1:5433").unwrap();
        sandbox.grant_connect("cairn-test.invalid:5432").unwrap();
        sandbox.pin_connect_targets().await;
        let localhost = &sandbox.connect[0];
        assert!(localhost.addresses().contains(&IpAddr::from([127, 0, 0, 1])), "{localhost:?}");
        assert!(localhost.allows("127.0.0.1:5432".parse().unwrap()));
        assert_eq!(sandbox.connect[1].pinned, Pinned::Address(IpAddr::from([127, 0, 0, 1])));
        assert!(matches!(sandbox.connect[2].pinned, Pinned::Failed(_)), "{:?}", sandbox.connect[2]);
        // Pinned stays pinned: a second pass resolves nothing again.
        let before = sandbox.clone();
        sandbox.connect[0].pinned = Pinned::Resolved(vec![IpAddr::from([10, 0, 0, 1])]);
        sandbox.pin_connect_targets().await;
        assert_eq!(sandbox.connect[0].addresses(), [IpAddr::from([10, 0, 0, 1])]);
        assert_eq!(sandbox.connect[1..], before.connect[1..]);
    }

    #[test]
    fn empty_grants_are_errors() {
        assert!(Sandbox::resolve(Path::new("/tmp"), &["".into()], &[]).is_err());
    }
}
