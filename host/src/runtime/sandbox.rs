//! The sandbox policy of a provider: what it may touch (granted directories,
//! environment variables) and how much it may use (memory, time per call).
//!
//! Deny by default: a provider gets no files, no environment, no arguments,
//! no standard input, no network. Its standard output and error go to the
//! host's log (see `output`), never to the host's own terminal.

use std::path::{Path, PathBuf};
use std::time::Duration;

use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder};

use super::output::GuestOutput;

/// The default memory cap of a provider instance.
pub const DEFAULT_MEMORY_LIMIT: u64 = 512 << 20;

/// The default time limit of one provider call.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// The default limit on the size of one answer (see `answer`).
pub const DEFAULT_MAX_ANSWER_BYTES: u64 = 32 << 20;

/// The deepest nesting a value in an answer may have; also the default.
/// The host's own code recurses over values, so it is not raised.
pub const MAX_ANSWER_DEPTH: usize = super::wire::MAX_DEPTH;

/// The default number of files and directories one instance may hold open
/// (besides its granted directories). Every open file is a descriptor of
/// the cairn process, whose limit all providers and cairn itself share.
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
    ("max_descriptors", "64", "exceeded its limit of … open files"),
    ("max_handles", "10000", "exceeded its limit of … handles"),
    ("max_table_elements", "1048576", "(the growth fails inside the provider, which decides what to do)"),
    ("max_instances", "64", "(the provider cannot be started)"),
    ("max_answer_size", "32 MiB", "returned an answer of …, more than the limit of …"),
    ("max_answer_depth", "256", "returned a malformed value: nested deeper than the limit of …"),
    ("max_log_lines", "1000", "… N lines dropped (a provider call may log at most … lines)"),
];

/// What a provider may touch and use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sandbox {
    /// Directories the provider may read and write.
    pub read_write: Vec<Grant>,
    /// Directories the provider may only read.
    pub read_only: Vec<Grant>,
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
    /// to it that run in parallel.
    pub max_concurrency: usize,
    /// The origins the provider may send HTTP requests to (wasi:http), with
    /// the headers the host adds to them. No raw sockets, no name lookup.
    pub http: Vec<HttpGrant>,
    /// The most files and directories one instance may hold open at once
    /// (`max_descriptors`).
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
        super::http::valid_header(name, value)?;
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
            env: Vec::new(),
            memory_limit: DEFAULT_MEMORY_LIMIT,
            call_timeout: DEFAULT_CALL_TIMEOUT,
            max_answer_bytes: DEFAULT_MAX_ANSWER_BYTES,
            max_answer_depth: MAX_ANSWER_DEPTH,
            max_concurrency: super::pool::MAX_INSTANCES,
            http: Vec::new(),
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
    /// configuration: relative paths are relative to `config_dir`. Read-only
    /// directories must exist; read-write ones are created by
    /// [`Sandbox::create_writable_dirs`] when a run is about to change
    /// things, so that validating or planning leaves no trace. Environment
    /// and limits are the defaults.
    pub fn resolve(config_dir: &Path, read_write: &[String], read_only: &[String]) -> Result<Sandbox, String> {
        let config_dir = std::path::absolute(config_dir)
            .map_err(|e| format!("cannot resolve the configuration directory {}: {e}", config_dir.display()))?;
        let mut sandbox = Sandbox::default();
        for written in read_write {
            sandbox.read_write.push(Grant::resolve(&config_dir, written)?);
        }
        for written in read_only {
            let grant = Grant::resolve(&config_dir, written)?;
            if !grant.host.is_dir() {
                return Err(format!(
                    "the read-only directory {written:?} ({}) does not exist or is not a directory",
                    grant.host.display()
                ));
            }
            sandbox.read_only.push(grant);
        }
        Ok(sandbox)
    }

    /// The WASI context of one instance: the granted directories preopened,
    /// the granted environment, output into `output`, nothing else.
    pub(crate) fn wasi_ctx(&self, output: &GuestOutput) -> Result<WasiCtx, String> {
        let mut builder = WasiCtxBuilder::new();
        builder
            .envs(&self.env)
            .stdout(output.stdout())
            .stderr(output.stderr())
            // No network: every address is denied and the protocols are off.
            .socket_addr_check(|_, _| Box::pin(async { false }))
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false);
        let all: Vec<&Grant> = self.read_write.iter().chain(&self.read_only).collect();
        for (grants, perms, writable) in
            [(&self.read_write, FsPerms::ReadWrite, true), (&self.read_only, FsPerms::ReadOnly, false)]
        {
            // A writable grant that does not exist yet holds nothing to read;
            // it appears once `create_writable_dirs` has made it.
            for grant in grants.iter().filter(|g| !writable || g.host.is_dir()) {
                let opened = open_grant(grant, &all)?;
                builder
                    .preopened_dir(opened.path(), &grant.guest, perms)
                    .map_err(|e| format!("cannot open the granted directory {}: {e}", grant.host.display()))?;
            }
        }
        Ok(builder.build())
    }
}

/// A granted directory opened for wasmtime-wasi, which takes a path. When
/// the grant lies inside another grant, it was opened here without
/// following links, and the path given is that open directory's own
/// (`/proc/self/fd/N`), so that nothing can be swapped in between.
enum OpenedGrant<'a> {
    /// The path as the operator wrote it (resolved): no provider can change it.
    Written(&'a Path),
    /// An open directory, named through procfs (held open until
    /// wasmtime-wasi has opened it again through that name).
    #[cfg(target_os = "linux")]
    Held { _dir: std::fs::File, path: PathBuf },
}

impl OpenedGrant<'_> {
    fn path(&self) -> &Path {
        match self {
            OpenedGrant::Written(path) => path,
            #[cfg(target_os = "linux")]
            OpenedGrant::Held { path, .. } => path,
        }
    }
}

/// Opens `grant`. A grant nested inside another grant (`./out/ro` inside
/// `./out`) has components a provider could have replaced with a symbolic
/// link in an earlier call or run (through a read-write grant, now or
/// then): those components, below the outermost enclosing grant, are
/// opened one at a time without following links, and a link there is an
/// error. The path up to the enclosing grant is the operator's, and is
/// followed as written.
fn open_grant<'a>(grant: &'a Grant, all: &[&Grant]) -> Result<OpenedGrant<'a>, String> {
    let target = normalize(&grant.host);
    let anchor = all
        .iter()
        .map(|g| normalize(&g.host))
        .filter(|outer| target.starts_with(outer) && target != *outer)
        .min_by_key(|outer| outer.components().count());
    let Some(anchor) = anchor else { return Ok(OpenedGrant::Written(&grant.host)) };
    let cannot = |e: std::io::Error| format!("cannot open the granted directory {}: {e}", grant.host.display());
    let mut dir = cap_primitives::fs::open_ambient_dir(&anchor, cap_primitives::ambient_authority()).map_err(cannot)?;
    // `target` is normalised and starts with `anchor`: only plain names remain.
    for name in target.components().skip(anchor.components().count()) {
        dir = cap_primitives::fs::open_dir_nofollow(&dir, Path::new(name.as_os_str())).map_err(|e| {
            format!(
                "cannot open the granted directory {:?} ({}): {:?} is a symbolic link or not a directory ({e}); \
                 a grant inside another grant is opened without following links, since a provider may have \
                 planted one there",
                grant.guest,
                grant.host.display(),
                name.as_os_str(),
            )
        })?;
    }
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let path = PathBuf::from(format!("/proc/self/fd/{}", dir.as_raw_fd()));
        Ok(OpenedGrant::Held { _dir: dir, path })
    }
    // Elsewhere the checked path is handed over as written: a provider
    // running at this moment could still swap a component in between.
    #[cfg(not(target_os = "linux"))]
    {
        drop(dir);
        Ok(OpenedGrant::Written(&grant.host))
    }
}

/// `path` with `.` and `..` resolved lexically: `/a/./b/../c` is `/a/c`.
fn normalize(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
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
    fn a_link_planted_inside_a_grant_does_not_redirect_a_nested_grant() {
        // Issue 11, item 1: a provider with `./out` read-write replaced the
        // nested read-only grant `./out/ro` with a link to a directory
        // outside every grant; the next run must not follow it.
        let config = tempfile::tempdir().unwrap();
        let secret = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(config.path().join("out/ro")).unwrap();
        let sandbox = Sandbox::resolve(config.path(), &["./out".into()], &["./out/ro".into()]).unwrap();
        let output = GuestOutput::new("p".into(), 10);
        assert!(sandbox.wasi_ctx(&output).is_ok(), "the grants open while nothing is planted");
        std::fs::remove_dir(config.path().join("out/ro")).unwrap();
        std::os::unix::fs::symlink(secret.path(), config.path().join("out/ro")).unwrap();
        let err = sandbox.wasi_ctx(&output).err().expect("a planted link is refused");
        assert!(err.contains("\"ro\" is a symbolic link or not a directory"), "{err}");
        // The outer grant itself is the operator's path, and still opens.
        let outer = Sandbox::resolve(config.path(), &["./out".into()], &[]).unwrap();
        assert!(outer.wasi_ctx(&output).is_ok());
    }

    #[test]
    fn a_nested_grant_without_links_opens() {
        let config = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(config.path().join("out/a/b")).unwrap();
        let sandbox = Sandbox::resolve(config.path(), &["./out".into(), "./out/a/./b".into()], &[]).unwrap();
        assert!(sandbox.wasi_ctx(&GuestOutput::new("p".into(), 10)).is_ok());
        assert_eq!(normalize(Path::new("/a/./b/../c")), Path::new("/a/c"));
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
        let defaults = Sandbox::default();
        assert_eq!(defaults.max_descriptors, DEFAULT_MAX_DESCRIPTORS);
        assert_eq!((defaults.max_handles, defaults.max_log_lines), (DEFAULT_MAX_HANDLES, DEFAULT_MAX_LOG_LINES));
    }

    #[test]
    fn empty_grants_are_errors() {
        assert!(Sandbox::resolve(Path::new("/tmp"), &["".into()], &[]).is_err());
    }
}
