//! Changes to files that WASI 0.2 has no call for, made by the host inside
//! the directories the operator granted read-write: permission bits.
//!
//! ```no_run
//! # fn write_key() -> Result<(), String> {
//! std::fs::write("out/key.pem", "…").map_err(|e| e.to_string())?;
//! // 0o600 less cairn's umask: what creating the file with 0o600 gives.
//! cairn_sdk::files::set_permissions("out/key.pem", 0o600)?;
//! # Ok(())
//! # }
//! ```
//!
//! Paths are the provider's own (`out/key.pem` with a grant of `./out`).
//! Anything outside a read-write grant is refused by the host with a
//! message that says what was denied and what is granted, which is the
//! error returned here: put it in a diagnostic as it is.
//!
//! Outside a component (native unit tests) the change is made directly,
//! since there is no host and no sandbox.

use std::path::Path;

/// Sets the permission bits of the file or directory at `path` to `mode`
/// (at most `0o777`) less the bits cairn's umask clears: what a file or
/// directory created with `mode` gets (`0o777` under umask `022` gives
/// `0o755`). This is what Terraform's `local` provider does, and what
/// keeps a default of `0o777` from making files world-writable.
pub fn set_permissions(path: impl AsRef<Path>, mode: u32) -> Result<(), String> {
    set(path.as_ref(), mode, true)
}

/// Sets the permission bits of the file or directory at `path` to exactly
/// `mode` (at most `0o777`), whatever cairn's umask is.
pub fn set_permissions_exact(path: impl AsRef<Path>, mode: u32) -> Result<(), String> {
    set(path.as_ref(), mode, false)
}

fn set(path: &Path, mode: u32, apply_umask: bool) -> Result<(), String> {
    // WASI paths are strings.
    let text = path.to_str().ok_or_else(|| format!("{} is not a UTF-8 path", path.display()))?;
    #[cfg(target_arch = "wasm32")]
    {
        crate::bindings::cairn::provider::files::set_permissions(text, mode, apply_umask)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        native::set(text, mode, apply_umask)
    }
}

/// Natively the import is an unreachable stub: the change is made here,
/// with the same limits the host applies.
#[cfg(not(target_arch = "wasm32"))]
mod native {
    /// Sets `mode` (less the umask when `apply_umask`) on `path`.
    #[cfg(unix)]
    pub(super) fn set(path: &str, mode: u32, apply_umask: bool) -> Result<(), String> {
        use std::os::unix::fs::PermissionsExt as _;
        if mode > 0o777 {
            return Err(format!("chmod of {path} to {mode:#o}: only the permission bits 0o777 may be set"));
        }
        let mode = if apply_umask { mode & !umask() } else { mode };
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
            .map_err(|e| format!("cannot change the permissions of {path}: {e}"))
    }

    /// Permission bits are a Unix notion.
    #[cfg(not(unix))]
    pub(super) fn set(path: &str, _mode: u32, _apply_umask: bool) -> Result<(), String> {
        Err(format!("cannot change the permissions of {path}: not supported on this system"))
    }

    /// This process's umask, from `/proc/self/status` (reading it with
    /// `umask(2)` means setting it, which races with other threads); `022`
    /// where that cannot be read.
    #[cfg(unix)]
    fn umask() -> u32 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let line = status.lines().find_map(|line| line.strip_prefix("Umask:"));
        line.and_then(|mask| u32::from_str_radix(mask.trim(), 8).ok()).unwrap_or(0o022)
    }

    #[cfg(all(test, unix))]
    mod tests {
        use std::os::unix::fs::PermissionsExt as _;

        #[test]
        fn modes_are_set_with_or_without_the_umask() {
            let dir = std::env::temp_dir().join(format!("cairn-sdk-files-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let file = dir.join("x.txt");
            std::fs::write(&file, "x").unwrap();
            let mode = || std::fs::metadata(&file).unwrap().permissions().mode() & 0o7777;
            crate::files::set_permissions_exact(&file, 0o640).unwrap();
            assert_eq!(mode(), 0o640);
            crate::files::set_permissions(&file, 0o777).unwrap();
            assert_eq!(mode(), 0o777 & !super::umask());
            assert!(crate::files::set_permissions(&file, 0o4755).is_err());
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }
}
