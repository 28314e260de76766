//! What the sandbox refused a provider during one call, told as what was
//! asked, what is granted, and the `sandbox` line that would grant it.
//!
//! A provider refused something sees an error code (`ENOENT`, `EPERM`,
//! `HttpRequestDenied`) and fails with a message about that code
//! (`FileNotFoundError: [Errno 44]`), which reads as a bug in the provider.
//! The host knows better: it records every refusal of the call in progress
//! in the instance's [`Denials`] (an instance runs one call at a time, so no
//! call is told of another's), and when that call fails — error diagnostics
//! in its answer, or a trap — the refusals are added to its error
//! (`instance`): `the sandbox denied: write to out2/x.txt (granted
//! read-write: ./out)`, with `sandbox { read_write = ["./out2"] }`.
//!
//! What reaches the host, and so is recorded:
//! - a path outside every grant. wasi-libc resolves a provider's paths
//!   against its preopened directories and refuses one that matches none
//!   itself, without asking the host; so every instance also gets an empty
//!   root preopen ([`ROOT`], see `wasi`), which every such path matches, and
//!   the host refuses it there ([`Denials::refuse_outside`]) with the same
//!   "no such file" the provider saw before;
//! - a write into a read-only grant (wasmtime-wasi's check: "not permitted");
//! - a path that leads out of its grant through `..` or a symbolic link
//!   (cap-std's check: "not permitted");
//! - an HTTP request to an origin not granted (`http`);
//! - a TCP connection to an address not granted, a bind, a listen, a UDP
//!   socket, a lookup of a name not granted (`sockets`).
//!
//! What does not: an environment variable that was not granted. The provider
//! is handed its whole (granted) environment and looks names up in its own
//! copy, so the host never learns which name it wanted.

use std::collections::HashMap;
use std::path::{Component, Path};

use wasmtime_wasi::p2::bindings::filesystem::types::ErrorCode;

use super::bindings::cairn::provider::types as wit;
use super::bindings::exports::cairn::provider::provider as api;
use super::sandbox::{ConnectGrant, Grant, Pinned, Sandbox};
use super::sockets::Refused;
use crate::provider::CallError;

/// The guest name of the root preopen that stands for everything outside
/// the grants.
pub(crate) const ROOT: &str = "/";

/// The most refusals one call records; the others are only counted.
const MAX_RECORDED: usize = 8;

/// How a provider meant to use a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// Read a file, or its metadata.
    Read,
    /// List a directory.
    List,
    /// Create, change or remove a file.
    Write,
    /// Create a directory.
    CreateDir,
}

impl Access {
    fn verb(self) -> &'static str {
        match self {
            Access::Read => "read",
            Access::List => "list",
            Access::Write => "write to",
            Access::CreateDir => "create the directory",
        }
    }

    fn writes(self) -> bool {
        matches!(self, Access::Write | Access::CreateDir)
    }

    /// The `sandbox` attribute that grants this access.
    fn attribute(self) -> &'static str {
        if self.writes() { "read_write" } else { "read_only" }
    }

    /// Whether a grant for this access to a path names the path itself (a
    /// directory) rather than the directory it is in. cairn creates a
    /// read-write grant's directory itself, so a directory the provider
    /// wanted to create is the one to grant.
    fn names_a_directory(self) -> bool {
        matches!(self, Access::List | Access::CreateDir)
    }
}

/// One thing the sandbox refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Denial {
    /// The path asked for and how, as shown; none for an HTTP request.
    on: Option<(Access, String)>,
    /// What was asked: `write to out2/x.txt`, `HTTP request to http://…`.
    asked: String,
    /// What is granted, or why what is granted did not allow it.
    granted: String,
    /// How to grant it: a sentence ending in the `sandbox { … }` line.
    remedy: Option<String>,
}

impl Denial {
    /// `the sandbox denied: write to out2/x.txt (granted read-write: ./out)`.
    fn summary(&self) -> String {
        format!("the sandbox denied: {} ({})", self.asked, self.granted)
    }
}

/// A directory descriptor the provider holds.
#[derive(Debug, Clone)]
struct Dir {
    /// The path the provider reaches it by: `out`, `out/sub`, `/srv/www`;
    /// empty for the root preopen.
    path: String,
    /// The grant it is in, by its guest name; `None` for the root preopen.
    grant: Option<String>,
}

/// What the sandbox refused the call in progress, and what the refusals are
/// told against: the grants, and the directories the provider holds.
#[derive(Debug)]
pub(crate) struct Denials {
    /// Directories granted read and write, as guest names.
    read_write: Vec<String>,
    /// Directories granted read only (those below excepted).
    read_only: Vec<String>,
    /// Read-write grants held read-only by a run that changes nothing.
    held: Vec<String>,
    /// The granted HTTP origins.
    http: Vec<String>,
    /// The granted connect targets, with what they are pinned to.
    connect: Vec<ConnectGrant>,
    /// Whether the instance has the root preopen.
    watches_root: bool,
    /// Every directory descriptor the provider was given or opened, by its
    /// handle. Only `open-at` and `get-directories` make descriptors, and
    /// both set the entry of each one they make, so the entry of a live
    /// descriptor is never one a reused handle left behind.
    dirs: HashMap<u32, Dir>,
    recorded: Vec<Denial>,
    /// Refusals in this call besides those recorded (repeats of a recorded
    /// one aside).
    unrecorded: usize,
}

/// Whether an instance in `sandbox` gets the root preopen. Not when a grant
/// is itself named `/` or `.`: wasi-libc then resolves every path outside
/// the other grants in that one, and the root preopen would never be asked.
pub(crate) fn watches_root(sandbox: &Sandbox) -> bool {
    !sandbox.read_write.iter().chain(&sandbox.read_only).any(|g| g.guest == "/" || g.guest == ".")
}

impl Denials {
    /// Nothing denied yet, against the grants of `sandbox`.
    pub(crate) fn new(sandbox: &Sandbox) -> Denials {
        let names = |grants: &[Grant]| grants.iter().map(|g| g.guest.clone()).collect::<Vec<_>>();
        let held = names(&sandbox.read_write_held);
        let mut read_write = names(&sandbox.read_write);
        read_write.extend(held.iter().cloned());
        let read_only = names(&sandbox.read_only).into_iter().filter(|g| !held.contains(g)).collect();
        Denials {
            read_write,
            read_only,
            held,
            http: sandbox.http.iter().map(|g| g.origin()).collect(),
            connect: sandbox.connect.clone(),
            watches_root: watches_root(sandbox),
            dirs: HashMap::new(),
            recorded: Vec::new(),
            unrecorded: 0,
        }
    }

    /// Forgets the refusals of the last call: a new one starts.
    pub(crate) fn start_call(&mut self) {
        self.recorded.clear();
        self.unrecorded = 0;
    }

    /// The provider was handed the preopened directory `name` as `handle`.
    pub(crate) fn preopened(&mut self, handle: u32, name: &str) {
        let dir = if self.watches_root && name == ROOT {
            Dir { path: String::new(), grant: None }
        } else {
            Dir { path: name.to_string(), grant: Some(name.to_string()) }
        };
        self.dirs.insert(handle, dir);
    }

    /// The provider opened `path` under the directory `under` as `handle`.
    pub(crate) fn opened(&mut self, handle: u32, under: u32, path: &str, is_dir: bool) {
        match self.dirs.get(&under).filter(|_| is_dir) {
            Some(parent) => {
                let dir = Dir { path: join(&parent.path, path), grant: parent.grant.clone() };
                self.dirs.insert(handle, dir);
            }
            None => {
                self.dirs.remove(&handle);
            }
        }
    }

    /// Refuses (and records) `access` to `path` under the directory
    /// `under` when that is the root preopen: the path is outside every
    /// grant. The provider is told "no such file", as wasi-libc told it
    /// when there was no root preopen. A look at the root itself is not
    /// recorded: interpreters look at their working directory (`/`) as
    /// they start (Python does), and no grant is about it.
    pub(crate) fn refuse_outside(&mut self, under: u32, path: &str, access: Access) -> Option<ErrorCode> {
        let dir = self.dirs.get(&under)?;
        if dir.grant.is_some() {
            return None;
        }
        let joined = join(&dir.path, path);
        if normalized(&joined).is_some_and(|p| p.is_empty()) {
            return Some(ErrorCode::NoEntry);
        }
        let shown = shown_outside(&joined);
        let denial = self.outside(access, &shown);
        self.record(denial);
        Some(ErrorCode::NoEntry)
    }

    /// Records what the call of `access` to `path` under `under` met, if
    /// the sandbox refused it: "not permitted" is wasmtime-wasi's answer to
    /// a write into a read-only grant (`writable` is false), and cap-std's
    /// to a path that leads out of its grant.
    pub(crate) fn after(&mut self, under: u32, path: &str, access: Access, writable: bool, error: Option<ErrorCode>) {
        if error != Some(ErrorCode::NotPermitted) {
            return;
        }
        let Some(Dir { path: dir_path, grant: Some(grant) }) = self.dirs.get(&under) else { return };
        let (shown, grant) = (join(dir_path, path), grant.clone());
        let denial = if access.writes() && !writable {
            self.read_only_grant(access, &shown, &grant)
        } else {
            self.escaped(access, &shown, &grant)
        };
        self.record(denial);
    }

    /// Records an HTTP request to `origin` (`scheme://host:port`) refused.
    pub(crate) fn http_refused(&mut self, origin: &str) {
        let granted = match self.http.as_slice() {
            [] => "no HTTP origin is granted".to_string(),
            origins => format!("granted HTTP: {}", origins.join(", ")),
        };
        self.record(Denial {
            on: None,
            asked: format!("HTTP request to {origin}"),
            granted,
            remedy: Some(format!(
                "To grant it, add to the provider's block: sandbox {{ http {{ url = {origin:?} }} }}"
            )),
        });
    }

    /// Records what the sandbox refused the provider's sockets.
    pub(crate) fn socket_refused(&mut self, refused: &Refused) {
        let no_server = "a provider may only connect out; it may not bind, listen or accept".to_string();
        let denial = match refused {
            Refused::Connect(addr) => Denial {
                on: None,
                asked: format!("connect to {addr}"),
                granted: self.granted_targets(),
                remedy: Some(self.connect_remedy(*addr)),
            },
            Refused::Bind(addr) => {
                Denial { on: None, asked: format!("bind to {addr}"), granted: no_server, remedy: None }
            }
            Refused::Listen => {
                Denial { on: None, asked: "listen for connections".to_string(), granted: no_server, remedy: None }
            }
            Refused::Udp(family) => Denial {
                on: None,
                asked: format!("open a UDP socket ({family})"),
                granted: "UDP is never granted; a provider may only open TCP connections to granted targets"
                    .to_string(),
                remedy: None,
            },
            Refused::Lookup(name) => self.lookup_refused(name),
        };
        self.record(denial);
    }

    /// A lookup of `name`: not granted, or granted and not resolved.
    fn lookup_refused(&self, name: &str) -> Denial {
        let asked = format!("look up the name {name}");
        let unresolved = self.connect.iter().find(|g| g.names(name));
        if let Some(ConnectGrant { pinned: Pinned::Failed(why), .. }) = unresolved {
            let granted = format!("granted connect: {name}, which did not resolve when the run started: {why}");
            return Denial { on: None, asked, granted, remedy: None };
        }
        let granted = match self.connect.as_slice() {
            [] => "no connect target is granted; only granted names are looked up".to_string(),
            _ => format!("{}; only granted names are looked up", self.granted_targets()),
        };
        let remedy = format!(
            "To grant it, add to the provider's block its target: sandbox {{ connect = [\"{}:PORT\"] }}",
            name.trim_end_matches('.')
        );
        Denial { on: None, asked, granted, remedy: Some(remedy) }
    }

    /// `granted connect: 127.0.0.1:5432, localhost:5432 (pinned to 127.0.0.1, ::1)`.
    fn granted_targets(&self) -> String {
        if self.connect.is_empty() {
            return "no connect target is granted".to_string();
        }
        let shown: Vec<String> = self.connect.iter().map(shown_target).collect();
        format!("granted connect: {}", shown.join(", "))
    }

    /// How to grant a connection to `addr`; for a port granted under a
    /// name, why the name does not reach it.
    fn connect_remedy(&self, addr: std::net::SocketAddr) -> String {
        let line = format!("sandbox {{ connect = [\"{addr}\"] }}");
        match self.connect.iter().find(|g| g.port == addr.port() && matches!(g.pinned, Pinned::Resolved(_))) {
            Some(named) => format!(
                "{} is pinned to the addresses the host resolved when the run started, so that the DNS cannot \
                 redirect it. To grant {addr} too, add to the provider's block: {line}",
                named.target()
            ),
            None => format!("To grant it, add to the provider's block: {line}"),
        }
    }

    /// The refusals of the call that just ended; the record starts afresh.
    /// A look at a directory on the way to a refused write in it
    /// (`create_dir_all` checks each directory first) is not told apart:
    /// granting the write grants it too.
    pub(crate) fn take(&mut self) -> Denied {
        let mut denials = std::mem::take(&mut self.recorded);
        let written: Vec<String> =
            denials.iter().filter_map(|d| d.on.clone()).filter(|(a, _)| a.writes()).map(|(_, p)| p).collect();
        let on_the_way = |path: &str| written.iter().any(|w| w == path || w.starts_with(&format!("{path}/")));
        denials.retain(|d| !matches!(&d.on, Some((access, path)) if !access.writes() && on_the_way(path)));
        let denied = Denied { denials, unrecorded: self.unrecorded };
        self.unrecorded = 0;
        denied
    }

    fn record(&mut self, denial: Denial) {
        tracing::debug!("{}", denial.summary());
        if self.recorded.contains(&denial) {
            return;
        }
        if self.recorded.len() < MAX_RECORDED {
            self.recorded.push(denial);
        } else {
            self.unrecorded += 1;
        }
    }

    /// `access` to `shown` (as the provider named it), outside every grant.
    fn outside(&self, access: Access, shown: &str) -> Denial {
        let (on, asked) = (Some((access, shown.to_string())), format!("{} {shown}", access.verb()));
        if let Some(held) = self.held_grant_of(shown) {
            return Denial { on, asked, granted: held_read_only(&held), remedy: None };
        }
        Denial { on, asked, granted: self.granted_dirs(), remedy: Some(grant_remedy(access, shown)) }
    }

    /// A write to `shown`, inside the read-only grant `grant`.
    fn read_only_grant(&self, access: Access, shown: &str, grant: &str) -> Denial {
        let (on, asked) = (Some((access, shown.to_string())), format!("{} {shown}", access.verb()));
        if self.held.iter().any(|g| g == grant) {
            return Denial { on, asked, granted: held_read_only(grant), remedy: None };
        }
        let written = written(grant);
        Denial {
            on,
            asked,
            granted: format!("granted read-only: {written}"),
            remedy: Some(format!(
                "To grant it, move {written} from read_only to read_write in the provider's sandbox block: \
                 sandbox {{ read_write = [{written:?}] }}"
            )),
        }
    }

    /// `access` to `shown`, a path under the grant `grant` that leads out
    /// of it: through `..` (then the path it leads to can be granted), or
    /// through a symbolic link (whose target the host does not know).
    fn escaped(&self, access: Access, shown: &str, grant: &str) -> Denial {
        let (on, asked) = (Some((access, shown.to_string())), format!("{} {shown}", access.verb()));
        let leads_out = format!("it leads out of the grant {}", written(grant));
        match normalized(shown) {
            Some(target) if !inside(&target, grant) => {
                let target = if grant.starts_with('/') { format!("/{target}") } else { target };
                Denial { on, asked, granted: leads_out, remedy: Some(grant_remedy(access, &target)) }
            }
            Some(_) => Denial { on, asked, granted: format!("{leads_out} through a symbolic link"), remedy: None },
            None => Denial { on, asked, granted: leads_out, remedy: None },
        }
    }

    /// The read-write grant, held read-only, that `shown` is in.
    fn held_grant_of(&self, shown: &str) -> Option<String> {
        let path = normalized(shown)?;
        self.held.iter().find(|g| inside(&path, g)).cloned()
    }

    /// `granted read-write: ./out; read-only: ./data`.
    fn granted_dirs(&self) -> String {
        let list = |names: &[String]| names.iter().map(|n| written(n)).collect::<Vec<_>>().join(", ");
        match (self.read_write.is_empty(), self.read_only.is_empty()) {
            (true, true) => "no directory is granted".to_string(),
            (false, true) => format!("granted read-write: {}", list(&self.read_write)),
            (true, false) => format!("granted read-only: {}", list(&self.read_only)),
            (false, false) => {
                format!("granted read-write: {}; read-only: {}", list(&self.read_write), list(&self.read_only))
            }
        }
    }
}

/// What a call was refused, taken from [`Denials`] when it ended.
#[derive(Debug, Default)]
pub(crate) struct Denied {
    denials: Vec<Denial>,
    unrecorded: usize,
}

impl Denied {
    /// The refusals as error diagnostics, one each, for an answer that
    /// failed: the user reads what the sandbox refused beside what the
    /// provider made of it.
    fn diagnostics(&self) -> Vec<wit::Diagnostic> {
        let mut diagnostics: Vec<wit::Diagnostic> = self
            .denials
            .iter()
            .map(|d| wit::Diagnostic {
                severity: wit::Severity::Error,
                summary: d.summary(),
                detail: d.remedy.clone().unwrap_or_default(),
                path: Vec::new(),
            })
            .collect();
        if let Some(last) = diagnostics.last_mut().filter(|_| self.unrecorded > 0) {
            let more = format!("The sandbox refused {} more requests in the same call.", self.unrecorded);
            last.detail = if last.detail.is_empty() { more } else { format!("{}\n{more}", last.detail) };
        }
        diagnostics
    }

    /// Adds the refusals to `answer` when it carries an error: the call
    /// failed, and the refusals may be why.
    pub(crate) fn add_to_answer<R: Diagnosed>(&self, answer: &mut R) {
        if self.denials.is_empty() {
            return;
        }
        if let Some(diagnostics) = answer.diagnostics()
            && diagnostics.iter().any(|d| d.severity == wit::Severity::Error)
        {
            diagnostics.extend(self.diagnostics());
        }
    }

    /// Adds the refusals to the detail of `error`, before the provider's
    /// last words.
    pub(crate) fn add_to_error(&self, error: &mut CallError) {
        if self.denials.is_empty() {
            return;
        }
        let mut lines: Vec<String> = Vec::new();
        for diagnostic in self.diagnostics() {
            lines.push(diagnostic.summary);
            lines.extend(diagnostic.detail.lines().map(|l| format!("  {l}")));
        }
        if !error.detail.is_empty() {
            lines.push(std::mem::take(&mut error.detail));
        }
        error.detail = lines.join("\n");
    }
}

/// An answer that may carry diagnostics, to which refusals are added.
pub(crate) trait Diagnosed {
    /// Its diagnostics, if it has any.
    fn diagnostics(&mut self) -> Option<&mut Vec<wit::Diagnostic>>;
}

impl Diagnosed for Vec<wit::Diagnostic> {
    fn diagnostics(&mut self) -> Option<&mut Vec<wit::Diagnostic>> {
        Some(self)
    }
}

impl Diagnosed for wit::ProviderSchema {
    fn diagnostics(&mut self) -> Option<&mut Vec<wit::Diagnostic>> {
        None
    }
}

/// Every answer with a `diagnostics` field.
macro_rules! diagnosed {
    ($($answer:ty),*) => {$(
        impl Diagnosed for $answer {
            fn diagnostics(&mut self) -> Option<&mut Vec<wit::Diagnostic>> {
                Some(&mut self.diagnostics)
            }
        }
    )*};
}

diagnosed!(
    api::PlanResponse,
    api::ApplyResponse,
    api::ReadResponse,
    api::ImportResponse,
    api::DataResponse,
    api::UpgradeResponse
);

/// "To grant it, add to the provider's block: sandbox { read_write =
/// ["./out2"] }": the directory `shown` is (or is in) granted for `access`.
fn grant_remedy(access: Access, shown: &str) -> String {
    let dir = if access.names_a_directory() { shown.to_string() } else { parent(shown) };
    let dir = written(&dir);
    format!("To grant it, add to the provider's block: sandbox {{ {} = [{dir:?}] }}", access.attribute())
}

/// `localhost:5432 (pinned to 127.0.0.1, ::1)`, `127.0.0.1:5432`.
fn shown_target(grant: &ConnectGrant) -> String {
    let list = |ips: &[std::net::IpAddr]| ips.iter().map(|ip| ip.to_string()).collect::<Vec<_>>().join(", ");
    match &grant.pinned {
        Pinned::Address(_) => grant.target(),
        Pinned::Resolved(ips) => format!("{} (pinned to {})", grant.target(), list(ips)),
        Pinned::Pending => format!("{} (not resolved)", grant.target()),
        Pinned::Failed(_) => format!("{} (did not resolve)", grant.target()),
    }
}

/// What a refused write inside a held read-write grant is told.
fn held_read_only(grant: &str) -> String {
    format!("granted read-write: {}, which is read-only while nothing may change (validate, plan)", written(grant))
}

/// `path` under the directory `dir`, as the provider would name it.
fn join(dir: &str, path: &str) -> String {
    match (dir, path) {
        ("", path) => path.to_string(),
        (dir, "." | "") => dir.to_string(),
        (dir, path) => format!("{}/{path}", dir.trim_end_matches('/')),
    }
}

/// A path outside every grant as the provider most likely wrote it.
/// wasi-libc drops the leading `/` of a path before the host sees it, and
/// resolves relative paths from `/`, so `/etc/passwd` and `etc/passwd`
/// reach the host alike: one whose first directory exists at the root of
/// this machine is shown absolute, any other relative to the configuration
/// directory (where the operator's relative grants are). Only the message
/// depends on this guess.
fn shown_outside(path: &str) -> String {
    let first = Path::new(path).components().next();
    match first {
        Some(Component::Normal(name)) if Path::new("/").join(name).is_dir() => format!("/{path}"),
        _ => path.to_string(),
    }
}

/// The grant as the operator would write it: `./out`, `/srv/www`, `../x`.
fn written(guest: &str) -> String {
    if guest.starts_with('/') || guest.starts_with('.') { guest.to_string() } else { format!("./{guest}") }
}

/// The directory `path` is in, as a path of the same kind: `out2` for
/// `out2/x.txt`, `.` for `x.txt`, `/` for `/x`.
fn parent(path: &str) -> String {
    match path.trim_end_matches('/').rsplit_once('/') {
        Some(("", _)) => "/".to_string(),
        Some((dir, _)) => dir.to_string(),
        None => ".".to_string(),
    }
}

/// `path` with `.` and `..` resolved lexically and no leading `/`; `None`
/// when it climbs above the root.
fn normalized(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for component in Path::new(path.trim_start_matches('/')).components() {
        match component {
            Component::Normal(name) => parts.push(name.to_str()?),
            Component::ParentDir => {
                parts.pop()?;
            }
            _ => {}
        }
    }
    Some(parts.join("/"))
}

/// Whether the normalised path `path` is the directory `dir` (a guest
/// name) or inside it.
fn inside(path: &str, dir: &str) -> bool {
    match normalized(dir) {
        Some(dir) if dir.is_empty() => true,
        Some(dir) => path == dir || path.strip_prefix(&dir).is_some_and(|rest| rest.starts_with('/')),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sandbox(read_write: &[&str], read_only: &[&str]) -> Sandbox {
        let grant = |g: &&str| Grant { host: format!("/cfg/{g}").into(), guest: g.to_string() };
        Sandbox {
            read_write: read_write.iter().map(grant).collect(),
            read_only: read_only.iter().map(grant).collect(),
            ..Sandbox::default()
        }
    }

    /// The denials of one call in `sandbox`, whose preopens are handles 1
    /// (the root) and 2, 3… (the grants, read-write first).
    fn watched(sandbox: &Sandbox) -> Denials {
        let mut denials = Denials::new(sandbox);
        denials.preopened(1, ROOT);
        for (i, grant) in sandbox.read_write.iter().chain(&sandbox.read_only).enumerate() {
            denials.preopened(i as u32 + 2, &grant.guest);
        }
        denials
    }

    fn summaries(denials: &mut Denials) -> Vec<(String, String)> {
        let denied = denials.take();
        denied.diagnostics().into_iter().map(|d| (d.summary, d.detail)).collect()
    }

    #[test]
    fn a_write_outside_every_grant_names_the_grants_and_the_line_that_would_grant_it() {
        let mut denials = watched(&sandbox(&["out"], &[]));
        assert_eq!(denials.refuse_outside(1, "out2/x.txt", Access::Write), Some(ErrorCode::NoEntry));
        assert_eq!(denials.refuse_outside(2, "x.txt", Access::Write), None, "inside a grant");
        assert_eq!(denials.refuse_outside(1, ".", Access::Read), Some(ErrorCode::NoEntry), "refused, not told");
        assert_eq!(
            summaries(&mut denials),
            [(
                "the sandbox denied: write to out2/x.txt (granted read-write: ./out)".to_string(),
                "To grant it, add to the provider's block: sandbox { read_write = [\"./out2\"] }".to_string()
            )]
        );
        assert!(summaries(&mut denials).is_empty(), "taken once");
    }

    #[test]
    fn a_look_at_a_directory_on_the_way_to_a_refused_write_is_not_told_apart() {
        // `create_dir_all("out2/a")` looks at `out2` before creating it.
        let mut denials = watched(&sandbox(&["out"], &[]));
        denials.refuse_outside(1, "out2", Access::Read);
        denials.refuse_outside(1, "out2/a", Access::CreateDir);
        denials.refuse_outside(1, "other.txt", Access::Read);
        let got: Vec<String> = summaries(&mut denials).into_iter().map(|(summary, _)| summary).collect();
        assert_eq!(
            got,
            [
                "the sandbox denied: create the directory out2/a (granted read-write: ./out)",
                "the sandbox denied: read other.txt (granted read-write: ./out)",
            ]
        );
    }

    #[test]
    fn reads_lists_and_directories_are_granted_as_they_need() {
        let mut denials = watched(&sandbox(&["out"], &["data"]));
        denials.refuse_outside(1, "etc/passwd", Access::Read);
        denials.refuse_outside(1, "tpl", Access::List);
        denials.refuse_outside(1, "out3", Access::CreateDir);
        let got = summaries(&mut denials);
        assert_eq!(got[0].0, "the sandbox denied: read /etc/passwd (granted read-write: ./out; read-only: ./data)");
        assert!(got[0].1.ends_with("sandbox { read_only = [\"/etc\"] }"), "{}", got[0].1);
        assert!(got[1].1.ends_with("sandbox { read_only = [\"./tpl\"] }"), "{}", got[1].1);
        assert!(got[2].1.ends_with("sandbox { read_write = [\"./out3\"] }"), "{}", got[2].1);
    }

    #[test]
    fn a_write_into_a_read_only_grant_says_to_make_it_read_write() {
        let mut denials = watched(&sandbox(&[], &["data"]));
        denials.opened(7, 2, "sub", true);
        denials.after(7, "new.txt", Access::Write, false, Some(ErrorCode::NotPermitted));
        denials.after(7, "other.txt", Access::Write, false, Some(ErrorCode::NoEntry));
        assert_eq!(
            summaries(&mut denials),
            [(
                "the sandbox denied: write to data/sub/new.txt (granted read-only: ./data)".to_string(),
                "To grant it, move ./data from read_only to read_write in the provider's sandbox block: \
                 sandbox { read_write = [\"./data\"] }"
                    .to_string()
            )]
        );
    }

    #[test]
    fn a_path_leading_out_of_its_grant_says_so() {
        let mut denials = watched(&sandbox(&[], &["data"]));
        denials.after(2, "../secret.txt", Access::Read, false, Some(ErrorCode::NotPermitted));
        denials.after(2, "link", Access::Read, false, Some(ErrorCode::NotPermitted));
        let got = summaries(&mut denials);
        assert_eq!(got[0].0, "the sandbox denied: read data/../secret.txt (it leads out of the grant ./data)");
        assert!(got[0].1.ends_with("sandbox { read_only = [\".\"] }"), "{}", got[0].1);
        assert_eq!(
            got[1],
            (
                "the sandbox denied: read data/link (it leads out of the grant ./data through a symbolic link)"
                    .to_string(),
                String::new()
            )
        );
    }

    #[test]
    fn a_write_while_planning_is_not_told_to_grant_what_is_granted() {
        let mut planning = sandbox(&["out", "new"], &[]);
        planning.read_write_held = planning.read_write.clone();
        planning.read_only = vec![planning.read_write.remove(0)];
        planning.read_write.clear();
        let mut denials = watched(&planning);
        denials.after(2, "x.txt", Access::Write, false, Some(ErrorCode::NotPermitted));
        denials.refuse_outside(1, "new/y.txt", Access::Write);
        let held = "which is read-only while nothing may change (validate, plan)";
        let got = summaries(&mut denials);
        assert_eq!(got[0].0, format!("the sandbox denied: write to out/x.txt (granted read-write: ./out, {held})"));
        assert_eq!(got[1].0, format!("the sandbox denied: write to new/y.txt (granted read-write: ./new, {held})"));
        assert!(got.iter().all(|(_, detail)| detail.is_empty()));
    }

    #[test]
    fn http_refusals_name_the_granted_origins() {
        let mut denials = watched(&Sandbox::default());
        denials.http_refused("http://127.0.0.1:9");
        assert_eq!(
            summaries(&mut denials),
            [(
                "the sandbox denied: HTTP request to http://127.0.0.1:9 (no HTTP origin is granted)".to_string(),
                "To grant it, add to the provider's block: sandbox { http { url = \"http://127.0.0.1:9\" } }"
                    .to_string()
            )]
        );
    }

    #[test]
    fn socket_refusals_say_what_was_asked_and_what_is_granted() {
        let mut sandbox = Sandbox::default();
        sandbox.grant_connect("127.0.0.1:5432").unwrap();
        sandbox.grant_connect("localhost:6432").unwrap();
        sandbox.connect[1].pinned = Pinned::Resolved(vec![[127, 0, 0, 1].into()]);
        let mut denials = watched(&sandbox);
        for refused in [
            Refused::Connect("127.0.0.1:5433".parse().unwrap()),
            Refused::Connect("127.0.0.2:6432".parse().unwrap()),
            Refused::Bind("127.0.0.1:0".parse().unwrap()),
            Refused::Listen,
            Refused::Udp("IPv4"),
            Refused::Lookup("evil.example".into()),
        ] {
            denials.socket_refused(&refused);
        }
        let granted = "granted connect: 127.0.0.1:5432, localhost:6432 (pinned to 127.0.0.1)";
        let got = summaries(&mut denials);
        let expected = [
            format!("the sandbox denied: connect to 127.0.0.1:5433 ({granted})"),
            format!("the sandbox denied: connect to 127.0.0.2:6432 ({granted})"),
            "the sandbox denied: bind to 127.0.0.1:0 (a provider may only connect out; it may not bind, listen or accept)"
                .to_string(),
            "the sandbox denied: listen for connections (a provider may only connect out; it may not bind, listen or accept)"
                .to_string(),
            "the sandbox denied: open a UDP socket (IPv4) (UDP is never granted; a provider may only open TCP \
             connections to granted targets)"
                .to_string(),
            format!("the sandbox denied: look up the name evil.example ({granted}; only granted names are looked up)"),
        ];
        assert_eq!(got.iter().map(|(s, _)| s.clone()).collect::<Vec<_>>(), expected);
        assert_eq!(got[0].1, "To grant it, add to the provider's block: sandbox { connect = [\"127.0.0.1:5433\"] }");
        assert!(got[1].1.starts_with("localhost:6432 is pinned to the addresses the host resolved"), "{}", got[1].1);
        assert!(got[1].1.ends_with("sandbox { connect = [\"127.0.0.2:6432\"] }"), "{}", got[1].1);
        assert_eq!(
            got[5].1,
            "To grant it, add to the provider's block its target: sandbox { connect = [\"evil.example:PORT\"] }"
        );
        let mut none = watched(&Sandbox::default());
        none.socket_refused(&Refused::Connect("10.0.0.1:80".parse().unwrap()));
        assert_eq!(
            summaries(&mut none)[0].0,
            "the sandbox denied: connect to 10.0.0.1:80 (no connect target is granted)"
        );
    }

    #[test]
    fn refusals_are_added_only_to_failed_answers_and_errors() {
        let mut denials = watched(&Sandbox::default());
        denials.http_refused("http://a:1");
        let denied = denials.take();
        let warning = |severity| wit::Diagnostic { severity, summary: "x".into(), detail: String::new(), path: vec![] };
        let mut fine = vec![warning(wit::Severity::Warning)];
        denied.add_to_answer(&mut fine);
        assert_eq!(fine.len(), 1, "a call that succeeded is not told");
        let mut failed = vec![warning(wit::Severity::Error)];
        denied.add_to_answer(&mut failed);
        assert_eq!(failed[1].summary, "the sandbox denied: HTTP request to http://a:1 (no HTTP origin is granted)");
        let mut error = CallError::new("p", "apply-resource", "panicked: boom");
        error.detail = "provider stderr:\n  boom".into();
        denied.add_to_error(&mut error);
        assert!(error.detail.starts_with("the sandbox denied: HTTP request to http://a:1"), "{}", error.detail);
        assert!(error.detail.ends_with("\nprovider stderr:\n  boom"), "{}", error.detail);
    }

    #[test]
    fn one_call_records_a_bounded_number_of_distinct_refusals() {
        let mut denials = watched(&Sandbox::default());
        for i in 0..20 {
            denials.refuse_outside(1, &format!("f{i}"), Access::Read);
            denials.refuse_outside(1, &format!("f{i}"), Access::Read);
        }
        let got = summaries(&mut denials);
        assert_eq!(got.len(), MAX_RECORDED);
        assert!(got[MAX_RECORDED - 1].1.ends_with("The sandbox refused 24 more requests in the same call."));
        denials.start_call();
        assert!(summaries(&mut denials).is_empty());
    }

    #[test]
    fn no_root_preopen_when_a_grant_already_takes_every_path() {
        assert!(watches_root(&sandbox(&["out"], &["data"])));
        assert!(!watches_root(&sandbox(&["."], &[])));
        let mut denials = Denials::new(&sandbox(&["."], &[]));
        denials.preopened(1, ".");
        assert_eq!(denials.refuse_outside(1, "x", Access::Read), None);
    }

    #[test]
    fn paths_read_as_written() {
        assert_eq!(join("", "etc/passwd"), "etc/passwd");
        assert_eq!(join("out", "."), "out");
        assert_eq!(join("out", "a/b"), "out/a/b");
        assert_eq!(parent("out2/x.txt"), "out2");
        assert_eq!(parent("x.txt"), ".");
        assert_eq!(parent("/x"), "/");
        assert_eq!(written("out"), "./out");
        assert_eq!(written("/srv"), "/srv");
        assert_eq!(written("../x"), "../x");
        assert_eq!(normalized("/a/./b/../c").as_deref(), Some("a/c"));
        assert_eq!(normalized("../x"), None);
        assert!(inside("out/x", "out") && inside("out", "./out") && !inside("outer", "out"));
    }
}
