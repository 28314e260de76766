//! The seam between the engine and wherever a state is kept: the
//! [`Backend`] trait, and the [`StateJournal`] an apply records its steps
//! in. The local file ([`super::LocalBackend`]) is the first backend; a new
//! one (a database, an object store) is one new file implementing these two
//! traits, and the engine needs no other change beyond choosing it
//! (`engine::Workspace::backend`).

use std::time::{Duration, Instant};

use super::{Record, State, StateError, Unsynced};

/// How often [`Backend::lock_waiting`] tries again.
const LOCK_POLL: Duration = Duration::from_millis(250);

/// How a run takes its state's lock: Terraform's `-lock` and
/// `-lock-timeout`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Locking {
    /// Whether to take the lock at all; `false` (`-lock=false`) runs
    /// without it, see [`Backend::proceed_unlocked`].
    pub enabled: bool,
    /// How long to wait for the lock while another run holds it; zero
    /// tries once.
    pub timeout: Duration,
}

impl Default for Locking {
    /// Take the lock, failing at once when another run holds it.
    fn default() -> Locking {
        Locking { enabled: true, timeout: Duration::ZERO }
    }
}

/// Where a configuration's state is kept.
///
/// A backend is opened unlocked, which is enough to read; [`Backend::lock`]
/// takes the lock a run that may change the state holds until the backend
/// is dropped. Writes refuse without it.
pub trait Backend: Send {
    /// Where the state is, for messages: a path, a URL.
    fn describe(&self) -> String;

    /// Takes the state's lock for this run, failing with
    /// [`StateError::Locked`] (naming the holder) while another run holds
    /// it. Recovers what an apply that crashed left in its journal.
    fn lock(&mut self) -> Result<(), StateError>;

    /// [`Backend::lock`], trying again while another run holds the lock,
    /// until it is free or `timeout` has passed (Terraform's
    /// `-lock-timeout`); a zero `timeout` tries once.
    fn lock_waiting(&mut self, timeout: Duration) -> Result<(), StateError> {
        let deadline = Instant::now() + timeout;
        loop {
            match self.lock() {
                Err(StateError::Locked { .. }) if Instant::now() < deadline => {
                    std::thread::sleep(LOCK_POLL.min(deadline.saturating_duration_since(Instant::now())));
                }
                other => return other,
            }
        }
    }

    /// Lets this run change the state without its lock (`-lock=false`):
    /// nothing then keeps another run from changing it at the same time,
    /// which the user takes upon themselves. Refused while the state has
    /// the journal of an apply (which may be running now: only a run that
    /// holds the lock may recover it), and by a backend that cannot write
    /// without its lock.
    fn proceed_unlocked(&mut self) -> Result<(), StateError> {
        Err(StateError::Unsupported { backend: self.describe(), operation: "running without the state lock" })
    }

    /// Takes the lock as `locking` says: waiting up to its timeout
    /// ([`Backend::lock_waiting`]), or not at all
    /// ([`Backend::proceed_unlocked`]).
    fn lock_as(&mut self, locking: Locking) -> Result<(), StateError> {
        if locking.enabled { self.lock_waiting(locking.timeout) } else { self.proceed_unlocked() }
    }

    /// Releases the lock another run holds, whose lock ID is `id` (as the
    /// [`StateError::Locked`] error shows it): `cairn force-unlock`. Fails
    /// with [`StateError::Unlock`], saying why, when the state is not
    /// locked, is locked under another ID, or its lock cannot be released
    /// from here.
    fn force_unlock(&mut self, id: &str) -> Result<(), StateError>;

    /// Reads the state; a state never written is [`State::new`]. Changes an
    /// apply journaled but did not commit are replayed over it.
    fn read(&self) -> Result<State, StateError>;

    /// Commits `state` as the new state, atomically: afterwards the backend
    /// holds it whole or still the old one. Its serial goes up by one when
    /// the write lands. Refused when another writer committed a newer
    /// serial, or a state of another lineage, since `state` was read.
    fn write(&mut self, state: &mut State) -> Result<(), StateError>;

    /// Commits `state` in place of whatever state the backend holds, of
    /// any lineage or serial (`cairn state push -force`): otherwise as
    /// [`Backend::write`]. A backend that cannot refuses with
    /// [`StateError::Unsupported`].
    fn replace(&mut self, _state: &mut State) -> Result<(), StateError> {
        Err(StateError::Unsupported { backend: self.describe(), operation: "replacing a state of another lineage" })
    }

    /// Starts the journal of an apply over `state`, the state as last
    /// written (or read): from now on every change is appended there before
    /// the state is committed.
    fn start_journal(&mut self, state: &State) -> Result<Box<dyn StateJournal>, StateError>;

    /// Ends an apply: commits `state`, which holds everything `journal`
    /// recorded, then discards the journal. When the commit fails the
    /// journal stays, and the next [`Backend::lock`] recovers from it.
    fn finish_journal(&mut self, journal: Box<dyn StateJournal>, state: &mut State) -> Result<(), StateError> {
        self.write(state)?;
        journal.discard()
    }

    /// Earlier states this backend keeps, the newest first, the current
    /// one left out (the local file keeps the one from before the last run
    /// that wrote; PostgreSQL keeps every version).
    fn history(&self) -> Result<Vec<State>, StateError>;
}

/// The journal of one apply: records appended in order, each durable once
/// its [`Unsynced::wait`] returns.
///
/// An apply relies on two more promises (it waits for intents only): a
/// record is durable once any record written after it is, and after a
/// failed write nothing more is written (every later `write` is refused).
pub trait StateJournal: Send {
    /// Queues `record` after every record written before.
    fn write(&mut self, record: &Record) -> Result<Unsynced, StateError>;

    /// Ends the intent with idempotency key `key`, unless a change already
    /// ended it (then there is nothing to wait for).
    fn end(&mut self, key: &str) -> Result<Option<Unsynced>, StateError>;

    /// Discards the journal once the state it led to is committed.
    fn discard(self: Box<Self>) -> Result<(), StateError>;

    /// The count of steps on their way to an intent, for a journal that
    /// lets a flush wait for them; `None` (the default) for one that
    /// does not.
    fn coming(&self) -> Option<super::journal::Coming> {
        None
    }
}
