//! The host's `files` import: changes to files that WASI 0.2 has no call
//! for (permission bits), made by the host within the sandbox's
//! read-write grants.
//!
//! A path is matched against the grants as wasi-libc matches a provider's
//! own file calls against its preopened directories (see
//! `sandbox::Grant::resolve`): leading `/` and `./` do not count, the grant
//! whose name is the longest prefix of whole path components wins (a grant
//! of `.` matches every path), and the rest of the path is resolved inside
//! that grant's directory with cap-std, which never leaves it, through
//! `..` or a symbolic link. Only a read-write grant allows a change; every
//! refusal is logged, as the HTTP policy logs its own, and told to the
//! provider in words the user can act on.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use super::sandbox::{Grant, Sandbox};

/// The permission bits a provider may set: `rwxrwxrwx`, never setuid,
/// setgid or sticky.
const PERMISSION_BITS: u32 = 0o777;

/// The longest path the host looks at (Linux's `PATH_MAX`): a longer one
/// names no file, and is not copied into the log.
const MAX_PATH: usize = 4096;

/// What an instance may change through the `files` import: its sandbox's
/// directory grants.
pub(crate) struct FileGrants {
    provider: Arc<str>,
    read_write: Vec<Grant>,
    read_only: Vec<Grant>,
    /// The read-write grants that a run that changes nothing (validate,
    /// plan) holds read-only: a change there is refused and told why,
    /// rather than asking for a grant the operator already wrote.
    held: Vec<Grant>,
}

/// Where a provider's path lands among the grants.
#[derive(Debug, PartialEq, Eq)]
struct Landing<'a> {
    /// The grant whose directory holds the path.
    grant: &'a Grant,
    /// Whether that grant is read-write.
    writable: bool,
    /// The path inside the grant's directory (`.` for the directory itself).
    inside: &'a str,
}

impl FileGrants {
    /// The grants of `sandbox`, for the instance of `provider`.
    pub(crate) fn new(provider: Arc<str>, sandbox: &Sandbox) -> FileGrants {
        FileGrants {
            provider,
            read_write: sandbox.read_write.clone(),
            read_only: sandbox.read_only.clone(),
            held: sandbox.read_write_held.clone(),
        }
    }

    /// Sets the permission bits of `path` to `mode`, less the process's
    /// umask when `apply_umask`; the `files` import's `set-permissions`.
    /// The error is one line for the user.
    pub(crate) fn set_permissions(&self, path: &str, mode: u32, apply_umask: bool) -> Result<(), String> {
        if path.len() > MAX_PATH {
            return Err(self.denied(&format!("chmod of a path of {} bytes (at most {MAX_PATH})", path.len())));
        }
        if mode & !PERMISSION_BITS != 0 {
            return Err(self.denied(&format!(
                "chmod of {path} to {mode:#o} (only the permission bits 0o777 may be set: \
                 never setuid, setgid or sticky)"
            )));
        }
        let landing = self.land(path);
        let landing = match landing {
            Some(landing) if landing.writable => landing,
            _ => return Err(self.denied(&self.refusal(path, landing.as_ref()))),
        };
        let mode = if apply_umask { mode & !process_umask() } else { mode };
        match self.chmod_inside(&landing, mode) {
            Ok(()) => Ok(()),
            Err(e) if is_escape(&e) => {
                Err(self
                    .denied(&format!("chmod of {path} (it leads out of the grant {})", shown(&landing.grant.guest))))
            }
            Err(e) => Err(format!("cannot change the permissions of {path}: {e}")),
        }
    }

    /// Why a change of `path`, which lands in `landing` (a read-only grant)
    /// or in no grant, is refused, and how to grant it.
    fn refusal(&self, path: &str, landing: Option<&Landing<'_>>) -> String {
        let held = match landing {
            Some(landing) => self.held.iter().find(|g| g.guest == landing.grant.guest),
            // A held grant that does not exist yet is not mounted at all.
            None => longest_match(self.held.iter().map(|g| (g, false)), path).map(|l| l.grant),
        };
        if let Some(held) = held {
            return format!(
                "chmod of {path} (granted read-write: {}, which is read-only while nothing may change \
                 (validate, plan))",
                shown(&held.guest)
            );
        }
        match landing {
            Some(landing) => {
                let grant = shown(&landing.grant.guest);
                format!(
                    "chmod of {path} (granted read-only: {grant}). To grant it, move {grant} from read_only to \
                     read_write in the provider's sandbox block: sandbox {{ read_write = [{grant:?}] }}"
                )
            }
            None => format!(
                "chmod of {path} ({}). To grant it, add to the provider's block: sandbox {{ read_write = [{:?}] }}",
                self.granted(),
                directory_of(path)
            ),
        }
    }

    /// The grant `path` lands in, as wasi-libc would choose its preopen:
    /// the longest name that is a prefix of whole components, a read-only
    /// grant before a read-write one of the same name (the host preopens
    /// read-only grants last, and wasi-libc prefers the last of equals).
    fn land<'a>(&'a self, path: &'a str) -> Option<Landing<'a>> {
        let writable = self.read_write.iter().map(|g| (g, true));
        let read_only = self.read_only.iter().map(|g| (g, false));
        longest_match(writable.chain(read_only), path)
    }

    /// Sets `mode` on the path of `landing`, resolved inside its grant's
    /// directory without leaving it. The directory is opened as the WASI
    /// context opens it (a grant inside another grant without following
    /// links a provider may have planted).
    #[cfg(unix)]
    fn chmod_inside(&self, landing: &Landing<'_>, mode: u32) -> std::io::Result<()> {
        use std::os::unix::fs::PermissionsExt as _;
        let all: Vec<&Grant> = self.read_write.iter().chain(&self.read_only).collect();
        let opened = super::wasi::open_grant(landing.grant, &all).map_err(std::io::Error::other)?;
        let dir = cap_primitives::fs::open_ambient_dir(opened.path(), cap_primitives::ambient_authority())?;
        let permissions = cap_primitives::fs::Permissions::from_std(std::fs::Permissions::from_mode(mode));
        cap_primitives::fs::set_permissions(&dir, Path::new(landing.inside), permissions)
    }

    /// Permission bits are a Unix notion.
    #[cfg(not(unix))]
    fn chmod_inside(&self, _landing: &Landing<'_>, _mode: u32) -> std::io::Result<()> {
        Err(std::io::Error::new(std::io::ErrorKind::Unsupported, "permission bits are not supported on this system"))
    }

    /// The message of a refusal, `the sandbox denied: <what>`, logged. (The
    /// provider is handed it as its error, and puts it in its own
    /// diagnostic; so it is not also added to a failed call's answer as
    /// `denials` adds the refusals the provider only saw as error codes.)
    fn denied(&self, what: &str) -> String {
        let message = format!("the sandbox denied: {what}");
        tracing::warn!(provider = %self.provider, "{message}");
        message
    }

    /// What is granted, in words: `granted read-write: ./out; read-only:
    /// ./data` (the held grants among the read-write ones, as written).
    fn granted(&self) -> String {
        let is_held = |g: &&Grant| self.held.iter().any(|h| h.guest == g.guest);
        let names = |grants: Vec<&Grant>| grants.iter().map(|g| shown(&g.guest)).collect::<Vec<_>>().join(", ");
        let read_write = names(self.read_write.iter().chain(&self.held).collect());
        let read_only = names(self.read_only.iter().filter(|g| !is_held(g)).collect());
        match (read_write.is_empty(), read_only.is_empty()) {
            (true, true) => "no directory is granted".to_string(),
            (false, true) => format!("granted read-write: {read_write}"),
            (true, false) => format!("granted read-only: {read_only}"),
            (false, false) => format!("granted read-write: {read_write}; read-only: {read_only}"),
        }
    }
}

/// Where `path` lands among `grants` (each with whether it is writable):
/// the grant whose name is the longest prefix of whole components of the
/// path, the last of equals.
fn longest_match<'a>(grants: impl Iterator<Item = (&'a Grant, bool)>, path: &'a str) -> Option<Landing<'a>> {
    let path = strip_prefixes(path);
    let mut best: Option<(usize, Landing<'a>)> = None;
    for (grant, writable) in grants {
        let name = strip_prefixes(&grant.guest);
        let Some(rest) = component_suffix(path, name) else { continue };
        if best.as_ref().is_none_or(|(len, _)| name.len() >= *len) {
            let inside = rest.trim_start_matches('/');
            let inside = if inside.is_empty() { "." } else { inside };
            best = Some((name.len(), Landing { grant, writable, inside }));
        }
    }
    best.map(|(_, landing)| landing)
}

/// `path` less leading `/`, `./` and a lone `.`, as wasi-libc strips the
/// names of preopened directories and the paths matched against them.
fn strip_prefixes(mut path: &str) -> &str {
    loop {
        if let Some(rest) = path.strip_prefix('/').or_else(|| path.strip_prefix("./")) {
            path = rest;
        } else if path == "." {
            return "";
        } else {
            return path;
        }
    }
}

/// The rest of `path` after `name` when `name` is a prefix of whole
/// components of it (the empty name is a prefix of every path).
fn component_suffix<'a>(path: &'a str, name: &str) -> Option<&'a str> {
    let rest = path.strip_prefix(name)?;
    (name.is_empty() || rest.is_empty() || rest.starts_with('/')).then_some(rest)
}

/// A grant's name as the operator would write it in a `sandbox` block:
/// `./out` for `out`; `.`, `../shared` and absolute paths as they are.
fn shown(guest: &str) -> String {
    if guest.starts_with('/') || guest.starts_with('.') { guest.to_string() } else { format!("./{guest}") }
}

/// The directory that holds `path`, as a `sandbox` block would grant it.
fn directory_of(path: &str) -> String {
    let absolute = path.starts_with('/');
    let relative = strip_prefixes(path).trim_end_matches('/');
    match relative.rsplit_once('/') {
        Some((dir, _)) if absolute => format!("/{dir}"),
        Some((dir, _)) => shown(dir),
        None if absolute => "/".to_string(),
        None => ".".to_string(),
    }
}

/// Whether cap-std refused a path for leading out of its directory.
fn is_escape(error: &std::io::Error) -> bool {
    error.kind() == std::io::ErrorKind::PermissionDenied && error.to_string().contains("outside of the filesystem")
}

/// The cairn process's umask. Read from `/proc/self/status`, since
/// `umask(2)` only reads it by setting it, and setting it back races with
/// other threads creating files meanwhile; `022`, the usual one, where that
/// cannot be read. cairn never changes its umask, so it is read once.
fn process_umask() -> u32 {
    static UMASK: OnceLock<u32> = OnceLock::new();
    *UMASK.get_or_init(|| {
        std::fs::read_to_string("/proc/self/status").ok().as_deref().and_then(parse_umask).unwrap_or(0o022)
    })
}

/// The `Umask:` line of a `/proc/<pid>/status` file.
fn parse_umask(status: &str) -> Option<u32> {
    let value = status.lines().find_map(|line| line.strip_prefix("Umask:"))?;
    u32::from_str_radix(value.trim(), 8).ok().filter(|mask| *mask <= PERMISSION_BITS)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    /// Grants in `config`: `rw` read-write (created), `ro` read-only.
    fn grants(config: &Path, rw: &[&str], ro: &[&str]) -> FileGrants {
        for dir in rw.iter().chain(ro) {
            std::fs::create_dir_all(config.join(dir)).unwrap();
        }
        let owned = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let sandbox = Sandbox::resolve(config, &owned(rw), &owned(ro)).unwrap();
        FileGrants::new("p".into(), &sandbox)
    }

    fn mode_of(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
    }

    /// Where `path` lands: the grant's name, whether writable, the rest.
    fn landing(files: &FileGrants, path: &str) -> Option<(String, bool, String)> {
        files.land(path).map(|l| (l.grant.guest.clone(), l.writable, l.inside.to_string()))
    }

    #[test]
    fn paths_land_in_grants_as_wasi_libc_matches_preopens() {
        let config = tempfile::tempdir().unwrap();
        let files = grants(config.path(), &["./out", "out/sub"], &["./data", "out/ro"]);
        let at = |guest: &str, writable: bool, inside: &str| Some((guest.to_string(), writable, inside.to_string()));
        assert_eq!(landing(&files, "out/x.txt"), at("out", true, "x.txt"));
        assert_eq!(landing(&files, "./out/x.txt"), at("out", true, "x.txt"));
        assert_eq!(landing(&files, "/out//a/b"), at("out", true, "a/b"));
        assert_eq!(landing(&files, "out"), at("out", true, "."));
        assert_eq!(landing(&files, "out/sub/x"), at("out/sub", true, "x"));
        assert_eq!(landing(&files, "out/ro/x"), at("out/ro", false, "x"), "the longest name wins");
        assert_eq!(landing(&files, "data/f.txt"), at("data", false, "f.txt"));
        // Whole components only, and `..` is not resolved here (cap-std
        // refuses it when it leaves the grant).
        assert_eq!(landing(&files, "out2/x.txt"), None);
        assert_eq!(landing(&files, "outx"), None);
        assert_eq!(landing(&files, "out/../secret"), at("out", true, "../secret"));
        assert_eq!(landing(&files, "secret.txt"), None);
        assert_eq!(landing(&files, "/etc/passwd"), None);

        let dot = grants(config.path(), &["."], &[]);
        assert_eq!(landing(&dot, "anything/x"), at(".", true, "anything/x"));
        assert_eq!(landing(&dot, "/etc/passwd"), at(".", true, "etc/passwd"), "as wasi-libc resolves it");

        let elsewhere = tempfile::tempdir().unwrap();
        let absolute = elsewhere.path().to_str().unwrap().to_string();
        let abs = grants(config.path(), &[absolute.as_str()], &[]);
        assert_eq!(landing(&abs, &format!("{absolute}/x")), at(&absolute, true, "x"));
        assert_eq!(landing(&abs, "x"), None);
    }

    #[test]
    fn a_read_write_grant_allows_permission_changes_inside_it() {
        let config = tempfile::tempdir().unwrap();
        let files = grants(config.path(), &["./out"], &[]);
        std::fs::create_dir_all(config.path().join("out/dir")).unwrap();
        std::fs::write(config.path().join("out/dir/x.txt"), "x").unwrap();
        files.set_permissions("out/dir/x.txt", 0o600, false).unwrap();
        assert_eq!(mode_of(&config.path().join("out/dir/x.txt")), 0o600);
        files.set_permissions("./out/dir", 0o750, false).unwrap();
        assert_eq!(mode_of(&config.path().join("out/dir")), 0o750);
        // A link that stays inside the grant is followed.
        std::os::unix::fs::symlink("dir/x.txt", config.path().join("out/alias")).unwrap();
        files.set_permissions("out/alias", 0o640, false).unwrap();
        assert_eq!(mode_of(&config.path().join("out/dir/x.txt")), 0o640);
        let err = files.set_permissions("out/missing.txt", 0o600, false).unwrap_err();
        assert!(err.starts_with("cannot change the permissions of out/missing.txt: "), "{err}");
    }

    #[test]
    fn the_umask_clears_bits_when_asked() {
        let config = tempfile::tempdir().unwrap();
        let files = grants(config.path(), &["./out"], &[]);
        let file = config.path().join("out/x.txt");
        std::fs::write(&file, "x").unwrap();
        files.set_permissions("out/x.txt", 0o777, true).unwrap();
        assert_eq!(mode_of(&file), 0o777 & !process_umask());
        files.set_permissions("out/x.txt", 0o600, true).unwrap();
        assert_eq!(mode_of(&file), 0o600 & !process_umask());
        assert_eq!(parse_umask("Name:\tcairn\nUmask:\t0027\nState:\tR\n"), Some(0o027));
        assert_eq!(parse_umask("Name:\tcairn\n"), None);
        assert_eq!(parse_umask("Umask:\tnonsense\n"), None);
    }

    #[test]
    fn changes_outside_read_write_grants_are_refused_with_what_is_granted() {
        let config = tempfile::tempdir().unwrap();
        let files = grants(config.path(), &["./out"], &["./data"]);
        std::fs::write(config.path().join("data/f.txt"), "x").unwrap();
        std::fs::write(config.path().join("secret.txt"), "x").unwrap();
        std::fs::set_permissions(config.path().join("secret.txt"), std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::set_permissions(config.path().join("data/f.txt"), std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(
            files.set_permissions("out2/x.txt", 0o777, false).unwrap_err(),
            "the sandbox denied: chmod of out2/x.txt (granted read-write: ./out; read-only: ./data). To grant it, \
             add to the provider's block: sandbox { read_write = [\"./out2\"] }"
        );
        assert_eq!(
            files.set_permissions("data/f.txt", 0o777, false).unwrap_err(),
            "the sandbox denied: chmod of data/f.txt (granted read-only: ./data). To grant it, move ./data from \
             read_only to read_write in the provider's sandbox block: sandbox { read_write = [\"./data\"] }"
        );
        let err = files.set_permissions("out/../secret.txt", 0o777, false).unwrap_err();
        assert_eq!(err, "the sandbox denied: chmod of out/../secret.txt (it leads out of the grant ./out)");
        std::os::unix::fs::symlink("../secret.txt", config.path().join("out/link")).unwrap();
        let err = files.set_permissions("out/link", 0o777, false).unwrap_err();
        assert_eq!(err, "the sandbox denied: chmod of out/link (it leads out of the grant ./out)");
        let err = files.set_permissions("out/x", 0o4755, false).unwrap_err();
        assert!(err.starts_with("the sandbox denied: chmod of out/x to 0o4755 (only the permission bits"), "{err}");
        assert_eq!(mode_of(&config.path().join("secret.txt")), 0o600, "nothing outside the grants changed");
        assert_eq!(mode_of(&config.path().join("data/f.txt")), 0o600);

        let none = FileGrants::new("p".into(), &Sandbox::default());
        let err = none.set_permissions("/etc/passwd", 0o777, false).unwrap_err();
        assert_eq!(
            err,
            "the sandbox denied: chmod of /etc/passwd (no directory is granted). To grant it, add to the provider's \
             block: sandbox { read_write = [\"/etc\"] }"
        );
    }

    #[test]
    fn while_planning_a_read_write_grant_is_held_and_said_to_be() {
        let config = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(config.path().join("out")).unwrap();
        std::fs::create_dir_all(config.path().join("data")).unwrap();
        let mut sandbox =
            Sandbox::resolve(config.path(), &["./out".into(), "./new".into()], &["./data".into()]).unwrap();
        sandbox.inspect_only();
        let files = FileGrants::new("p".into(), &sandbox);
        let held = |grant: &str| {
            format!("(granted read-write: {grant}, which is read-only while nothing may change (validate, plan))")
        };
        // `out` is mounted read-only; `new` does not exist yet, so not at all.
        let err = files.set_permissions("out/x.txt", 0o600, true).unwrap_err();
        assert_eq!(err, format!("the sandbox denied: chmod of out/x.txt {}", held("./out")));
        let err = files.set_permissions("new/x.txt", 0o600, true).unwrap_err();
        assert_eq!(err, format!("the sandbox denied: chmod of new/x.txt {}", held("./new")));
        let err = files.set_permissions("data/x.txt", 0o600, true).unwrap_err();
        assert!(err.starts_with("the sandbox denied: chmod of data/x.txt (granted read-only: ./data). "), "{err}");
        let err = files.set_permissions("elsewhere/x.txt", 0o600, true).unwrap_err();
        assert!(err.contains("(granted read-write: ./out, ./new; read-only: ./data)"), "{err}");
    }

    #[test]
    fn refusals_are_logged() {
        let files = FileGrants::new("p".into(), &Sandbox::default());
        let logged = super::super::tests::capture_logs(|| {
            files.set_permissions("x.txt", 0o600, true).unwrap_err();
        });
        assert!(logged.contains("the sandbox denied: chmod of x.txt (no directory is granted)"), "{logged}");
    }

    #[test]
    fn grant_names_and_directories_read_as_written_in_a_sandbox_block() {
        assert_eq!(shown("out"), "./out");
        assert_eq!(shown("."), ".");
        assert_eq!(shown("../shared"), "../shared");
        assert_eq!(shown("/srv/www"), "/srv/www");
        assert_eq!(directory_of("out2/sub/x.txt"), "./out2/sub");
        assert_eq!(directory_of("./x.txt"), ".");
        assert_eq!(directory_of("/etc/passwd"), "/etc");
        assert_eq!(directory_of("/x"), "/");
        assert_eq!(strip_prefixes("/././/out"), "out");
        assert_eq!(strip_prefixes("."), "");
        assert_eq!(strip_prefixes("../x"), "../x");
    }
}
