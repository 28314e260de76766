//! State: the record of what exists, and where that record is kept.
//!
//! This module owns the in-memory model of a configuration's state
//! ([`State`] and the per-instance [`InstanceState`]), its on-disk JSON form
//! (format version [`FORMAT_VERSION`]), and the backends that persist it
//! behind the [`Backend`] trait: the default [`LocalBackend`] (a `cairn.state.json` file beside the
//! configuration, written atomically, with a `.backup` of the previous run's
//! state and an OS lock held for the whole run), and [`PgBackend`]
//! (PostgreSQL: every version kept, an advisory lock, compare-and-swap on
//! the serial).
//!
//! It does not own what the attributes mean: they are stored as typed JSON
//! ([`crate::value::to_json_typed`] with the schema's implied type), kept as
//! compact text ([`Attributes`]), and read back by whoever has the schema
//! ([`Attributes::decode`]). Nor does it decide what to do with the state:
//! planning and applying do.

mod attributes;
mod backend;
mod edit;
mod journal;
mod local;
mod lock;
mod pg;
mod terraform;

use std::collections::BTreeMap;
use std::io;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::addr::{InstanceAddr, ResourceAddr};

pub use attributes::Attributes;
pub use backend::{Backend, Locking, StateJournal};
pub use edit::{MoveError, names};
pub use journal::{Coming, Encoder, Journal, OnTheWay, Record, Stopped, Unsynced};
pub use local::{DEFAULT_STATE_FILE, LocalBackend};
pub use lock::{LockHolder, format_utc};
pub use pg::{
    CONN_STR_VARIABLE, DEFAULT_SCHEMA, PgBackend, TERRAFORM_PG_SCHEMA, describe as pg_location,
    drop_schema as drop_pg_schema, read_terraform_state as read_terraform_pg_state,
    schemas_with_prefix as pg_schemas_with_prefix,
};
pub use terraform::{TERRAFORM_STATE_FILE, TerraformState, TfResource};

/// The state file format this cairn writes and the newest it reads.
///
/// Bump it on any change an older cairn would misread, and teach
/// [`LocalBackend::read`] to upgrade the older versions.
///
/// - 1: the first format.
/// - 2: adds the instance status `destroying` (an object whose delete
///   failed) and the optional `create_before_destroy` flag. A version 1
///   file is a valid version 2 file, so it is read as it is.
/// - 3: adds the optional `pending` operations (interrupted by a crash). A
///   version 2 file is a valid version 3 file.
/// - 4: adds the optional `retries` (operations that made nothing, whose
///   next attempt is sent the same idempotency key). A version 3 file is a
///   valid version 4 file.
pub const FORMAT_VERSION: u32 = 4;

/// The oldest state file format this cairn reads.
pub const OLDEST_FORMAT_VERSION: u32 = 1;

/// The version of cairn, recorded in every state it writes.
pub const CAIRN_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The state of one configuration: what exists.
///
/// The JSON form puts the small identifying fields first, then the outputs,
/// then the resources (as Terraform's state does), so the top of the file
/// says which state it is and what it produced.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct State {
    /// The file format, [`FORMAT_VERSION`]; reading a newer one is an error.
    pub format_version: u32,
    /// The cairn that last wrote this state.
    pub cairn_version: String,
    /// Increases by one on every write, so two copies of the same lineage
    /// can be ordered.
    pub serial: u64,
    /// A UUID (v4) fixed when the state is created. A write over a state
    /// file of another lineage is refused: it is another configuration's state.
    pub lineage: String,
    /// Root module outputs, by name.
    #[serde(default)]
    pub outputs: BTreeMap<String, OutputState>,
    /// Every resource instance that exists, by address; written sorted by
    /// address so that diffs of the file are stable.
    #[serde(default)]
    pub resources: Resources,
    /// Operations a provider was asked for by an apply that crashed (or
    /// was interrupted twice) before it learnt how they ended: their
    /// objects may exist. The next plan resolves them by asking the
    /// provider (`apply::recover`), and the apply after it commits that.
    /// Omitted when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<PendingOperation>,
    /// Creates and updates that ended having made nothing: the provider
    /// failed them, or did not find what an interrupted one made. The next
    /// create or update of the same instance is their retry, and is sent
    /// the same idempotency key, so that a provider that made something
    /// after all recognises it. Omitted when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retries: Vec<PendingOperation>,
}

/// An operation a provider was asked for whose outcome is not recorded.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct PendingOperation {
    /// The instance operated on.
    pub addr: InstanceAddr,
    /// The deposed object operated on, if not the current one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deposed: Option<String>,
    /// `create`, `update` or `delete`.
    pub operation: String,
    /// The key the provider was given: a retry of the same change sends it
    /// again, so that the provider can find what the interrupted call made.
    pub idempotency_key: String,
    /// When it was asked for, in UTC (`2026-11-22T10:31:05Z`).
    pub started: String,
}

impl PendingOperation {
    /// An operation starting now.
    pub fn now(addr: InstanceAddr, deposed: Option<&str>, operation: &str, idempotency_key: &str) -> PendingOperation {
        PendingOperation {
            addr,
            deposed: deposed.map(str::to_string),
            operation: operation.to_string(),
            idempotency_key: idempotency_key.to_string(),
            started: lock::format_utc(std::time::SystemTime::now()),
        }
    }
}

/// What is known about one resource instance.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct InstanceState {
    /// Its address, e.g. `local_file.pages["index"]`.
    pub addr: InstanceAddr,
    /// The local name of the provider that manages it, e.g. `local`.
    pub provider: String,
    /// The version of the resource type's schema the attributes were
    /// written with; a provider upgrades older ones (`upgrade-state`).
    pub schema_version: u64,
    /// The object's attributes as typed JSON
    /// ([`crate::value::to_json_typed`] with the schema's implied type);
    /// null while only deposed objects of the instance exist.
    pub attributes: Attributes,
    /// Opaque bytes the provider asked the host to keep; base64 in JSON,
    /// omitted when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty", with = "base64_bytes")]
    pub private: Vec<u8>,
    /// Addresses of the resources it depended on when last applied, so that
    /// it can be destroyed in the right order once its configuration is gone.
    #[serde(default)]
    pub dependencies: Vec<crate::addr::ResourceAddr>,
    /// Whether the object is usable or must be replaced.
    #[serde(default)]
    pub status: InstanceStatus,
    /// Whether a replacement of this object creates the new one first: set
    /// by the resource's `lifecycle` or inherited from a dependent, and kept
    /// here so that the object is destroyed in the right order after its
    /// configuration is gone. Omitted when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub create_before_destroy: bool,
    /// Old objects of a create_before_destroy replacement that still exist
    /// and wait for deletion; omitted when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deposed: Vec<DeposedObject>,
    /// Paths the provider marked sensitive in the attributes (beyond the
    /// schema's sensitive attributes), redacted wherever the object is
    /// shown; omitted when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sensitive_attributes: Vec<crate::value::Path>,
}

impl InstanceState {
    /// A ready instance with no private bytes, dependencies or deposed
    /// objects; set the other fields with struct update syntax.
    pub fn new(
        addr: InstanceAddr,
        provider: &str,
        schema_version: u64,
        attributes: impl Into<Attributes>,
    ) -> InstanceState {
        InstanceState {
            addr,
            provider: provider.to_string(),
            schema_version,
            attributes: attributes.into(),
            private: Vec::new(),
            dependencies: Vec::new(),
            status: InstanceStatus::Ready,
            create_before_destroy: false,
            deposed: Vec::new(),
            sensitive_attributes: Vec::new(),
        }
    }
}

/// Whether a resource instance's object can be trusted.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum InstanceStatus {
    /// Created or updated successfully.
    #[default]
    Ready,
    /// Exists, but its creation did not finish (or the user asked for its
    /// replacement); the next plan replaces it.
    Tainted,
    /// Its delete was asked for and failed: it may be partly deleted. The
    /// next apply deletes it again (or, while it is still configured,
    /// replaces it, deleting it first).
    Destroying,
}

/// An old object kept after a create_before_destroy replacement created its
/// successor, until it is deleted.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct DeposedObject {
    /// Tells deposed objects of one instance apart; stable until deleted.
    pub key: String,
    /// Its attributes, as in [`InstanceState::attributes`].
    pub attributes: Attributes,
    /// Its provider-private bytes; base64 in JSON, omitted when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty", with = "base64_bytes")]
    pub private: Vec<u8>,
}

/// The value of one root module output.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct OutputState {
    /// The value as plain JSON, as Terraform writes it.
    pub value: serde_json::Value,
    /// The value's type in Terraform's JSON type syntax
    /// ([`crate::value::type_to_json`]); an output's type is in no schema,
    /// and plain JSON alone cannot tell a list from a tuple.
    #[serde(rename = "type", default)]
    pub ty: serde_json::Value,
    /// Whether it is redacted in output.
    #[serde(default)]
    pub sensitive: bool,
}

impl OutputState {
    /// The stored output of a value.
    pub fn new(value: &crate::value::Value, sensitive: bool) -> OutputState {
        let ty = crate::value::Type::of(value);
        OutputState { value: crate::value::to_json_typed(value, &ty), ty: crate::value::type_to_json(&ty), sensitive }
    }

    /// The stored value, read back with its type.
    pub fn decode(&self) -> Option<crate::value::Value> {
        let ty = crate::value::type_from_json(&self.ty).unwrap_or(crate::value::Type::Dynamic);
        crate::value::from_json(&self.value, &ty).ok()
    }
}

impl State {
    /// An empty state with a new lineage and serial 0; the first write
    /// makes it serial 1.
    pub fn new() -> State {
        State {
            format_version: FORMAT_VERSION,
            cairn_version: CAIRN_VERSION.to_string(),
            serial: 0,
            lineage: uuid::Uuid::new_v4().to_string(),
            outputs: BTreeMap::new(),
            resources: Resources::default(),
            pending: Vec::new(),
            retries: Vec::new(),
        }
    }

    /// The key of the failed or lost `operation` (`create` or `update`) of
    /// `addr`'s current object that the next attempt retries, if any.
    pub fn retry_key(&self, addr: &InstanceAddr, operation: &str) -> Option<&str> {
        self.retries
            .iter()
            .find(|op| op.addr == *addr && op.deposed.is_none() && op.operation == operation)
            .map(|op| op.idempotency_key.as_str())
    }

    /// Keeps `op`, which made nothing, for its retry ([`Self::retry_key`])
    /// when it is a create or update; a delete's key is the object's own.
    pub fn keep_for_retry(&mut self, op: PendingOperation) {
        if op.operation == "create" || op.operation == "update" {
            self.retries.retain(|r| !(r.addr == op.addr && r.deposed == op.deposed));
            self.retries.push(op);
        }
    }

    /// The instance at `addr`, if it exists.
    pub fn get(&self, addr: &InstanceAddr) -> Option<&InstanceState> {
        self.resources.get(addr)
    }

    /// The instance at `addr` to change in place, if it exists.
    pub fn get_mut(&mut self, addr: &InstanceAddr) -> Option<&mut InstanceState> {
        self.resources.get_mut(addr)
    }

    /// Forgets the current object of the instance at `addr`: the whole
    /// instance, or, while deposed objects of it remain, only its
    /// attributes (null attributes mean "no current object").
    pub fn forget_current(&mut self, addr: &InstanceAddr) {
        let Some(inst) = self.get_mut(addr) else { return };
        if inst.deposed.is_empty() {
            self.remove(addr);
        } else {
            inst.attributes = Attributes::null();
            inst.private.clear();
            inst.status = InstanceStatus::Ready;
        }
    }

    /// Forgets one deposed object of the instance at `addr`, and the
    /// instance itself when nothing of it is left.
    pub fn forget_deposed(&mut self, addr: &InstanceAddr, key: &str) {
        let Some(inst) = self.get_mut(addr) else { return };
        inst.deposed.retain(|d| d.key != key);
        if inst.deposed.is_empty() && inst.attributes.is_null() {
            self.remove(addr);
        }
    }

    /// Records `inst`, replacing the instance at the same address if any.
    pub fn set(&mut self, inst: InstanceState) {
        self.resources.insert(inst);
    }

    /// Forgets the instance at `addr`, returning it if it was there.
    pub fn remove(&mut self, addr: &InstanceAddr) -> Option<InstanceState> {
        self.resources.remove(addr)
    }

    /// Reads a state file's content (`path` is for messages), as the
    /// local backend reads its file: a newer format, invalid JSON or an
    /// address listed twice is an error that names the file.
    pub fn parse(path: &std::path::Path, bytes: &[u8]) -> Result<State, StateError> {
        local::parse(path, bytes)
    }

    /// Whether the state records no resources and no outputs.
    pub fn is_empty(&self) -> bool {
        self.resources.is_empty() && self.outputs.is_empty()
    }

    /// Whether this is what a backend reads where no state was ever
    /// written: every write counts in the serial, and the journal of a
    /// first apply that crashed before writing leaves resources or pending
    /// operations.
    pub fn never_written(&self) -> bool {
        self.serial == 0 && self.is_empty() && self.pending.is_empty()
    }

    /// Puts each resource's dependencies in a canonical order, so that the
    /// same state is always written as the same bytes (the resources
    /// themselves are always in address order).
    fn normalize(&mut self) {
        for r in self.resources.iter_mut() {
            r.dependencies.sort();
            r.dependencies.dedup();
        }
    }

    /// An address the file this state was read from listed twice (the
    /// first in address order), if any: a state that lists an instance
    /// twice cannot say which object is the real one.
    fn duplicate_addr(&self) -> Option<&InstanceAddr> {
        self.resources.duplicate.as_ref()
    }
}

/// The resource instances of a state, indexed by address, so that finding,
/// adding and removing one costs `O(log n)` however large the state is
/// (planning and applying look every instance up). They iterate, and are
/// written, in address order.
#[derive(Clone, Debug, Default)]
pub struct Resources {
    by_addr: BTreeMap<InstanceAddr, InstanceState>,
    /// An address listed twice in the file these were read from (the
    /// first in address order): reading keeps the later one, and
    /// [`LocalBackend`] refuses the state.
    duplicate: Option<InstanceAddr>,
}

impl Resources {
    /// The instance at `addr`, if it exists.
    pub fn get(&self, addr: &InstanceAddr) -> Option<&InstanceState> {
        self.by_addr.get(addr)
    }

    /// The instance at `addr` to change in place, if it exists. Its
    /// address must not change (it is the key it is found by).
    pub fn get_mut(&mut self, addr: &InstanceAddr) -> Option<&mut InstanceState> {
        self.by_addr.get_mut(addr)
    }

    /// Records `inst`, returning the instance it replaced at the same
    /// address, if any.
    pub fn insert(&mut self, inst: InstanceState) -> Option<InstanceState> {
        self.by_addr.insert(inst.addr.clone(), inst)
    }

    /// Forgets the instance at `addr`, returning it if it was there.
    pub fn remove(&mut self, addr: &InstanceAddr) -> Option<InstanceState> {
        self.by_addr.remove(addr)
    }

    /// Every instance, in address order.
    pub fn iter(&self) -> impl Iterator<Item = &InstanceState> {
        self.by_addr.values()
    }

    /// Every instance to change in place, in address order. Their
    /// addresses must not change.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut InstanceState> {
        self.by_addr.values_mut()
    }

    /// The instances of one resource block (all its `count` or `for_each`
    /// keys), in key order, found without looking at the others.
    pub fn of_resource<'a>(&'a self, resource: &'a ResourceAddr) -> impl Iterator<Item = &'a InstanceState> + 'a {
        // An instance address orders by resource first, and the key `None`
        // before every other: this is where the block's instances start.
        let first = InstanceAddr { resource: resource.clone(), key: None };
        self.by_addr.range(first..).map(|(_, inst)| inst).take_while(move |inst| &inst.addr.resource == resource)
    }

    /// How many instances there are.
    pub fn len(&self) -> usize {
        self.by_addr.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.by_addr.is_empty()
    }
}

impl PartialEq for Resources {
    /// The same instances; where a file listed an address twice is not
    /// part of the value.
    fn eq(&self, other: &Resources) -> bool {
        self.by_addr == other.by_addr
    }
}

impl FromIterator<InstanceState> for Resources {
    /// The instances, a later one replacing an earlier one at the same
    /// address.
    fn from_iter<I: IntoIterator<Item = InstanceState>>(iter: I) -> Resources {
        let mut resources = Resources::default();
        for inst in iter {
            resources.insert(inst);
        }
        resources
    }
}

impl<'a> IntoIterator for &'a Resources {
    type Item = &'a InstanceState;
    type IntoIter = std::collections::btree_map::Values<'a, InstanceAddr, InstanceState>;

    fn into_iter(self) -> Self::IntoIter {
        self.by_addr.values()
    }
}

impl Serialize for Resources {
    /// A JSON array of the instances in address order, as the state file
    /// has always had them.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.by_addr.values())
    }
}

impl<'de> Deserialize<'de> for Resources {
    /// The array of a state file, in any order. An address listed twice
    /// is remembered rather than an error
    /// here, so that reading can say which one it is.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Resources, D::Error> {
        Ok(Resources::from_list(Vec::<InstanceState>::deserialize(d)?))
    }
}

impl Resources {
    /// The instances of a state file, in the order they were listed.
    pub(super) fn from_list(mut list: Vec<InstanceState>) -> Resources {
        // Sorted first (stably, so that of two at one address the later
        // stays later), the map is built in one pass with full nodes:
        // inserted one by one in address order, each node would be left
        // half empty.
        list.sort_by(|a, b| a.addr.cmp(&b.addr));
        let duplicate = list.windows(2).find(|w| w[0].addr == w[1].addr).map(|w| w[0].addr.clone());
        let by_addr = list.into_iter().map(|inst| (inst.addr.clone(), inst)).collect();
        Resources { by_addr, duplicate }
    }
}

impl Default for State {
    /// The same as [`State::new`]: an empty state with a fresh lineage.
    fn default() -> State {
        State::new()
    }
}

/// Something went wrong reading, writing or locking a state. Every message
/// names the file.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// Another process (or another backend in this one) holds the lock.
    #[error("the state {} is locked by another cairn process ({}); wait for it to finish, or give -lock-timeout to wait for it", .path.display(), lock::describe(.holder.as_deref()))]
    Locked {
        /// The state file (or where a backend keeps it).
        path: PathBuf,
        /// Who holds it, as it wrote into the lock file; `None` when the
        /// lock file could not be read or the holder has not written it yet.
        holder: Option<Box<LockHolder>>,
    },
    /// The lock file could not be created or locked.
    #[error("cannot lock the state {}: {source}", .path.display())]
    Lock {
        /// The lock file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The state file exists but could not be read.
    #[error("cannot read the state {}: {source}", .path.display())]
    Read {
        /// The state file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The state file is not valid JSON, or not a state. It is left as it is.
    #[error(
        "the state {} is not valid ({source}); it was left unchanged: fix it, or restore {}.backup",
        .path.display(), .path.display()
    )]
    Invalid {
        /// The state file.
        path: PathBuf,
        /// 1-based line of the problem.
        line: usize,
        /// 1-based column of the problem.
        column: usize,
        /// serde's description, which ends with the line and column.
        source: serde_json::Error,
    },
    /// The state file lists one instance twice.
    #[error("the state {} lists {addr} twice; it was left unchanged: remove one of them", .path.display())]
    Duplicate {
        /// The state file.
        path: PathBuf,
        /// The address listed twice (boxed: an address with a module path
        /// would make every state result large).
        addr: Box<InstanceAddr>,
    },
    /// The state file was written in a format this cairn does not know.
    #[error(
        "the state {} has format_version {found}, but this cairn ({}) reads format_version {supported} and older; use a newer cairn",
        .path.display(), CAIRN_VERSION
    )]
    UnsupportedVersion {
        /// The state file.
        path: PathBuf,
        /// The version in the file.
        found: u32,
        /// [`FORMAT_VERSION`].
        supported: u32,
    },
    /// A write would replace the state of another configuration.
    #[error(
        "refusing to write the state {}: it has lineage {file}, but the state being written has lineage {ours}, so it belongs to another configuration",
        .path.display()
    )]
    LineageMismatch {
        /// The state file.
        path: PathBuf,
        /// The lineage in the file.
        file: String,
        /// The lineage of the state being written.
        ours: String,
    },
    /// A write would replace a state written after this one was read.
    #[error(
        "refusing to write the state {}: it is at serial {file}, newer than the serial {ours} of the state being written, so writing would lose changes",
        .path.display()
    )]
    StaleSerial {
        /// The state file.
        path: PathBuf,
        /// The serial in the file.
        file: u64,
        /// The serial of the state being written.
        ours: u64,
    },
    /// The apply journal beside the state has a bad line. It is left as it
    /// is.
    #[error(
        "the apply journal {} is not valid at line {line} ({message}); it was left unchanged: move it away to use the state without it",
        .path.display()
    )]
    Journal {
        /// The journal file.
        path: PathBuf,
        /// 1-based line of the problem.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// `-lock=false` over a state with an apply's journal, which may be
    /// the journal of an apply running now.
    #[error(
        "the state {state} has the journal of an apply that is running or was interrupted; run without -lock=false, \
         so that cairn takes the lock and recovers what that apply did"
    )]
    JournalWithoutLock {
        /// The state, as [`Backend::describe`] names it.
        state: String,
    },
    /// The backend cannot do what was asked.
    #[error("the state backend {backend} does not support {operation}")]
    Unsupported {
        /// The backend, as [`Backend::describe`] names it.
        backend: String,
        /// What it cannot do.
        operation: &'static str,
    },
    /// The backend was opened with [`LocalBackend::open_read_only`].
    #[error("cannot write the state {}: it was opened read-only, without the lock", .path.display())]
    ReadOnly {
        /// The state file.
        path: PathBuf,
    },
    /// The state could not be turned into JSON.
    #[error("cannot encode the state for {}: {source}", .path.display())]
    Encode {
        /// The state file.
        path: PathBuf,
        /// Why.
        source: serde_json::Error,
    },
    /// A database backend could not be reached, or a query failed.
    #[error("cannot use the state in {state}: {message}")]
    Database {
        /// Where the state is (never with a password).
        state: String,
        /// What failed.
        message: String,
    },
    /// This run's lock was released by someone else (`cairn force-unlock`)
    /// while it ran; nothing more is written.
    #[error(
        "the lock on the state in {state} was taken from this run (by `cairn force-unlock`?); nothing more was written: run again"
    )]
    LockLost {
        /// Where the state is.
        state: String,
    },
    /// `cairn force-unlock` could not release the lock.
    #[error("cannot unlock the state {state}: {reason}")]
    Unlock {
        /// Where the state is.
        state: String,
        /// Why not.
        reason: String,
    },
    /// Writing the state, or its backup, failed. The file it was replacing
    /// is unchanged.
    #[error("cannot write {}: {source}; the previous content is unchanged", .path.display())]
    Write {
        /// The file being written: the state or its backup.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
}

/// serde `with` module: bytes as a standard base64 string (state files,
/// saved plans).
pub(crate) mod base64_bytes {
    use base64::Engine;
    use base64::engine::general_purpose::STANDARD;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&STANDARD.encode(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(d)?;
        STANDARD.decode(text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::addr::ResourceAddr;

    fn inst(addr: &str) -> InstanceState {
        InstanceState::new(addr.parse().unwrap(), "local", 0, serde_json::json!({"id": addr}))
    }

    #[test]
    fn new_states_are_empty_with_distinct_lineages() {
        let (a, b) = (State::new(), State::new());
        assert!(a.is_empty());
        assert_eq!((a.format_version, a.serial), (FORMAT_VERSION, 0));
        assert_ne!(a.lineage, b.lineage);
        assert!(uuid::Uuid::parse_str(&a.lineage).is_ok());
    }

    #[test]
    fn set_inserts_or_replaces_and_remove_forgets() {
        let mut state = State::new();
        state.set(inst("local_file.a"));
        state.set(inst("local_file.b"));
        let mut tainted = inst("local_file.a");
        tainted.status = InstanceStatus::Tainted;
        state.set(tainted);
        assert_eq!(state.resources.len(), 2);
        let a = ResourceAddr::managed("local_file", "a").instance();
        assert_eq!(state.get(&a).unwrap().status, InstanceStatus::Tainted);
        assert_eq!(state.remove(&a).unwrap().addr, a);
        assert!(state.get(&a).is_none());
        assert!(state.remove(&a).is_none());
        assert!(!state.is_empty());
    }

    #[test]
    fn resources_iterate_in_address_order_and_normalize_sorts_dependencies() {
        let mut state = State::new();
        for a in ["random_id.x[10]", "data.local_file.t", "random_id.x[2]", "local_file.b"] {
            state.set(inst(a));
        }
        let (a, b) = (ResourceAddr::managed("t", "a"), ResourceAddr::managed("t", "b"));
        let x10: InstanceAddr = "random_id.x[10]".parse().unwrap();
        state.get_mut(&x10).unwrap().dependencies = vec![b.clone(), a.clone(), b.clone()];
        state.normalize();
        let order: Vec<String> = state.resources.iter().map(|r| r.addr.to_string()).collect();
        // Managed before data, integer keys in numeric order.
        assert_eq!(order, ["local_file.b", "random_id.x[2]", "random_id.x[10]", "data.local_file.t"]);
        assert_eq!(state.get(&x10).unwrap().dependencies, [a, b]);
        let written: Vec<String> = serde_json::to_value(&state).unwrap()["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["addr"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(written, order);
    }

    #[test]
    fn the_index_finds_every_instance_after_inserts_replacements_and_removals() {
        // Many instances added in a scrambled order, some replaced, some
        // removed: every lookup must agree with a plain list searched
        // linearly, and iteration must stay in address order.
        let mut state = State::new();
        let mut expected: Vec<InstanceState> = Vec::new();
        let name = |i: usize| format!("null_resource.r{}", (i * 7919) % 1000);
        for i in 0..1000 {
            state.set(inst(&name(i)));
            expected.push(inst(&name(i)));
        }
        for i in (0..1000).step_by(3) {
            let addr: InstanceAddr = name(i).parse().unwrap();
            assert_eq!(state.remove(&addr).map(|r| r.addr), Some(addr.clone()));
            expected.retain(|r| r.addr != addr);
        }
        for i in (1..1000).step_by(7) {
            let mut changed = inst(&name(i));
            changed.status = InstanceStatus::Tainted;
            state.set(changed.clone());
            match expected.iter_mut().find(|r| r.addr == changed.addr) {
                Some(r) => *r = changed,
                None => expected.push(changed),
            }
        }
        assert_eq!(state.resources.len(), expected.len());
        for i in 0..1000 {
            let addr: InstanceAddr = name(i).parse().unwrap();
            assert_eq!(state.get(&addr), expected.iter().find(|r| r.addr == addr), "{addr}");
        }
        expected.sort_by(|a, b| a.addr.cmp(&b.addr));
        assert!(state.resources.iter().eq(expected.iter()));
    }

    #[test]
    fn a_resource_blocks_instances_are_found_apart_from_its_neighbours() {
        let state = State {
            resources: ["t.a", "t.b[0]", "t.b[1]", "t.b[\"k\"]", "t.ba", "t.c[3]", "data.t.b"]
                .into_iter()
                .map(inst)
                .collect(),
            ..State::new()
        };
        let of =
            |r: &ResourceAddr| -> Vec<String> { state.resources.of_resource(r).map(|i| i.addr.to_string()).collect() };
        assert_eq!(of(&ResourceAddr::managed("t", "b")), ["t.b[0]", "t.b[1]", "t.b[\"k\"]"]);
        assert_eq!(of(&ResourceAddr::managed("t", "a")), ["t.a"]);
        assert_eq!(of(&ResourceAddr::data("t", "b")), ["data.t.b"]);
        assert!(of(&ResourceAddr::managed("t", "zz")).is_empty());
    }

    #[test]
    fn optional_fields_are_omitted_when_empty_and_defaulted_when_missing() {
        let json = serde_json::to_value(inst("local_file.a")).unwrap();
        assert!(json.get("private").is_none());
        assert!(json.get("deposed").is_none());
        assert_eq!(json["status"], "ready");
        let minimal = serde_json::json!({
            "addr": "local_file.a", "provider": "local", "schema_version": 0, "attributes": null
        });
        let read: InstanceState = serde_json::from_value(minimal).unwrap();
        assert_eq!(read.status, InstanceStatus::Ready);
        assert!(read.private.is_empty() && read.deposed.is_empty() && read.dependencies.is_empty());
    }

    #[test]
    fn duplicate_addresses_are_found_when_read() {
        let mut json = serde_json::to_value(State::new()).unwrap();
        let listed = |names: &[&str]| serde_json::to_value(names.iter().map(|n| inst(n)).collect::<Vec<_>>()).unwrap();
        json["resources"] = listed(&["local_file.a", "local_file.b", "local_file.a"]);
        let read: State = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(read.duplicate_addr().unwrap().to_string(), "local_file.a");
        assert_eq!(read.resources.len(), 2);
        json["resources"] = listed(&["local_file.b", "local_file.a"]);
        let read: State = serde_json::from_value(json).unwrap();
        assert!(read.duplicate_addr().is_none());
    }
}
