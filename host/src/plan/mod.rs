//! Planning: for every resource instance, decide create, update, replace,
//! delete, read or no-op, with the provider's help and under the host's
//! contract checks. The result is a [`Plan`], which `apply` carries out.
//!
//! The default behaviours follow Terraform's planning behaviours (`docs/design.md`, "Sources"):
//! create what is configured but not in state, delete what is in state but
//! not configured, update what differs, replace what is tainted or what the
//! provider says cannot change in place, and read data sources as early as
//! their configuration is known.

mod checks;
pub mod ephemeral;
mod instance;
pub mod late;
mod moves;
mod refresh_only;
pub(crate) mod sensitivity;
mod targets;
mod triggers;
mod validations;
mod values;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::future::join_all;
use serde::{Deserialize, Serialize};
use tokio::sync::Semaphore;

use crate::addr::{AddrMap, AddrSet, InstanceAddr, InstanceKey, Mode, ResourceAddr};
use crate::apply::Interrupt;
use crate::config::{self, ConditionKind, Config, EvalContext};
use crate::contract::Gate;
use crate::diag::{Diagnostic, Location};
use crate::graph::walk::{Limits, walk_spread_until};
use crate::graph::{DependencyGraph, Node};
use crate::provider::Provider;
use crate::state::{InstanceState, State};
use crate::value::{Path, Value};

pub use checks::{CheckPhase, check_blocks};
pub use instance::{decode_prior, ignoring_changes, with_value_at};
pub use late::{ConfigureFn, Configuring, FromState, LateProvider, LateProviders};
pub use moves::{Move, apply_moves, convert_moves_across_types};
pub use refresh_only::{refreshed_state, unchanged_objects};
pub use targets::Targets;
pub use validations::deferred_validations;
pub use values::{Expansion, ResourceValues, instance_context, locals_of};

/// The providers of a run by local name, configured and ready.
pub type Providers = BTreeMap<String, Arc<dyn Provider>>;

/// What will happen to one resource instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Action {
    /// Nothing: the object already matches.
    NoOp,
    /// A new object.
    Create,
    /// A data source read during apply, because its configuration is not
    /// known yet or something it depends on changes.
    Read,
    /// The object changes in place.
    Update,
    /// The object is destroyed and created anew.
    Replace,
    /// The object is destroyed.
    Delete,
    /// The object is left as it is, but no longer managed: a `removed`
    /// block with `lifecycle { destroy = false }` drops it from the state.
    Forget,
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Action::NoOp => "no-op",
            Action::Create => "create",
            Action::Read => "read",
            Action::Update => "update",
            Action::Replace => "replace",
            Action::Delete => "delete",
            Action::Forget => "forget",
        })
    }
}

/// Why an object is replaced (or, for the variants so named, destroyed
/// or read during apply), for the plan output's `because` lines and the
/// JSON plan's `action_reason`, as Terraform gives them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ReplaceReason {
    /// An earlier create failed part-way.
    Tainted,
    /// An earlier delete failed: the object is being destroyed.
    Destroying,
    /// These attributes cannot change in place.
    RequiresReplace(Vec<Path>),
    /// The operator asked for it (`-replace=ADDR`).
    Requested,
    /// A `replace_triggered_by` reference changes: the reference, as
    /// `local_file.a` or `local_file.a.content`.
    Triggered(String),
    /// Destroyed: its resource block is no longer in the configuration.
    DeleteNoResourceConfig,
    /// Destroyed: its module instance (as `module.a["x"]`) is no longer in
    /// the configuration.
    DeleteNoModule(String),
    /// Destroyed: its index is at or past the resource's `count`.
    DeleteCountIndex,
    /// Destroyed: its key is not in the resource's `for_each`.
    DeleteEachKey,
    /// Destroyed: its key is of another kind than the resource's
    /// repetition (an index where there is no `count`, a string key where
    /// there is no `for_each`).
    DeleteWrongRepetition,
    /// A data source read during apply: its configuration refers to
    /// values not known until then.
    ReadConfigUnknown,
    /// A data source read during apply: something it depends on has
    /// changes pending.
    ReadDependencyPending,
}

/// The planned change of one resource instance.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ResourceChange {
    /// Which instance.
    pub addr: InstanceAddr,
    /// Paths the provider marked sensitive in `planned`, redacted in plan
    /// output like the schema's sensitive attributes.
    pub sensitive: Vec<crate::value::Path>,
    /// The local name of its provider.
    pub provider: String,
    /// What will happen.
    pub action: Action,
    /// The object as it is now (refreshed); null for a create.
    pub prior: Value,
    /// The object as planned; null for a delete. May contain unknowns.
    pub planned: Value,
    /// The configuration as evaluated at plan time; null for a delete.
    pub config: Value,
    /// Private bytes of the prior object.
    #[serde(with = "crate::state::base64_bytes")]
    pub prior_private: Vec<u8>,
    /// Private bytes from the plan.
    #[serde(with = "crate::state::base64_bytes")]
    pub planned_private: Vec<u8>,
    /// Why a replace is a replace.
    pub replace_reason: Option<ReplaceReason>,
    /// Resources the new object depends on (from the configuration; for a
    /// delete, from the state).
    pub dependencies: Vec<ResourceAddr>,
    /// Resources the existing object depended on when it was last applied
    /// (from the state): destroying it waits for their dependents' destroys
    /// and comes before their creates and updates.
    pub prior_dependencies: Vec<ResourceAddr>,
    /// Whether a replace creates the new object before destroying the old
    /// one: the resource's `lifecycle`, the state's record of it for an
    /// object no longer configured, or inherited from a dependent that has
    /// it (see [`inherit_create_before_destroy`]).
    pub create_before_destroy: bool,
    /// For the delete of a deposed object (an old object of an earlier
    /// create_before_destroy replacement whose delete has not succeeded
    /// yet): its key. `None` for a change of the current object.
    pub deposed: Option<String>,
    /// The schema version of the resource type.
    pub schema_version: u64,
    /// Where the resource is declared, when it is.
    pub location: Option<Location>,
    /// For an object adopted by an `import` block: the id it was imported
    /// by. The change records it in the state (and updates it, if the
    /// configuration asks for more).
    pub importing: Option<String>,
    /// For an object a `moved` block rebound: its address in the state
    /// before this run.
    pub moved_from: Option<InstanceAddr>,
}

/// The planned value of an output.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PlannedOutput {
    /// The new value; may be unknown.
    pub value: Value,
    /// The value in the current state, if any.
    pub prior: Option<Value>,
    /// Whether to hide it.
    pub sensitive: bool,
}

/// A notice about something that changed outside cairn, found by refresh.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Drift {
    /// Which instance.
    pub addr: InstanceAddr,
    /// The local name of its provider.
    pub provider: String,
    /// The object as the state recorded it.
    pub prior: Value,
    /// The object as it is now; null when it was deleted.
    pub current: Value,
    /// The private bytes the refresh returned with `current`.
    pub current_private: Vec<u8>,
    /// Paths the state records as sensitive, redacted when shown.
    pub sensitive: Vec<Path>,
}

impl Drift {
    /// Whether the object is gone.
    pub fn deleted(&self) -> bool {
        self.current.is_null()
    }
}

/// Everything a run will do.
///
/// Serde-serialisable (by derive, so that every kind of change travels
/// without extra code) for saved plans (`engine::SavedPlan`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Plan {
    /// Every resource instance considered, including no-ops, in planning order.
    pub changes: Vec<ResourceChange>,
    /// Outputs after the change; `None` value means the output is removed.
    pub outputs: BTreeMap<String, PlannedOutput>,
    /// Outputs in the state that the configuration no longer declares.
    pub removed_outputs: Vec<String>,
    /// What each of [`Plan::removed_outputs`] holds in the state (its
    /// `value` null), for the plan to show what goes, as Terraform does.
    #[serde(default)]
    pub removed_output_values: BTreeMap<String, PlannedOutput>,
    /// Changes found outside cairn.
    pub drift: Vec<Drift>,
    /// Warnings to show.
    pub warnings: Vec<Diagnostic>,
    /// What the `check` blocks found after planning: warnings shown with a
    /// plan, but not with an apply, which checks them again.
    #[serde(default)]
    pub check_warnings: Vec<Diagnostic>,
    /// Data source values read during planning, for apply's evaluation.
    pub data_values: BTreeMap<InstanceAddr, Value>,
    /// How long each of [`Plan::data_values`] took to read, in
    /// milliseconds, for the `Read complete after Ns` line Terraform
    /// prints; not saved with a plan.
    #[serde(skip)]
    pub data_read_ms: BTreeMap<InstanceAddr, u64>,
    /// How each resource block expanded (count, for_each), for apply.
    pub expansions: BTreeMap<ResourceAddr, Expansion>,
    /// Whether this plan destroys everything.
    pub destroy: bool,
    /// Whether this plan only records what refresh found (`-refresh-only`):
    /// it changes no object, and applying it writes the refreshed state.
    pub refresh_only: bool,
    /// Objects `moved` blocks rebound before planning.
    pub moved: Vec<Move>,
    /// The sensitive parts of each resource instance's value as references
    /// to it see them (its schema's sensitive attributes included), for
    /// the module calls whose `count` or `for_each` is evaluated from this
    /// plan (`engine::staged`); not saved with a plan.
    #[serde(skip)]
    pub reference_marks: BTreeMap<InstanceAddr, Vec<Path>>,
}

impl Plan {
    /// (to add, to change, to destroy), counting a replace as one add and one destroy.
    pub fn counts(&self) -> (usize, usize, usize) {
        let c = self.summary();
        (c.add, c.change, c.destroy)
    }

    /// The plan's totals, as Terraform counts them.
    pub fn summary(&self) -> Summary {
        let mut c = Summary::default();
        for ch in &self.changes {
            match ch.action {
                Action::Create => c.add += 1,
                Action::Update => c.change += 1,
                Action::Replace => {
                    c.add += 1;
                    c.destroy += 1
                }
                Action::Delete => c.destroy += 1,
                Action::Forget => c.forget += 1,
                Action::NoOp | Action::Read => {}
            }
            if ch.importing.is_some() {
                c.import += 1;
            }
        }
        c
    }

    /// Whether applying would change any object, output or the state: a
    /// refresh-only plan changes the state when refresh found drift, and
    /// moves and imports change it even when no object changes.
    pub fn has_changes(&self) -> bool {
        if self.refresh_only {
            // Only outputs known now: nothing will be applied to learn the others.
            let output_changes =
                self.outputs.values().any(|o| o.value.is_wholly_known() && o.prior.as_ref() != Some(&o.value));
            return !self.drift.is_empty() || output_changes;
        }
        self.changes.iter().any(|c| !matches!(c.action, Action::NoOp | Action::Read) || c.importing.is_some())
            || !self.moved.is_empty()
            || !self.removed_outputs.is_empty()
            || self.outputs.values().any(|o| o.prior.as_ref() != Some(&o.value))
    }

    /// The change of one instance's current object.
    pub fn change(&self, addr: &InstanceAddr) -> Option<&ResourceChange> {
        self.changes.iter().find(|c| &c.addr == addr && c.deposed.is_none())
    }

    /// Adds what `part`, planned apart, found. What this plan has none of
    /// yet is moved over whole: most parts are of one instance, absorbed
    /// into an empty part, and copying each change into a new allocation
    /// cost a tenth of a no-op plan.
    fn absorb(&mut self, part: Plan) {
        append(&mut self.changes, part.changes);
        merge(&mut self.outputs, part.outputs);
        append(&mut self.removed_outputs, part.removed_outputs);
        merge(&mut self.removed_output_values, part.removed_output_values);
        append(&mut self.drift, part.drift);
        append(&mut self.warnings, part.warnings);
        merge(&mut self.data_values, part.data_values);
        merge(&mut self.data_read_ms, part.data_read_ms);
        merge(&mut self.expansions, part.expansions);
    }

    /// The delete of one of an instance's deposed objects.
    pub fn deposed_change(&self, addr: &InstanceAddr, key: &str) -> Option<&ResourceChange> {
        self.changes.iter().find(|c| &c.addr == addr && c.deposed.as_deref() == Some(key))
    }
}

/// A plan's totals: the numbers of its summary line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    /// Objects to import.
    pub import: usize,
    /// Objects to create (a replace counts here and in `destroy`).
    pub add: usize,
    /// Objects to update in place.
    pub change: usize,
    /// Objects to destroy.
    pub destroy: usize,
    /// Objects to forget (drop from the state without destroying).
    pub forget: usize,
}

/// Options of one planning run.
#[derive(Debug, Clone)]
pub struct PlanOptions {
    /// Plan to destroy everything in state.
    pub destroy: bool,
    /// Skip asking providers whether objects changed outside cairn.
    pub skip_refresh: bool,
    /// Only refresh: every action a no-op, the plan's drift the state's
    /// changes (`-refresh-only`).
    pub refresh_only: bool,
    /// Instances to replace even if they have no changes (`-replace`).
    pub replace: Vec<InstanceAddr>,
    /// Plan only these resources (or instances) and what they depend on
    /// (`-target`); empty plans everything.
    pub targets: Vec<InstanceAddr>,
    /// Most resource instances refreshed and planned at once
    /// (`-parallelism`); each provider's `max_concurrency` also holds.
    pub parallelism: usize,
}

impl Default for PlanOptions {
    fn default() -> PlanOptions {
        PlanOptions {
            destroy: false,
            skip_refresh: false,
            refresh_only: false,
            replace: Vec::new(),
            targets: Vec::new(),
            parallelism: 10,
        }
    }
}

/// Everything the planner reads, shared with the tasks that plan
/// instances in parallel.
pub struct Planner {
    /// The configuration.
    pub config: Arc<Config>,
    /// Its dependency graph.
    pub graph: Arc<DependencyGraph>,
    /// Configured providers by local name.
    pub providers: Providers,
    /// Those of `providers` configured when the walk reaches their block
    /// (see [`late`]).
    pub late_providers: LateProviders,
    /// The current state.
    pub state: Arc<State>,
    /// Resolved input variables.
    pub variables: BTreeMap<String, Value>,
    /// Options.
    pub options: PlanOptions,
    /// What `moved` blocks rebound in `state` ([`apply_moves`]), shown
    /// with the plan.
    pub moves: Vec<Move>,
    /// Where each read is reported as it happens.
    pub progress: Progress,
}

/// Where the planner reports its reads as they happen, as Terraform's
/// hooks do: each object refresh reads (`Refreshing state...`) and each
/// data source read (`Reading...`, `Read complete after Ns`), in the order
/// they happen. A channel: the planner's tasks run on worker threads,
/// while the run's sink is borrowed by the thread that waits for them
/// ([`crate::engine::Engine::plan`]). The default reports nothing.
#[derive(Clone, Default)]
pub struct Progress(Option<std::sync::mpsc::Sender<crate::engine::Event>>);

impl Progress {
    /// Reports to `sender`.
    pub fn to(sender: std::sync::mpsc::Sender<crate::engine::Event>) -> Progress {
        Progress(Some(sender))
    }

    fn emit(&self, event: crate::engine::Event) {
        if let Some(sender) = &self.0 {
            // The receiver is gone only once the run is: nothing to tell.
            let _ = sender.send(event);
        }
    }

    /// Refresh starts reading `object`, at `addr` in the state.
    pub(crate) fn refresh_start(&self, addr: &InstanceAddr, object: &Value) {
        self.emit(crate::engine::Event::RefreshStart { address: addr.to_string(), id: object_id(object) });
    }

    /// Refresh read `object`.
    pub(crate) fn refresh_complete(&self, addr: &InstanceAddr, object: &Value) {
        self.emit(crate::engine::Event::RefreshComplete { address: addr.to_string(), id: object_id(object) });
    }

    /// The read of the data source at `addr` starts.
    pub(crate) fn read_start(&self, addr: &InstanceAddr) {
        self.emit(read_started(addr));
    }

    /// The data source at `addr` was read as `object`, in `duration_ms`.
    pub(crate) fn read_complete(&self, addr: &InstanceAddr, duration_ms: u64, object: &Value) {
        self.emit(read_completed(addr, duration_ms, object));
    }
}

/// The event of a data source read starting (`data.x.y: Reading...`).
pub(crate) fn read_started(addr: &InstanceAddr) -> crate::engine::Event {
    crate::engine::Event::NodeStart {
        address: addr.to_string(),
        action: "read".into(),
        deposed: false,
        deposed_key: None,
        replace: false,
    }
}

/// The event of a data source read as `object` in `duration_ms`
/// (`data.x.y: Read complete after Ns [id=…]`).
pub(crate) fn read_completed(addr: &InstanceAddr, duration_ms: u64, object: &Value) -> crate::engine::Event {
    crate::engine::Event::NodeFinish {
        address: addr.to_string(),
        action: "read".into(),
        deposed: false,
        deposed_key: None,
        replace: false,
        outcome: crate::graph::walk::Outcome::Done,
        duration_ms,
        id: object_id(object),
    }
}

/// An object's `id` attribute, when it is a known string: what
/// Terraform's progress lines end with (`[id=…]`).
fn object_id(object: &Value) -> Option<String> {
    match object.get_attr("id") {
        Value::String(id) => Some(id.clone()),
        _ => None,
    }
}

/// What the walk of the configuration has found so far, shared by the
/// tasks that plan its nodes.
#[derive(Default)]
struct Walked {
    /// Values of the locals evaluated so far.
    locals: BTreeMap<String, Value>,
    /// Which parts of the locals and instances so far are sensitive.
    marks: sensitivity::Marks,
    /// Values of the resource instances planned so far.
    values: ResourceValues,
    /// Resources with a change other than a no-op: a data source that
    /// depends on one is read during apply.
    changed: AddrSet<ResourceAddr>,
    /// What the nodes finished so far added to the plan, and their errors.
    gathered: Gathered,
    /// The planned changes of the resources some `replace_triggered_by`
    /// refers to (only those), for the resources planned after them.
    triggers: triggers::Changes,
}

/// What the walk's nodes add to the plan, gathered as each finishes.
///
/// The lists whose order shows are kept tagged with the node's position in
/// the graph's stable topological order (and the item's place in its
/// node's part) and sorted once at the end, so that the plan reads the
/// same whatever order the tasks finished in; the maps are merged at once.
/// (Keeping each node's whole part until the end held a mostly empty
/// allocation per change and per expansion: a third of a plan's peak
/// memory.)
#[derive(Default)]
struct Gathered {
    changes: Vec<(Place, ResourceChange)>,
    removed_outputs: Vec<(Place, String)>,
    drift: Vec<(Place, Drift)>,
    warnings: Vec<(Place, Diagnostic)>,
    moved: Vec<(Place, Move)>,
    errors: Vec<(Place, Diagnostic)>,
    outputs: BTreeMap<String, PlannedOutput>,
    data_values: BTreeMap<InstanceAddr, Value>,
    data_read_ms: BTreeMap<InstanceAddr, u64>,
    /// Each resource's expansion, in the order the nodes finished: a map
    /// ordered by address compared a dozen addresses for each, under the
    /// walk's lock; they are put in order once, at the end.
    expansions: Vec<(ResourceAddr, Expansion)>,
}

/// Where an item of a node's part goes: the node's position, then the
/// item's index in its part.
type Place = (usize, usize);

impl Gathered {
    /// Room for `changes` changes: growing the list by doubling held the
    /// old and the new allocation at once, at the plan's peak.
    fn expecting(changes: usize) -> Gathered {
        Gathered { changes: Vec::with_capacity(changes), ..Gathered::default() }
    }

    /// Takes what the node at position `at` added to the plan.
    fn add(&mut self, at: usize, part: Plan, errors: Vec<Diagnostic>) {
        // Every field named, so that a new one is not forgotten here.
        let Plan {
            changes,
            outputs,
            removed_outputs,
            // Set only on the whole plan, after its parts are gathered.
            removed_output_values: _,
            drift,
            warnings,
            check_warnings: _,
            data_values,
            data_read_ms,
            expansions,
            destroy: _,
            refresh_only: _,
            moved,
            // Taken from the walk's marks once it is done.
            reference_marks: _,
        } = part;
        tag(&mut self.changes, at, changes);
        tag(&mut self.removed_outputs, at, removed_outputs);
        tag(&mut self.drift, at, drift);
        tag(&mut self.warnings, at, warnings);
        tag(&mut self.moved, at, moved);
        tag(&mut self.errors, at, errors);
        merge(&mut self.outputs, outputs);
        merge(&mut self.data_values, data_values);
        merge(&mut self.data_read_ms, data_read_ms);
        self.expansions.extend(expansions);
    }

    /// Adds everything gathered to `plan` and `errors`, in the nodes'
    /// order.
    fn into_plan(self, plan: &mut Plan, errors: &mut Vec<Diagnostic>) {
        append(&mut plan.changes, in_order(self.changes));
        append(&mut plan.removed_outputs, in_order(self.removed_outputs));
        append(&mut plan.drift, in_order(self.drift));
        append(&mut plan.warnings, in_order(self.warnings));
        append(&mut plan.moved, in_order(self.moved));
        append(errors, in_order(self.errors));
        merge(&mut plan.outputs, self.outputs);
        merge(&mut plan.data_values, self.data_values);
        merge(&mut plan.data_read_ms, self.data_read_ms);
        // Collecting sorts the list once and builds the map in bulk.
        merge(&mut plan.expansions, self.expansions.into_iter().collect());
    }
}

/// About how many changes a plan of the configuration will have: one per
/// instance in the state or per resource block, whichever is more.
fn expected_changes(planner: &Planner) -> usize {
    planner.state.resources.len().max(planner.config.resources.len())
}

/// Appends `items` to `to`, each tagged with its place.
fn tag<T>(to: &mut Vec<(Place, T)>, at: usize, items: Vec<T>) {
    to.extend(items.into_iter().enumerate().map(|(i, item)| ((at, i), item)));
}

/// The items sorted by place, without their places. Places are unique, so
/// the unstable sort (which needs no second buffer) gives one order; the
/// items move into the list's own allocation.
fn in_order<T>(mut tagged: Vec<(Place, T)>) -> Vec<T> {
    tagged.sort_unstable_by_key(|(place, _)| *place);
    tagged.into_iter().map(|(_, item)| item).collect()
}

/// A task's view of the walk.
struct Walk {
    planner: Arc<Planner>,
    walked: Mutex<Walked>,
    /// One permit per instance being refreshed and planned: `-parallelism`.
    slots: Semaphore,
    /// Each node's position in the stable topological order.
    position: AddrMap<Node, usize>,
    /// Each resource block's position in the configuration.
    blocks: Arc<Blocks>,
    /// What `-target` lets this run plan.
    targets: Arc<Targets>,
    /// The resources some `replace_triggered_by` refers to.
    trigger_targets: BTreeSet<ResourceAddr>,
    /// The input variables declared sensitive.
    sensitive_variables: BTreeSet<String>,
    /// The ephemeral resources this plan has opened.
    ephemeral: Arc<ephemeral::Session>,
    /// Whether to start nothing new (see [`Planner::plan_until`]).
    interrupt: Interrupt,
}

impl Walk {
    /// The walk of `planner`'s graph, with nothing walked yet.
    fn new(
        planner: &Arc<Planner>,
        blocks: &Arc<Blocks>,
        targets: &Arc<Targets>,
        session: &Arc<ephemeral::Session>,
        interrupt: &Interrupt,
    ) -> Walk {
        Walk {
            planner: Arc::clone(planner),
            walked: Mutex::new(Walked {
                gathered: Gathered::expecting(expected_changes(planner)),
                ..Walked::default()
            }),
            slots: Semaphore::new(planner.options.parallelism.clamp(1, Semaphore::MAX_PERMITS)),
            position: planner.graph.topo_order().into_iter().enumerate().map(|(i, n)| (n, i)).collect(),
            blocks: Arc::clone(blocks),
            targets: Arc::clone(targets),
            trigger_targets: triggers::referenced(&planner.config),
            sensitive_variables: sensitivity::sensitive_variables(&planner.config),
            ephemeral: Arc::clone(session),
            interrupt: interrupt.clone(),
        }
    }
}

/// The configuration's resource blocks by address, so that finding the
/// block of a graph node or of a state instance does not search them all
/// (which made planning quadratic in the number of blocks).
type Blocks = AddrMap<ResourceAddr, usize>;

/// `diags` with each one about an attribute (a provider's, with a path)
/// at the place in `body` (a resource, data source or ephemeral block's)
/// where that attribute is written, as Terraform reports it: the value's
/// line and column, inside nested blocks too; those about the whole block,
/// or about what is not written there (a computed attribute), stay where
/// they are.
pub fn at_attributes_in(body: &config::Body, diags: Vec<Diagnostic>) -> Vec<Diagnostic> {
    diags
        .into_iter()
        .map(|mut d| {
            if let Some(written) = d.path.as_ref().and_then(|p| body.location_of(p)) {
                d.location = Some(written);
            }
            d
        })
        .collect()
}

/// What an interrupted plan answers (and the engine says, when the plan
/// ends on its own after the interrupt).
pub const INTERRUPTED: &str = "Interrupted: the plan stopped; nothing was changed";

impl Planner {
    /// Plans the run: refreshes and plans every resource instance, as many
    /// at once as `-parallelism` allows, each as soon as what it depends on
    /// is planned. Errors are all the problems found, each saying where.
    pub async fn plan(self) -> Result<Plan, Vec<Diagnostic>> {
        self.plan_until(Interrupt::new()).await
    }

    /// [`Planner::plan`] that starts nothing new once `interrupt` asks the
    /// run to stop: no node, no instance waiting for a slot, no check
    /// block. What is under way finishes (an ephemeral resource's open
    /// too, so that what it opens is known), then every ephemeral resource
    /// opened is closed (their close may revoke a lease or end a session,
    /// which must not be left to expire), and the plan answers that it was
    /// interrupted, followed by any errors of those closes.
    pub async fn plan_until(self, interrupt: Interrupt) -> Result<Plan, Vec<Diagnostic>> {
        let planner = Arc::new(self);
        let blocks: Arc<Blocks> =
            Arc::new(planner.config.resources.iter().enumerate().map(|(i, r)| (r.addr.clone(), i)).collect());
        let targets = Arc::new(match planner.options.destroy {
            true => Targets::for_destroy(&planner.options.targets, &planner.state),
            false => Targets::new(&planner.options.targets, &planner.graph),
        });
        let mut plan = Plan {
            destroy: planner.options.destroy,
            refresh_only: planner.options.refresh_only,
            moved: planner.moves.clone(),
            ..Plan::default()
        };
        let mut errors = Vec::new();
        if planner.options.destroy {
            plan.removed_outputs = planner.state.outputs.keys().cloned().collect();
            plan.removed_output_values = planner.state.outputs.iter().map(removed_output).collect();
        } else {
            // Refused before anything is opened, as Terraform's validation does.
            let misplaced = planner.misplaced_ephemeral_values();
            if !misplaced.is_empty() {
                return Err(misplaced);
            }
            let progress = planner.progress.clone();
            let session = ephemeral::Session::new(Arc::new(move |event| progress.emit(event)));
            let walk = Walk::new(&planner, &blocks, &targets, &session, &interrupt);
            Planner::plan_configuration(walk, &mut plan, &mut errors).await;
            // The walk is over, every open it started with it: nothing
            // after this opens or reads them.
            let stopped = interrupt.is_stopped();
            errors.extend(session.close_all().await);
            if stopped {
                errors.insert(0, Diagnostic::error(INTERRUPTED));
                return Err(errors);
            }
            if errors.is_empty() && !planner.options.refresh_only {
                errors.extend(planner.unmatched_imports(&plan, &targets));
            }
        }
        // The objects planned outside the walk need their providers
        // configured too: from the state, where the walk did not.
        let from_state = planner.configure_late_from_state(&targets, &mut errors).await;
        if planner.options.refresh_only {
            planner.refresh_orphans(&blocks, &targets, &mut plan, &mut errors).await;
        } else {
            planner.plan_orphans(&blocks, &targets, &mut plan, &mut errors).await;
            planner.plan_deposed(&targets, &mut plan, &mut errors).await;
        }
        if let Some(session) = from_state {
            errors.extend(session.close_all().await);
        }
        inherit_create_before_destroy(&mut plan.changes);
        planner.note_moves(&mut plan);
        plan.warnings.extend(planner.option_warnings(&plan));
        if errors.is_empty() { Ok(plan) } else { Err(errors) }
    }

    /// The errors of ephemeral values in resources' and data sources'
    /// attributes that their schemas do not declare write-only (an
    /// ephemeral resource's own attributes may hold them).
    fn misplaced_ephemeral_values(&self) -> Vec<Diagnostic> {
        if self.config.ephemeral.is_empty() {
            return Vec::new();
        }
        let mut errors = Vec::new();
        for resource in self.config.resources.iter().filter(|r| r.addr.mode != Mode::Ephemeral) {
            let Some(provider) = self.providers.get(&resource.provider) else { continue };
            // A missing type is reported where the resource is planned.
            let Ok(schema) = Gate::new(provider.as_ref()).schema_of(&resource.addr) else { continue };
            let what = resource.addr.to_string();
            errors.extend(config::ephemeral::check_resource_body(
                &resource.body,
                &schema.block,
                &self.config.ephemeral,
                &what,
            ));
        }
        errors
    }

    /// An error for each `import` block whose target the configuration does
    /// not expand to (`local_file.a[5]` with `count = 2`).
    fn unmatched_imports(&self, plan: &Plan, targets: &Targets) -> Vec<Diagnostic> {
        let unmatched = self.config.imports.iter().filter(|i| {
            targets.includes_instance(&i.to) && self.state.get(&i.to).is_none() && plan.change(&i.to).is_none()
        });
        unmatched
            .map(|i| {
                Diagnostic::error("Configuration for import target does not exist")
                    .with_detail(format!(
                        "The configuration for the given import target {} does not exist: its resource block has \
                         no instance with that key.",
                        i.to
                    ))
                    .at(&i.location)
            })
            .collect()
    }

    /// Marks the changes of rebound objects with their old address.
    fn note_moves(&self, plan: &mut Plan) {
        for m in &self.moves {
            if let Some(c) = plan.changes.iter_mut().find(|c| c.addr == m.to && c.deposed.is_none()) {
                c.moved_from = Some(m.from.clone());
            }
        }
    }

    /// The warnings the single-run options call for: a `-replace` that
    /// matches nothing, `-target` in effect, objects to be forgotten.
    fn option_warnings(&self, plan: &Plan) -> Vec<Diagnostic> {
        let mut warnings = Vec::new();
        for addr in &self.options.replace {
            if plan.change(addr).is_none_or(|c| c.action != Action::Replace) {
                warnings.push(Diagnostic::warning("Unused -replace option").with_detail(format!(
                    "The plan does not replace {addr}: no resource instance with that address is planned to \
                     exist after this run, so -replace={addr} has no effect."
                )));
            }
        }
        if !self.options.targets.is_empty() {
            warnings.push(Diagnostic::warning("Resource targeting is in effect").with_detail(
                "You are creating a plan with the -target option, which means that the result of this plan may \
                 not represent all of the changes requested by the current configuration.\n\nThe -target option \
                 is not for routine use, and is provided only for exceptional situations such as recovering from \
                 errors or mistakes, or when cairn specifically suggests to use it as part of an error message.",
            ));
        }
        let forgotten: Vec<String> =
            plan.changes.iter().filter(|c| c.action == Action::Forget).map(|c| format!(" - {}", c.addr)).collect();
        if !forgotten.is_empty() {
            warnings.push(Diagnostic::warning("Some objects will no longer be managed by cairn").with_detail(format!(
                "If you apply this plan, cairn will discard its tracking information for the following \
                     objects, but it will not delete them:\n{}\n\nAfter applying this plan, cairn will no longer \
                     manage these objects. You will need to import them into cairn to manage them again.",
                forgotten.join("\n")
            )));
        }
        warnings
    }

    /// Walks the configuration's graph: every node once what it depends on
    /// is done, independent ones at the same time; once the walk's
    /// interrupt asks to stop, no more (see [`Planner::plan_until`]). It
    /// returns when every node started has ended.
    async fn plan_configuration(walk: Walk, plan: &mut Plan, errors: &mut Vec<Diagnostic>) {
        let planner = Arc::clone(&walk.planner);
        let targets = Arc::clone(&walk.targets);
        let interrupt = walk.interrupt.clone();
        let walk = Arc::new(walk);
        let task = Arc::clone(&walk);
        let limits = Limits { parallelism: planner.options.parallelism, per_group: BTreeMap::new() };
        let stop = interrupt.clone();
        walk_spread_until(
            planner.graph.petgraph(),
            &limits,
            |_| None,
            move |node, _| {
                let walk = Arc::clone(&task);
                async move { walk.plan_node(node).await }
            },
            move || stop.is_stopped(),
        )
        .await;
        let walked = std::mem::take(&mut *walk.walked.lock().unwrap_or_else(PoisonError::into_inner));
        let Walked { locals, mut values, gathered, marks, .. } = walked;
        gathered.into_plan(plan, errors);
        plan.reference_marks = marks.instances;
        if interrupt.is_stopped() {
            // Validations and check blocks (which may read data sources)
            // are new work too.
            return;
        }
        if errors.is_empty() && !planner.options.refresh_only {
            errors.extend(validations::deferred_validations(&planner.config, &planner.variables, &locals, &mut values));
        }
        if errors.is_empty() && !planner.options.refresh_only && !planner.config.checks.is_empty() {
            plan.check_warnings = check_blocks(
                &planner.config,
                &planner.providers,
                &planner.variables,
                &locals,
                &mut values,
                CheckPhase::Plan,
                &|event| planner.progress.emit(event),
            )
            .await;
        }
        for name in planner.state.outputs.keys() {
            if !planner.config.outputs.contains_key(name) && targets.everything() {
                plan.removed_outputs.push(name.clone());
                let (name, removed) = removed_output((name, &planner.state.outputs[name]));
                plan.removed_output_values.insert(name, removed);
            }
        }
    }

    /// The evaluation context with variables and nothing else yet.
    pub fn eval_context(&self) -> EvalContext {
        let sensitivity =
            config::Sensitivity { variables: sensitivity::sensitive_variables(&self.config), ..Default::default() };
        EvalContext {
            variables: self.variables.clone(),
            sensitivity,
            ephemeral: self.config.ephemeral.clone(),
            ..EvalContext::new(&self.config.dir)
        }
    }

    /// Plans the deletion of everything in state that the configuration no
    /// longer declares (or everything, for destroy), or, for a resource a
    /// `removed` block with `destroy = false` names, forgetting it.
    async fn plan_orphans(&self, blocks: &Blocks, targets: &Targets, plan: &mut Plan, errors: &mut Vec<Diagnostic>) {
        // The module instances that declare blocks, gathered at the first
        // orphan: whether an orphan's module is gone too.
        let mut modules: Option<std::collections::HashSet<crate::addr::ModuleInstance>> = None;
        for inst in &self.state.resources {
            let declared = !self.options.destroy && blocks.contains_key(&inst.addr.resource);
            if declared || inst.addr.resource.mode != Mode::Managed || !targets.includes_instance(&inst.addr) {
                continue;
            }
            match self.config.removed_of(&inst.addr.resource) {
                Some(removed) if !removed.destroy => self.plan_forget(inst, plan, errors).await,
                _ => {
                    let modules = modules.get_or_insert_with(|| blocks.keys().map(|r| r.module.clone()).collect());
                    let reason = (!self.options.destroy).then(|| gone_reason(inst, modules));
                    self.plan_delete(inst, blocks, reason, plan, errors).await
                }
            }
        }
    }

    /// Refreshes, for a refresh-only plan, the objects in state that the
    /// configuration no longer declares: the state follows reality for
    /// them too, though nothing would otherwise plan them.
    async fn refresh_orphans(&self, blocks: &Blocks, targets: &Targets, plan: &mut Plan, errors: &mut Vec<Diagnostic>) {
        let orphans = self.state.resources.iter().filter(|i| {
            i.addr.resource.mode == Mode::Managed
                && !i.attributes.is_null()
                && !blocks.contains_key(&i.addr.resource)
                && targets.includes_instance(&i.addr)
        });
        for inst in orphans {
            let Some(provider) = self.providers.get(&inst.provider) else {
                errors.push(Diagnostic::error(format!(
                    "Provider {:?} is needed to refresh {}, but it is not available",
                    inst.provider, inst.addr
                )));
                continue;
            };
            let gate = Gate::new(provider.as_ref());
            let refreshed = async {
                let schema = gate.schema_of(&inst.addr.resource).map_err(|d| vec![d])?;
                let prior = instance::decode_prior(gate, inst).await.map_err(|d| vec![d])?;
                self.progress.refresh_start(&inst.addr, &prior);
                let (current, warnings) = gate
                    .refresh(schema, &inst.addr, &prior, &inst.private)
                    .await
                    .map_err(|e| e.into_diagnostics(&Location::default()))?;
                self.progress.refresh_complete(&inst.addr, &prior);
                Ok::<_, Vec<Diagnostic>>((prior, current, warnings))
            };
            match refreshed.await {
                Ok((prior, current, warnings)) => {
                    plan.warnings.extend(warnings);
                    let (current, current_private) = current.unwrap_or_default();
                    if current != prior {
                        plan.drift.push(Drift {
                            addr: inst.addr.clone(),
                            provider: inst.provider.clone(),
                            prior,
                            current,
                            current_private,
                            sensitive: inst.sensitive_attributes.clone(),
                        });
                    }
                }
                Err(d) => errors.extend(d),
            }
        }
    }

    /// Reports the refresh of an object planned from the state as it is
    /// (to forget or destroy), as Terraform, which reads it first, reports
    /// one; nothing under `-refresh=false`.
    fn say_refreshed(&self, inst: &InstanceState, prior: &Value) {
        if !self.options.skip_refresh {
            self.progress.refresh_start(&inst.addr, prior);
            self.progress.refresh_complete(&inst.addr, prior);
        }
    }

    /// Plans dropping an object from the state, leaving it as it is.
    async fn plan_forget(&self, inst: &InstanceState, plan: &mut Plan, errors: &mut Vec<Diagnostic>) {
        if inst.attributes.is_null() {
            return;
        }
        let Some(provider) = self.providers.get(&inst.provider) else {
            errors.push(Diagnostic::error(format!(
                "Provider {:?} is needed to read {} from the state, but it is not available",
                inst.provider, inst.addr
            )));
            return;
        };
        match instance::decode_prior(Gate::new(provider.as_ref()), inst).await {
            Ok(prior) => {
                self.say_refreshed(inst, &prior);
                plan.changes.push(ResourceChange {
                    sensitive: inst.sensitive_attributes.clone(),
                    location: self.config.removed_of(&inst.addr.resource).map(|r| r.location.clone()),
                    ..stored_change(inst, Action::Forget, prior.clone(), prior)
                })
            }
            Err(d) => errors.push(d),
        }
    }

    /// Plans the deletion of every deposed object in the state: old objects
    /// of create_before_destroy replacements whose delete has not succeeded.
    async fn plan_deposed(&self, targets: &Targets, plan: &mut Plan, errors: &mut Vec<Diagnostic>) {
        for inst in self.state.resources.iter().filter(|i| !i.deposed.is_empty() && targets.includes_instance(&i.addr))
        {
            let Some(provider) = self.providers.get(&inst.provider) else {
                errors.push(Diagnostic::error(format!(
                    "Provider {:?} is needed to destroy deposed objects of {}, but it is not available",
                    inst.provider, inst.addr
                )));
                continue;
            };
            for d in &inst.deposed {
                let object = InstanceState {
                    attributes: d.attributes.clone(),
                    private: d.private.clone(),
                    deposed: Vec::new(),
                    ..inst.clone()
                };
                match instance::decode_prior(Gate::new(provider.as_ref()), &object).await {
                    Ok(prior) => plan.changes.push(ResourceChange {
                        create_before_destroy: true,
                        deposed: Some(d.key.clone()),
                        ..stored_change(&object, Action::Delete, prior, Value::Null)
                    }),
                    Err(e) => errors.push(e),
                }
            }
        }
    }

    /// Plans the delete of `inst`'s current object, for `reason` (none in
    /// a destroy plan, which says no `because`).
    async fn plan_delete(
        &self,
        inst: &InstanceState,
        blocks: &Blocks,
        reason: Option<ReplaceReason>,
        plan: &mut Plan,
        errors: &mut Vec<Diagnostic>,
    ) {
        if inst.attributes.is_null() {
            // No current object: only deposed ones, planned apart.
            return;
        }
        let Some(provider) = self.providers.get(&inst.provider) else {
            errors.push(Diagnostic::error(format!(
                "Provider {:?} is needed to destroy {}, but it is not available",
                inst.provider, inst.addr
            )));
            return;
        };
        match instance::decode_prior(Gate::new(provider.as_ref()), inst).await {
            Ok(prior) => {
                let resource = blocks.get(&inst.addr.resource).map(|i| &self.config.resources[*i]);
                if let Some(r) = resource.filter(|r| r.lifecycle.prevent_destroy) {
                    errors.push(instance::prevent_destroy_error(&inst.addr, &r.location));
                    return;
                }
                self.say_refreshed(inst, &prior);
                plan.changes.push(ResourceChange {
                    // Not a replace: for the plan output, a delete retried.
                    replace_reason: match inst.status {
                        crate::state::InstanceStatus::Destroying => Some(ReplaceReason::Destroying),
                        _ => reason,
                    },
                    location: resource.map(|r| r.location.clone()),
                    ..stored_change(inst, Action::Delete, prior, Value::Null)
                })
            }
            Err(d) => errors.push(d),
        }
    }
}

/// Why an object whose resource block is gone is destroyed: its module
/// instance is gone too (none of `modules` declares a block), or only the
/// block.
fn gone_reason(
    inst: &InstanceState,
    modules: &std::collections::HashSet<crate::addr::ModuleInstance>,
) -> ReplaceReason {
    let module = &inst.addr.resource.module;
    if module.is_root() || modules.contains(module) {
        ReplaceReason::DeleteNoResourceConfig
    } else {
        ReplaceReason::DeleteNoModule(module.to_string())
    }
}

/// Why an instance the resource's `count` or `for_each` no longer has is
/// destroyed, as Terraform tells the three cases apart.
fn stale_key_reason(expansion: &Expansion, key: Option<&InstanceKey>) -> ReplaceReason {
    match (expansion, key) {
        (Expansion::Count(_), Some(InstanceKey::Int(_))) => ReplaceReason::DeleteCountIndex,
        (Expansion::ForEach(_), Some(InstanceKey::String(_))) => ReplaceReason::DeleteEachKey,
        _ => ReplaceReason::DeleteWrongRepetition,
    }
}

/// The change `action` of an object the state holds, from `prior` to
/// `planned`: its address, provider, private bytes, dependencies (as
/// recorded), lifecycle and schema version, with no configuration.
fn stored_change(inst: &InstanceState, action: Action, prior: Value, planned: Value) -> ResourceChange {
    ResourceChange {
        // The object shown is the stored one: its recorded marks hide it.
        sensitive: inst.sensitive_attributes.clone(),
        addr: inst.addr.clone(),
        provider: inst.provider.clone(),
        action,
        prior,
        planned,
        config: Value::Null,
        prior_private: inst.private.clone(),
        planned_private: Vec::new(),
        replace_reason: None,
        dependencies: inst.dependencies.clone(),
        prior_dependencies: inst.dependencies.clone(),
        create_before_destroy: inst.create_before_destroy,
        deposed: None,
        schema_version: inst.schema_version,
        location: None,
        importing: None,
        moved_from: None,
    }
}

impl Walk {
    fn walked(&self) -> std::sync::MutexGuard<'_, Walked> {
        self.walked.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Plans one node of the configuration; records what it adds to the
    /// plan under its position. Returns whether it succeeded (dependents of
    /// a failed node are not planned: their errors would only repeat it).
    async fn plan_node(&self, node: Node) -> bool {
        if !self.targets.includes_node(&node, &self.planner.graph) {
            // Not planned (`-target`). A resource is still declared, with
            // an unknown value, so that the locals and outputs apply
            // evaluates see an unknown rather than an undeclared resource.
            if let Node::Resource(addr) = &node {
                let part = Plan { expansions: [(addr.clone(), Expansion::Single)].into(), ..Plan::default() };
                self.walked().gathered.add(self.position[&node], part, Vec::new());
            }
            return true;
        }
        let mut part = Plan::default();
        let mut errors = Vec::new();
        match &node {
            Node::Local(name) => self.plan_local(name, &node, &mut errors),
            Node::Output(name) => self.plan_output(name, &node, &mut part, &mut errors),
            Node::Resource(addr) => self.plan_resource(addr, &node, &mut part, &mut errors).await,
            Node::Provider(name) => self.configure_provider(name, &node, &mut errors).await,
        }
        let ok = errors.is_empty();
        let at = self.position[&node];
        self.walked().gathered.add(at, part, errors);
        ok
    }

    /// The evaluation context of `node`: the values of the resources and
    /// locals it reads, and no others, so that a node's cost does not grow
    /// with the size of the configuration (a module's variables and outputs
    /// are locals, so a configuration of many modules has thousands).
    fn context_of(&self, node: &Node) -> (EvalContext, Vec<ResourceAddr>) {
        let graph = &self.planner.graph;
        let (dependencies, locals_read) = (graph.resource_dependencies(node), graph.local_dependencies(node));
        let mut walked = self.walked();
        let sensitivity =
            walked.marks.sensitivity(&self.sensitive_variables, &dependencies, |a| walked.values.expansion(a).cloned());
        let locals = locals_of(&locals_read, &walked.locals);
        let resources = walked.values.snapshot_of(&dependencies);
        drop(walked);
        let ctx = EvalContext {
            variables: self.planner.variables.clone(),
            locals,
            resources,
            sensitivity,
            ephemeral: self.planner.config.ephemeral.clone(),
            ..EvalContext::new(&self.planner.config.dir)
        };
        (ctx, dependencies)
    }

    fn plan_local(&self, name: &str, node: &Node, errors: &mut Vec<Diagnostic>) {
        let (ctx, _) = self.context_of(node);
        match self.planner.config.locals[name].value(&ctx) {
            Ok(v) => {
                let marks = config::marks(&self.planner.config.locals[name].expr, &ctx);
                let mut walked = self.walked();
                walked.locals.insert(name.to_string(), v);
                // Only the marked ones: every node's context copies them.
                if !marks.is_empty() {
                    walked.marks.locals.insert(name.to_string(), marks);
                }
            }
            Err(d) => errors.extend(d),
        }
    }

    fn plan_output(&self, name: &str, node: &Node, part: &mut Plan, errors: &mut Vec<Diagnostic>) {
        let output = &self.planner.config.outputs[name];
        let (ctx, _) = self.context_of(node);
        if let Err(d) = sensitivity::check_output(output, &ctx) {
            return errors.push(d);
        }
        match output.value(&ctx) {
            Ok(value) => {
                let prior = self.planner.state.outputs.get(name).and_then(|o| o.decode());
                part.outputs.insert(name.to_string(), PlannedOutput { value, prior, sensitive: output.sensitive });
            }
            Err(d) => errors.extend(d),
        }
    }

    /// Why the instance `addr` must be replaced whatever its plan says:
    /// `-replace` names it, or a `replace_triggered_by` reference changes.
    fn forced_replace(
        &self,
        resource: &config::Resource,
        addr: &InstanceAddr,
        ctx: &EvalContext,
    ) -> Result<Option<ReplaceReason>, Vec<Diagnostic>> {
        if self.planner.options.replace.contains(addr) {
            return Ok(Some(ReplaceReason::Requested));
        }
        let walked = self.walked();
        Ok(triggers::fired(resource, ctx, &walked.triggers)?.map(ReplaceReason::Triggered))
    }

    /// The id an `import` block adopts the object of `addr` by, when there
    /// is one and the state has no object there yet.
    fn import_id(&self, addr: &InstanceAddr, prior: Option<&InstanceState>) -> Result<Option<String>, Vec<Diagnostic>> {
        let planner = &self.planner;
        let Some(import) = planner.config.import_of(addr) else { return Ok(None) };
        if prior.is_some() || planner.options.refresh_only {
            return Ok(None);
        }
        match config::eval(&import.id, &planner.eval_context())? {
            Value::String(id) if !id.is_empty() => Ok(Some(id)),
            _ => Err(vec![
                Diagnostic::error("Invalid import id argument")
                    .with_detail("The import ID must be a known, non-empty string.")
                    .at(&import.id.location),
            ]),
        }
    }

    /// Plans every instance of one resource block, at the same time, and
    /// records their values for the nodes after it.
    async fn plan_resource(&self, addr: &ResourceAddr, node: &Node, part: &mut Plan, errors: &mut Vec<Diagnostic>) {
        let planner = &self.planner;
        let resource = &planner.config.resources[self.blocks[addr]];
        let provider = match planner.providers.get(&resource.provider) {
            Some(p) => p,
            None => {
                let d = Diagnostic::error(format!("Provider {:?} is not available", resource.provider));
                return errors.push(d.at(&resource.location));
            }
        };
        let schema = match Gate::new(provider.as_ref()).schema_of(addr) {
            Ok(schema) => schema,
            Err(d) => return errors.push(d.at(&resource.location)),
        };
        let (ctx, dependencies) = self.context_of(node);
        let keys = match values::expand(resource, &ctx) {
            Ok(keys) => keys,
            Err(d) => return errors.extend(d),
        };
        let upstream_changes = {
            let mut walked = self.walked();
            walked.values.declare(addr, &keys);
            dependencies.iter().any(|d| walked.changed.contains(d))
        };
        part.expansions.insert(addr.clone(), keys.clone());
        let targets = &self.targets;
        let instances = keys.instance_keys().into_iter().map(|key| InstanceAddr { resource: addr.clone(), key });
        let instances = instances.filter(|a| targets.includes_instance(a)).map(|addr| {
            let inst_ctx = EvalContext {
                resources: ctx.resources.clone(),
                sensitivity: sensitivity::of_instance(&ctx, resource, addr.key.as_ref()),
                ..values::instance_context(&ctx, &keys, addr.key.as_ref())
            };
            let dependencies = &dependencies;
            async move {
                let _slot = self.slots.acquire().await.expect("the semaphore is never closed");
                let mut own = Plan::default();
                if self.interrupt.is_stopped() {
                    // Waited for its slot past the interrupt: not started.
                    return (addr, Err(Vec::new()), own);
                }
                // Null attributes: only deposed objects are left.
                let prior = self.planner.state.get(&addr).filter(|i| !i.attributes.is_null());
                let (forced, import_id) =
                    match (self.forced_replace(resource, &addr, &inst_ctx), self.import_id(&addr, prior)) {
                        (Ok(forced), Ok(import_id)) => (forced, import_id),
                        (Err(e), _) | (_, Err(e)) => return (addr, Err(e), own),
                    };
                let planner = instance::InstancePlanner {
                    gate: Gate::new(provider.as_ref()),
                    schema,
                    resource,
                    addr: &addr,
                    prior,
                    dependencies,
                    skip_refresh: self.planner.options.skip_refresh,
                    refresh_only: self.planner.options.refresh_only,
                    forced,
                    import_id,
                    progress: &self.planner.progress,
                };
                let checked = !self.planner.options.refresh_only;
                if checked {
                    let failed = preconditions_failed(resource, &inst_ctx);
                    if !failed.is_empty() {
                        return (addr, Err(failed), own);
                    }
                }
                let result = match resource.addr.mode {
                    Mode::Data => planner.plan_data(&inst_ctx, upstream_changes, &mut own).await,
                    Mode::Managed => planner.plan_managed(&inst_ctx, &mut own).await,
                    Mode::Ephemeral => {
                        self.open_ephemeral(resource, provider, schema, &addr, &inst_ctx, &mut own).await
                    }
                };
                let result = result.and_then(|value| match checked {
                    true => postconditions_hold(resource, &inst_ctx, value),
                    false => Ok(value),
                });
                let marks = result.as_ref().map_or_else(
                    |_| Vec::new(),
                    |value| {
                        sensitivity::mark_instance(&mut own.changes, &addr, resource, &schema.block, &inst_ctx, value)
                    },
                );
                (addr, result.map(|value| (value, marks)), own)
            }
        });
        // The instances share their node's task: their provider calls wait
        // without a thread, and the instance slots bound how many run.
        let planned = join_all(instances).await;
        let mut own_parts = Vec::with_capacity(planned.len());
        {
            let mut walked = self.walked();
            for (addr, result, own) in planned {
                if self.trigger_targets.contains(&addr.resource) {
                    walked.triggers.record(&own.changes);
                }
                own_parts.push(own);
                match result {
                    Ok((value, marks)) => {
                        walked.values.set(&addr, value);
                        // Only the marked ones: most instances have none.
                        if !marks.is_empty() {
                            walked.marks.instances.insert(addr, marks);
                        }
                    }
                    Err(d) => errors.extend(d),
                }
            }
        }
        // Outside the lock, which the other workers' nodes wait for.
        for own in own_parts {
            part.absorb(own);
        }
        // Instances in state that the count or for_each no longer has.
        if addr.mode == Mode::Managed && !planner.options.refresh_only {
            for inst in planner.state.resources.of_resource(addr) {
                if !keys.contains(inst.addr.key.as_ref()) && targets.includes_instance(&inst.addr) {
                    let reason = stale_key_reason(&keys, inst.addr.key.as_ref());
                    planner.plan_delete(inst, &self.blocks, Some(reason), part, errors).await;
                }
            }
        }
        // After the deletes: a data source that depends on a block losing
        // an instance is read during apply too.
        if part.changes.iter().any(|c| c.action != Action::NoOp) {
            self.walked().changed.insert(addr.clone());
        }
    }
}

impl Walk {
    /// Opens an ephemeral resource instance while planning, when its
    /// configuration is wholly known; its value is unknown in the plan
    /// otherwise (it is opened during apply).
    async fn open_ephemeral(
        &self,
        resource: &config::Resource,
        provider: &Arc<dyn Provider>,
        schema: &crate::schema::Schema,
        addr: &InstanceAddr,
        ctx: &EvalContext,
        part: &mut Plan,
    ) -> Result<Value, Vec<Diagnostic>> {
        let config = config::decode_body(&resource.body, &schema.block, ctx)?;
        if !ephemeral::is_openable(&config) {
            return Ok(Value::unknown());
        }
        let opening = self.ephemeral.open(provider, schema, addr, &config, &resource.location).await;
        let (value, warnings) = ephemeral::at_attributes(opening, &resource.body)?;
        part.warnings.extend(warnings);
        Ok(value)
    }
}

/// The failures (and errors) of an instance's preconditions in `ctx`, its
/// context; those not known yet are checked again before apply.
pub fn preconditions_failed(resource: &config::Resource, ctx: &EvalContext) -> Vec<Diagnostic> {
    config::check_conditions(&resource.lifecycle.preconditions, ConditionKind::ResourcePrecondition, ctx, &[])
}

/// `value`, the instance's planned (or read, or new) object, when its
/// postconditions hold for it as `self`, or cannot be decided yet (they
/// refer to values known only after apply, where they are checked again);
/// else their failures.
pub fn postconditions_hold(
    resource: &config::Resource,
    ctx: &EvalContext,
    value: Value,
) -> Result<Value, Vec<Diagnostic>> {
    if resource.lifecycle.postconditions.is_empty() {
        return Ok(value);
    }
    let bound = [("self".to_string(), value)];
    let failed =
        config::check_conditions(&resource.lifecycle.postconditions, ConditionKind::ResourcePostcondition, ctx, &bound);
    let [(_, value)] = bound;
    if failed.is_empty() { Ok(value) } else { Err(failed) }
}

/// Appends `more` to `to`, or moves it there whole when `to` is empty and
/// has no room reserved for it.
fn append<T>(to: &mut Vec<T>, mut more: Vec<T>) {
    if to.is_empty() && to.capacity() < more.len() {
        *to = more;
    } else {
        to.append(&mut more);
    }
}

/// Adds `more`'s entries to `to` (replacing those with the same keys), or
/// moves it there whole when `to` is empty. (Not `BTreeMap::append`,
/// which rebuilds the whole map: absorbing one instance at a time, a plan
/// became quadratic.)
fn merge<K: Ord, V>(to: &mut BTreeMap<K, V>, more: BTreeMap<K, V>) {
    if to.is_empty() {
        *to = more;
    } else {
        to.extend(more);
    }
}

/// Marks create_before_destroy on every change of a resource that a
/// resource with create_before_destroy depends on, directly or not, by
/// configuration or by the state: the seed's "forced create before
/// destroy", without which rule 5 would make a cycle.
pub fn inherit_create_before_destroy(changes: &mut [ResourceChange]) {
    let mut todo: Vec<&ResourceAddr> =
        changes.iter().filter(|c| c.create_before_destroy && c.deposed.is_none()).map(|c| &c.addr.resource).collect();
    if todo.is_empty() {
        return;
    }
    let mut deps: BTreeMap<&ResourceAddr, BTreeSet<&ResourceAddr>> = BTreeMap::new();
    for c in changes.iter() {
        deps.entry(&c.addr.resource).or_default().extend(c.dependencies.iter().chain(&c.prior_dependencies));
    }
    let mut forced: BTreeSet<ResourceAddr> = BTreeSet::new();
    while let Some(r) = todo.pop() {
        for d in deps.get(r).into_iter().flatten() {
            if forced.insert((*d).clone()) {
                todo.push(d);
            }
        }
    }
    for c in changes.iter_mut() {
        if forced.contains(&c.addr.resource) && c.addr.resource.mode == Mode::Managed {
            c.create_before_destroy = true;
        }
    }
}

/// The instance key of an address as a value for `count.index`/`each.key`.
pub fn key_value(key: &InstanceKey) -> Value {
    match key {
        InstanceKey::Int(i) => Value::int(*i),
        InstanceKey::String(s) => Value::string(s.clone()),
    }
}

#[cfg(test)]
mod tests;

/// An output of the state that the plan removes: its stored value before,
/// null after.
fn removed_output((name, stored): (&String, &crate::state::OutputState)) -> (String, PlannedOutput) {
    let prior = stored.decode().unwrap_or(Value::Null);
    (name.clone(), PlannedOutput { value: Value::Null, prior: Some(prior), sensitive: stored.sensitive })
}
