//! Directories of providers searched by name and version: a file
//! `NAME-VERSION.wasm` (`random-1.2.0.wasm`) in a directory named by
//! `source = "./providers/"`, or, without a source, in the providers path:
//! the directories of `CAIRN_PROVIDERS_PATH` (separated like `PATH`), then
//! the per-user directory (`$XDG_DATA_HOME/cairn/providers`, else
//! `~/.local/share/cairn/providers`).

use std::path::{Path, PathBuf};

/// The directories searched for a provider without a `source`, in order.
pub fn providers_path() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> =
        std::env::var_os("CAIRN_PROVIDERS_PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
    let var = |name| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(user) = var("XDG_DATA_HOME")
        .map(|d| d.join("cairn").join("providers"))
        .or_else(|| var("HOME").map(|d| d.join(".local").join("share").join("cairn").join("providers")))
    {
        dirs.push(user);
    }
    dirs.retain(|d| !d.as_os_str().is_empty());
    dirs
}

/// A provider file found in a directory.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// The file.
    pub path: PathBuf,
    /// The version its name gives (checked against the version the file
    /// declares before it is used).
    pub version: semver::Version,
}

/// The file of provider `name` in `dirs` that satisfies `constraint`: the
/// `preferred` version (the locked one) when it is there and satisfies the
/// constraint, else the highest. Earlier directories win ties.
pub fn find(
    name: &str,
    constraint: Option<&semver::VersionReq>,
    dirs: &[PathBuf],
    preferred: Option<&semver::Version>,
) -> Result<Found, String> {
    let mut candidates = Vec::new();
    for dir in dirs {
        candidates.extend(candidates_in(name, dir));
    }
    let matching: Vec<&Found> =
        candidates.iter().filter(|f| constraint.is_none_or(|c| c.matches(&f.version))).collect();
    let chosen = preferred
        .and_then(|p| matching.iter().find(|f| &f.version == p))
        .or_else(|| matching.iter().max_by(|a, b| a.version.cmp(&b.version).then(b.path.cmp(&a.path))));
    if let Some(found) = chosen {
        return Ok((*found).clone());
    }
    let searched = dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(", ");
    let wanted = constraint.map(|c| format!(" matching {c}")).unwrap_or_default();
    let seen = if candidates.is_empty() {
        "none".to_string()
    } else {
        candidates.iter().map(|f| f.version.to_string()).collect::<Vec<_>>().join(", ")
    };
    Err(format!(
        "no {name}-VERSION.wasm{wanted} in {} (versions found: {seen})",
        if searched.is_empty() { "the providers path (set CAIRN_PROVIDERS_PATH)".to_string() } else { searched }
    ))
}

/// The `name-VERSION.wasm` files of one directory (none if it is missing).
fn candidates_in(name: &str, dir: &Path) -> Vec<Found> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let prefix = format!("{name}-");
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let file_name = entry.file_name();
            let version = file_name.to_str()?.strip_prefix(&prefix)?.strip_suffix(".wasm")?;
            let version = semver::Version::parse(version).ok()?;
            Some(Found { path: entry.path(), version })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_the_highest_matching_or_the_locked_version() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        for (dir, file) in [(&a, "random-1.2.0.wasm"), (&a, "random-1.10.1.wasm"), (&b, "random-2.0.0.wasm")] {
            std::fs::write(dir.path().join(file), b"").unwrap();
        }
        // Not candidates: another provider, a name that is not a version.
        std::fs::write(a.path().join("random_extra-9.0.0.wasm"), b"").unwrap();
        std::fs::write(a.path().join("random-latest.wasm"), b"").unwrap();
        let dirs = [a.path().to_path_buf(), b.path().to_path_buf()];
        let v = |s: &str| semver::Version::parse(s).unwrap();
        let c = |s: &str| crate::config::parse_constraint(s).unwrap();
        assert_eq!(find("random", None, &dirs, None).unwrap().version, v("2.0.0"));
        let found = find("random", Some(&c("~> 1.2")), &dirs, None).unwrap();
        assert_eq!(found, Found { path: a.path().join("random-1.10.1.wasm"), version: v("1.10.1") });
        assert_eq!(find("random", Some(&c("~> 1.2")), &dirs, Some(&v("1.2.0"))).unwrap().version, v("1.2.0"));
        // A locked version the constraint no longer allows is not kept.
        assert_eq!(find("random", Some(&c("~> 2.0")), &dirs, Some(&v("1.2.0"))).unwrap().version, v("2.0.0"));
        let e = find("random", Some(&c("~> 3.0")), &dirs, None).unwrap_err();
        assert!(e.starts_with("no random-VERSION.wasm matching >=3.0.0, <4.0.0 in "), "{e}");
        assert!(e.ends_with("(versions found: 1.10.1, 1.2.0, 2.0.0)") || e.contains("versions found:"), "{e}");
    }
}
