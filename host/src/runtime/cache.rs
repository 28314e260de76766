//! The compiled-component cache: machine code that Cranelift made from a
//! provider's `.wasm`, kept on disk so that the next run starts the provider
//! in milliseconds instead of recompiling it (60 ms for a Rust provider, ten
//! seconds for a Python one).
//!
//! wasmtime's deserialisation runs whatever machine code it is given, so an
//! entry is loaded only when cairn can prove that it wrote it: every entry
//! ends with an HMAC-SHA256, under a per-user key kept *outside* the cache
//! directory (see [`default_key_file`]), over the engine's compatibility
//! hash (wasmtime version, settings, CPU features), the SHA-256 of the
//! `.wasm` and the compiled code. An entry that was corrupted, copied from
//! another user's cache (another key), made for another `.wasm` or by
//! another engine configuration fails that check and is recompiled and
//! rewritten, never run. The file name (hash of the `.wasm` and of the
//! engine) only finds the entry; the MAC is what makes it trusted.

use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

use super::compile_notice::{Compile, Notice};
use super::engine::Tier;

type HmacSha256 = Hmac<Sha256>;

/// Bytes of the MAC at the end of every entry.
const MAC_LEN: usize = 32;

/// Bytes of a cache key.
pub(crate) const KEY_LEN: usize = 32;

/// Domain separation: a MAC made for anything else under the same key (or
/// by an older entry format) never verifies as an entry.
const MAC_CONTEXT: &[u8] = b"cairn compiled component v1\0";

/// Where compiled components are kept, if anywhere.
#[derive(Clone)]
pub(crate) struct ComponentCache {
    /// The `components/` directory and the key its entries are signed with;
    /// `None` compiles every time.
    store: Option<(PathBuf, [u8; KEY_LEN])>,
}

impl std::fmt::Debug for ComponentCache {
    // Never print the key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ComponentCache").field("dir", &self.dir()).finish_non_exhaustive()
    }
}

/// The engines a component may be compiled with.
#[derive(Clone, Copy)]
pub(crate) struct Compilers<'a> {
    /// Cranelift's: what the cache keeps.
    pub optimized: &'a Engine,
    /// Winch's and what its code is for (see `tiers`); `None` compiles
    /// optimised code before the first call.
    pub baseline: Option<(&'a Engine, BaselineUse)>,
}

/// What baseline (Winch) code is compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BaselineUse {
    /// This run only, while optimised code is compiled into the cache in
    /// the background (`CAIRN_COMPILE=tiered`).
    UntilOptimized,
    /// This run and later ones: the baseline code is cached, and nothing
    /// is compiled in the background (`CAIRN_COMPILE=baseline`).
    Cached,
}

/// A component ready to instantiate, and whether it came from the cache.
pub(crate) struct Loaded {
    pub component: Component,
    pub from_cache: bool,
    /// The compiler of its code (and so the engine it runs in).
    pub tier: Tier,
}

impl ComponentCache {
    /// A cache under the cairn cache directory `root` (in `root/components`)
    /// whose entries are authenticated with the key in `key_file` (created
    /// on first use), or no cache. Without a usable key there is no cache:
    /// unauthenticated code is never loaded.
    pub(crate) fn new(root: Option<PathBuf>, key_file: Option<PathBuf>) -> ComponentCache {
        let (Some(root), Some(key_file)) = (root, key_file) else { return ComponentCache { store: None } };
        match load_or_create_key(&key_file) {
            Ok(key) => ComponentCache { store: Some((root.join("components"), key)) },
            Err(e) => {
                tracing::warn!(key = %key_file.display(), "compiled providers are not cached: no cache key: {e:#}");
                ComponentCache { store: None }
            }
        }
    }

    /// A cache in the components directory `dir` with the key `key`: the
    /// background compile's view of its parent's cache.
    pub(crate) fn with_key(dir: PathBuf, key: [u8; KEY_LEN]) -> ComponentCache {
        ComponentCache { store: Some((dir, key)) }
    }

    /// The directory of compiled components, if caching.
    pub(crate) fn dir(&self) -> Option<&Path> {
        self.store.as_ref().map(|(dir, _)| dir.as_path())
    }

    /// The key entries are signed with, if caching.
    pub(crate) fn key(&self) -> Option<&[u8; KEY_LEN]> {
        self.store.as_ref().map(|(_, key)| key)
    }

    /// The file the entry of `wasm` compiled by `engine` lives in, if caching.
    pub(crate) fn entry_path(&self, engine: &Engine, wasm: &[u8]) -> Option<PathBuf> {
        Some(EntryContext::new(engine, wasm).entry_path(self.dir()?))
    }

    /// The component of `wasm`, the provider `name`: from the cache when
    /// an entry this user's cairn wrote exists; else, with a baseline
    /// compiler, baseline code now and optimised code into the cache in the
    /// background; else optimised code, compiled now (and stored, if
    /// possible). A slow compile is announced (`compile_notice`).
    pub(crate) fn load(&self, compilers: Compilers<'_>, name: &str, wasm: &[u8]) -> anyhow::Result<Loaded> {
        let engine = compilers.optimized;
        let Some((dir, key)) = &self.store else {
            if let Some((baseline, BaselineUse::Cached)) = compilers.baseline
                && let Some(component) = compile_baseline(baseline, name, wasm, Compile::Uncached)
            {
                return Ok(Loaded { component, from_cache: false, tier: Tier::Baseline });
            }
            let component = compile(engine, name, wasm, Compile::Uncached)?;
            return Ok(Loaded { component, from_cache: false, tier: Tier::Optimized });
        };
        // Hashed once: a provider's `.wasm` is hundreds of kilobytes, and
        // every run loads it.
        let context = EntryContext::new(engine, wasm);
        let path = context.entry_path(dir);
        if let Some(component) = read_entry(engine, key, &context, &path) {
            return Ok(Loaded { component, from_cache: true, tier: Tier::Optimized });
        }
        match compilers.baseline {
            Some((baseline, BaselineUse::UntilOptimized)) => {
                if let Some(component) = compile_baseline(baseline, name, wasm, Compile::Baseline) {
                    super::tiers::compile_in_background(self, engine, name, wasm, &path);
                    return Ok(Loaded { component, from_cache: false, tier: Tier::Baseline });
                }
            }
            Some((baseline, BaselineUse::Cached)) => {
                let baseline_context = context.with_engine(baseline);
                let baseline_path = baseline_context.entry_path(dir);
                if let Some(component) = read_entry(baseline, key, &baseline_context, &baseline_path) {
                    return Ok(Loaded { component, from_cache: true, tier: Tier::Baseline });
                }
                if let Some(component) = compile_baseline(baseline, name, wasm, Compile::BaselineForCache) {
                    store(&component, key, &baseline_context, &baseline_path);
                    return Ok(Loaded { component, from_cache: false, tier: Tier::Baseline });
                }
            }
            None => {}
        }
        let component = compile(engine, name, wasm, Compile::ForCache)?;
        store(&component, key, &context, &path);
        Ok(Loaded { component, from_cache: false, tier: Tier::Optimized })
    }

    /// Compiles `wasm` with `engine` (Cranelift) and stores the entry: the
    /// background half of a tiered load.
    pub(crate) fn compile_and_store(&self, engine: &Engine, wasm: &[u8]) -> anyhow::Result<()> {
        let Some((dir, key)) = &self.store else { return Ok(()) };
        let context = EntryContext::new(engine, wasm);
        let component = Component::new(engine, wasm).map_err(super::to_anyhow)?;
        write_entry(&component, key, &context, &context.entry_path(dir))
    }
}

/// An error and its causes on one line.
fn error_chain(e: &anyhow::Error) -> String {
    e.chain().map(ToString::to_string).collect::<Vec<_>>().join(": ")
}

/// Removes every compiled component under the cairn cache directory
/// `root`; returns how many entries there were. Downloaded providers are
/// kept: the lock file pins them and offline runs need them.
pub fn clean(root: &Path) -> std::io::Result<usize> {
    let dir = root.join("components");
    let count = match std::fs::read_dir(&dir) {
        Ok(entries) => entries.count(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    std::fs::remove_dir_all(&dir)?;
    Ok(count)
}

/// The hash of what makes `engine`'s code loadable by another engine.
fn engine_hash(engine: &Engine) -> [u8; 32] {
    let mut hash = Sha256Hasher(Sha256::new());
    engine.precompile_compatibility_hash().hash(&mut hash);
    hash.0.finalize().into()
}

/// What an entry is bound to besides its code: the engine that compiled it
/// and the `.wasm` it was compiled from.
struct EntryContext {
    engine_hash: [u8; 32],
    wasm_hash: [u8; 32],
}

impl EntryContext {
    fn new(engine: &Engine, wasm: &[u8]) -> EntryContext {
        EntryContext { engine_hash: engine_hash(engine), wasm_hash: Sha256::digest(wasm).into() }
    }

    /// The context of the same `.wasm` compiled by `engine`, without
    /// hashing the `.wasm` again (tens of megabytes for a large provider).
    fn with_engine(&self, engine: &Engine) -> EntryContext {
        EntryContext { engine_hash: engine_hash(engine), wasm_hash: self.wasm_hash }
    }

    /// The file in `dir` an entry for this context lives in.
    fn entry_path(&self, dir: &Path) -> PathBuf {
        let wasm_hash = hex::encode(self.wasm_hash);
        let engine_hash = hex::encode(&self.engine_hash[..8]);
        dir.join(format!("{wasm_hash}-{engine_hash}.cwasm"))
    }

    /// The MAC of `code` in this context.
    fn mac(&self, key: &[u8; KEY_LEN], code: &[u8]) -> HmacSha256 {
        // HMAC accepts keys of any length; 32 bytes cannot fail.
        let mut mac = <HmacSha256 as Mac>::new_from_slice(key).unwrap_or_else(|_| unreachable!("HMAC takes any key"));
        mac.update(MAC_CONTEXT);
        mac.update(&self.engine_hash);
        mac.update(&self.wasm_hash);
        mac.update(code);
        mac
    }
}

/// Winch's machine code of a component, or `None` (said on standard
/// error) when Winch cannot compile it: it lacks some proposals (tail
/// calls, exceptions, GC, parts of SIMD) and some architectures, and the
/// caller then does what cairn did before tiers.
fn compile_baseline(baseline: &Engine, name: &str, wasm: &[u8], what: Compile) -> Option<Component> {
    match compile(baseline, name, wasm, what) {
        Ok(component) => Some(component),
        Err(e) => {
            eprintln!(
                "provider {name} starts on optimised code: the baseline compiler (Winch) cannot compile it: {}",
                error_chain(&e)
            );
            None
        }
    }
}

/// Writes the entry of `component`; a read-only or full disk costs speed,
/// not correctness, so a failure is only logged.
fn store(component: &Component, key: &[u8; KEY_LEN], context: &EntryContext, path: &Path) {
    if let Err(e) = write_entry(component, key, context, path) {
        tracing::warn!(path = %path.display(), "cannot cache the compiled provider: {e:#}");
    }
}

/// `engine`'s compiler makes machine code of a component; `what` says
/// which compiler and whether the code is kept for later runs.
fn compile(engine: &Engine, name: &str, wasm: &[u8], what: Compile) -> anyhow::Result<Component> {
    let _notice = Notice::start(name, wasm.len(), what);
    Component::new(engine, wasm).map_err(super::to_anyhow)
}

/// The default cairn cache directory: `$CAIRN_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/cairn`, else `$HOME/.cache/cairn`.
pub fn default_cache_root() -> Option<PathBuf> {
    let var = |name| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    var("CAIRN_CACHE_DIR")
        .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("cairn")))
        .or_else(|| var("HOME").map(|d| d.join(".cache").join("cairn")))
}

/// The file holding this user's cache key: `$CAIRN_CACHE_KEY_FILE`, else
/// `$XDG_CONFIG_HOME/cairn/cache.key`, else `$HOME/.config/cairn/cache.key`.
/// It lives outside the cache directory on purpose: whoever can write
/// the cache (a shared or synced cache directory, a restored backup) must
/// not also be able to sign entries.
pub fn default_key_file() -> Option<PathBuf> {
    let var = |name| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    var("CAIRN_CACHE_KEY_FILE")
        .or_else(|| var("XDG_CONFIG_HOME").map(|d| d.join("cairn").join("cache.key")))
        .or_else(|| var("HOME").map(|d| d.join(".config").join("cairn").join("cache.key")))
}

/// The key in `path`, or a new random one written there (readable by the
/// user only). Two processes creating it at once agree: the loser of the
/// race reads the winner's key.
fn load_or_create_key(path: &Path) -> anyhow::Result<[u8; KEY_LEN]> {
    use anyhow::Context as _;
    match std::fs::read(path) {
        Ok(bytes) => {
            return bytes.try_into().map_err(|b: Vec<u8>| {
                anyhow::anyhow!("{} holds {} bytes, not a {KEY_LEN}-byte key", path.display(), b.len())
            });
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
    let mut key = [0u8; KEY_LEN];
    getrandom::fill(&mut key).map_err(|e| anyhow::anyhow!("no randomness for a cache key: {e}"))?;
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        file.as_file().set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    file.write_all(&key)?;
    file.as_file().sync_all()?;
    match file.persist_noclobber(path) {
        Ok(_) => Ok(key),
        // Another process made it first: use theirs.
        Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => load_or_create_key(path),
        Err(e) => Err(e.error).with_context(|| format!("cannot write {}", path.display())),
    }
}

/// A valid entry's component; `None` when there is no entry or it is not
/// one this user's cairn wrote for this `.wasm` and engine, which means
/// "recompile".
fn read_entry(engine: &Engine, key: &[u8; KEY_LEN], context: &EntryContext, path: &Path) -> Option<Component> {
    let bytes = std::fs::read(path).ok()?;
    let Some(code) = authenticated(key, context, &bytes) else {
        tracing::warn!(path = %path.display(), "ignoring a compiled-provider cache entry cairn did not write (corrupt, foreign or stale)");
        return None;
    };
    // SAFETY: deserializing runs the machine code in `code` later, so it must
    // be code wasmtime produced for a compatible engine. It is: its MAC,
    // under this user's secret key (kept outside the cache directory), was
    // just verified over the code, this engine's compatibility hash and the
    // `.wasm`'s hash, so these are exactly the bytes `write_entry` stored
    // from `Component::serialize` on an engine configured like this one.
    // Someone able to forge that MAC can read the user's key, and so can
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

/// The serialized component in an entry, if its MAC is right (compared in
/// constant time).
fn authenticated<'a>(key: &[u8; KEY_LEN], context: &EntryContext, entry: &'a [u8]) -> Option<&'a [u8]> {
    let split = entry.len().checked_sub(MAC_LEN)?;
    let (code, tag) = entry.split_at(split);
    context.mac(key, code).verify_slice(tag).ok()?;
    Some(code)
}

/// Stores a compiled component with its MAC, atomically: other processes
/// see either no entry or a whole one.
fn write_entry(component: &Component, key: &[u8; KEY_LEN], context: &EntryContext, path: &Path) -> anyhow::Result<()> {
    let code = component.serialize().map_err(super::to_anyhow)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    file.write_all(&code)?;
    file.write_all(&context.mac(key, &code).finalize().into_bytes())?;
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

    /// A cache in a temporary directory, its key in another.
    struct TestCache {
        cache: ComponentCache,
        root: tempfile::TempDir,
        _keys: tempfile::TempDir,
    }

    fn test_cache() -> TestCache {
        let root = tempfile::tempdir().unwrap();
        let keys = tempfile::tempdir().unwrap();
        let cache = ComponentCache::new(Some(root.path().to_path_buf()), Some(keys.path().join("cache.key")));
        TestCache { cache, root, _keys: keys }
    }

    /// The file `cache` keeps an entry for `wasm` in, if it keeps any.
    fn entry_path(cache: &ComponentCache, engine: &Engine, wasm: &[u8]) -> Option<PathBuf> {
        cache.entry_path(engine, wasm)
    }

    fn wasm() -> &'static [u8] {
        super::super::builtin("null").unwrap()
    }

    /// Loads `null` and checks it came from the cache as `expected`, and
    /// that it works (it links).
    fn load(cache: &ComponentCache, engine: &Engine, from_cache: bool) {
        let loaded = cache.load(Compilers { optimized: engine, baseline: None }, "null", wasm()).unwrap();
        assert_eq!(loaded.from_cache, from_cache);
        assert!(loaded.component.component_type().exports(engine).count() > 0);
    }

    /// Waits for the background compile of `entry` to end (its lock to go).
    fn wait_for_background_compile(entry: &Path) {
        let lock = entry.with_extension("compiling");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
        while lock.exists() {
            assert!(std::time::Instant::now() < deadline, "the background compile of {} never ended", entry.display());
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    #[test]
    fn a_first_load_runs_baseline_code_and_optimised_code_is_cached_in_the_background() {
        let optimized = super::super::engine::new_engine(Tier::Optimized).unwrap();
        let baseline = super::super::engine::new_engine(Tier::Baseline).unwrap();
        let compilers = Compilers { optimized: &optimized, baseline: Some((&baseline, BaselineUse::UntilOptimized)) };
        let t = test_cache();
        let first = t.cache.load(compilers, "null", wasm()).unwrap();
        assert_eq!((first.tier, first.from_cache), (Tier::Baseline, false));
        assert!(first.component.component_type().exports(&baseline).count() > 0);
        let entry = entry_path(&t.cache, &optimized, wasm()).unwrap();
        wait_for_background_compile(&entry);
        assert!(entry.exists(), "the background compile stored no entry");
        let second = t.cache.load(compilers, "null", wasm()).unwrap();
        assert_eq!((second.tier, second.from_cache), (Tier::Optimized, true));
    }

    #[test]
    fn a_component_winch_cannot_compile_starts_on_optimised_code() {
        // Winch has no tail calls; Cranelift has.
        let wasm =
            wat::parse_str(r#"(component (core module (func $spin (export "spin") return_call $spin)))"#).unwrap();
        let optimized = super::super::engine::new_engine(Tier::Optimized).unwrap();
        let baseline = super::super::engine::new_engine(Tier::Baseline).unwrap();
        for using in [BaselineUse::UntilOptimized, BaselineUse::Cached] {
            let compilers = Compilers { optimized: &optimized, baseline: Some((&baseline, using)) };
            let t = test_cache();
            let loaded = t.cache.load(compilers, "tail", &wasm).unwrap();
            assert_eq!((loaded.tier, loaded.from_cache), (Tier::Optimized, false), "{using:?}");
            assert!(entry_path(&t.cache, &optimized, &wasm).unwrap().exists(), "stored at once, as before tiers");
        }
    }

    #[test]
    fn baseline_code_is_cached_when_asked_and_nothing_is_compiled_in_the_background() {
        let optimized = super::super::engine::new_engine(Tier::Optimized).unwrap();
        let baseline = super::super::engine::new_engine(Tier::Baseline).unwrap();
        let compilers = Compilers { optimized: &optimized, baseline: Some((&baseline, BaselineUse::Cached)) };
        let t = test_cache();
        let first = t.cache.load(compilers, "null", wasm()).unwrap();
        assert_eq!((first.tier, first.from_cache), (Tier::Baseline, false));
        let optimized_entry = entry_path(&t.cache, &optimized, wasm()).unwrap();
        let baseline_entry = entry_path(&t.cache, &baseline, wasm()).unwrap();
        assert_ne!(optimized_entry, baseline_entry, "the two compilers' code must not share an entry");
        assert!(baseline_entry.exists(), "the baseline code was not stored");
        assert!(!optimized_entry.exists() && !optimized_entry.with_extension("compiling").exists());
        let second = t.cache.load(compilers, "null", wasm()).unwrap();
        assert_eq!((second.tier, second.from_cache), (Tier::Baseline, true));
        assert!(second.component.component_type().exports(&baseline).count() > 0);
        // Optimised code already in the cache (a tiered run's, or `providers
        // cache warm`'s) is better: it is taken first.
        load(&t.cache, &optimized, false);
        let third = t.cache.load(compilers, "null", wasm()).unwrap();
        assert_eq!((third.tier, third.from_cache), (Tier::Optimized, true));
    }

    #[test]
    fn without_a_cache_baseline_mode_still_compiles_baseline_code() {
        let optimized = super::super::engine::new_engine(Tier::Optimized).unwrap();
        let baseline = super::super::engine::new_engine(Tier::Baseline).unwrap();
        let compilers = Compilers { optimized: &optimized, baseline: Some((&baseline, BaselineUse::Cached)) };
        let loaded = ComponentCache::new(None, None).load(compilers, "null", wasm()).unwrap();
        assert_eq!((loaded.tier, loaded.from_cache), (Tier::Baseline, false));
    }

    #[test]
    fn entries_are_authenticated() {
        let key = [7u8; KEY_LEN];
        let engine = super::super::engine::new_engine(Tier::Optimized).unwrap();
        let context = EntryContext::new(&engine, b"wasm");
        let mut entry = b"code".to_vec();
        entry.extend_from_slice(&context.mac(&key, b"code").finalize().into_bytes());
        assert_eq!(authenticated(&key, &context, &entry), Some(&b"code"[..]));
        assert_eq!(authenticated(&[8u8; KEY_LEN], &context, &entry), None, "another key");
        assert_eq!(authenticated(&key, &EntryContext::new(&engine, b"other"), &entry), None, "another wasm");
        entry[0] ^= 1;
        assert_eq!(authenticated(&key, &context, &entry), None, "a flipped bit");
        assert_eq!(authenticated(&key, &context, b"short"), None);
    }

    #[test]
    fn entry_names_depend_on_the_wasm() {
        let engine = super::super::engine::new_engine(Tier::Optimized).unwrap();
        let t = test_cache();
        let a = entry_path(&t.cache, &engine, b"a").unwrap();
        assert!(a.starts_with(t.root.path().join("components")) && a.extension().unwrap() == "cwasm");
        assert_ne!(a, entry_path(&t.cache, &engine, b"b").unwrap());
        assert_eq!(a, entry_path(&t.cache, &engine, b"a").unwrap());
        assert!(entry_path(&ComponentCache::new(None, None), &engine, b"a").is_none());
    }

    #[test]
    fn a_flipped_byte_is_recompiled_not_run() {
        let engine = super::super::engine::new_engine(Tier::Optimized).unwrap();
        let t = test_cache();
        load(&t.cache, &engine, false);
        load(&t.cache, &engine, true);
        let path = entry_path(&t.cache, &engine, wasm()).unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        // A byte in the code, where only the MAC can notice it.
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0x01;
        std::fs::write(&path, &bytes).unwrap();
        load(&t.cache, &engine, false);
        // Rewritten: the next load is from the cache again.
        load(&t.cache, &engine, true);
    }

    #[test]
    fn an_entry_from_another_users_cache_is_recompiled_not_run() {
        let engine = super::super::engine::new_engine(Tier::Optimized).unwrap();
        let theirs = test_cache();
        let ours = test_cache();
        load(&theirs.cache, &engine, false);
        let their_entry = entry_path(&theirs.cache, &engine, wasm()).unwrap();
        let our_entry = entry_path(&ours.cache, &engine, wasm()).unwrap();
        std::fs::create_dir_all(our_entry.parent().unwrap()).unwrap();
        std::fs::copy(&their_entry, &our_entry).unwrap();
        load(&ours.cache, &engine, false);
        load(&ours.cache, &engine, true);
    }

    #[test]
    fn an_entry_made_by_another_engine_configuration_is_recompiled_not_run() {
        let engine = super::super::engine::new_engine(Tier::Optimized).unwrap();
        // Another configuration: no epoch interruption, so its code has no
        // epoch checks and would never stop a looping provider.
        let other = wasmtime::Engine::new(&wasmtime::Config::new()).unwrap();
        let t = test_cache();
        load(&t.cache, &other, false);
        // The other engine's entry, put where this engine looks for its own
        // (same key: made by this very user).
        let theirs = entry_path(&t.cache, &other, wasm()).unwrap();
        let ours = entry_path(&t.cache, &engine, wasm()).unwrap();
        assert_ne!(theirs, ours);
        std::fs::copy(&theirs, &ours).unwrap();
        load(&t.cache, &engine, false);
        load(&t.cache, &engine, true);
    }

    #[test]
    fn the_key_is_made_once_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("cache.key");
        let first = load_or_create_key(&path).unwrap();
        assert_eq!(load_or_create_key(&path).unwrap(), first);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        }
        std::fs::write(&path, b"short").unwrap();
        let e = load_or_create_key(&path).unwrap_err().to_string();
        assert!(e.contains("holds 5 bytes"), "{e}");
    }

    #[test]
    fn clean_removes_the_entries() {
        let engine = super::super::engine::new_engine(Tier::Optimized).unwrap();
        let t = test_cache();
        load(&t.cache, &engine, false);
        assert_eq!(clean(t.root.path()).unwrap(), 1);
        assert_eq!(clean(t.root.path()).unwrap(), 0);
        load(&t.cache, &engine, false);
    }
}
