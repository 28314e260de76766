//! `cairn version [-json]`: cairn's version, the platform it runs on, and
//! the providers `cairn.lock` pins in the current directory, as `terraform
//! version` prints its own with the providers of `.terraform.lock.hcl`.

use std::path::Path;

use anyhow::{Result, anyhow};

use crate::registry::LockFile;

/// Prints the version (as JSON with `json`) for the configuration in `dir`.
pub(super) fn run(dir: &Path, json: bool) -> Result<i32> {
    let lock = LockFile::load(dir).map_err(|e| anyhow!(e))?.unwrap_or_default();
    if json {
        println!("{}", serde_json::to_string_pretty(&as_json(&lock))?);
    } else {
        print!("{}", as_text(&lock));
    }
    Ok(0)
}

/// The platform as Terraform names it (`linux_amd64`, `darwin_arm64`), so
/// that scripts reading either tool's output read the same word.
pub fn platform() -> String {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        other => other,
    };
    format!("{}_{arch}", std::env::consts::OS)
}

/// What a locked provider is shown as: its version, or the start of its
/// hash when it declares none.
fn selection(entry: &crate::registry::LockEntry) -> String {
    match &entry.version {
        Some(v) => format!("v{v}"),
        None => format!("sha256:{}", &entry.sha256[..entry.sha256.len().min(12)]),
    }
}

/// `cairn v0.1.0`, `on linux_amd64`, then a `+ provider` line for each
/// locked provider.
fn as_text(lock: &LockFile) -> String {
    let mut out = format!("cairn v{}\non {}\n", env!("CARGO_PKG_VERSION"), platform());
    for (name, entry) in &lock.providers {
        out.push_str(&format!("+ provider {name} {} ({})\n", selection(entry), entry.source));
    }
    out
}

/// The `-json` form: `cairn_version`, `platform` and `provider_selections`
/// (provider name to version), the keys of `terraform version -json` with
/// cairn's name.
fn as_json(lock: &LockFile) -> serde_json::Value {
    let selections: serde_json::Map<String, serde_json::Value> = (lock.providers.iter())
        .map(|(name, entry)| (name.clone(), serde_json::Value::String(selection(entry).trim_start_matches('v').into())))
        .collect();
    serde_json::json!({
        "cairn_version": env!("CARGO_PKG_VERSION"),
        "platform": platform(),
        "provider_selections": selections,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::LockEntry;

    fn locked() -> LockFile {
        let mut lock = LockFile::default();
        let entry = |version: Option<&str>| LockEntry {
            source: "providers/x.wasm".into(),
            version: version.map(String::from),
            sha256: "3f7a9c0d11223344556677889900aabbccddeeff".into(),
            signed_by: None,
        };
        lock.providers.insert("random".into(), entry(Some("1.2.0")));
        lock.providers.insert("zeta".into(), entry(None));
        lock
    }

    #[test]
    fn the_text_names_the_version_the_platform_and_each_locked_provider() {
        let text = as_text(&locked());
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some(format!("cairn v{}", env!("CARGO_PKG_VERSION")).as_str()));
        assert_eq!(lines.next(), Some(format!("on {}", platform()).as_str()));
        assert_eq!(lines.next(), Some("+ provider random v1.2.0 (providers/x.wasm)"));
        assert_eq!(lines.next(), Some("+ provider zeta sha256:3f7a9c0d1122 (providers/x.wasm)"));
        assert_eq!(lines.next(), None);
    }

    #[test]
    fn the_json_has_terraforms_keys_under_cairns_name() {
        let json = as_json(&locked());
        assert_eq!(json["cairn_version"], env!("CARGO_PKG_VERSION"));
        assert_eq!(json["platform"], platform());
        assert_eq!(json["provider_selections"]["random"], "1.2.0");
        assert_eq!(json["provider_selections"]["zeta"], "sha256:3f7a9c0d1122");
    }

    #[test]
    fn the_platform_is_named_as_terraform_names_it() {
        let platform = platform();
        assert!(!platform.contains("x86_64") && !platform.contains("aarch64"), "{platform}");
        assert!(platform.starts_with(std::env::consts::OS), "{platform}");
    }
}
