//! State: the record of what exists, and where that record is kept.
//!
//! This module owns the in-memory model of a configuration's state
//! ([`State`] and the per-instance [`InstanceState`]), its on-disk JSON form
//! (format version [`FORMAT_VERSION`]), and the backends that persist it
//! behind the [`Backend`] trait: the default [`LocalBackend`] (a `cairn.state.json` file beside the
//! configuration, written atomically, with a `.backup` of the previous run's
//! state and an OS lock held for the whole run).
//!
//! It does not own what the attributes mean: they are stored as typed JSON
//! ([`crate::value::to_json_typed`] with the schema's implied type) and read
//! back by whoever has the schema ([`crate::value::from_json`]). Nor does it
//! decide what to do with the state: planning and applying do.

mod backend;
mod journal;
mod local;
mod lock;

use std::collections::BTreeMap;
use std::io;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::addr::InstanceAddr;

pub use backend::{Backend, StateJournal};
pub use journal::{Journal, Record, Unsynced};
pub use local::{DEFAULT_STATE_FILE, LocalBackend};
pub use lock::LockHolder;

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
pub const FORMAT_VERSION: u32 = 3;

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
    /// Every resource instance that exists, sorted by address when written
    /// so that diffs of the file are stable.
    #[serde(default)]
    pub resources: Vec<InstanceState>,
    /// Operations a provider was asked for by an apply that crashed before
    /// it learnt how they ended: their objects may exist. Plan and apply
    /// warn about them; an apply clears them. Omitted when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<PendingOperation>,
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

    /// What plan and apply tell the user about it.
    pub fn warning(&self) -> crate::diag::Diagnostic {
        let object = match &self.deposed {
            Some(key) => format!("deposed object {key} of {}", self.addr),
            None => self.addr.to_string(),
        };
        crate::diag::Diagnostic::warning(format!(
            "An earlier apply was interrupted during the {} of {object}",
            self.operation
        ))
        .with_detail(format!(
            "It started at {} and cairn never learnt how it ended, so the object may {}. \
             A retry of the same change sends the provider the same idempotency key ({}), \
             so that it can find what the interrupted call made; check the real infrastructure if the \
             provider cannot. The next apply clears this warning.",
            self.started,
            if self.operation == "delete" { "still exist" } else { "exist, or be half-changed" },
            self.idempotency_key
        ))
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
    /// ([`crate::value::to_json_typed`] with the schema's implied type).
    pub attributes: serde_json::Value,
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
        attributes: serde_json::Value,
    ) -> InstanceState {
        InstanceState {
            addr,
            provider: provider.to_string(),
            schema_version,
            attributes,
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
    pub attributes: serde_json::Value,
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
            resources: Vec::new(),
            pending: Vec::new(),
        }
    }

    /// The instance at `addr`, if it exists.
    pub fn get(&self, addr: &InstanceAddr) -> Option<&InstanceState> {
        // A linear search: `resources` is public and may be unsorted between
        // writes, and states are small enough that it does not matter.
        self.resources.iter().find(|r| &r.addr == addr)
    }

    /// The instance at `addr` to change in place, if it exists.
    pub fn get_mut(&mut self, addr: &InstanceAddr) -> Option<&mut InstanceState> {
        self.resources.iter_mut().find(|r| &r.addr == addr)
    }

    /// Forgets the current object of the instance at `addr`: the whole
    /// instance, or, while deposed objects of it remain, only its
    /// attributes (null attributes mean "no current object").
    pub fn forget_current(&mut self, addr: &InstanceAddr) {
        let Some(inst) = self.get_mut(addr) else { return };
        if inst.deposed.is_empty() {
            self.remove(addr);
        } else {
            inst.attributes = serde_json::Value::Null;
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
        match self.resources.iter_mut().find(|r| r.addr == inst.addr) {
            Some(existing) => *existing = inst,
            None => self.resources.push(inst),
        }
    }

    /// Forgets the instance at `addr`, returning it if it was there.
    pub fn remove(&mut self, addr: &InstanceAddr) -> Option<InstanceState> {
        let index = self.resources.iter().position(|r| &r.addr == addr)?;
        Some(self.resources.remove(index))
    }

    /// Whether the state records no resources and no outputs.
    pub fn is_empty(&self) -> bool {
        self.resources.is_empty() && self.outputs.is_empty()
    }

    /// Puts resources (and each one's dependencies) in a canonical order, so
    /// that the same state is always written as the same bytes.
    fn normalize(&mut self) {
        self.resources.sort_by(|a, b| a.addr.cmp(&b.addr));
        for r in &mut self.resources {
            r.dependencies.sort();
            r.dependencies.dedup();
        }
    }

    /// The first address listed twice, if any: a state that lists an
    /// instance twice cannot say which object is the real one.
    fn duplicate_addr(&self) -> Option<&InstanceAddr> {
        let mut addrs: Vec<&InstanceAddr> = self.resources.iter().map(|r| &r.addr).collect();
        addrs.sort();
        addrs.windows(2).find(|w| w[0] == w[1]).map(|w| w[0])
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
    #[error("the state {} is locked by another cairn process ({}); wait for it to finish", .path.display(), lock::describe(.holder.as_ref()))]
    Locked {
        /// The state file.
        path: PathBuf,
        /// Who holds it, as it wrote into the lock file; `None` when the
        /// lock file could not be read or the holder has not written it yet.
        holder: Option<LockHolder>,
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
        /// The address listed twice.
        addr: InstanceAddr,
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

/// serde `with` module: bytes as a standard base64 string.
mod base64_bytes {
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
    fn normalize_sorts_by_address() {
        let mut state = State::new();
        for a in ["random_id.x[10]", "data.local_file.t", "random_id.x[2]", "local_file.b"] {
            state.set(inst(a));
        }
        let (a, b) = (crate::addr::ResourceAddr::managed("t", "a"), crate::addr::ResourceAddr::managed("t", "b"));
        state.resources[0].dependencies = vec![b.clone(), a.clone(), b.clone()];
        state.normalize();
        let order: Vec<String> = state.resources.iter().map(|r| r.addr.to_string()).collect();
        // Managed before data, integer keys in numeric order.
        assert_eq!(order, ["local_file.b", "random_id.x[2]", "random_id.x[10]", "data.local_file.t"]);
        let x10 = &state.resources[2];
        assert_eq!(x10.dependencies, [a, b]);
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
    fn duplicate_addresses_are_found() {
        let mut state = State::new();
        state.resources = vec![inst("local_file.a"), inst("local_file.b"), inst("local_file.a")];
        assert_eq!(state.duplicate_addr().unwrap().to_string(), "local_file.a");
        state.resources.pop();
        assert!(state.duplicate_addr().is_none());
    }
}
