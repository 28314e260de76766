//! The local backend, cairn's default: the state as one JSON file
//! (`cairn.state.json`) beside the configuration.
//!
//! It owns how that file is read and replaced so that a state is never lost:
//!
//! - a write goes to a temporary file in the same directory, is fsynced, and
//!   is renamed over the state, then the directory is fsynced; at every
//!   moment the state file holds the old content or the new, never a mix,
//!   and a crash mid-write leaves the old one;
//! - before the first write of a run, the previous state is copied (the
//!   same atomic way) to `<state>.backup`;
//! - a file that cannot be read as a state is reported with its line and
//!   column and is never replaced;
//! - a write over a state of another lineage, or over a newer serial of the
//!   same lineage, is refused;
//! - [`LocalBackend::open`] holds the state's lock (see `lock.rs`) until
//!   the backend is dropped;
//! - an apply records its steps in the journal beside the state (see
//!   `journal.rs`) and writes the state once at the end; reading replays a
//!   journal left by a crash, and [`LocalBackend::open`] writes what it
//!   replayed into the state file and deletes the journal.
//!
//! It does not decide when to write: the executor does.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

#[cfg(test)]
use super::journal::Record;
use super::journal::{self, Found, Journal};
use super::lock::{self, StateLock};
use super::{
    Backend, CAIRN_VERSION, FORMAT_VERSION, InstanceState, OLDEST_FORMAT_VERSION, OutputState, PendingOperation,
    Resources, State, StateError, StateJournal,
};

/// The state file's name, in the configuration directory.
pub const DEFAULT_STATE_FILE: &str = "cairn.state.json";

/// A state kept in a local JSON file.
#[derive(Debug)]
pub struct LocalBackend {
    /// The state file.
    path: PathBuf,
    /// The lock, held until drop; `None` when opened read-only.
    lock: Option<StateLock>,
    /// Writes allowed without the lock (`-lock=false`).
    unlocked: bool,
    /// Whether this backend already wrote (and so already backed up the
    /// state as it was before): the backup keeps the state from before the
    /// run, not from before the last resource.
    wrote: bool,
}

impl LocalBackend {
    /// Opens the state at `path` for reading and writing, taking its lock
    /// until the backend is dropped. Fails with [`StateError::Locked`],
    /// naming the holder, when another process (or another backend in this
    /// one) holds it. The file itself need not exist yet.
    ///
    /// A journal left by an apply that crashed is replayed and written into
    /// the state file here, then deleted.
    pub fn open(path: &Path) -> Result<LocalBackend, StateError> {
        let mut backend = LocalBackend::open_read_only(path);
        backend.take_lock()?;
        Ok(backend)
    }

    /// Takes the lock and recovers a leftover journal (see [`Backend::lock`]).
    fn take_lock(&mut self) -> Result<(), StateError> {
        if self.lock.is_none() {
            self.lock = Some(StateLock::acquire(&self.path)?);
            self.recover()?;
        }
        Ok(())
    }

    /// Folds a leftover journal into the state file.
    fn recover(&mut self) -> Result<(), StateError> {
        let journal_path = self.journal_path();
        if !journal_path.exists() {
            return Ok(());
        }
        let mut state = self.read_file_only()?;
        match journal::replay(&journal_path, &mut state)? {
            Found::None => return Ok(()),
            Found::Stale => {}
            Found::Replayed => {
                tracing::warn!(journal = %journal_path.display(), "recovering the state from the journal of an interrupted apply");
                self.write(&mut state)?;
            }
        }
        journal::remove_file(&journal_path)
    }

    /// Opens the state at `path` for reading only, without the lock, for
    /// commands that change nothing (`show`, `graph`). It can read while
    /// another process writes: it sees the state before or after a write,
    /// never half of one. [`LocalBackend::write`] refuses.
    pub fn open_read_only(path: &Path) -> LocalBackend {
        LocalBackend { path: path.to_path_buf(), lock: None, unlocked: false, wrote: false }
    }

    /// Whether this backend may change the state: it holds the lock, or
    /// was told to go without it.
    fn may_write(&self) -> bool {
        self.lock.is_some() || self.unlocked
    }

    /// The state file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where the state from before this backend's first write is kept:
    /// `<state>.backup`.
    pub fn backup_path(&self) -> PathBuf {
        let mut name = self.path.as_os_str().to_owned();
        name.push(".backup");
        PathBuf::from(name)
    }

    /// Where an apply journals its steps: `<state>.journal`.
    pub fn journal_path(&self) -> PathBuf {
        journal::journal_path(&self.path)
    }

    /// Reads the state. A missing file is a new, empty state
    /// ([`State::new`]); a file that is not valid JSON, not a state, or of a
    /// newer format is an error that names it and is left as it is. The
    /// journal of an apply that is running or crashed is replayed over it.
    pub fn read(&self) -> Result<State, StateError> {
        let mut state = self.read_file_only()?;
        journal::replay(&self.journal_path(), &mut state)?;
        Ok(state)
    }

    /// The state file alone.
    fn read_file_only(&self) -> Result<State, StateError> {
        match read_file(&self.path)? {
            None => Ok(State::new()),
            Some(bytes) => parse(&self.path, &bytes),
        }
    }

    /// Starts the journal of an apply over `state`, which must be the state
    /// as last written by this backend (or read, when it has not written).
    pub fn start_journal(&mut self, state: &State) -> Result<Journal, StateError> {
        if !self.may_write() {
            return Err(StateError::ReadOnly { path: self.path.clone() });
        }
        Journal::start(&self.journal_path(), state)
    }

    /// Ends an apply: writes `state`, which holds everything `journal`
    /// recorded, then deletes the journal. If the write fails, the journal
    /// stays, and the next open recovers from it.
    pub fn finish_journal(&mut self, journal: Journal, state: &mut State) -> Result<(), StateError> {
        self.write(state)?;
        journal.remove()
    }

    /// Writes `state` as the new state: its serial goes up by one (only if
    /// the write succeeds), its resources are sorted by address, and it
    /// records this cairn's version. The write is atomic, and the first one
    /// of this backend's life first copies the existing file to
    /// [`LocalBackend::backup_path`].
    ///
    /// Refused when the backend is read-only, when the file on disk is not
    /// JSON of a state format this cairn reads, has another lineage, or has a higher serial than `state`
    /// (someone wrote after `state` was read, and those changes would be lost).
    pub fn write(&mut self, state: &mut State) -> Result<(), StateError> {
        self.write_with(state, &mut |file, bytes| file.write_all(bytes))
    }

    /// Writes `state` in place of the state file whatever the file's
    /// lineage and serial (`cairn state push -force`), as
    /// [`LocalBackend::write`] does otherwise: under the lock, atomically,
    /// after a backup. The serial written is above the file's, so that it
    /// still orders after it.
    pub fn replace(&mut self, state: &mut State) -> Result<(), StateError> {
        self.commit(state, Checks::None, &mut |file, bytes| file.write_all(bytes))
    }

    /// [`LocalBackend::write`], with the step that writes bytes into the
    /// temporary file given as `write_content`, so that tests can make it
    /// fail half-way as a crash or a full disk would.
    fn write_with(&mut self, state: &mut State, write_content: &mut WriteContent<'_>) -> Result<(), StateError> {
        self.commit(state, Checks::LineageAndSerial, write_content)
    }

    /// Writes `state` after `checks` against the file it replaces.
    fn commit(
        &mut self,
        state: &mut State,
        checks: Checks,
        write_content: &mut WriteContent<'_>,
    ) -> Result<(), StateError> {
        if !self.may_write() {
            return Err(StateError::ReadOnly { path: self.path.clone() });
        }
        if checks == Checks::None {
            // The serial written depends on the file's: it is read first.
            let mut previous = read_file(&self.path)?;
            if let Some(previous) = &previous {
                state.serial = state.serial.max(parse_header(&self.path, previous)?.serial);
            }
            return self.replace_file(state, write_content, move |_| Ok(previous.take()));
        }
        // The file it replaces is read and checked on a thread of its own
        // while the new state is encoded (at 100,000 resources each takes
        // about 0.1 s, and the check was serial), and the new file takes
        // its place only once the check has passed.
        let (path, lineage, serial) = (self.path.clone(), state.lineage.clone(), state.serial);
        std::thread::scope(|scope| {
            let checking = scope.spawn(move || previous_if_ours(&path, &lineage, serial));
            let mut checking = Some(checking);
            self.replace_file(state, write_content, move |_| {
                let checking = checking.take().expect("the file is filled once");
                checking.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
        })
    }

    /// Writes `state`, with the next serial, in place of the state file:
    /// `previous` is called once the new state is encoded and before it
    /// replaces the file; it gives the file's old bytes (for the backup
    /// before this backend's first write), or an error that leaves the
    /// file as it was.
    fn replace_file(
        &mut self,
        state: &mut State,
        write_content: &mut WriteContent<'_>,
        mut previous: impl FnMut(&Path) -> Result<Option<Vec<u8>>, StateError>,
    ) -> Result<(), StateError> {
        let previous_serial = state.serial;
        state.serial += 1;
        state.format_version = FORMAT_VERSION;
        state.cairn_version = CAIRN_VERSION.to_string();
        state.normalize();
        let (path, backup, wrote) = (&self.path, self.backup_path(), self.wrote);
        let result = atomic_write(path, &mut |file| {
            let mut out = Chunks { file, write_content: &mut *write_content, buf: Vec::with_capacity(Chunks::SIZE) };
            encode_into(path, state, &mut out)?;
            out.write_buffered().map_err(|e| write_error(path, e))?;
            if let Some(previous) = previous(path)?
                && !wrote
            {
                atomic_write(&backup, &mut |file| write_content(file, &previous).map_err(|e| write_error(&backup, e)))?;
            }
            Ok(())
        });
        match result {
            Ok(()) => self.wrote = true,
            // The serial counts writes that landed; the next attempt reuses it.
            Err(_) => state.serial = previous_serial,
        }
        result
    }
}

impl Backend for LocalBackend {
    fn describe(&self) -> String {
        self.path.display().to_string()
    }

    fn lock(&mut self) -> Result<(), StateError> {
        self.take_lock()
    }

    fn proceed_unlocked(&mut self) -> Result<(), StateError> {
        if self.journal_path().exists() {
            return Err(StateError::JournalWithoutLock { state: self.describe() });
        }
        self.unlocked = true;
        Ok(())
    }

    fn read(&self) -> Result<State, StateError> {
        LocalBackend::read(self)
    }

    fn write(&mut self, state: &mut State) -> Result<(), StateError> {
        LocalBackend::write(self, state)
    }

    fn start_journal(&mut self, state: &State) -> Result<Box<dyn StateJournal>, StateError> {
        Ok(Box::new(LocalBackend::start_journal(self, state)?))
    }

    fn replace(&mut self, state: &mut State) -> Result<(), StateError> {
        LocalBackend::replace(self, state)
    }

    fn force_unlock(&mut self, id: &str) -> Result<(), StateError> {
        let state = self.path.display().to_string();
        let reason = match lock::holder(&self.path)? {
            None => "it is not locked".to_string(),
            Some(Some(holder)) if holder.id != id => {
                format!(
                    "it is locked with lock ID {}, not {id}",
                    if holder.id.is_empty() { "(none)" } else { &holder.id }
                )
            }
            Some(holder) => format!(
                "a local state's lock is held by the operating system for the process that took it ({}) and is \
                 released when that process ends, whatever ends it; it cannot be unlocked by another process: \
                 stop that process instead",
                lock::describe(holder.as_ref())
            ),
        };
        Err(StateError::Unlock { state, reason })
    }

    fn history(&self) -> Result<Vec<State>, StateError> {
        let backup = self.backup_path();
        Ok(match read_file(&backup)? {
            None => Vec::new(),
            Some(bytes) => vec![parse(&backup, &bytes)?],
        })
    }
}

/// What a write checks against the state file it replaces.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Checks {
    /// The same lineage, and no newer serial: every write but a forced push.
    LineageAndSerial,
    /// Nothing: the operator said so (`cairn state push -force`).
    None,
}

/// Writes all of the given bytes into the given file (a state is written
/// in several pieces, one call each).
type WriteContent<'a> = dyn FnMut(&mut File, &[u8]) -> io::Result<()> + 'a;

/// The file's content, or `None` when it does not exist.
/// The state file at `path` as it is (`None` when there is none), if
/// the state of `lineage` at `serial` may replace it: the same lineage,
/// and no newer serial.
fn previous_if_ours(path: &Path, lineage: &str, serial: u64) -> Result<Option<Vec<u8>>, StateError> {
    let Some(previous) = read_file(path)? else { return Ok(None) };
    let current = parse_header(path, &previous)?;
    if current.lineage != lineage {
        return Err(StateError::LineageMismatch {
            path: path.to_path_buf(),
            file: current.lineage,
            ours: lineage.into(),
        });
    }
    if current.serial > serial {
        return Err(StateError::StaleSerial { path: path.to_path_buf(), file: current.serial, ours: serial });
    }
    Ok(Some(previous))
}

fn read_file(path: &Path) -> Result<Option<Vec<u8>>, StateError> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(StateError::Read { path: path.to_path_buf(), source }),
    }
}

/// The first field of every state file, whatever its format.
#[derive(Deserialize)]
#[serde(rename = "State")]
struct FormatHeader {
    format_version: u32,
}

/// What a write checks of the state file it replaces: its format, its
/// lineage and its serial, read without building its resources.
#[derive(Deserialize)]
#[serde(rename = "State")]
struct WriteHeader {
    lineage: String,
    serial: u64,
}

/// Reads a state file's content (or a stored version of a state: `path`
/// names where it is in errors).
pub(super) fn parse(path: &Path, bytes: &[u8]) -> Result<State, StateError> {
    // A state that reads cleanly is read on all cores. Anything else (a
    // damaged file, another format) is read again the careful way, which
    // says what is wrong and where.
    let state = match parse_in_runs(bytes) {
        Some(state) if (OLDEST_FORMAT_VERSION..=FORMAT_VERSION).contains(&state.format_version) => state,
        _ => {
            check_format(path, bytes)?;
            serde_json::from_slice(bytes).map_err(|e| invalid(path, e))?
        }
    };
    if let Some(addr) = state.duplicate_addr() {
        return Err(StateError::Duplicate { path: path.to_path_buf(), addr: Box::new(addr.clone()) });
    }
    Ok(state)
}

/// A state file's fields, with each resource instance still as its JSON
/// text. The same fields as [`State`]'s (a test compares the two ways of
/// reading a state that has them all).
#[derive(Deserialize)]
#[serde(rename = "State")]
struct Unparsed<'a> {
    format_version: u32,
    cairn_version: String,
    serial: u64,
    lineage: String,
    #[serde(default)]
    outputs: BTreeMap<String, OutputState>,
    #[serde(default, borrow)]
    resources: Vec<&'a RawValue>,
    #[serde(default)]
    pending: Vec<PendingOperation>,
    #[serde(default)]
    retries: Vec<PendingOperation>,
}

/// How many instances a core reads or encodes at least, when a state's
/// instances are shared out: a thread costs about as much as reading a
/// hundred, and at 4,096 a state of under 8,192 instances (5,000: 58 M
/// instructions) was read on one thread.
const INSTANCES_A_RUN: usize = 1024;

/// Reads a state with its instances shared out between the cores: at
/// 100,000 resources, reading them one after the other took 0.3 s.
/// `None` when anything in it does not read (see [`parse`]).
fn parse_in_runs(bytes: &[u8]) -> Option<State> {
    let unparsed: Unparsed<'_> = serde_json::from_slice(bytes).ok()?;
    let runs = crate::parallel::map_runs(&unparsed.resources, INSTANCES_A_RUN, |run| {
        run.iter().map(|raw| serde_json::from_str::<InstanceState>(raw.get()).ok()).collect::<Option<Vec<_>>>()
    });
    let mut list = Vec::with_capacity(unparsed.resources.len());
    for run in runs {
        list.extend(run?);
    }
    let resources = Resources::from_list(list);
    Some(State {
        format_version: unparsed.format_version,
        cairn_version: unparsed.cairn_version,
        serial: unparsed.serial,
        lineage: unparsed.lineage,
        outputs: unparsed.outputs,
        resources,
        pending: unparsed.pending,
        retries: unparsed.retries,
    })
}

/// Reads a state file's lineage and serial: all a write needs of the file
/// it replaces. The whole file must still be JSON in a format this cairn
/// reads, but its resources are skipped rather than built (at 100,000
/// resources, building them cost more than 100 MB at the end of an apply).
fn parse_header(path: &Path, bytes: &[u8]) -> Result<WriteHeader, StateError> {
    // One pass over the file when it is what it should be: at 100,000
    // resources each pass is about 0.1 s at the end of every apply, when
    // nothing else runs. Anything else is read again the careful way,
    // which says what is wrong and where.
    if let Some(header) = header_in_one_pass(bytes) {
        return Ok(header);
    }
    check_format(path, bytes)?;
    serde_json::from_slice(bytes).map_err(|e| invalid(path, e))
}

/// A state file's lineage and serial, read in one pass with its format
/// (which must be one this cairn reads); `None` if anything is amiss.
fn header_in_one_pass(bytes: &[u8]) -> Option<WriteHeader> {
    #[derive(Deserialize)]
    #[serde(rename = "State")]
    struct Fields<'a> {
        format_version: u32,
        #[serde(borrow)]
        lineage: Option<&'a RawValue>,
        #[serde(borrow)]
        serial: Option<&'a RawValue>,
    }
    let fields: Fields<'_> = serde_json::from_slice(bytes).ok()?;
    if !(OLDEST_FORMAT_VERSION..=FORMAT_VERSION).contains(&fields.format_version) {
        return None;
    }
    Some(WriteHeader {
        lineage: serde_json::from_str(fields.lineage?.get()).ok()?,
        serial: serde_json::from_str(fields.serial?.get()).ok()?,
    })
}

/// Refuses a state file whose format this cairn does not read. The
/// version is read first: a newer format may not parse as this one, and
/// "use a newer cairn" helps where a complaint about some field would not.
fn check_format(path: &Path, bytes: &[u8]) -> Result<(), StateError> {
    let header: FormatHeader = serde_json::from_slice(bytes).map_err(|e| invalid(path, e))?;
    if !(OLDEST_FORMAT_VERSION..=FORMAT_VERSION).contains(&header.format_version) {
        return Err(StateError::UnsupportedVersion {
            path: path.to_path_buf(),
            found: header.format_version,
            supported: FORMAT_VERSION,
        });
    }
    Ok(())
}

/// A state file that is not valid JSON of a state, at the line and column
/// where reading stopped.
fn invalid(path: &Path, source: serde_json::Error) -> StateError {
    StateError::Invalid { path: path.to_path_buf(), line: source.line(), column: source.column(), source }
}

/// The state as JSON with a trailing newline: its own fields one a line,
/// and each resource instance and output on one line of its own (see
/// [`OneLineEach`]).
#[cfg(test)]
fn encode(path: &Path, state: &State) -> Result<Vec<u8>, StateError> {
    let mut bytes = Vec::new();
    encode_into(path, state, &mut bytes)?;
    Ok(bytes)
}

/// Writes the state into `out` as [`encode`] lays it out, its instances
/// encoded on all threads (see [`crate::parallel::threads`]).
fn encode_into(path: &Path, state: &State, out: impl Write) -> Result<(), StateError> {
    encode_on(crate::parallel::threads(), path, state, out)
}

/// [`encode_into`] on `threads` threads: the same bytes whatever their
/// number. The instances, nearly all of a large state's bytes, are encoded
/// a batch at a time, each batch shared out between the threads (see
/// [`InstancesInRuns`]); one serializer lays out the rest and writes them.
fn encode_on(threads: usize, path: &Path, state: &State, mut out: impl Write) -> Result<(), StateError> {
    // Every field by name: a field added to `State` does not compile here
    // until it is written too.
    let State { format_version, cairn_version, serial, lineage, outputs, resources, pending, retries } = state;
    let fields = Fields {
        format_version: *format_version,
        cairn_version,
        serial: *serial,
        lineage,
        outputs,
        resources: InstancesInRuns { resources, threads },
        pending,
        retries,
    };
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, OneLineEach::default());
    fields.serialize(&mut serializer).map_err(|source| {
        if source.is_io() {
            write_error(path, source.into())
        } else {
            StateError::Encode { path: path.to_path_buf(), source }
        }
    })?;
    out.write_all(b"\n").map_err(|e| write_error(path, e))
}

/// A state's fields as [`State`] writes them, with its instances written
/// by [`InstancesInRuns`] (a test compares the two).
#[derive(Serialize)]
#[serde(rename = "State")]
struct Fields<'a> {
    format_version: u32,
    cairn_version: &'a str,
    serial: u64,
    lineage: &'a str,
    outputs: &'a BTreeMap<String, OutputState>,
    resources: InstancesInRuns<'a>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pending: &'a [PendingOperation],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    retries: &'a [PendingOperation],
}

/// A state's instances as the JSON array [`Resources`] makes, each
/// instance encoded on its own, compact (as [`OneLineEach`] lays out
/// everything below the list), by the threads a batch at a time, and
/// written in address order. At 100,000 resources, encoding them one
/// after the other was a serial 0.2 s at the end of every apply; a batch
/// at a time, the text waiting to be written stays small.
struct InstancesInRuns<'a> {
    resources: &'a Resources,
    threads: usize,
}

impl Serialize for InstancesInRuns<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error as _, SerializeSeq as _};
        let instances: Vec<&InstanceState> = self.resources.iter().collect();
        let mut seq = s.serialize_seq(Some(instances.len()))?;
        for batch in instances.chunks(self.threads.max(1).saturating_mul(INSTANCES_A_RUN)) {
            let runs = crate::parallel::map_runs_on(self.threads, batch, INSTANCES_A_RUN, |run| {
                run.iter().map(serde_json::value::to_raw_value).collect::<Result<Vec<_>, _>>()
            });
            for run in runs {
                for encoded in run.map_err(S::Error::custom)? {
                    seq.serialize_element(&encoded)?;
                }
            }
        }
        seq.end()
    }
}

/// The file a state is being written into, filled a buffer at a time
/// through a [`WriteContent`], so that a large state is never held whole
/// as text (at 100,000 resources the text and its growing buffer were the
/// largest thing alive at the end of an apply).
struct Chunks<'a, 'b> {
    file: &'a mut File,
    write_content: &'a mut WriteContent<'b>,
    buf: Vec<u8>,
}

impl Chunks<'_, '_> {
    /// How much is gathered before it is written.
    const SIZE: usize = 64 * 1024;

    /// Writes what is gathered.
    fn write_buffered(&mut self) -> io::Result<()> {
        if !self.buf.is_empty() {
            (self.write_content)(self.file, &self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }
}

impl Write for Chunks<'_, '_> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(data);
        if self.buf.len() >= Chunks::SIZE {
            self.write_buffered()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.write_buffered()
    }
}

/// A JSON layout for state files: serde_json's pretty layout for the
/// state's own fields and the list of resources (and map of outputs), but
/// each resource instance (and output) compact on one line. Fully
/// indented, a resource's nested attributes cost more in spaces than in
/// content (a `null_resource` took about 320 bytes, against about 190 on
/// one line), and a state of 100,000 resources is read and written by
/// every run; one line a resource still diffs line by line.
#[derive(Default)]
struct OneLineEach {
    /// How many arrays and objects are open.
    depth: usize,
    /// Whether the innermost open array or object has a value yet.
    has_value: bool,
}

impl OneLineEach {
    /// Containers up to this depth (the state, its resources and outputs)
    /// put each value on its own indented line; deeper ones are compact.
    const LAID_OUT: usize = 2;

    /// Starts a value (or key) in the container at the current depth.
    fn begin_value<W: ?Sized + Write>(&self, w: &mut W, first: bool) -> io::Result<()> {
        if !first {
            w.write_all(b",")?;
        }
        if self.depth <= Self::LAID_OUT {
            w.write_all(b"\n")?;
            self.indent(w, self.depth)?;
        }
        Ok(())
    }

    /// Ends the container at the current depth + 1, which was just closed.
    fn end_container<W: ?Sized + Write>(&mut self, w: &mut W, close: &[u8]) -> io::Result<()> {
        if self.depth < Self::LAID_OUT && self.has_value {
            w.write_all(b"\n")?;
            self.indent(w, self.depth)?;
        }
        w.write_all(close)
    }

    fn indent<W: ?Sized + Write>(&self, w: &mut W, depth: usize) -> io::Result<()> {
        for _ in 0..depth {
            w.write_all(b"  ")?;
        }
        Ok(())
    }
}

impl serde_json::ser::Formatter for OneLineEach {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        w.write_all(b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.depth -= 1;
        self.end_container(w, b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.begin_value(w, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        w.write_all(b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.depth -= 1;
        self.end_container(w, b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.begin_value(w, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(if self.depth <= Self::LAID_OUT { b": " } else { b":" })
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// Replaces `dest` with what `fill` writes into a new file, so that `dest`
/// holds the old content or the new one at every moment, also across a crash or power loss: write a
/// temporary file in the same directory (a rename is atomic only within a
/// file system), fsync it, rename it over `dest`, fsync the directory so
/// that the rename itself is durable.
///
/// The file keeps `dest`'s permissions; a new file is readable by its owner
/// only, since states hold secrets.
fn atomic_write(dest: &Path, fill: &mut dyn FnMut(&mut File) -> Result<(), StateError>) -> Result<(), StateError> {
    let err = |source| write_error(dest, source);
    let dir = parent_dir(dest);
    let name = dest.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    // Dropped (and so deleted) on any error below, leaving `dest` untouched.
    let mut temp =
        tempfile::Builder::new().prefix(&format!(".{name}.")).suffix(".tmp").tempfile_in(dir).map_err(err)?;
    if let Ok(meta) = fs::metadata(dest) {
        temp.as_file().set_permissions(meta.permissions()).map_err(err)?;
    }
    fill(temp.as_file_mut())?;
    temp.as_file().sync_all().map_err(err)?;
    temp.persist(dest).map_err(|e| err(e.error))?;
    sync_dir(dir).map_err(err)
}

/// Writing the file `path` failed.
fn write_error(path: &Path, source: io::Error) -> StateError {
    StateError::Write { path: path.to_path_buf(), source }
}

/// The directory `path` is in.
pub(super) fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Makes a rename in `dir` durable.
#[cfg(unix)]
pub(super) fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Windows cannot open a directory as a file; its renames are journaled by NTFS.
#[cfg(not(unix))]
pub(super) fn sync_dir(_dir: &Path) -> io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::state::{Attributes, DeposedObject, InstanceState, InstanceStatus, OutputState, PendingOperation};
    use crate::value::{Number, Type, Value};

    fn state_path(dir: &tempfile::TempDir) -> PathBuf {
        dir.path().join(DEFAULT_STATE_FILE)
    }

    fn attributes_type() -> Type {
        Type::Object(BTreeMap::from([
            ("big".to_string(), Type::Number),
            ("small".to_string(), Type::Number),
            ("tenth".to_string(), Type::Number),
            ("huge".to_string(), Type::Number),
            ("anything".to_string(), Type::Dynamic),
            ("nothing".to_string(), Type::String),
        ]))
    }

    fn attributes() -> Value {
        Value::object([
            ("big", Value::int(i64::MAX)),
            ("small", Value::int(i64::MIN)),
            ("tenth", Value::Number(Number::Float(0.1))),
            ("huge", Value::Number(Number::Float(1e300))),
            ("anything", Value::set(vec![Value::string("b"), Value::string("a")])),
            ("nothing", Value::Null),
        ])
    }

    fn instance(addr: &str) -> InstanceState {
        InstanceState::new(addr.parse().unwrap(), "local", 0, serde_json::json!({"id": addr}))
    }

    /// A state using every field.
    fn full_state() -> State {
        let mut state = State::new();
        state.set(InstanceState {
            addr: "random_id.x[2]".parse().unwrap(),
            provider: "random".to_string(),
            schema_version: 3,
            attributes: Attributes::new(&attributes(), &attributes_type()),
            private: vec![0, 1, 2, 254, 255],
            dependencies: vec![crate::addr::ResourceAddr::managed("local_file", "site")],
            status: InstanceStatus::Tainted,
            create_before_destroy: false,
            deposed: vec![DeposedObject {
                key: "00000001".to_string(),
                attributes: serde_json::json!({"id": "old"}).into(),
                private: b"old secret".to_vec(),
            }],
            sensitive_attributes: vec![crate::value::Path::root().attr("keepers").key("k")],
        });
        state.set(instance("local_file.pages[\"index\"]"));
        state.pending.push(PendingOperation::now("random_id.x[3]".parse().unwrap(), Some("0000000a"), "delete", "k3"));
        state.retries.push(PendingOperation::now("random_id.x[4]".parse().unwrap(), None, "create", "k4"));
        state
            .outputs
            .insert("password".to_string(), OutputState::new(&Value::List(vec![Value::string("hunter2")]), true));
        state
    }

    #[test]
    fn a_missing_file_reads_as_a_new_state() {
        let dir = tempfile::tempdir().unwrap();
        let state = LocalBackend::open(&state_path(&dir)).unwrap().read().unwrap();
        assert!(state.is_empty());
        assert_eq!(state.serial, 0);
    }

    #[test]
    fn every_field_round_trips_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let mut backend = LocalBackend::open(&state_path(&dir)).unwrap();
        let mut state = full_state();
        backend.write(&mut state).unwrap();

        let read = backend.read().unwrap();
        assert_eq!(read, state);
        let x2 = read.get(&"random_id.x[2]".parse().unwrap()).unwrap();
        assert_eq!(x2.attributes.decode(&attributes_type()).unwrap(), attributes());
        assert_eq!(x2.private, [0, 1, 2, 254, 255]);
        assert_eq!(x2.deposed[0].private, b"old secret");

        let text = fs::read_to_string(backend.path()).unwrap();
        assert!(text.starts_with("{\n  \"format_version\": 4,\n  \"cairn_version\": "), "{text}");
        assert!(text.ends_with("}\n"));
        assert!(text.contains("\"big\":9223372036854775807"), "{text}");
        assert!(text.contains("\"private\":\"AAEC/v8=\""), "{text}");
        assert!(text.contains("\"status\":\"tainted\""), "{text}");
        // One line per instance, indented under the list.
        let lines: Vec<&str> =
            text.lines().filter(|l| l.starts_with("    {\"addr\":") && l.contains("\"provider\":")).collect();
        assert_eq!(lines.len(), state.resources.len(), "{text}");
        assert!(text.contains("  \"resources\": [\n    {"), "{text}");
        assert_eq!(serde_json::from_str::<serde_json::Value>(&text).unwrap(), serde_json::to_value(&state).unwrap());
        // Written sorted by address, whatever the order they were set in.
        assert!(text.find("local_file.pages").unwrap() < text.find("random_id.x[2]").unwrap());
    }

    #[test]
    fn every_write_increments_the_serial() {
        let dir = tempfile::tempdir().unwrap();
        let mut backend = LocalBackend::open(&state_path(&dir)).unwrap();
        let mut state = backend.read().unwrap();
        backend.write(&mut state).unwrap();
        assert_eq!(state.serial, 1);
        state.set(instance("local_file.a"));
        backend.write(&mut state).unwrap();
        assert_eq!(state.serial, 2);
        assert_eq!(backend.read().unwrap().serial, 2);
    }

    #[test]
    fn a_state_larger_than_one_written_piece_is_written_whole() {
        let dir = tempfile::tempdir().unwrap();
        let mut backend = LocalBackend::open(&state_path(&dir)).unwrap();
        let mut state = backend.read().unwrap();
        for i in 0..2_000 {
            state.set(instance(&format!("local_file.f{i}")));
        }
        let mut pieces = 0;
        let mut count = |file: &mut File, bytes: &[u8]| {
            pieces += 1;
            file.write_all(bytes)
        };
        backend.write_with(&mut state, &mut count).unwrap();
        assert!(pieces > 1, "the state went in {pieces} piece(s)");
        let written = fs::read(backend.path()).unwrap();
        assert_eq!(written, encode(backend.path(), &state).unwrap(), "the pieces join into the one encoding");
        assert_eq!(backend.read().unwrap().resources, state.resources);
    }

    #[test]
    fn a_state_of_another_lineage_is_not_written() {
        let dir = tempfile::tempdir().unwrap();
        let mut backend = LocalBackend::open(&state_path(&dir)).unwrap();
        backend.write(&mut full_state()).unwrap();
        let before = fs::read(backend.path()).unwrap();

        let mut other = State::new();
        let err = backend.write(&mut other).unwrap_err();
        assert!(matches!(err, StateError::LineageMismatch { .. }), "{err:?}");
        assert!(err.to_string().contains("belongs to another configuration"), "{err}");
        assert_eq!(other.serial, 0);
        assert_eq!(fs::read(backend.path()).unwrap(), before);
    }

    #[test]
    fn a_stale_state_is_not_written() {
        let dir = tempfile::tempdir().unwrap();
        let mut backend = LocalBackend::open(&state_path(&dir)).unwrap();
        let mut state = backend.read().unwrap();
        let mut stale = state.clone();
        backend.write(&mut state).unwrap();
        backend.write(&mut state).unwrap();
        stale.serial = 1;
        let err = backend.write(&mut stale).unwrap_err();
        assert!(matches!(err, StateError::StaleSerial { file: 2, ours: 1, .. }), "{err:?}");
    }

    #[test]
    fn a_refused_write_leaves_the_file_as_it_was_and_writes_no_backup_or_temporary_file() {
        // The old file is checked while the new state is encoded: a state
        // large enough for several runs is encoded whole, then refused.
        let dir = tempfile::tempdir().unwrap();
        let path = state_path(&dir);
        let mut first = LocalBackend::open(&path).unwrap();
        let mut state = full_state();
        for i in 0..2 * INSTANCES_A_RUN + 3 {
            state.set(instance(&format!("local_file.f{i}")));
        }
        first.write(&mut state).unwrap();
        first.write(&mut state).unwrap();
        drop(first);
        let before = fs::read(&path).unwrap();
        let names = || {
            let mut names: Vec<_> = fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
            names.sort();
            names
        };
        // A backend that has not written yet would back the file up first.
        let mut backend = LocalBackend::open(&path).unwrap();
        let files = names();
        let mut stale = state.clone();
        stale.serial = 1;
        let err = backend.write(&mut stale).unwrap_err();
        assert!(matches!(err, StateError::StaleSerial { file: 2, ours: 1, .. }), "{err:?}");
        assert_eq!(stale.serial, 1, "the serial of a write that did not land is kept");
        let mut other = state.clone();
        other.lineage = "another".into();
        let err = backend.write(&mut other).unwrap_err();
        assert!(matches!(err, StateError::LineageMismatch { .. }), "{err:?}");
        assert!(fs::read(&path).unwrap() == before, "the file changed");
        assert_eq!(names(), files, "a backup or a temporary file was left");
        // The same write with the file's serial lands, after a backup.
        backend.write(&mut state).unwrap();
        assert!(fs::read(backend.backup_path()).unwrap() == before);
    }

    #[test]
    fn replace_writes_another_lineage_or_an_older_serial_above_the_files_serial() {
        let dir = tempfile::tempdir().unwrap();
        let mut backend = LocalBackend::open(&state_path(&dir)).unwrap();
        let mut state = backend.read().unwrap();
        backend.write(&mut state).unwrap();
        backend.write(&mut state).unwrap();
        drop(backend);
        // As `state push -force` does: a run of its own.
        let mut backend = LocalBackend::open(&state_path(&dir)).unwrap();
        let before = fs::read(backend.path()).unwrap();
        let mut other = State::new();
        backend.replace(&mut other).unwrap();
        assert_eq!(other.serial, 3, "above the file's serial 2");
        let written = backend.read().unwrap();
        assert_eq!((written.lineage, written.serial), (other.lineage.clone(), 3));
        assert_eq!(fs::read(backend.backup_path()).unwrap(), before, "the replaced state is the backup");
        assert!(matches!(
            LocalBackend::open_read_only(backend.path()).replace(&mut other),
            Err(StateError::ReadOnly { .. })
        ));
    }

    #[test]
    fn the_backup_holds_the_state_from_before_the_first_write() {
        let dir = tempfile::tempdir().unwrap();
        let path = state_path(&dir);
        let mut first_run = LocalBackend::open(&path).unwrap();
        let mut state = full_state();
        first_run.write(&mut state).unwrap();
        // Nothing existed before this run: nothing to back up.
        assert!(!first_run.backup_path().exists());
        drop(first_run);
        let before_second_run = fs::read(&path).unwrap();

        let mut second_run = LocalBackend::open(&path).unwrap();
        let mut state = second_run.read().unwrap();
        state.remove(&"local_file.pages[\"index\"]".parse().unwrap());
        second_run.write(&mut state).unwrap();
        assert_eq!(fs::read(second_run.backup_path()).unwrap(), before_second_run);
        // Later writes of the same run keep the backup from before the run.
        state.set(instance("local_file.b"));
        second_run.write(&mut state).unwrap();
        assert_eq!(fs::read(second_run.backup_path()).unwrap(), before_second_run);
    }

    #[test]
    fn a_second_open_is_locked_out_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = state_path(&dir);
        let first = LocalBackend::open(&path).unwrap();

        let err = LocalBackend::open(&path).unwrap_err();
        let message = err.to_string();
        let expected =
            format!("the state {} is locked by another cairn process (pid {} on ", path.display(), std::process::id());
        assert!(message.starts_with(&expected), "{message}");
        assert!(message.contains(", started ") && message.contains("; lock ID "), "{message}");
        assert!(message.ends_with("); wait for it to finish, or give -lock-timeout to wait for it"), "{message}");

        // Readers need no lock, and cannot write.
        let mut reader = LocalBackend::open_read_only(&path);
        let mut state = reader.read().unwrap();
        assert!(matches!(reader.write(&mut state), Err(StateError::ReadOnly { .. })));

        // Unless told to go without it (-lock=false), while the lock is held.
        let mut unlocked = LocalBackend::open_read_only(&path);
        unlocked.proceed_unlocked().unwrap();
        let mut state = unlocked.read().unwrap();
        unlocked.write(&mut state).unwrap();

        drop(first);
        LocalBackend::open(&path).unwrap();
    }

    #[test]
    fn a_write_that_fails_half_way_leaves_the_old_state() {
        let dir = tempfile::tempdir().unwrap();
        let mut backend = LocalBackend::open(&state_path(&dir)).unwrap();
        let mut state = full_state();
        backend.write(&mut state).unwrap();
        let before = fs::read(backend.path()).unwrap();

        state.set(instance("local_file.new"));
        let mut crash = |file: &mut File, bytes: &[u8]| -> io::Result<()> {
            file.write_all(&bytes[..bytes.len() / 2])?;
            Err(io::Error::other("disk on fire"))
        };
        let err = backend.write_with(&mut state, &mut crash).unwrap_err();
        assert!(err.to_string().contains("disk on fire"), "{err}");
        assert_eq!(state.serial, 1, "a failed write does not count");
        assert_eq!(fs::read(backend.path()).unwrap(), before);
        assert!(backend.read().unwrap().get(&"local_file.new".parse().unwrap()).is_none());
        // The temporary file is gone too.
        let mut names: Vec<String> =
            fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        assert_eq!(names, ["cairn.state.json", "cairn.state.json.lock"]);

        // And the next write works.
        backend.write(&mut state).unwrap();
        assert_eq!(backend.read().unwrap().serial, 2);
    }

    #[test]
    fn invalid_json_is_reported_with_its_position_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = state_path(&dir);
        let broken = "{\n  \"format_version\": 1,\n  oops\n}\n";
        fs::write(&path, broken).unwrap();
        let mut backend = LocalBackend::open(&path).unwrap();

        let err = backend.read().unwrap_err();
        assert!(matches!(err, StateError::Invalid { line: 3, column: 3, .. }), "{err:?}");
        let message = err.to_string();
        assert!(message.contains(&path.display().to_string()), "{message}");
        assert!(message.contains("line 3 column 3"), "{message}");

        let err = backend.write(&mut State::new()).unwrap_err();
        assert!(matches!(err, StateError::Invalid { .. }), "{err:?}");
        assert_eq!(fs::read_to_string(&path).unwrap(), broken);
        assert!(!backend.backup_path().exists());
    }

    #[test]
    fn a_large_state_reads_in_runs_as_it_reads_at_once_and_a_damaged_one_says_where() {
        let dir = tempfile::tempdir().unwrap();
        let path = state_path(&dir);
        // Every field, and instances enough for several runs.
        let mut state = full_state();
        for i in 0..3 * INSTANCES_A_RUN {
            state.set(instance(&format!("local_file.f{i}")));
        }
        let bytes = encode(&path, &state).unwrap();
        let at_once: State = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(parse_in_runs(&bytes), Some(at_once.clone()));
        assert_eq!(parse(&path, &bytes).unwrap(), at_once);

        // One instance deep in the file is damaged: the careful read names
        // its line.
        let text = String::from_utf8(bytes).unwrap();
        let deep = format!("local_file.f{}", 2 * INSTANCES_A_RUN + 5);
        let whole = format!("{{\"addr\":\"{deep}\",\"provider\":\"local\"");
        let damaged_at = text.find(&whole).unwrap();
        let damaged = text.replacen(&whole, &format!("{{\"addr\":\"{deep}\",\"provider\":7"), 1);
        let line = text[..damaged_at].matches('\n').count() + 1;
        assert_eq!(parse_in_runs(damaged.as_bytes()), None);
        let err = parse(&path, damaged.as_bytes()).unwrap_err();
        assert!(matches!(err, StateError::Invalid { line: l, .. } if l == line), "{err:?}");
    }

    #[test]
    fn a_state_encodes_to_the_same_bytes_on_one_thread_and_on_several() {
        let path = PathBuf::from("cairn.state.json");
        // Every field, and instances enough for several runs and batches.
        let mut state = full_state();
        for i in 0..3 * INSTANCES_A_RUN + 17 {
            state.set(instance(&format!("local_file.f{i}")));
        }
        // As `State` itself serializes, with every instance laid out by
        // the formatter: what the file held before the instances were
        // encoded in runs.
        let mut whole = Vec::new();
        state.serialize(&mut serde_json::Serializer::with_formatter(&mut whole, OneLineEach::default())).unwrap();
        whole.push(b'\n');
        for threads in [1, 2, 3, 8] {
            let mut bytes = Vec::new();
            encode_on(threads, &path, &state, &mut bytes).unwrap();
            assert!(bytes == whole, "{threads} threads wrote other bytes than one serializer");
        }
        // And with nothing to share out, nor anything pending.
        let empty = State::new();
        let mut whole = Vec::new();
        empty.serialize(&mut serde_json::Serializer::with_formatter(&mut whole, OneLineEach::default())).unwrap();
        whole.push(b'\n');
        assert_eq!(String::from_utf8(encode(&path, &empty).unwrap()).unwrap(), String::from_utf8(whole).unwrap());
    }

    #[test]
    fn a_version_1_state_is_read_and_written_back_as_the_current_version() {
        let dir = tempfile::tempdir().unwrap();
        let path = state_path(&dir);
        let v1 = r#"{"format_version": 1, "cairn_version": "0.1.0", "serial": 3, "lineage": "l",
            "resources": [{"addr": "null_resource.a", "provider": "null", "schema_version": 0,
            "attributes": {"id": "1"}, "status": "tainted"}]}"#;
        fs::write(&path, v1).unwrap();
        let mut backend = LocalBackend::open(&path).unwrap();
        let mut state = backend.read().unwrap();
        let read = state.resources.iter().next().unwrap();
        assert_eq!(read.status, crate::state::InstanceStatus::Tainted);
        assert!(!read.create_before_destroy);
        backend.write(&mut state).unwrap();
        assert!(fs::read_to_string(&path).unwrap().contains(&format!("\"format_version\": {FORMAT_VERSION}")));
    }

    #[test]
    fn a_newer_format_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = state_path(&dir);
        let found = FORMAT_VERSION + 1;
        let newer = format!("{{\"format_version\": {found}, \"objects\": {{}}}}");
        fs::write(&path, &newer).unwrap();
        let mut backend = LocalBackend::open(&path).unwrap();
        let err = backend.read().unwrap_err();
        assert!(
            matches!(err, StateError::UnsupportedVersion { found: f, supported: FORMAT_VERSION, .. } if f == found),
            "{err:?}"
        );
        assert!(err.to_string().contains(&format!("has format_version {found}")), "{err}");
        assert!(backend.write(&mut State::new()).is_err());
        assert_eq!(fs::read_to_string(&path).unwrap(), newer);
    }

    #[test]
    fn a_state_listing_an_instance_twice_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = state_path(&dir);
        let mut state = serde_json::to_value(State::new()).unwrap();
        state["resources"] = serde_json::to_value([instance("local_file.a"), instance("local_file.a")]).unwrap();
        fs::write(&path, state.to_string()).unwrap();
        let err = LocalBackend::open_read_only(&path).read().unwrap_err();
        assert!(err.to_string().contains("lists local_file.a twice"), "{err}");
    }

    /// A state written at serial 1 and a journal over it holding one new
    /// instance and an intent that never ended, as a crash leaves them.
    fn crashed_apply(path: &Path) -> State {
        let mut backend = LocalBackend::open(path).unwrap();
        let mut state = full_state();
        backend.write(&mut state).unwrap();
        let mut journal = backend.start_journal(&state).unwrap();
        journal.append(&Record::Set { instance: Box::new(instance("null_resource.new")), ends: None }).unwrap();
        let intent = PendingOperation::now("null_resource.half".parse().unwrap(), None, "create", "k-half");
        journal.append(&Record::Intent(intent)).unwrap();
        state
    }

    #[test]
    fn reading_replays_the_journal_of_a_crashed_apply_without_writing() {
        let dir = tempfile::tempdir().unwrap();
        let path = state_path(&dir);
        let written = crashed_apply(&path);
        let file_before = fs::read(&path).unwrap();
        let read = LocalBackend::open_read_only(&path).read().unwrap();
        assert!(read.get(&"null_resource.new".parse().unwrap()).is_some());
        assert_eq!(read.pending.len(), 2, "the intent joins the pending operation already there");
        assert_eq!(read.serial, written.serial);
        assert_eq!(fs::read(&path).unwrap(), file_before);
    }

    #[test]
    fn opening_folds_a_crashed_apply_journal_into_the_state_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = state_path(&dir);
        let written = crashed_apply(&path);
        let backend = LocalBackend::open(&path).unwrap();
        assert!(!backend.journal_path().exists());
        let recovered: State = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        assert_eq!(recovered.serial, written.serial + 1);
        assert!(recovered.get(&"null_resource.new".parse().unwrap()).is_some());
        let keys: Vec<&str> = recovered.pending.iter().map(|p| p.idempotency_key.as_str()).collect();
        assert_eq!(keys, ["k3", "k-half"]);
        assert_eq!(backend.read().unwrap(), recovered);
    }

    #[test]
    fn a_journal_already_folded_into_the_state_is_deleted_at_open() {
        let dir = tempfile::tempdir().unwrap();
        let path = state_path(&dir);
        let mut state = crashed_apply(&path);
        let journal_path = journal::journal_path(&path);
        // The end of an apply: the state is written (without the pending
        // intent: it ended), then a crash before the journal is deleted.
        state.set(instance("null_resource.new"));
        state.serial += 1;
        fs::write(&path, encode(&path, &state).unwrap()).unwrap();
        assert!(journal_path.exists());
        let before = fs::read(&path).unwrap();
        let backend = LocalBackend::open(&path).unwrap();
        assert!(!journal_path.exists());
        assert_eq!(fs::read(&path).unwrap(), before, "nothing stale was replayed");
        assert!(backend.read().unwrap().pending.iter().all(|p| p.idempotency_key != "k-half"));
    }
}
