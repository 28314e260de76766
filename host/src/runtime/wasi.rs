//! The sandbox policy mapped to WASI: the one place a [`Sandbox`] becomes
//! what a provider instance can reach — preopened directories, environment
//! variables, its output, and TCP connections to the granted targets only
//! (`sockets`).

use std::path::{Path, PathBuf};

use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder};

use super::denials::ROOT;
use super::output::GuestOutput;
use super::sandbox::{Grant, Sandbox};
use super::sockets::SocketPolicy;

/// The WASI context of one instance of a provider in `sandbox`: the
/// granted directories preopened, the granted environment, output into
/// `output`, TCP connections only where `sockets` allows, nothing else.
pub(crate) fn context(sandbox: &Sandbox, output: &GuestOutput, sockets: &SocketPolicy) -> Result<WasiCtx, String> {
    let mut builder = WasiCtxBuilder::new();
    builder
        .envs(&sandbox.env)
        .stdout(output.stdout())
        .stderr(output.stderr())
        // TCP sockets may be created (they count as descriptors), so that
        // a refused connect is refused, and told, with its address; every
        // address use is checked. UDP and wasmtime-wasi's own name lookup
        // stay off: `sockets` refuses the one and answers the other.
        .socket_addr_check(sockets.check())
        .allow_tcp(true)
        .allow_udp(false)
        .allow_ip_name_lookup(false);
    // First, so that a grant's own preopen wins where both match.
    if super::denials::watches_root(sandbox) {
        preopen_empty_root(&mut builder);
    }
    let all: Vec<&Grant> = sandbox.read_write.iter().chain(&sandbox.read_only).collect();
    for (grants, perms, writable) in
        [(&sandbox.read_write, FsPerms::ReadWrite, true), (&sandbox.read_only, FsPerms::ReadOnly, false)]
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

/// Preopens an empty directory as `/`, read-only: wasi-libc resolves
/// every path outside the grants in it (a grant's longer name wins), so
/// that the host sees, refuses and records those paths (see `denials`)
/// instead of the provider's libc refusing them unseen. The directory is
/// removed once opened: it holds nothing, and nothing can be created in a
/// removed directory, even through a call the watch would miss. Without a
/// temporary directory the provider goes without it, as before.
fn preopen_empty_root(builder: &mut WasiCtxBuilder) {
    let opened = tempfile::tempdir().map_err(|e| e.to_string()).and_then(|empty| {
        builder.preopened_dir(empty.path(), ROOT, FsPerms::ReadOnly).map(drop).map_err(|e| e.to_string())
    });
    if let Err(e) = opened {
        tracing::debug!("no root preopen: paths outside the grants are refused unseen: {e}");
    }
}

/// A granted directory opened for wasmtime-wasi, which takes a path. When
/// the grant lies inside another grant, it was opened here without
/// following links, and the path given is that open directory's own
/// (`/proc/self/fd/N`), so that nothing can be swapped in between.
pub(crate) enum OpenedGrant<'a> {
    /// The path as the operator wrote it (resolved): no provider can change it.
    Written(&'a Path),
    /// An open directory, named through procfs (held open until
    /// wasmtime-wasi has opened it again through that name).
    #[cfg(target_os = "linux")]
    Held { _dir: std::fs::File, path: PathBuf },
}

impl OpenedGrant<'_> {
    /// The path to open the grant's directory by, while `self` lives.
    pub(crate) fn path(&self) -> &Path {
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
/// followed as written. (The `files` import opens grants this way too.)
pub(crate) fn open_grant<'a>(grant: &'a Grant, all: &[&Grant]) -> Result<OpenedGrant<'a>, String> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
        let sockets = SocketPolicy::new(&sandbox);
        assert!(context(&sandbox, &output, &sockets).is_ok(), "the grants open while nothing is planted");
        std::fs::remove_dir(config.path().join("out/ro")).unwrap();
        std::os::unix::fs::symlink(secret.path(), config.path().join("out/ro")).unwrap();
        let err = context(&sandbox, &output, &sockets).err().expect("a planted link is refused");
        assert!(err.contains("\"ro\" is a symbolic link or not a directory"), "{err}");
        // The outer grant itself is the operator's path, and still opens.
        let outer = Sandbox::resolve(config.path(), &["./out".into()], &[]).unwrap();
        assert!(context(&outer, &output, &sockets).is_ok());
    }

    #[test]
    fn a_nested_grant_without_links_opens() {
        let config = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(config.path().join("out/a/b")).unwrap();
        let sandbox = Sandbox::resolve(config.path(), &["./out".into(), "./out/a/./b".into()], &[]).unwrap();
        assert!(context(&sandbox, &GuestOutput::new("p".into(), 10), &SocketPolicy::new(&sandbox)).is_ok());
        assert_eq!(normalize(Path::new("/a/./b/../c")), Path::new("/a/c"));
    }
}
