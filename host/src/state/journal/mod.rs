//! The apply journal (`<state>.journal`): how an apply persists each step
//! in one small append instead of rewriting the whole state file.
//!
//! An apply starts a journal on top of the state file as it is (the first
//! line names its lineage and serial) and appends one JSON line per event
//! (in the compact form `format.rs` describes), each flushed to disk
//! (`fdatasync`) before the apply goes on:
//!
//! - `intent`: an operation (create, update, delete) a provider is about
//!   to be asked for, written *before* the call, so that a crash during the
//!   call leaves a record that the object may exist;
//! - `set` / `remove`: an instance as it now is, or that it is gone, with
//!   the intent it ends (if any);
//! - `end`: an intent that ended without changing the state;
//! - `outputs`: the root module's outputs.
//!
//! When the apply ends, the whole state is written (atomically) and the
//! journal is deleted. After a crash, the journal is replayed over the
//! state file it started from: every finished step is back, and every
//! intent without an end becomes a [`PendingOperation`] of the state, which
//! the next plan resolves by asking the provider (`apply::recover`). A journal of an older serial (its state was
//! written, the journal not yet deleted) is stale and ignored; one of
//! another lineage or a newer serial is an error. A torn last line (a crash
//! mid-append) is ignored; a bad line before the last is an error, and the
//! journal is left as it is.

mod format;

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::future::Future;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};

use serde::{Deserialize, Serialize};

use super::{InstanceState, OutputState, PendingOperation, State, StateError};
use crate::addr::InstanceAddr;

pub use format::Encoder;

/// One step of an apply, as the journal records it.
///
/// Its serde form is the journal's format 1, which earlier releases wrote
/// and this one still reads; journals are written in format 2, through an
/// [`Encoder`].
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum Record {
    /// The first line of a format 1 journal: the state the records apply
    /// to. (An [`Encoder`] writes the first line itself, and writes nothing
    /// for this record.)
    Start {
        /// The format, 1.
        journal_version: u32,
        /// The state's lineage.
        lineage: String,
        /// The state file's serial when the journal started.
        serial: u64,
    },
    /// A provider is about to be asked for this operation.
    Intent(PendingOperation),
    /// The instance as it now is.
    Set {
        /// The whole instance.
        instance: Box<InstanceState>,
        /// The idempotency key of the intent this change ends, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ends: Option<String>,
    },
    /// The instance is gone from the state.
    Remove {
        /// Its address.
        addr: InstanceAddr,
        /// The idempotency key of the intent this change ends, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ends: Option<String>,
    },
    /// An intent ended without changing the state (the call failed and made
    /// nothing).
    End {
        /// Its idempotency key.
        key: String,
    },
    /// The root module's outputs, all of them.
    Outputs(BTreeMap<String, OutputState>),
}

impl Record {
    /// Applies the record to `state`.
    fn apply_to(self, state: &mut State) {
        match self {
            Record::Start { .. } => {}
            Record::Intent(op) => state.pending.push(op),
            Record::Set { instance, ends } => {
                finish(state, ends.as_deref());
                state.set(*instance);
            }
            Record::Remove { addr, ends } => {
                finish(state, ends.as_deref());
                state.remove(&addr);
            }
            Record::End { key } => {
                if let Some(op) = take_pending(state, &key) {
                    state.keep_for_retry(op);
                }
            }
            Record::Outputs(outputs) => state.outputs = outputs,
        }
    }

    /// The record of `addr` as it is in `state`: `set`, or `remove` when it
    /// is not there.
    pub fn of_instance(state: &State, addr: &InstanceAddr, ends: Option<&str>) -> Record {
        let ends = ends.map(str::to_string);
        match state.get(addr) {
            Some(instance) => Record::Set { instance: Box::new(instance.clone()), ends },
            None => Record::Remove { addr: addr.clone(), ends },
        }
    }
}

/// Ends the pending operation with idempotency key `key`, which changed
/// its instance: that was its last attempt, so nothing of the instance is
/// left to retry either.
fn finish(state: &mut State, key: Option<&str>) {
    if let Some(op) = key.and_then(|key| take_pending(state, key)) {
        state.retries.retain(|r| r.addr != op.addr);
    }
}

/// Removes and returns the pending operation with idempotency key `key`.
fn take_pending(state: &mut State, key: &str) -> Option<PendingOperation> {
    let at = state.pending.iter().position(|op| op.idempotency_key == key)?;
    Some(state.pending.remove(at))
}

/// The journal file of the state at `state_path`: `<state>.journal`.
pub(super) fn journal_path(state_path: &Path) -> PathBuf {
    let mut name = state_path.as_os_str().to_owned();
    name.push(".journal");
    PathBuf::from(name)
}

/// A journal being written by an apply.
///
/// Writing a record ([`Journal::write`]) and waiting until it is on disk
/// ([`Unsynced::wait`]) are two steps, so that the caller can order records
/// under its own lock and wait outside it. One thread owns the file: it
/// takes every record queued since its last flush, writes them with one
/// `write` and one `fdatasync`, and wakes their waiters. Steps that finish
/// together so share one flush, and no step's `write` waits behind another
/// step's flush.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    shared: Arc<Shared>,
    writer: Option<std::thread::JoinHandle<()>>,
    /// Turns records into lines, and knows the intents still open.
    encoder: Encoder,
}

/// What the journal's users and its writer thread share.
#[derive(Debug)]
struct Shared {
    queue: Mutex<Queue>,
    /// Signalled when records are queued or the journal closes.
    work: Condvar,
    /// What is on disk, published after every flush: a watch channel, so
    /// that tasks wait for it without holding a thread.
    flushed: tokio::sync::watch::Sender<Flushed>,
    /// Steps on their way to journaling an intent (see [`Coming`]).
    coming: AtomicUsize,
    /// The journal's file, for errors.
    path: PathBuf,
}

/// How far the writer has got.
#[derive(Debug, Default, Clone)]
struct Flushed {
    /// Records on disk.
    synced: u64,
    /// Why writing failed, if it did.
    failed: Option<String>,
}

#[derive(Debug, Default)]
struct Queue {
    /// Lines not yet written.
    bytes: Vec<u8>,
    /// Records queued so far.
    queued: u64,
    /// Why writing failed; once it has, nothing more is written (a torn
    /// record may be in the file, and must stay its last line).
    failed: Option<String>,
    closed: bool,
    /// Intents queued since the writer last took the queue: an apply's
    /// step waits for its intent before its provider call. Other records
    /// (an instance's new state, durable with the next flush) do not make
    /// a batch worth waiting for.
    intents: usize,
    /// What the writer waits for: queueing a record, waiting for one or a
    /// step's arrival wakes it only when that is what it waits for (a
    /// wake-up is a system call, and most records are queued while it
    /// writes).
    writer: Writer,
    /// The most records anybody has waited for, an intent or not
    /// ([`Journal::append`], the journal's first line).
    awaited: u64,
}

/// What the journal's writer is doing.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
enum Writer {
    /// Writing and flushing, or about to.
    #[default]
    Busy,
    /// Waiting for a record to be queued.
    Idle,
    /// Holding records nobody waits for until one that somebody does
    /// ([`LINGER_FOR`]): queueing an intent, or waiting for a record,
    /// wakes it.
    Lingering,
    /// Giving a batch of intents a moment to grow while more are on their
    /// way ([`GATHER_FOR`]): the last step arriving, or the batch reaching
    /// [`GATHER_RECORDS`], wakes it.
    Gathering,
}

impl Queue {
    /// Whether what is queued has to reach the disk now, the first
    /// `synced` records being there: a step waits for it, or the journal
    /// is closing.
    fn urgent(&self, synced: u64) -> bool {
        self.intents > 0 || self.awaited > synced || self.closed
    }
}

impl Shared {
    /// Records on disk.
    fn synced(&self) -> u64 {
        self.flushed.borrow().synced
    }
}

/// How long records no step waits for (an instance's new state, an
/// intent's end) may stay queued for a flush that somebody waits for.
/// Nothing needs them on disk sooner: a crash before they are leaves their
/// intents pending, which the next run resolves by asking the provider (see
/// `apply::Shared::change_state`). Under load, an intent comes within
/// microseconds and carries them in its flush; so an apply's results cost
/// no `fdatasync` (and no wake-up of the writer) of their own, while with
/// slow providers they are on disk within this long.
pub(super) const LINGER_FOR: std::time::Duration = std::time::Duration::from_millis(20);

/// How long, at most, the writer lets a batch of intents grow while more
/// are on their way ([`Coming`]: steps started or running towards their
/// intent, not waiting for a permit or the disk). Every flush is an
/// `fdatasync`, whose cost to the machine (a device round trip; in a
/// virtual machine, an exit to the hypervisor and an interrupt) hardly
/// depends on its size, while steps waiting for their intents hold no
/// thread and no operation permit; so waiting for the intents of the steps
/// already running makes batches many times larger for far less than it
/// saves. Once none is on its way (a chain of dependent steps, the last
/// step of a burst) the batch is flushed at once. (A step's intent waits at
/// most this much longer; a provider call takes longer than that.)
const GATHER_FOR: std::time::Duration = std::time::Duration::from_micros(1000);

/// A batch of this many intents is flushed at once.
const GATHER_RECORDS: usize = 256;

/// A record written to a journal but maybe not durable yet.
///
/// An apply awaits it ([`Unsynced::durable`]), so that a step waiting for
/// the disk holds no thread and the others run meanwhile; code outside
/// async code blocks on it ([`Unsynced::wait`]).
#[must_use = "a record is only safe once it is durable"]
pub struct Unsynced {
    durable: Pin<Box<dyn Future<Output = Result<(), StateError>> + Send>>,
}

impl Unsynced {
    /// A record that is durable once `durable` completes: a backend's own
    /// way to wait for its storage. It must not need a particular async
    /// runtime (tokio's channels do not), since [`Unsynced::wait`] polls it
    /// on the calling thread.
    pub fn new(durable: impl Future<Output = Result<(), StateError>> + Send + 'static) -> Unsynced {
        Unsynced { durable: Box::pin(durable) }
    }

    /// A record that is durable already (or a backend that keeps nothing).
    pub fn done() -> Unsynced {
        Unsynced::new(std::future::ready(Ok(())))
    }

    /// Completes once the record is durable.
    pub async fn durable(self) -> Result<(), StateError> {
        self.durable.await
    }

    /// Returns once the record is durable, blocking the calling thread.
    pub fn wait(self) -> Result<(), StateError> {
        block_on(self.durable)
    }
}

/// Counts the steps of an apply on their way to journaling an intent, so
/// that the journal's writer flushes a batch once every intent that is
/// coming soon has joined it (see [`GATHER_FOR`]).
#[derive(Clone, Debug)]
pub struct Coming {
    shared: Arc<Shared>,
}

impl Coming {
    /// A step sets out: it will journal an intent soon, unless it stops
    /// first. It has arrived when the guard is dropped or
    /// [`OnTheWay::arrived`] is called.
    pub fn set_out(&self) -> OnTheWay {
        self.depart();
        OnTheWay { coming: self.clone(), on_the_way: AtomicBool::new(true) }
    }

    fn depart(&self) {
        self.shared.coming.fetch_add(1, Ordering::SeqCst);
    }

    fn arrive(&self) {
        if self.shared.coming.fetch_sub(1, Ordering::SeqCst) == 1 {
            // The last one: a writer gathering for it flushes now. Under
            // the queue's lock, so that a writer about to wait has either
            // seen the count or is waiting and gets the signal.
            let queue = self.shared.queue.lock().unwrap_or_else(PoisonError::into_inner);
            if queue.writer == Writer::Gathering {
                self.shared.work.notify_one();
            }
        }
    }
}

/// A step on its way to journaling an intent (see [`Coming::set_out`]).
#[derive(Debug)]
pub struct OnTheWay {
    coming: Coming,
    on_the_way: AtomicBool,
}

impl OnTheWay {
    /// The step has queued its intent, or will not journal one.
    pub fn arrived(&self) {
        self.leave();
    }

    /// The step waits for something that may take long (a permit): not on
    /// its way meanwhile, and again once the answer is dropped.
    pub fn stopped(&self) -> Stopped<'_> {
        Stopped { way: self, was: self.leave() }
    }

    /// Counts the step off if it was on its way; returns whether it was.
    fn leave(&self) -> bool {
        let was = self.on_the_way.swap(false, Ordering::SeqCst);
        if was {
            self.coming.arrive();
        }
        was
    }
}

impl Drop for OnTheWay {
    fn drop(&mut self) {
        self.arrived();
    }
}

/// A step's stop on its way to its intent (see [`OnTheWay::stopped`]).
#[derive(Debug)]
pub struct Stopped<'a> {
    way: &'a OnTheWay,
    was: bool,
}

impl Drop for Stopped<'_> {
    fn drop(&mut self) {
        if self.was && !self.way.on_the_way.swap(true, Ordering::SeqCst) {
            self.way.coming.depart();
        }
    }
}

/// Runs `future` to completion on this thread, parking it while the future
/// waits: enough for the channels a journal's durability is signalled on,
/// which need no runtime.
pub(super) fn block_on<F: Future>(future: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl std::task::Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = std::task::Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut context = std::task::Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let std::task::Poll::Ready(output) = future.as_mut().poll(&mut context) {
            return output;
        }
        std::thread::park();
    }
}

/// Completes once the file journal's writer has flushed its first `upto`
/// records.
/// `counted`: the writer already flushes them without lingering (they end
/// with an intent, which it counts).
async fn flushed(shared: Arc<Shared>, upto: u64, counted: bool) -> Result<(), StateError> {
    let mut progress = shared.flushed.subscribe();
    // Somebody waits: the writer must not hold these records back.
    if !counted {
        let mut queue = shared.queue.lock().unwrap_or_else(PoisonError::into_inner);
        if queue.awaited < upto && shared.synced() < upto {
            queue.awaited = upto;
            if queue.writer == Writer::Lingering {
                shared.work.notify_one();
            }
        }
    }
    let failed =
        |message: &str| StateError::Write { path: shared.path.clone(), source: io::Error::other(message.to_string()) };
    // `shared` holds the sender, so the channel cannot close meanwhile.
    let seen = progress
        .wait_for(|f| f.synced >= upto || f.failed.is_some())
        .await
        .map_err(|_| failed("the journal's writer stopped"))?;
    match &seen.failed {
        Some(message) if seen.synced < upto => Err(failed(message)),
        _ => Ok(()),
    }
}

impl super::StateJournal for Journal {
    fn write(&mut self, record: &Record) -> Result<Unsynced, StateError> {
        Journal::write(self, record)
    }

    fn coming(&self) -> Option<Coming> {
        Some(Coming { shared: Arc::clone(&self.shared) })
    }

    fn end(&mut self, key: &str) -> Result<Option<Unsynced>, StateError> {
        Journal::end(self, key)
    }

    fn discard(self: Box<Self>) -> Result<(), StateError> {
        self.remove()
    }
}

impl Journal {
    /// Starts a journal at `path` over `state` (as written in the state
    /// file), replacing any file there, and makes it durable.
    pub(super) fn start(path: &Path, state: &State) -> Result<Journal, StateError> {
        let err = |source| StateError::Write { path: path.to_path_buf(), source };
        let mut options = OpenOptions::new();
        options.write(true).create(true).truncate(true);
        // States hold secrets, and so does the journal.
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options.open(path).map_err(err)?;
        let (encoder, first_line) = Encoder::start(&state.lineage, state.serial)
            .map_err(|source| StateError::Encode { path: path.to_path_buf(), source })?;
        let shared = Arc::new(Shared {
            queue: Mutex::default(),
            work: Condvar::new(),
            flushed: tokio::sync::watch::Sender::new(Flushed::default()),
            coming: AtomicUsize::new(0),
            path: path.to_path_buf(),
        });
        let for_writer = Arc::clone(&shared);
        let writer = std::thread::Builder::new()
            .name("cairn-journal".into())
            .spawn(move || write_until_closed(&file, &for_writer))
            .map_err(err)?;
        let journal = Journal { path: path.to_path_buf(), shared, writer: Some(writer), encoder };
        journal.queue(first_line, false).wait()?;
        // The new file's name must survive a crash too.
        super::local::sync_dir(super::local::parent_dir(path)).map_err(err)?;
        Ok(journal)
    }

    /// Appends `record` and waits until it is on disk.
    pub fn append(&mut self, record: &Record) -> Result<(), StateError> {
        self.write(record)?.wait()
    }

    /// Queues `record` after every record written before; it is on disk
    /// once the answer's [`Unsynced::wait`] returns.
    pub fn write(&mut self, record: &Record) -> Result<Unsynced, StateError> {
        if let Some(message) = &self.shared.queue.lock().unwrap_or_else(PoisonError::into_inner).failed {
            return Err(StateError::Write { path: self.path.clone(), source: io::Error::other(message.clone()) });
        }
        let line =
            self.encoder.encode(record).map_err(|source| StateError::Encode { path: self.path.clone(), source })?;
        Ok(match line {
            // Counted when queued, not when awaited: the writer may wake
            // for the first intent before its step is back to wait, and
            // would flush it alone, ahead of the intents queued with it.
            Some(line) => self.queue(line, matches!(record, Record::Intent(_))),
            // Nothing to add: durable once what was queued before is.
            None => self.queue_nothing(),
        })
    }

    /// Queues `line` (with its newline) after every line queued before;
    /// `intent` when it is an intent, which a step waits for.
    fn queue(&self, line: String, intent: bool) -> Unsynced {
        let mut queue = self.shared.queue.lock().unwrap_or_else(PoisonError::into_inner);
        queue.bytes.extend_from_slice(line.as_bytes());
        queue.bytes.push(b'\n');
        queue.queued += 1;
        queue.intents += usize::from(intent);
        let upto = queue.queued;
        let wake = match queue.writer {
            Writer::Busy => false,
            Writer::Idle => true,
            Writer::Lingering => intent,
            Writer::Gathering => queue.intents >= GATHER_RECORDS,
        };
        drop(queue);
        if wake {
            self.shared.work.notify_one();
        }
        self.flushed(upto, intent)
    }

    /// What is durable once every line queued so far is.
    fn queue_nothing(&self) -> Unsynced {
        let upto = self.shared.queue.lock().unwrap_or_else(PoisonError::into_inner).queued;
        self.flushed(upto, false)
    }

    /// Durable once the first `upto` lines are on disk (see [`flushed`]).
    fn flushed(&self, upto: u64, counted: bool) -> Unsynced {
        Unsynced::new(flushed(Arc::clone(&self.shared), upto, counted))
    }

    /// Ends the intent with idempotency key `key`, unless a change already
    /// ended it (then there is nothing to wait for).
    pub fn end(&mut self, key: &str) -> Result<Option<Unsynced>, StateError> {
        if !self.encoder.is_open(key) {
            return Ok(None);
        }
        self.write(&Record::End { key: key.to_string() }).map(Some)
    }

    /// Deletes the journal, once the state it led to is written.
    pub(super) fn remove(mut self) -> Result<(), StateError> {
        self.close();
        remove_file(&self.path)
    }

    /// Stops the writer once it has written what is queued.
    fn close(&mut self) {
        self.shared.queue.lock().unwrap_or_else(PoisonError::into_inner).closed = true;
        self.shared.work.notify_one();
        if let Some(writer) = self.writer.take() {
            // The writer only waits, writes and flushes; it does not panic.
            let _ = writer.join();
        }
    }
}

impl Drop for Journal {
    fn drop(&mut self) {
        self.close();
    }
}

/// The writer thread: flushes what is queued, in batches, until closed.
fn write_until_closed(mut file: &File, shared: &Shared) {
    let mut queue = shared.queue.lock().unwrap_or_else(PoisonError::into_inner);
    loop {
        while queue.bytes.is_empty() && !queue.closed {
            queue.writer = Writer::Idle;
            queue = shared.work.wait(queue).unwrap_or_else(PoisonError::into_inner);
            queue.writer = Writer::Busy;
        }
        if queue.bytes.is_empty() || queue.failed.is_some() {
            return;
        }
        queue = wait_while(shared, queue, Writer::Lingering, LINGER_FOR, |q| !q.urgent(shared.synced()));
        // Intents with none on its way are flushed at once: a chain of
        // dependent steps has one intent at a time, and each would wait
        // out the gathering.
        queue = wait_while(shared, queue, Writer::Gathering, GATHER_FOR, |q| {
            q.intents > 0 && q.intents < GATHER_RECORDS && !q.closed && shared.coming.load(Ordering::SeqCst) > 0
        });
        let bytes = std::mem::take(&mut queue.bytes);
        queue.intents = 0;
        let upto = queue.queued;
        drop(queue);
        let written = file.write_all(&bytes).and_then(|()| file.sync_data());
        queue = shared.queue.lock().unwrap_or_else(PoisonError::into_inner);
        match written {
            Ok(()) => shared.flushed.send_modify(|f| f.synced = upto),
            Err(e) => {
                queue.failed = Some(e.to_string());
                shared.flushed.send_modify(|f| f.failed = Some(e.to_string()));
            }
        }
    }
}

/// Has the writer wait, as `writer`, while `waiting` holds of the queue,
/// for at most `limit`.
fn wait_while<'a>(
    shared: &'a Shared,
    mut queue: std::sync::MutexGuard<'a, Queue>,
    writer: Writer,
    limit: std::time::Duration,
    waiting: impl Fn(&Queue) -> bool,
) -> std::sync::MutexGuard<'a, Queue> {
    let deadline = std::time::Instant::now() + limit;
    while waiting(&queue) {
        let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) else { break };
        queue.writer = writer;
        queue = shared.work.wait_timeout(queue, left).unwrap_or_else(PoisonError::into_inner).0;
        queue.writer = Writer::Busy;
    }
    queue
}

/// Deletes the journal at `path`; a missing one is fine.
pub(super) fn remove_file(path: &Path) -> Result<(), StateError> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(StateError::Write { path: path.to_path_buf(), source: e }),
        _ => Ok(()),
    }
}

/// What a journal found beside a state file holds.
#[derive(Debug, PartialEq)]
pub(super) enum Found {
    /// There is no journal.
    None,
    /// A journal over an older serial of this state: its records are in the
    /// state file already (a crash came between writing the state and
    /// deleting the journal).
    Stale,
    /// A journal over this state, replayed into it.
    Replayed,
}

/// Replays the journal at `path`, if there is one, over `state` (as read
/// from the state file).
pub(super) fn replay(path: &Path, state: &mut State) -> Result<Found, StateError> {
    let text = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Found::None),
        Err(source) => return Err(StateError::Read { path: path.to_path_buf(), source }),
    };
    // The last line may be torn by a crash mid-append (no newline, or not
    // a whole record): it is left out, since the step it records never
    // went on.
    let complete = match text.iter().rposition(|b| *b == b'\n') {
        Some(last_newline) => &text[..=last_newline],
        None => &[][..],
    };
    let lines: Vec<&[u8]> = complete.split(|b| *b == b'\n').filter(|l| !l.is_empty()).collect();
    replay_lines(path, &lines, Tail::MayBeTorn, state)
}

/// Whether the last line of a journal can be a torn write.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Tail {
    /// A file: a crash mid-append can leave half a line, or garbage after
    /// the last full write on some file systems.
    MayBeTorn,
    /// Rows of a database, each written whole or not at all.
    Whole,
}

/// Replays a journal's lines (in any format this cairn reads), read from
/// wherever it is kept (`path` names it in errors), over `state`: how
/// every backend recovers. A bad line is an error naming it, but for a
/// torn last line where `tail` allows one, which is left out.
pub(super) fn replay_lines(path: &Path, lines: &[&[u8]], tail: Tail, state: &mut State) -> Result<Found, StateError> {
    let bad = |line: usize, message: String| StateError::Journal { path: path.to_path_buf(), line, message };
    let torn = |i: usize| tail == Tail::MayBeTorn && i + 1 == lines.len();
    let Some(first) = lines.first() else {
        // A crash before the first line was complete: nothing happened yet.
        return Ok(Found::Stale);
    };
    let (start, mut decoder) = match format::Decoder::start(first) {
        Ok(started) => started,
        Err(_) if torn(0) => return Ok(Found::Stale),
        Err(message) => return Err(bad(1, message)),
    };
    if start.lineage == state.lineage && start.serial < state.serial {
        return Ok(Found::Stale);
    }
    if start.lineage != state.lineage || start.serial > state.serial {
        let message = format!(
            "it continues the state with lineage {} at serial {}, but the state file has lineage {} at serial {}",
            start.lineage, start.serial, state.lineage, state.serial
        );
        return Err(bad(1, message));
    }
    let mut records = Vec::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate().skip(1) {
        match decoder.decode(line) {
            Ok(record) => records.push(record),
            Err(_) if torn(i) => break,
            Err(message) => return Err(bad(i + 1, message)),
        }
    }
    // Only once every line read: a bad line leaves the state as it was.
    for record in records {
        record.apply_to(state);
    }
    Ok(Found::Replayed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::addr::ResourceAddr;

    fn addr(name: &str) -> InstanceAddr {
        ResourceAddr::managed("t", name).instance()
    }

    fn instance(name: &str, value: &str) -> InstanceState {
        InstanceState::new(addr(name), "p", 0, serde_json::json!({ "v": value }))
    }

    fn intent(name: &str, key: &str) -> Record {
        Record::Intent(PendingOperation::now(addr(name), None, "create", key))
    }

    fn written_state() -> State {
        let mut state = State::new();
        state.serial = 4;
        state.set(instance("old", "1"));
        state
    }

    #[test]
    fn a_replayed_journal_restores_every_change_and_leaves_open_intents_pending() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.journal");
        let base = written_state();
        let mut journal = Journal::start(&path, &base).unwrap();
        journal.append(&intent("a", "ka")).unwrap();
        journal.append(&Record::Set { instance: Box::new(instance("a", "2")), ends: Some("ka".into()) }).unwrap();
        journal.append(&intent("old", "kd")).unwrap();
        journal.append(&Record::Remove { addr: addr("old"), ends: Some("kd".into()) }).unwrap();
        journal.append(&intent("b", "kb")).unwrap();
        journal.end("kb").unwrap().unwrap().wait().unwrap();
        journal.append(&intent("c", "kc")).unwrap();
        let outputs = BTreeMap::from([("o".to_string(), OutputState::new(&crate::value::Value::string("x"), false))]);
        journal.append(&Record::Outputs(outputs.clone())).unwrap();

        let mut state = base.clone();
        assert_eq!(replay(&path, &mut state).unwrap(), Found::Replayed);
        assert!(state.resources.iter().eq([&instance("a", "2")]));
        assert_eq!(state.outputs, outputs);
        let pending: Vec<&str> = state.pending.iter().map(|p| p.idempotency_key.as_str()).collect();
        assert_eq!(pending, ["kc"], "only the intent that never ended is pending");
        assert_eq!(state.serial, base.serial, "replaying does not write");
    }

    #[test]
    fn an_intent_that_ended_without_a_change_is_kept_for_its_retry_until_a_change_ends_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.journal");
        let base = written_state();
        let mut journal = Journal::start(&path, &base).unwrap();
        journal.append(&intent("b", "kb")).unwrap();
        journal.end("kb").unwrap().unwrap().wait().unwrap();
        let mut state = base.clone();
        replay(&path, &mut state).unwrap();
        let kept: Vec<(String, &str)> =
            state.retries.iter().map(|r| (r.addr.to_string(), r.idempotency_key.as_str())).collect();
        assert_eq!(kept, [(addr("b").to_string(), "kb")]);
        assert_eq!(state.retry_key(&addr("b"), "create"), Some("kb"));

        // The retry made the object: nothing is left to retry.
        journal.append(&intent("b", "kb")).unwrap();
        journal.append(&Record::Set { instance: Box::new(instance("b", "1")), ends: Some("kb".into()) }).unwrap();
        journal.end("kb").unwrap();
        let mut state = base.clone();
        replay(&path, &mut state).unwrap();
        assert!(state.retries.is_empty(), "{:?}", state.retries);
    }

    #[test]
    fn ending_an_intent_a_change_already_ended_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.journal");
        let mut journal = Journal::start(&path, &written_state()).unwrap();
        journal.append(&intent("a", "ka")).unwrap();
        journal.append(&Record::Set { instance: Box::new(instance("a", "2")), ends: Some("ka".into()) }).unwrap();
        let before = fs::read(&path).unwrap();
        assert!(journal.end("ka").unwrap().is_none());
        assert_eq!(fs::read(&path).unwrap(), before);
    }

    #[test]
    fn a_torn_last_line_is_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.journal");
        let base = written_state();
        let mut journal = Journal::start(&path, &base).unwrap();
        journal.append(&Record::Set { instance: Box::new(instance("a", "2")), ends: None }).unwrap();
        let whole = fs::read(&path).unwrap();
        for torn in [&b"{\"set\":{\"instance\""[..], b"\0\0\0\0\n"] {
            let mut bytes = whole.clone();
            bytes.extend_from_slice(torn);
            fs::write(&path, &bytes).unwrap();
            let mut state = base.clone();
            assert_eq!(replay(&path, &mut state).unwrap(), Found::Replayed);
            state.normalize();
            assert!(state.resources.iter().eq([&instance("a", "2"), &instance("old", "1")]));
        }
    }

    #[test]
    fn a_bad_line_before_the_last_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.journal");
        let base = written_state();
        let mut journal = Journal::start(&path, &base).unwrap();
        journal.append(&intent("a", "ka")).unwrap();
        let mut bytes = fs::read(&path).unwrap();
        bytes.extend_from_slice(b"not json\n{\"e\":1}\n");
        fs::write(&path, &bytes).unwrap();
        let err = replay(&path, &mut base.clone()).unwrap_err();
        let message = err.to_string();
        assert!(message.contains("s.journal") && message.contains("line 3"), "{message}");
    }

    #[test]
    fn a_journal_an_earlier_release_left_replays() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.journal");
        let base = written_state();
        // Format 1, as cairn 0.1 wrote it: a create that finished, one
        // under way at the crash, and the delete of `old`.
        let key = |c: char| c.to_string().repeat(32);
        let lines = [
            format!(r#"{{"start":{{"journal_version":1,"lineage":"{}","serial":4}}}}"#, base.lineage),
            format!(
                r#"{{"intent":{{"addr":"t.a","operation":"create","idempotency_key":"{}","started":"2026-11-22T10:31:05Z"}}}}"#,
                key('a')
            ),
            format!(
                r#"{{"set":{{"instance":{{"addr":"t.a","provider":"p","schema_version":0,"attributes":{{"v":"2"}},"dependencies":[],"status":"ready"}},"ends":"{}"}}}}"#,
                key('a')
            ),
            format!(
                r#"{{"intent":{{"addr":"t.old","operation":"delete","idempotency_key":"{}","started":"2026-11-22T10:31:06Z"}}}}"#,
                key('d')
            ),
            format!(r#"{{"remove":{{"addr":"t.old","ends":"{}"}}}}"#, key('d')),
            format!(
                r#"{{"intent":{{"addr":"t.c","operation":"create","idempotency_key":"{}","started":"2026-11-22T10:31:07Z"}}}}"#,
                key('c')
            ),
        ];
        fs::write(&path, lines.join("\n") + "\n").unwrap();
        let mut state = base.clone();
        assert_eq!(replay(&path, &mut state).unwrap(), Found::Replayed);
        assert!(state.resources.iter().eq([&instance("a", "2")]));
        assert_eq!(state.pending.len(), 1);
        assert_eq!(
            (state.pending[0].idempotency_key.as_str(), state.pending[0].started.as_str()),
            (key('c').as_str(), "2026-11-22T10:31:07Z")
        );
    }

    /// The journal's count of steps on their way to an intent.
    fn on_the_way(journal: &Journal) -> usize {
        journal.shared.coming.load(Ordering::SeqCst)
    }

    #[test]
    fn a_step_counts_on_its_way_to_its_intent_but_not_while_it_waits_or_after() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::start(&dir.path().join("j"), &written_state()).unwrap();
        let coming = super::super::StateJournal::coming(&journal).unwrap();
        let (first, second) = (coming.set_out(), coming.set_out());
        assert_eq!(on_the_way(&journal), 2);
        {
            let waiting = first.stopped();
            assert_eq!(on_the_way(&journal), 1);
            let again = first.stopped();
            assert_eq!(on_the_way(&journal), 1);
            drop(again);
            assert_eq!(on_the_way(&journal), 1, "an inner stop does not set out again");
            drop(waiting);
        }
        assert_eq!(on_the_way(&journal), 2, "after the wait the step is on its way again");
        first.arrived();
        first.arrived();
        assert_eq!(on_the_way(&journal), 1);
        drop(first);
        assert_eq!(on_the_way(&journal), 1, "an arrived step is not counted off twice");
        drop(second);
        assert_eq!(on_the_way(&journal), 0, "a step that stops for good has arrived");
    }

    #[test]
    fn an_intent_reaches_the_disk_while_another_step_is_still_on_its_way() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j");
        let mut journal = Journal::start(&path, &written_state()).unwrap();
        let coming = super::super::StateJournal::coming(&journal).unwrap();
        let (first, _never_arrives) = (coming.set_out(), coming.set_out());
        let unsynced = journal.write(&intent("a", "k-a")).unwrap();
        first.arrived();
        // The flush waits a moment for the other step's intent, no more.
        unsynced.wait().unwrap();
        // A result no step waits for, then an awaited one: both written.
        let set = Record::Set { instance: Box::new(instance("a", "1")), ends: Some("k-a".into()) };
        drop(journal.write(&set).unwrap());
        journal.append(&intent("b", "k-b")).unwrap();
        let lines = fs::read_to_string(&path).unwrap();
        assert_eq!(lines.lines().count(), 4, "{lines}");
    }

    #[test]
    fn a_journal_writes_each_step_once_in_a_few_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.journal");
        let mut journal = Journal::start(&path, &written_state()).unwrap();
        journal.append(&intent("a", "ka")).unwrap();
        journal.append(&Record::Set { instance: Box::new(instance("a", "2")), ends: Some("ka".into()) }).unwrap();
        let text = fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let version = format::JOURNAL_VERSION;
        assert!(lines[0].starts_with(&format!("{{\"start\":{{\"journal_version\":{version},")), "{text}");
        // The intent's time is in seconds after the start's: 0, or 1 when
        // a second began in between.
        assert!(lines[1].starts_with("{\"i\":[\"t.a\",\"create\",\"ka\",") && lines[1].len() <= 29, "{text}");
        assert_eq!(lines[2], "{\"s\":{\"e\":1,\"p\":\"p\",\"a\":{\"v\":\"2\"}}}");
    }

    #[test]
    fn a_journal_over_an_older_serial_is_stale_and_one_of_another_state_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.journal");
        let base = written_state();
        let mut journal = Journal::start(&path, &base).unwrap();
        journal.append(&Record::Set { instance: Box::new(instance("a", "2")), ends: None }).unwrap();
        let mut newer = base.clone();
        newer.serial += 1;
        assert_eq!(replay(&path, &mut newer).unwrap(), Found::Stale);
        assert_eq!(newer.resources, base.resources);

        let mut other = State::new();
        other.serial = base.serial;
        let message = replay(&path, &mut other).unwrap_err().to_string();
        assert!(message.contains("line 1") && message.contains(&base.lineage), "{message}");
        let mut older = base.clone();
        older.serial -= 1;
        assert!(replay(&path, &mut older).is_err(), "a state older than its journal was restored from elsewhere");
        assert_eq!(replay(&dir.path().join("none"), &mut base.clone()).unwrap(), Found::None);
    }
}
