//! Tiered compilation: a provider with no cached machine code starts on
//! Winch, wasmtime's single-pass baseline compiler, and its optimised
//! Cranelift code is compiled in the background into the compiled-code
//! cache, for the next run.
//!
//! Why: Cranelift takes 20.8 s of CPU for a 20 MB Python provider (ten
//! seconds on two cores before its first answer), Winch 4.8 s. The
//! baseline code runs slower, but a first run is dominated by the compile.
//!
//! `CAIRN_COMPILE` chooses: `tiered` (the default); `optimized`, which
//! compiles with Cranelift before the first call, as `cairn providers cache
//! warm` always does; or `baseline`, which compiles with Winch only and
//! caches that code, never spending the cores on Cranelift: for a machine
//! that runs cairn a few times with an empty cache and is thrown away (a
//! CI runner without a cache between jobs, cairn's own test suite), where
//! the background compile would only compete with the run for CPU. A
//! tiered runtime without a cache compiles optimised code: there is no
//! later run to compile for.
//!
//! The background compile runs in a process of its own when the `cairn`
//! command registered itself ([`compile_in_background_with`]), so that it
//! outlives a short run, on half the cores; in any other program in a
//! thread, which ends with the program. A lock file beside the entry keeps
//! concurrent runs from compiling the same provider more than once.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use anyhow::Context as _;
use wasmtime::Engine;

use super::cache::{ComponentCache, KEY_LEN};
use super::engine::{Tier, new_engine};

/// The variable that chooses how providers without cached code compile.
pub const MODE_VARIABLE: &str = "CAIRN_COMPILE";

/// How a provider without cached code is compiled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompileMode {
    /// Baseline code at once, optimised code in the background.
    Tiered,
    /// Optimised code before the first call.
    Optimized,
    /// Baseline code, cached; optimised code only where a cached entry
    /// already has it, or where Winch cannot compile the component.
    Baseline,
}

impl CompileMode {
    /// The mode `CAIRN_COMPILE` asks for: `tiered` (the default),
    /// `optimized` or `baseline`; anything else is an error that says what
    /// is accepted.
    pub fn from_env() -> anyhow::Result<CompileMode> {
        match std::env::var(MODE_VARIABLE) {
            Err(std::env::VarError::NotPresent) => Ok(CompileMode::Tiered),
            Ok(value) => match value.trim() {
                "" | "tiered" => Ok(CompileMode::Tiered),
                "optimized" | "optimised" => Ok(CompileMode::Optimized),
                "baseline" => Ok(CompileMode::Baseline),
                other => {
                    anyhow::bail!("{MODE_VARIABLE}={other:?} is not a compile mode: use tiered, optimized or baseline")
                }
            },
            Err(e) => anyhow::bail!("{MODE_VARIABLE}: {e}"),
        }
    }
}

/// The `cairn` executable that compiles in the background, if registered.
static HELPER: OnceLock<PathBuf> = OnceLock::new();

/// Makes background compiles run as `EXE providers cache compile-background`,
/// a process that outlives the run that started it. Called once by the
/// `cairn` command; other programs compile in a thread.
pub fn compile_in_background_with(exe: PathBuf) {
    // A second registration is the same executable.
    let _ = HELPER.set(exe);
}

/// A lock older than this is left over from a compile that died.
const STALE_LOCK: Duration = Duration::from_secs(15 * 60);

/// Starts compiling `wasm` (the provider `name`) with `engine` into
/// `cache`, whose entry for it is `entry`, unless another run is already
/// at it. Never fails the run: a background compile that cannot start
/// costs the next run's speed, not this one's correctness.
pub(crate) fn compile_in_background(cache: &ComponentCache, engine: &Engine, name: &str, wasm: &[u8], entry: &Path) {
    let Some(lock) = Lock::acquire(entry) else {
        tracing::debug!(provider = name, "optimised code is already being compiled by another run");
        return;
    };
    let started = match HELPER.get() {
        Some(exe) => start_process(exe, cache, name, wasm, lock),
        None => start_thread(cache, engine, name, wasm, lock),
    };
    if let Err(e) = started {
        tracing::warn!(provider = name, "cannot compile optimised code in the background: {e:#}");
    }
}

/// Compiles in `exe providers cache compile-background`, which reads the
/// cache key and the `.wasm` from its standard input (the key never
/// appears in a process listing) and removes the lock when done.
fn start_process(exe: &Path, cache: &ComponentCache, name: &str, wasm: &[u8], lock: Lock) -> anyhow::Result<()> {
    let (Some(dir), Some(key)) = (cache.dir(), cache.key()) else { return Ok(()) };
    let mut command = Command::new(exe);
    command
        .args(["providers", "cache", "compile-background", "--name", name, "--dir"])
        .arg(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        // Half the cores: the run that started it goes on beside it.
        .env("RAYON_NUM_THREADS", (available_cores() / 2).max(1).to_string());
    #[cfg(unix)]
    {
        // Its own process group: the terminal's Ctrl-C stops the run, not
        // the compile the next run will want.
        use std::os::unix::process::CommandExt as _;
        command.process_group(0);
    }
    let mut child = command.spawn().with_context(|| format!("cannot start {}", exe.display()))?;
    // From here the child owns the lock.
    lock.hand_over();
    let mut input = child.stdin.take().context("no standard input to the compiling process")?;
    input.write_all(key)?;
    input.write_all(wasm)?;
    drop(input);
    // Reaped if this run is still there when it ends; otherwise init does.
    std::thread::Builder::new().name("cairn-compile-wait".into()).spawn(move || child.wait())?;
    Ok(())
}

/// Compiles in a thread of this process.
fn start_thread(cache: &ComponentCache, engine: &Engine, name: &str, wasm: &[u8], lock: Lock) -> anyhow::Result<()> {
    let (cache, engine, name, wasm) = (cache.clone(), engine.clone(), name.to_string(), wasm.to_vec());
    std::thread::Builder::new().name("cairn-compile".into()).spawn(move || {
        if let Err(e) = cache.compile_and_store(&engine, &wasm) {
            tracing::warn!(provider = name, "the background compile failed: {e:#}");
        }
        drop(lock);
    })?;
    Ok(())
}

/// `cairn providers cache compile-background --name NAME --dir DIR`: reads
/// a cache key and a `.wasm` from `input`, compiles optimised code and
/// stores it in the compiled-code cache directory `dir`, then removes the
/// lock of that entry.
pub fn compile_into_cache(mut input: impl Read, dir: &Path) -> anyhow::Result<()> {
    let mut key = [0u8; KEY_LEN];
    input.read_exact(&mut key).context("no cache key on standard input")?;
    let mut wasm = Vec::new();
    input.read_to_end(&mut wasm)?;
    let engine = new_engine(Tier::Optimized).map_err(super::to_anyhow)?;
    let cache = ComponentCache::with_key(dir.to_path_buf(), key);
    let entry = cache.entry_path(&engine, &wasm).context("no cache directory")?;
    let result = cache.compile_and_store(&engine, &wasm);
    Lock::release(&entry);
    result
}

/// The cores this process may use.
fn available_cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// The claim of one run on compiling an entry: `ENTRY.compiling`, removed
/// when dropped (or by the process it was handed to).
struct Lock {
    path: Option<PathBuf>,
}

impl Lock {
    /// Claims `entry`, unless a live claim exists.
    fn acquire(entry: &Path) -> Option<Lock> {
        let path = Lock::path_of(entry);
        std::fs::create_dir_all(path.parent()?).ok()?;
        if let Ok(meta) = std::fs::metadata(&path) {
            let age = meta.modified().ok().and_then(|m| m.elapsed().ok()).unwrap_or_default();
            if age < STALE_LOCK {
                return None;
            }
            let _ = std::fs::remove_file(&path);
        }
        std::fs::OpenOptions::new().write(true).create_new(true).open(&path).ok()?;
        Some(Lock { path: Some(path) })
    }

    /// Leaves the lock in place for a process that removes it itself.
    fn hand_over(mut self) {
        self.path = None;
    }

    /// Removes the lock of `entry`.
    fn release(entry: &Path) {
        let _ = std::fs::remove_file(Lock::path_of(entry));
    }

    fn path_of(entry: &Path) -> PathBuf {
        entry.with_extension("compiling")
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        if let Some(path) = self.path.take() {
            let _ = std::fs::remove_file(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_run_at_a_time_holds_the_lock_of_an_entry() {
        let dir = tempfile::tempdir().unwrap();
        let entry = dir.path().join("components").join("abc.cwasm");
        let first = Lock::acquire(&entry).expect("the first claim");
        assert!(Lock::acquire(&entry).is_none(), "a second claim while the first holds it");
        drop(first);
        let again = Lock::acquire(&entry).expect("claimed again once released");
        again.hand_over();
        assert!(Lock::path_of(&entry).exists(), "a handed-over lock stays for its process");
        Lock::release(&entry);
        assert!(!Lock::path_of(&entry).exists());
    }

    #[test]
    fn a_stale_lock_is_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let entry = dir.path().join("abc.cwasm");
        let lock = std::fs::File::create(Lock::path_of(&entry)).unwrap();
        lock.set_modified(std::time::SystemTime::now() - STALE_LOCK - Duration::from_secs(1)).unwrap();
        assert!(Lock::acquire(&entry).is_some());
    }
}
