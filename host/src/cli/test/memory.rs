//! The state of a test file's runs: kept in memory, as Terraform's test
//! runner keeps it, so that `cairn test` never reads or writes the
//! configuration's own state.

use std::sync::{Arc, Mutex, PoisonError};

use crate::state::{Backend, Record, State, StateJournal, Unsynced};

/// A backend whose state lives in memory, shared by its clones: each run
/// of a test file plans and applies over what the runs before it left.
/// There is no lock to take (one run at a time) and no journal to recover
/// from (the process holds everything until the end).
#[derive(Clone, Default)]
pub struct Memory {
    state: Arc<Mutex<State>>,
}

impl Memory {
    /// The state as the last apply left it.
    pub fn state(&self) -> State {
        self.state.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

/// An error type the trait's signatures need; this backend never fails.
type StateError = crate::state::StateError;

impl Backend for Memory {
    fn describe(&self) -> String {
        "the test's state in memory".to_string()
    }

    fn lock(&mut self) -> Result<(), StateError> {
        Ok(())
    }

    fn proceed_unlocked(&mut self) -> Result<(), StateError> {
        Ok(())
    }

    fn force_unlock(&mut self, _id: &str) -> Result<(), StateError> {
        Ok(())
    }

    fn read(&self) -> Result<State, StateError> {
        Ok(self.state())
    }

    fn write(&mut self, state: &mut State) -> Result<(), StateError> {
        state.serial += 1;
        *self.state.lock().unwrap_or_else(PoisonError::into_inner) = state.clone();
        Ok(())
    }

    fn start_journal(&mut self, _state: &State) -> Result<Box<dyn StateJournal>, StateError> {
        Ok(Box::new(NoJournal))
    }

    fn history(&self) -> Result<Vec<State>, StateError> {
        Ok(Vec::new())
    }
}

/// The journal of an apply whose state is in memory: nothing outlives the
/// process to recover from, so nothing is recorded.
struct NoJournal;

impl StateJournal for NoJournal {
    fn write(&mut self, _record: &Record) -> Result<Unsynced, StateError> {
        Ok(Unsynced::done())
    }

    fn end(&mut self, _key: &str) -> Result<Option<Unsynced>, StateError> {
        Ok(None)
    }

    fn discard(self: Box<Self>) -> Result<(), StateError> {
        Ok(())
    }
}
