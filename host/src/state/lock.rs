//! The state lock: only one cairn process at a time changes a state.
//!
//! The lock is an OS file lock ([`File::try_lock`]: `flock` on Unix,
//! `LockFileEx` on Windows) on `<state>.lock`, held from
//! [`LocalBackend::open`](super::LocalBackend::open) until the backend is
//! dropped. The OS releases it when the process ends, however it ends, so a
//! crash never leaves a stale lock behind, and no other process can release
//! it: `cairn force-unlock` on a local state says so and names the process
//! to stop. What the holder writes into the file ([`LockHolder`]: lock ID,
//! pid, who, start time, command) only serves to tell a waiting user whom
//! they are waiting for. The PostgreSQL backend records the same
//! [`LockHolder`] beside its advisory lock.
//!
//! On Unix the lock file is deleted on release, while still locked, so that a
//! run leaves the directory as it found it (as Terraform does). Deleting a
//! lock file is racy on its own: a process that opened the old file just
//! before the deletion, and one that creates the new file after it, could
//! each lock "the" lock file at the same time. So a process that has taken
//! the lock checks that the path still names the file it locked (same device
//! and inode) and, when it does not, lets that orphan go and starts over;
//! and only a holder deletes the file. Elsewhere the file is only emptied on
//! release: Windows cannot delete a file another process has open.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::StateError;

/// Who holds a state's lock, as the holder recorded it (in the lock file,
/// or the PostgreSQL backend's lock table).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct LockHolder {
    /// A UUID naming this hold of the lock, for `cairn force-unlock`.
    /// Empty in a lock file written by a cairn before it had one.
    #[serde(default)]
    pub id: String,
    /// `user@host` of the holder.
    #[serde(default)]
    pub who: String,
    /// The holder's process id.
    pub pid: u32,
    /// When it took the lock, in UTC (`2026-11-22T10:31:05Z`).
    pub started: String,
    /// Its command line, e.g. `cairn apply -auto-approve`.
    pub command: String,
}

impl LockHolder {
    /// This process, now, with a new lock ID.
    pub(super) fn current() -> LockHolder {
        LockHolder {
            id: uuid::Uuid::new_v4().to_string(),
            who: who(),
            pid: std::process::id(),
            started: format_utc(SystemTime::now()),
            command: command_line(),
        }
    }
}

/// The holder as the `Locked` error shows it.
pub(super) fn describe(holder: Option<&LockHolder>) -> String {
    match holder {
        Some(h) => {
            let who = if h.who.is_empty() { String::new() } else { format!(" on {}", h.who) };
            let id = if h.id.is_empty() { String::new() } else { format!("; lock ID {}", h.id) };
            format!("pid {}{who}, started {}, command `{}`{id}", h.pid, h.started, h.command)
        }
        None => "which one is unknown: it has not recorded its details".to_string(),
    }
}

/// `user@host`, as far as the environment tells.
fn who() -> String {
    let user = std::env::var("USER").or_else(|_| std::env::var("LOGNAME")).unwrap_or_else(|_| "unknown".to_string());
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::env::var("HOSTNAME"))
        .or_else(|_| std::env::var("COMPUTERNAME"))
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "unknown".to_string());
    format!("{user}@{host}")
}

/// An exclusive lock on a state, released when dropped.
#[derive(Debug)]
pub(super) struct StateLock {
    /// The open lock file; the lock belongs to this open file description.
    file: File,
    /// Where it is, to delete it on release.
    #[cfg_attr(not(unix), allow(dead_code))]
    path: PathBuf,
}

impl StateLock {
    /// Takes the lock of the state at `state_path` without waiting, and
    /// records this process as its holder.
    pub(super) fn acquire(state_path: &Path) -> Result<StateLock, StateError> {
        let lock_path = lock_path(state_path);
        let lock_err = |source| StateError::Lock { path: lock_path.clone(), source };
        let mut file = loop {
            // Not truncated on open: when the lock is held, its content is
            // the holder's details, which the error message shows.
            let mut file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&lock_path)
                .map_err(lock_err)?;
            match file.try_lock() {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => {
                    return Err(StateError::Locked {
                        path: state_path.to_path_buf(),
                        holder: read_holder(&mut file).map(Box::new),
                    });
                }
                Err(TryLockError::Error(source)) => return Err(lock_err(source)),
            }
            // The holder before us may have deleted the file between our
            // open and our lock: then we locked a file no one else will
            // find, and must lock the one the path names now.
            if is_still_at(&file, &lock_path).map_err(lock_err)? {
                break file;
            }
        };
        let mut details =
            serde_json::to_vec_pretty(&LockHolder::current()).map_err(|e| lock_err(std::io::Error::other(e)))?;
        details.push(b'\n');
        file.set_len(0).map_err(lock_err)?;
        file.write_all(&details).map_err(lock_err)?;
        Ok(StateLock { file, path: lock_path })
    }
}

impl Drop for StateLock {
    fn drop(&mut self) {
        // Empty the file first, so that no one reads a released lock's
        // details as a holder's; then, on Unix, delete it while still
        // holding the lock (see the module's doc for why that is safe).
        // Errors are ignored: closing the file below releases the lock
        // whatever happens here.
        let _ = self.file.set_len(0);
        #[cfg(unix)]
        let _ = std::fs::remove_file(&self.path);
        let _ = self.file.unlock();
    }
}

/// Whether `path` still names the open `file` (the same device and inode):
/// not when the file was deleted, or deleted and made again, since it was
/// opened.
#[cfg(unix)]
fn is_still_at(file: &File, path: &Path) -> std::io::Result<bool> {
    use std::os::unix::fs::MetadataExt;
    let open = file.metadata()?;
    match std::fs::metadata(path) {
        Ok(named) => Ok(named.dev() == open.dev() && named.ino() == open.ino()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// Elsewhere the lock file is never deleted, so the path always names the
/// file that was opened.
#[cfg(not(unix))]
fn is_still_at(_file: &File, _path: &Path) -> std::io::Result<bool> {
    Ok(true)
}

/// Whether the state at `state_path` is locked, without taking the lock:
/// `None` when it is free, else its holder's details (`None` inside when
/// it has not written them).
pub(super) fn holder(state_path: &Path) -> Result<Option<Option<LockHolder>>, StateError> {
    let lock_path = lock_path(state_path);
    let mut file = match OpenOptions::new().read(true).write(true).open(&lock_path) {
        Ok(file) => file,
        // No lock file: no run ever locked this state.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(StateError::Lock { path: lock_path, source }),
    };
    match file.try_lock() {
        Ok(()) => {
            let _ = file.unlock();
            Ok(None)
        }
        Err(TryLockError::WouldBlock) => Ok(Some(read_holder(&mut file))),
        Err(TryLockError::Error(source)) => Err(StateError::Lock { path: lock_path, source }),
    }
}

/// `<state>.lock`, beside the state file.
pub(super) fn lock_path(state_path: &Path) -> PathBuf {
    let mut name = state_path.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// The holder's details, when it has written them and they can be read.
fn read_holder(file: &mut File) -> Option<LockHolder> {
    let mut text = String::new();
    // On Windows the lock is mandatory and the read fails: no details then.
    file.read_to_string(&mut text).ok()?;
    serde_json::from_str(&text).ok()
}

/// The command line, with the program's directory left out
/// (`cairn apply`, not `/usr/local/bin/cairn apply`).
fn command_line() -> String {
    let mut args = std::env::args_os();
    let program = args.next().map(PathBuf::from);
    let program = program.as_deref().and_then(Path::file_name).map(|n| n.to_string_lossy().into_owned());
    program.into_iter().chain(args.map(|a| a.to_string_lossy().into_owned())).collect::<Vec<_>>().join(" ")
}

/// A time as UTC in RFC 3339 form, to the second (`2026-11-22T10:31:05Z`).
pub fn format_utc(time: SystemTime) -> String {
    let secs = time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil_from_days(days);
    // Written digit by digit: every journaled operation stamps its start,
    // and `format!` spent 2,700 instructions on each.
    let mut out = *b"0000-00-00T00:00:00Z";
    let mut put = |at: usize, width: usize, mut n: u64| {
        for i in (at..at + width).rev() {
            out[i] = b'0' + (n % 10) as u8;
            n /= 10;
        }
    };
    put(0, 4, year.min(9999));
    put(5, 2, month);
    put(8, 2, day);
    put(11, 2, rem / 3600);
    put(14, 2, rem % 3600 / 60);
    put(17, 2, rem % 60);
    out.iter().map(|&b| char::from(b)).collect()
}

/// The (year, month, day) of a count of days since 1970-01-01, in the
/// proleptic Gregorian calendar (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    // Shift the epoch to 0000-03-01, so that leap days fall at the end of a
    // year, then split into 400-year eras of 146097 days.
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097; // day of era, [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // year of era, [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // day of year from March 1st, [0, 365]
    let mp = (5 * doy + 2) / 153; // month from March, [0, 11]
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

/// The seconds since the Unix epoch of a time [`format_utc`] wrote, or
/// `None` for text it would not write.
pub(super) fn parse_utc(text: &str) -> Option<u64> {
    let b = text.as_bytes();
    let shape = b.len() == 20
        && [4, 7].iter().all(|&i| b[i] == b'-')
        && b[10] == b'T'
        && [13, 16].iter().all(|&i| b[i] == b':')
        && b[19] == b'Z';
    if !shape {
        return None;
    }
    let number = |from: usize, to: usize| text.get(from..to)?.parse::<u64>().ok();
    let (year, month, day) = (number(0, 4)?, number(5, 7)?, number(8, 10)?);
    let (hour, minute, second) = (number(11, 13)?, number(14, 16)?, number(17, 19)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let days = days_from_civil(year, month, day)?;
    Some(days * 86_400 + hour * 3600 + minute * 60 + second)
}

/// The count of days since 1970-01-01 of a date, the inverse of
/// [`civil_from_days`] (Howard Hinnant's `days_from_civil`); `None` before 1970.
fn days_from_civil(year: u64, month: u64, day: u64) -> Option<u64> {
    let y = if month <= 2 { year.checked_sub(1)? } else { year };
    let era = y / 400;
    let yoe = y % 400; // [0, 399]
    let mp = if month > 2 { month - 3 } else { month + 9 }; // month from March, [0, 11]
    let doy = (153 * mp + 2) / 5 + day - 1; // [0, 365]
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy; // [0, 146096]
    (era * 146_097 + doe).checked_sub(719_468)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn formatted_times_parse_back() {
        for secs in [0, 951_782_400, 1_700_000_000, 4_107_542_399, 4_107_542_400, 1_764_083_460] {
            assert_eq!(parse_utc(&utc(secs)), Some(secs), "{}", utc(secs));
        }
        for text in ["1969-12-31T23:59:59Z", "2026-13-01T00:00:00Z", "2026-11-22 10:31:05Z", "yesterday", ""] {
            assert_eq!(parse_utc(text), None, "{text}");
        }
    }

    fn utc(secs: u64) -> String {
        format_utc(UNIX_EPOCH + Duration::from_secs(secs))
    }

    #[test]
    fn times_are_formatted_as_utc() {
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(utc(4_107_542_399), "2100-02-28T23:59:59Z");
        assert_eq!(utc(4_107_542_400), "2100-03-01T00:00:00Z");
    }

    #[test]
    fn the_lock_records_its_holder_and_is_emptied_on_release() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("cairn.state.json");
        let lock = StateLock::acquire(&state).unwrap();
        let text = std::fs::read_to_string(lock_path(&state)).unwrap();
        let holder: LockHolder = serde_json::from_str(&text).unwrap();
        assert_eq!(holder.pid, std::process::id());
        assert!(uuid::Uuid::parse_str(&holder.id).is_ok(), "{}", holder.id);
        assert!(holder.who.contains('@'), "{}", holder.who);
        assert!(holder.started.ends_with('Z'));
        assert!(!holder.command.contains('/'), "{}", holder.command);
        drop(lock);
        if cfg!(unix) {
            assert!(!lock_path(&state).exists(), "the lock file is left behind");
        } else {
            assert_eq!(std::fs::read_to_string(lock_path(&state)).unwrap(), "");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_lock_file_deleted_or_replaced_since_it_was_opened_is_not_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.lock");
        let file = File::create(&path).unwrap();
        assert!(is_still_at(&file, &path).unwrap());
        std::fs::remove_file(&path).unwrap();
        assert!(!is_still_at(&file, &path).unwrap());
        let _new = File::create(&path).unwrap();
        assert!(!is_still_at(&file, &path).unwrap());
    }

    #[test]
    fn locks_taken_and_released_over_and_over_never_overlap() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("cairn.state.json");
        let inside = AtomicUsize::new(0);
        let taken = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| {
                    let mut mine = 0;
                    while mine < 100 {
                        match StateLock::acquire(&state) {
                            Ok(lock) => {
                                // Each thread's open is its own open file
                                // description, so the threads exclude each
                                // other as processes do.
                                assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0, "two holders at once");
                                std::thread::yield_now();
                                inside.fetch_sub(1, Ordering::SeqCst);
                                drop(lock);
                                mine += 1;
                                taken.fetch_add(1, Ordering::SeqCst);
                            }
                            Err(StateError::Locked { .. }) => std::thread::yield_now(),
                            Err(e) => panic!("{e}"),
                        }
                    }
                });
            }
        });
        assert_eq!(taken.load(Ordering::SeqCst), 400);
        assert!(matches!(holder(&state), Ok(None)));
    }

    #[test]
    fn a_second_lock_fails_until_the_first_is_released() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("cairn.state.json");
        let first = StateLock::acquire(&state).unwrap();
        match StateLock::acquire(&state) {
            Err(StateError::Locked { holder: Some(h), .. }) => assert_eq!(h.pid, std::process::id()),
            other => panic!("expected Locked with a holder, got {other:?}"),
        }
        assert!(matches!(holder(&state), Ok(Some(Some(h))) if h.pid == std::process::id()));
        drop(first);
        assert!(matches!(holder(&state), Ok(None)));
        StateLock::acquire(&state).unwrap();
    }

    #[test]
    fn a_lock_file_without_an_id_is_still_read() {
        let old = r#"{"pid": 7, "started": "2026-11-22T10:31:05Z", "command": "cairn apply"}"#;
        let h: LockHolder = serde_json::from_str(old).unwrap();
        assert_eq!((h.pid, h.id.as_str()), (7, ""));
        assert_eq!(describe(Some(&h)), "pid 7, started 2026-11-22T10:31:05Z, command `cairn apply`");
    }
}
