//! `cairn.lock`: the providers of a configuration pinned by `cairn init`,
//! one SHA-256 per provider (one `.wasm` runs on every platform, so one hash
//! is the whole lock). Stable, sorted text meant to be committed:
//!
//! ```text
//! provider "random" {
//!   source    = "oci://registry.example.com/cairn/random:1.2"
//!   version   = "1.2.0"
//!   sha256    = "3f7a…"
//!   signed_by = "RWQ…"
//! }
//! ```
//!
//! Bundled providers are not in it: they are part of the `cairn` binary,
//! which the operator already trusts, and pinning them would make every
//! upgrade of cairn fail.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// The lock file's name, in the configuration directory.
pub const LOCK_FILE: &str = "cairn.lock";

/// One provider's pin.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LockEntry {
    /// The source it was resolved from, as the configuration wrote it
    /// (for the providers path: `providers path`).
    pub source: String,
    /// The version it declares, if it declares one.
    pub version: Option<String>,
    /// The SHA-256 of its `.wasm`, lowercase hex.
    pub sha256: String,
    /// The public key (minisign, `RW…`) whose signature was verified, when
    /// the configuration requires trusted keys.
    pub signed_by: Option<String>,
}

/// The whole lock file: entries by provider name.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LockFile {
    /// Pins by provider name (sorted, so the text is stable).
    pub providers: BTreeMap<String, LockEntry>,
}

/// The keys an entry may have, in the order they are written.
const KEYS: &[&str] = &["source", "version", "sha256", "signed_by"];

impl LockFile {
    /// The lock file of the configuration directory `dir`; `Ok(None)` when
    /// there is none.
    pub fn load(dir: &Path) -> Result<Option<LockFile>, String> {
        let path = dir.join(LOCK_FILE);
        match std::fs::read_to_string(&path) {
            Ok(text) => LockFile::parse(&text).map(Some).map_err(|e| format!("{}: {e}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("cannot read {}: {e}", path.display())),
        }
    }

    /// Writes the lock file into `dir` atomically.
    pub fn save(&self, dir: &Path) -> std::io::Result<()> {
        use std::io::Write as _;
        let mut file = tempfile::NamedTempFile::new_in(dir)?;
        file.write_all(self.render().as_bytes())?;
        file.as_file().sync_all()?;
        file.persist(dir.join(LOCK_FILE))?;
        Ok(())
    }

    /// The file's text: a header, then one block per provider, sorted by
    /// name, keys in a fixed order.
    pub fn render(&self) -> String {
        let mut out = String::from(
            "# Providers pinned by `cairn init`: commit this file.\n\
             # Change it deliberately with `cairn init -upgrade`.\n",
        );
        for (name, entry) in &self.providers {
            let _ = writeln!(out, "\nprovider {} {{", quote(name));
            let values = [Some(&entry.source), entry.version.as_ref(), Some(&entry.sha256), entry.signed_by.as_ref()];
            for (key, value) in KEYS.iter().zip(values) {
                if let Some(value) = value {
                    let _ = writeln!(out, "  {key:<9} = {}", quote(value));
                }
            }
            out.push_str("}\n");
        }
        out
    }

    /// Parses the text [`render`](Self::render) writes (comments and blank
    /// lines anywhere); errors name the line.
    pub fn parse(text: &str) -> Result<LockFile, String> {
        let mut lock = LockFile::default();
        let mut open: Option<(String, LockEntry, usize)> = None;
        for (index, raw) in text.lines().enumerate() {
            let line_no = index + 1;
            let line = raw.trim();
            let error = |what: &str| format!("line {line_no}: {what}: {raw:?}");
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            match &mut open {
                None => {
                    let name = line
                        .strip_prefix("provider ")
                        .and_then(|rest| rest.strip_suffix('{'))
                        .map(str::trim)
                        .and_then(unquote)
                        .ok_or_else(|| error("expected provider \"NAME\" {"))?;
                    if lock.providers.contains_key(&name) {
                        return Err(error("the provider is locked twice"));
                    }
                    open = Some((name, LockEntry::default(), line_no));
                }
                Some((name, entry, _)) => {
                    if line == "}" {
                        if entry.sha256.is_empty() {
                            return Err(error(&format!("provider {name:?} has no sha256")));
                        }
                        let (name, entry, _) = open.take().ok_or_else(|| error("unexpected }"))?;
                        lock.providers.insert(name, entry);
                        continue;
                    }
                    let (key, value) = line.split_once('=').ok_or_else(|| error("expected key = \"value\""))?;
                    let value = unquote(value.trim()).ok_or_else(|| error("the value must be a quoted string"))?;
                    match key.trim() {
                        "source" => entry.source = value,
                        "version" => entry.version = Some(value),
                        "sha256" => {
                            if value.len() != 64 || !value.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f')) {
                                return Err(error("sha256 must be 64 lowercase hex digits"));
                            }
                            entry.sha256 = value;
                        }
                        "signed_by" => entry.signed_by = Some(value),
                        other => return Err(error(&format!("unknown key {other:?} (expected {})", KEYS.join(", ")))),
                    }
                }
            }
        }
        if let Some((name, _, line_no)) = open {
            return Err(format!("line {line_no}: the block of provider {name:?} is not closed"));
        }
        Ok(lock)
    }
}

/// A string in double quotes (what the values can hold needs no escapes
/// but these two).
fn quote(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The inside of a quoted string.
fn unquote(s: &str) -> Option<String> {
    let inner = s.strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push(chars.next()?),
            '"' => return None,
            c => out.push(c),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(source: &str, hash: char) -> LockEntry {
        LockEntry {
            source: source.into(),
            version: Some("1.2.0".into()),
            sha256: hash.to_string().repeat(64),
            signed_by: None,
        }
    }

    #[test]
    fn round_trips_sorted_and_stable() {
        let mut lock = LockFile::default();
        lock.providers.insert("zeta".into(), entry("./z.wasm", 'a'));
        let mut signed = entry("oci://localhost:5000/x:1", 'b');
        signed.signed_by = Some("RWQ\"odd\"".into());
        lock.providers.insert("alpha".into(), signed);
        let text = lock.render();
        assert!(text.find("provider \"alpha\"").unwrap() < text.find("provider \"zeta\"").unwrap(), "{text}");
        assert!(text.contains("  sha256    = \"bbbb"), "{text}");
        assert_eq!(LockFile::parse(&text).unwrap(), lock);
        assert_eq!(LockFile::parse(&text).unwrap().render(), text);
    }

    #[test]
    fn errors_name_the_line() {
        let hash = "a".repeat(64);
        for (text, why) in [
            ("provider local {\n}".to_string(), "line 1: expected provider"),
            ("provider \"a\" {\n  source = \"x\"\n}".to_string(), "line 3: provider \"a\" has no sha256"),
            (format!("provider \"a\" {{\n  sha256 = \"{hash}\"\n  colour = \"red\"\n}}"), "line 3: unknown key"),
            ("provider \"a\" {\n  sha256 = \"abc\"\n}".to_string(), "line 2: sha256 must be 64"),
            (
                format!("provider \"a\" {{\n  sha256 = \"{hash}\"\n"),
                "line 1: the block of provider \"a\" is not closed",
            ),
            (
                format!("provider \"a\" {{\n sha256 = \"{hash}\"\n}}\nprovider \"a\" {{\n}}"),
                "line 4: the provider is locked twice",
            ),
        ] {
            let e = LockFile::parse(&text).unwrap_err();
            assert!(e.starts_with(why), "{e}");
        }
    }
}
