//! The compiled-component cache: machine code that Cranelift made from a
//! provider's `.wasm`, kept on disk so that the next run starts the provider
//! in milliseconds instead of recompiling it (60 ms for a Rust provider, ten
//! seconds for a Python one).
//!
//! An entry is named by the SHA-256 of the `.wasm` and a hash of everything
//! in the engine that compiled code depends on (wasmtime version, settings,
//! CPU features), so a changed provider or host never loads stale code. An
//! entry is the serialized component followed by the SHA-256 of those bytes,
//! checked before loading: a torn or corrupted file is recompiled, never run.

use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

/// Where compiled components are kept, if anywhere.
#[derive(Debug, Clone)]
pub(crate) struct ComponentCache {
    /// The `components/` directory; `None` compiles every time.
    dir: Option<PathBuf>,
}

/// A component ready to instantiate, and whether it came from the cache.
pub(crate) struct Loaded {
    pub component: Component,
    pub from_cache: bool,
}

impl ComponentCache {
    /// A cache under the cairn cache directory `root` (in `root/components`),
    /// or no cache.
    pub(crate) fn new(root: Option<PathBuf>) -> ComponentCache {
        ComponentCache { dir: root.map(|r| r.join("components")) }
    }

    /// The directory of compiled components, if caching.
    pub(crate) fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// The component of `wasm`: from the cache when a valid entry exists,
    /// else compiled (and then stored, if possible).
    pub(crate) fn load(&self, engine: &Engine, wasm: &[u8]) -> anyhow::Result<Loaded> {
        let Some(path) = self.entry_path(engine, wasm) else {
            return Ok(Loaded { component: compile(engine, wasm)?, from_cache: false });
        };
        if let Some(component) = read_entry(engine, &path) {
            return Ok(Loaded { component, from_cache: true });
        }
        let component = compile(engine, wasm)?;
        if let Err(e) = write_entry(&component, &path) {
            // A read-only or full disk costs speed, not correctness.
            tracing::warn!(path = %path.display(), "cannot cache the compiled provider: {e:#}");
        }
        Ok(Loaded { component, from_cache: false })
    }

    /// The file an entry for `wasm` lives in.
    pub(crate) fn entry_path(&self, engine: &Engine, wasm: &[u8]) -> Option<PathBuf> {
        let dir = self.dir.as_ref()?;
        let wasm_hash = hex::encode(Sha256::digest(wasm));
        let mut engine_hash = Sha256Hasher(Sha256::new());
        engine.precompile_compatibility_hash().hash(&mut engine_hash);
        let engine_hash = hex::encode(&engine_hash.0.finalize()[..8]);
        Some(dir.join(format!("{wasm_hash}-{engine_hash}.cwasm")))
    }
}

/// Cranelift compiles a component to machine code.
fn compile(engine: &Engine, wasm: &[u8]) -> anyhow::Result<Component> {
    Component::new(engine, wasm).map_err(super::to_anyhow)
}

/// The default cairn cache directory: `$CAIRN_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/cairn`, else `$HOME/.cache/cairn`.
pub(crate) fn default_cache_root() -> Option<PathBuf> {
    let var = |name| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    var("CAIRN_CACHE_DIR")
        .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("cairn")))
        .or_else(|| var("HOME").map(|d| d.join(".cache").join("cairn")))
}

/// A valid entry's component; `None` when there is no entry or it is not
/// usable (corrupt, or made by another wasmtime), which means "recompile".
fn read_entry(engine: &Engine, path: &Path) -> Option<Component> {
    let bytes = std::fs::read(path).ok()?;
    let Some(code) = verified(&bytes) else {
        tracing::warn!(path = %path.display(), "ignoring a corrupt compiled-provider cache entry");
        return None;
    };
    // SAFETY: deserializing runs the machine code in `code` later, so it must
    // be code wasmtime produced for a compatible engine. It is: the file is
    // ours (written by `write_entry` from `Component::serialize`), named by
    // the hash of its source and of the engine's settings, in the user's own
    // cache directory, and its checksum was verified just above, so it is
    // exactly the bytes we wrote. Anyone able to replace it consistently can
    // already change the user's files. wasmtime additionally checks the
    // header (version, target, settings) and refuses a mismatch.
    match unsafe { Component::deserialize(engine, code) } {
        Ok(component) => Some(component),
        Err(e) => {
            tracing::info!(path = %path.display(), "recompiling: cached provider code is not usable: {e:#}");
            None
        }
    }
}

/// The serialized component in an entry, if its checksum is right.
fn verified(entry: &[u8]) -> Option<&[u8]> {
    let split = entry.len().checked_sub(32)?;
    let (code, checksum) = entry.split_at(split);
    (Sha256::digest(code).as_slice() == checksum).then_some(code)
}

/// Stores a compiled component atomically: other processes see either no
/// entry or a whole one.
fn write_entry(component: &Component, path: &Path) -> anyhow::Result<()> {
    let code = component.serialize().map_err(super::to_anyhow)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    file.write_all(&code)?;
    file.write_all(&Sha256::digest(&code))?;
    file.persist(path)?;
    Ok(())
}

/// Feeds a [`Hash`] value into SHA-256, for a hash that is the same in every
/// process (std's `DefaultHasher` makes no such promise).
struct Sha256Hasher(Sha256);

impl Hasher for Sha256Hasher {
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// Unused: the digest is read from the inner SHA-256.
    fn finish(&self) -> u64 {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_verified() {
        let mut entry = b"code".to_vec();
        entry.extend_from_slice(&Sha256::digest(b"code"));
        assert_eq!(verified(&entry), Some(&b"code"[..]));
        entry[0] ^= 1;
        assert_eq!(verified(&entry), None);
        assert_eq!(verified(b"short"), None);
    }

    #[test]
    fn entry_names_depend_on_the_wasm() {
        let engine = super::super::engine::new_engine().unwrap();
        let cache = ComponentCache::new(Some("/c".into()));
        let a = cache.entry_path(&engine, b"a").unwrap();
        assert!(a.starts_with("/c/components") && a.extension().unwrap() == "cwasm");
        assert_ne!(a, cache.entry_path(&engine, b"b").unwrap());
        assert_eq!(a, cache.entry_path(&engine, b"a").unwrap());
        assert!(ComponentCache::new(None).entry_path(&engine, b"a").is_none());
    }
}
