//! What a run reports while it goes: the [`Event`]s of plan, apply and
//! destroy, and the [`EventSink`] they go to. The commands show them as
//! human progress lines or as the `-json` stream of one JSON object a line
//! (`cli/output.rs`).
//!
//! Every event has a `type`. A run writes, in order: `run_start`; one
//! `recovered` for every operation an interrupted apply left pending (see
//! `apply::recover`); for a plan, one `resource_drift` per object changed
//! outside cairn, one `planned_change` per change and a `change_summary`;
//! while
//! applying, `node_start` and `node_finish` for every operation on an
//! object (a node that never ran because something before it failed gets
//! a `node_finish` with outcome `skipped` and no `node_start`, and one the
//! run's interrupt kept from starting or cancelled, outcome `interrupted`);
//! `diagnostic` for every error and warning, when it happens; and last a
//! `summary`. Lines are written whole and in the order the events
//! happened, so a consumer can read the order of operations off the stream.

#[cfg(any(test, feature = "testing"))]
use std::sync::Mutex;

use serde::Serialize;

use super::recover::{Recovered, Recovery};
use crate::diag::{Diagnostic, Severity};
use crate::graph::walk::Outcome;

/// The id an object is imported by, in a `planned_change` event.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Importing {
    /// The id the provider found the object by.
    pub id: String,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// One thing that happened during a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// The run begins.
    RunStart {
        /// `plan`, `apply` or `destroy`.
        command: String,
        /// The cairn version.
        cairn_version: String,
        /// Most operations running at once.
        parallelism: usize,
    },
    /// An operation an interrupted apply left pending, resolved by asking
    /// the provider before planning.
    Recovered {
        /// The instance address.
        address: String,
        /// The key of the deposed object operated on, if it was one.
        #[serde(skip_serializing_if = "Option::is_none")]
        deposed_key: Option<String>,
        /// `create`, `update` or `delete`.
        operation: String,
        /// `adopted`, `adopted_tainted`, `forgotten`, `not_found` or
        /// `unresolved`.
        outcome: Recovered,
        /// The idempotency key the interrupted call was given.
        idempotency_key: String,
        /// What happened, for people.
        message: String,
    },
    /// One change of the plan.
    PlannedChange {
        /// The instance address.
        address: String,
        /// `create`, `update`, `replace`, `delete`, `read` or `forget`; for
        /// a change that only adopts or rebinds an object, `import` or
        /// `move`.
        action: String,
        /// For a replace: create the new object before destroying the old one.
        create_before_destroy: bool,
        /// The key of the deposed object this change destroys, if it is one.
        #[serde(skip_serializing_if = "Option::is_none")]
        deposed_key: Option<String>,
        /// For an object an `import` block adopts: `{"id": …}`.
        #[serde(skip_serializing_if = "Option::is_none")]
        importing: Option<Importing>,
        /// For an object a `moved` block rebound: its address before.
        #[serde(skip_serializing_if = "Option::is_none")]
        previous_address: Option<String>,
        /// Why, as Terraform's `reason` (`delete_because_count_index`,
        /// `replace_because_cannot_update`, …), when the plan says.
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// Refresh starts reading an object the state holds (Terraform's
    /// `refresh_start`).
    RefreshStart {
        /// The instance address.
        address: String,
        /// The object's `id` attribute, when it has one.
        #[serde(skip_serializing_if = "Option::is_none")]
        id: Option<String>,
    },
    /// Refresh read it (Terraform's `refresh_complete`).
    RefreshComplete {
        /// The instance address.
        address: String,
        /// The object's `id` attribute, when it has one.
        #[serde(skip_serializing_if = "Option::is_none")]
        id: Option<String>,
    },
    /// An object changed outside cairn, found by refresh.
    ResourceDrift {
        /// The instance address.
        address: String,
        /// `update` (it changed) or `delete` (it is gone).
        action: String,
    },
    /// The plan's totals.
    ChangeSummary {
        /// Objects to create (a replace counts here and in `destroy`).
        add: usize,
        /// Objects to update in place.
        change: usize,
        /// Objects to destroy.
        destroy: usize,
        /// Objects to import (present when there are any).
        #[serde(skip_serializing_if = "is_zero")]
        import: usize,
        /// Objects to forget without destroying (present when there are any).
        #[serde(skip_serializing_if = "is_zero")]
        forget: usize,
    },
    /// An operation on an object starts.
    NodeStart {
        /// The instance address.
        address: String,
        /// `create`, `update`, `delete` or `read`.
        action: String,
        /// Whether the object operated on is a deposed one.
        deposed: bool,
        /// Its deposed key, when it is one.
        #[serde(skip_serializing_if = "Option::is_none")]
        deposed_key: Option<String>,
        /// Whether the operation is half of a replace.
        replace: bool,
    },
    /// An operation on an object ended (or was skipped).
    NodeFinish {
        /// The instance address.
        address: String,
        /// `create`, `update`, `delete` or `read`.
        action: String,
        /// Whether the object operated on is a deposed one.
        deposed: bool,
        /// Its deposed key, when it is one.
        #[serde(skip_serializing_if = "Option::is_none")]
        deposed_key: Option<String>,
        /// Whether the operation is half of a replace.
        replace: bool,
        /// `done`, `failed`, `skipped` or `interrupted`.
        outcome: Outcome,
        /// How long it ran, in milliseconds (0 when skipped).
        duration_ms: u64,
        /// The object's `id` attribute after the operation, when it has one.
        #[serde(skip_serializing_if = "Option::is_none")]
        id: Option<String>,
    },
    /// An operation on an ephemeral resource instance starts (Terraform's
    /// `ephemeral_op_start`: `ephemeral.x.y: Opening...`).
    EphemeralStart {
        /// The instance address.
        address: String,
        /// `open`, `renew` or `close`.
        action: String,
    },
    /// It ended (Terraform's `ephemeral_op_complete`, or, failed, nothing
    /// more than the diagnostic that says why).
    EphemeralFinish {
        /// The instance address.
        address: String,
        /// `open`, `renew` or `close`.
        action: String,
        /// Whether it succeeded.
        done: bool,
        /// How long it ran, in milliseconds.
        duration_ms: u64,
    },
    /// An error or a warning.
    Diagnostic {
        /// `error` or `warning`.
        severity: String,
        /// One line.
        summary: String,
        /// More, possibly empty.
        detail: String,
        /// `file:line:column` in the configuration, when known.
        #[serde(skip_serializing_if = "Option::is_none")]
        location: Option<String>,
        /// The span in the configuration, as Terraform's `range`, when the
        /// file can be read.
        #[serde(skip_serializing_if = "Option::is_none")]
        range: Option<crate::diag::source::Range>,
        /// The attribute, when known.
        #[serde(skip_serializing_if = "Option::is_none")]
        path: Option<String>,
    },
    /// The root module's outputs, by name (Terraform's `outputs`
    /// message): after a plan, `sensitive` and the `action`; after an
    /// apply, `sensitive` and, for one that is not, its `type` and
    /// `value`.
    Outputs {
        /// Each output's description.
        outputs: std::collections::BTreeMap<String, serde_json::Value>,
    },
    /// The run ended.
    Summary {
        /// `plan`, `apply` or `destroy`.
        command: String,
        /// `success`, `no_changes`, `cancelled`, `interrupted` or `failed`.
        outcome: String,
        /// Objects created.
        added: usize,
        /// Objects updated.
        changed: usize,
        /// Objects destroyed.
        destroyed: usize,
        /// Objects imported (present when there are any).
        #[serde(skip_serializing_if = "is_zero")]
        imported: usize,
        /// Objects forgotten without being destroyed (present when there are any).
        #[serde(skip_serializing_if = "is_zero")]
        forgotten: usize,
        /// Number of errors.
        errors: usize,
    },
}

impl Event {
    /// The event of a recovered operation.
    pub fn recovered(r: &Recovery) -> Event {
        Event::Recovered {
            address: r.addr.to_string(),
            deposed_key: r.deposed.clone(),
            operation: r.operation.clone(),
            outcome: r.outcome,
            idempotency_key: r.idempotency_key.clone(),
            message: r.message(),
        }
    }

    /// The event of a diagnostic.
    pub fn diagnostic(d: &Diagnostic) -> Event {
        Event::Diagnostic {
            severity: match d.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
            }
            .to_string(),
            summary: crate::diag::source::scrub(&d.summary),
            detail: crate::diag::source::scrub(&d.detail),
            location: d.location.as_ref().map(crate::diag::source::position),
            range: d.location.as_ref().and_then(crate::diag::source::range),
            path: d.path.as_ref().map(ToString::to_string),
        }
    }
}

/// Where events go. Implementations are called from many threads at once.
pub trait EventSink: Send + Sync {
    /// Reports one event.
    fn emit(&self, event: Event);

    /// Reports a diagnostic; by default as a `diagnostic` event.
    fn diagnostic(&self, d: &Diagnostic) {
        self.emit(Event::diagnostic(d));
    }
}

/// Collects events in memory: for tests.
#[cfg(any(test, feature = "testing"))]
#[derive(Default)]
pub struct Collect(pub Mutex<Vec<Event>>);

#[cfg(any(test, feature = "testing"))]
impl EventSink for Collect {
    fn emit(&self, event: Event) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(event);
    }
}
