//! Applying a plan: the executor walks the apply graph and, for each step,
//! re-plans with the values now known, records its intent in the state's
//! journal, calls the provider, checks the new state against the plan and
//! journals the change before anything after it starts. A step waits for
//! the disk once, for its intent before its provider call; that flush also
//! carries every change journaled before it. The whole state is written
//! once, at the end.
//!
//! An [`Interrupt`] stops the walk: on the first request no step starts
//! another provider call, the calls under way finish and are recorded, and
//! the state is committed; on the second the calls under way are cancelled,
//! their intents stay pending in the journal, and the state is left for the
//! next run to recover ([`recover`]).

mod configure;
pub mod events;
pub mod fault;
pub mod graph;
pub mod interrupt;
pub mod recover;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use sha2::{Digest, Sha256};

use crate::addr::{AddrMap, InstanceAddr, ResourceAddr};
use crate::config::{self, ConditionKind, Config, EvalContext};
use crate::contract::Gate;
use crate::diag::{Diagnostic, Location};
use crate::graph::DependencyGraph;
use crate::graph::walk::{self, Limits, SlotPermit, Slots};
use crate::plan::{self, Action, Plan, Providers, ResourceChange, ResourceValues};
use crate::provider::{ApplyRequest, ApplyResponse};
use crate::schema::Schema;
use crate::state::{
    Attributes, Backend, DeposedObject, InstanceState, InstanceStatus, OutputState, PendingOperation, Record, State,
    StateError, StateJournal, Unsynced,
};
use crate::state::{Coming, OnTheWay, Stopped};
use crate::value::{self, Value};

pub use crate::graph::walk::Outcome;
pub use events::{Event, EventSink};
pub use graph::{ApplyGraph, Step};
pub use interrupt::Interrupt;
pub use recover::{Recovered, Recovery};

/// What an apply did.
#[derive(Debug, Default)]
pub struct ApplyReport {
    /// Objects created (a replace counts once here and once in `destroyed`).
    pub added: usize,
    /// Objects updated in place.
    pub changed: usize,
    /// Objects destroyed.
    pub destroyed: usize,
    /// Objects adopted by `import` blocks (an import that also updates
    /// counts in `changed` too).
    pub imported: usize,
    /// Objects dropped from the state by `removed` blocks, not destroyed.
    pub forgotten: usize,
    /// Every error, in the order they happened.
    pub errors: Vec<Diagnostic>,
    /// Outputs after the apply, for display.
    pub outputs: BTreeMap<String, (Value, bool)>,
    /// Whether the run was interrupted ([`Interrupt`]).
    pub interrupted: bool,
    /// Operations the interrupt kept from starting: (address, action).
    pub not_started: Vec<(String, String)>,
    /// Operations a second interrupt cancelled while their provider calls
    /// were under way: (address, action). Their intents stay pending.
    pub cancelled: Vec<(String, String)>,
}

/// Everything an apply needs, owned so that steps can run on other threads.
pub struct Applier {
    /// The configuration.
    pub config: Arc<Config>,
    /// Its dependency graph.
    pub graph: Arc<DependencyGraph>,
    /// Configured providers.
    pub providers: Providers,
    /// Those of `providers` configured by a [`Step::Configure`] (see
    /// [`plan::late`]).
    pub late_providers: plan::LateProviders,
    /// The plan to carry out.
    pub plan: Plan,
    /// Resolved variables.
    pub variables: BTreeMap<String, Value>,
    /// Most steps running at once.
    pub parallelism: usize,
    /// Most steps of one provider running at once, by provider name (its
    /// sandbox's `max_concurrency`, for an API with a rate limit).
    pub provider_limits: BTreeMap<String, usize>,
    /// Where progress, diagnostics and node events go.
    pub events: Arc<dyn EventSink>,
    /// Asks the apply to stop (Ctrl-C).
    pub interrupt: Interrupt,
    /// Whether the state given to [`Applier::apply`] differs from the
    /// stored one (a recovery changed it): it is then written before any
    /// provider call.
    pub state_changed: bool,
}

/// What an expression may read: the resources and locals its node
/// depends on.
#[derive(Clone, Copy)]
struct Reads<'a> {
    resources: &'a [ResourceAddr],
    locals: &'a [String],
}

/// Why a step did not succeed.
enum Halt {
    /// It failed, for these reasons.
    Failed(Vec<Diagnostic>),
    /// The run was interrupted before its provider call started.
    NotStarted,
    /// A second interrupt cancelled its provider call under way.
    Cancelled,
}

impl From<Vec<Diagnostic>> for Halt {
    fn from(diags: Vec<Diagnostic>) -> Halt {
        Halt::Failed(diags)
    }
}

/// The state as the steps change it, and the journal that persists every
/// change as it is made.
struct Ledger {
    state: State,
    journal: Box<dyn StateJournal>,
}

/// What steps share while the walk runs.
struct Shared {
    applier: Applier,
    values: Mutex<(ResourceValues, BTreeMap<String, Value>)>,
    /// Held while a change is made and journaled, so that the journal has
    /// the changes in the order they were made.
    ledger: Mutex<Ledger>,
    report: Mutex<ApplyReport>,
    lineage: String,
    /// The serial of the state the plan was made from: part of the
    /// idempotency key of every create and update, so that two changes
    /// alike in everything else (the same create after a destroy, an
    /// update back and forth) are told apart.
    serial: u64,
    /// The keys of the creates and updates that made nothing in an
    /// earlier run, by instance and operation: this run's attempt is their
    /// retry, and is sent the same key (`State::retries`).
    retries: HashMap<(InstanceAddr, String), String>,
    /// Where each instance's current-object change is in the plan.
    current: AddrMap<InstanceAddr, usize>,
    /// Where the delete of each deposed object (instance, key) is in the plan.
    deposed: AddrMap<(InstanceAddr, String), usize>,
    /// Where each resource block is in the configuration. This index and
    /// the two above keep every step's lookups from searching the whole
    /// plan or configuration, which made apply quadratic.
    blocks: AddrMap<ResourceAddr, usize>,
    /// One permit per provider operation running (`-parallelism`), handed
    /// out longest chain first.
    operations: Slots,
    /// One permit per step between journaling its intent and starting its
    /// provider call ([`INTENTS_PER_OPERATION`] per operation permit).
    intents: Slots,
    /// The journal's count of steps on their way to an intent, if it
    /// keeps one.
    coming: Option<Coming>,
    /// The ephemeral resources this apply has opened, closed at its end.
    ephemeral: Arc<plan::ephemeral::Session>,
    /// The ephemeral resources something this apply creates, updates or
    /// reads refers to (directly or through others), or a provider it
    /// configures: only those are opened.
    ephemeral_needed: BTreeSet<ResourceAddr>,
    /// The late providers this apply calls: only those are configured.
    providers_needed: BTreeSet<String>,
}

/// A step under way: its urgency, which orders its waits for permits
/// (see [`Slots`]), and, until it has journaled its intent (or shown it
/// has none), its place among the steps the journal's next flush waits
/// for ([`Coming`]).
struct Turn {
    urgency: usize,
    way: Option<OnTheWay>,
}

impl Turn {
    /// The step has queued its intent, or will journal none.
    fn arrived(&self) {
        if let Some(way) = &self.way {
            way.arrived();
        }
    }

    /// The step waits for a permit: the journal does not wait for it
    /// meanwhile.
    fn stopped(&self) -> Option<Stopped<'_>> {
        self.way.as_ref().map(OnTheWay::stopped)
    }
}

/// How many steps may be under way for each provider operation allowed to
/// run (`-parallelism`). A step spends most of its time waiting for the
/// journal to reach the disk (its intent, before the provider call), not
/// in the provider; steps waiting hold neither a thread
/// nor an operation permit, so that while some wait, others call their
/// provider, and one flush of the journal serves many steps. A flush (an
/// `fdatasync`, or a round trip and a commit) takes milliseconds, so with
/// an instant provider the steps sharing a flush are what sets the pace.
const STEPS_PER_OPERATION: usize = 32;

/// How many steps may, for each provider operation allowed to run, have
/// journaled an intent whose call has not started: enough for the intents
/// of many steps to share a flush, and few enough that a crash while a
/// slow provider keeps most steps waiting for a permit leaves only so many
/// intents pending whose calls never started (the next run asks the
/// provider about each, as about every pending operation).
const INTENTS_PER_OPERATION: usize = 24;

impl Applier {
    /// Carries out the plan on `state`, persisting every change in the
    /// journal of `backend` as it is made and the whole state at the end.
    /// Returns what happened (errors are in the report) and the new state.
    ///
    /// Steps await the journal's flushes ([`Unsynced::durable`]) without
    /// holding a thread.
    pub async fn apply(self, state: State, mut backend: Box<dyn Backend>) -> (ApplyReport, State) {
        let started = std::time::Instant::now();
        let apply_graph = match graph::build(&self.plan, &self.graph) {
            Ok(g) => g,
            Err(d) => {
                self.events.diagnostic(&d);
                return (ApplyReport { errors: vec![d], ..ApplyReport::default() }, state);
            }
        };
        let mut values = ResourceValues::default();
        for (addr, expansion) in &self.plan.expansions {
            values.declare(addr, expansion);
        }
        for change in &self.plan.changes {
            values
                .set(&change.addr, if change.action == Action::Delete { Value::Null } else { change.planned.clone() });
        }
        for (addr, v) in &self.plan.data_values {
            values.set(addr, v.clone());
        }
        let mut state = state;
        let serial = state.serial;
        // A retry waits for its instance's next create or update: gone
        // with the instance's configuration.
        state.retries.retain(|r| self.config.resources.iter().any(|c| c.addr == r.addr.resource));
        let retries =
            state.retries.iter().map(|r| ((r.addr.clone(), r.operation.clone()), r.idempotency_key.clone())).collect();
        let fail = |d: Diagnostic, state: State| {
            self.events.diagnostic(&d);
            (ApplyReport { errors: vec![d], ..ApplyReport::default() }, state)
        };
        // A state never written yet is written before any provider call, so
        // that its lineage — part of every idempotency key — survives a
        // first apply that records nothing, and a retry sends the same keys.
        // Operations left pending by a crash were recovered by the plan
        // (which changed the state); this write commits that. (Those whose
        // provider could not be asked stay pending.)
        if (state.serial == 0 || self.state_changed)
            && let Err(e) = backend.write(&mut state)
        {
            return fail(write_failed(&e), state);
        }
        let journal = match backend.start_journal(&state) {
            Ok(journal) => journal,
            Err(e) => return fail(write_failed(&e), state),
        };
        let ephemeral = plan::ephemeral::Session::new({
            let events = Arc::clone(&self.events);
            Arc::new(move |event| events.emit(event))
        });
        let (providers_needed, ephemeral_needed) = configure::needed(&self);
        let shared = Arc::new(Shared {
            lineage: state.lineage.clone(),
            serial,
            retries,
            current: self
                .plan
                .changes
                .iter()
                .enumerate()
                .filter(|(_, c)| c.deposed.is_none())
                .map(|(i, c)| (c.addr.clone(), i))
                .collect(),
            deposed: self
                .plan
                .changes
                .iter()
                .enumerate()
                .filter_map(|(i, c)| Some(((c.addr.clone(), c.deposed.clone()?), i)))
                .collect(),
            blocks: self.config.resources.iter().enumerate().map(|(i, r)| (r.addr.clone(), i)).collect(),
            operations: Slots::new(self.parallelism),
            intents: Slots::new(self.parallelism.max(1).saturating_mul(INTENTS_PER_OPERATION)),
            applier: self,
            values: Mutex::new((values, BTreeMap::new())),
            coming: journal.coming(),
            ephemeral,
            ephemeral_needed,
            providers_needed,
            ledger: Mutex::new(Ledger { state, journal }),
            report: Mutex::new(ApplyReport::default()),
        });
        tracing::debug!(steps = apply_graph.node_count(), elapsed = ?started.elapsed(), "apply prepared");
        let started = std::time::Instant::now();
        let limits = Limits {
            parallelism: shared.applier.parallelism.max(1).saturating_mul(STEPS_PER_OPERATION),
            per_group: shared.applier.provider_limits.clone(),
        };
        let worker = Arc::clone(&shared);
        let group = |step: &Step| {
            let change = match step {
                Step::Local(_) | Step::Open(_) | Step::Configure(_) | Step::Join(_) => return None,
                Step::Destroy(addr, Some(key)) => {
                    shared.deposed_change(addr, key).or_else(|| shared.current_change(addr))
                }
                Step::Destroy(addr, None) | Step::Apply(addr, _) => shared.current_change(addr),
            };
            change.map(|c| c.provider.clone())
        };
        let interrupt = shared.applier.interrupt.clone();
        let outcomes = walk::walk_spread_until(
            &apply_graph,
            &limits,
            group,
            move |step, urgency| {
                let worker = Arc::clone(&worker);
                // On its way from the moment it is started, so that a flush
                // waits for the intents of steps not yet running too.
                let way = worker.coming.as_ref().map(Coming::set_out);
                async move { worker.run(step, Turn { urgency, way }).await }
            },
            move || interrupt.is_stopped(),
        )
        .await;
        tracing::debug!(elapsed = ?started.elapsed(), "apply walked");
        let started = std::time::Instant::now();
        let interrupted = shared.applier.interrupt.is_stopped();
        for (n, outcome) in apply_graph.node_indices().zip(outcomes) {
            if outcome == Outcome::Skipped
                && let Some(node) = shared.node_event(&apply_graph[n])
            {
                if interrupted {
                    // Skipped or not, it was not done, and the interrupt
                    // is why nothing after a failure could make it so.
                    shared.halted(node, 0, &Halt::NotStarted);
                } else {
                    shared.applier.events.emit(node.finish(Outcome::Skipped, 0, None));
                }
            }
        }
        if !interrupted {
            shared.deferred_validations();
            shared.check_blocks().await;
        }
        // Also after a failure or an interrupt: every object opened is closed.
        for d in shared.ephemeral.close_all().await {
            shared.applier.events.diagnostic(&d);
            lock(&shared.report).errors.push(d);
        }
        shared.finish_outputs();
        let shared = Arc::into_inner(shared).expect("the walk is over, so no step holds the shared data");
        let Shared { applier, values, ledger, report, current, deposed, blocks, .. } = shared;
        let Applier { providers, plan, events, .. } = applier;
        // Stopped here; the rest is plain data (see `crate::release`).
        drop(providers);
        crate::release::release((plan, values, current, deposed, blocks, apply_graph));
        let Ledger { mut state, journal } = ledger.into_inner().unwrap_or_else(|e| e.into_inner());
        let mut report = report.into_inner().unwrap_or_else(|e| e.into_inner());
        report.interrupted = interrupted;
        report.not_started.sort();
        report.cancelled.sort();
        if !report.cancelled.is_empty() {
            // The cancelled calls may have done anything: their intents
            // must stay pending, so the journal is left as a crash leaves
            // it, for the next run to replay and recover.
            drop(journal);
            return (report, state);
        }
        // Every change is in the journal already; this write only folds
        // them into the state file. If it fails, the journal stays, and
        // the next command recovers the state from it.
        if let Err(e) = backend.finish_journal(journal, &mut state) {
            let d = write_failed(&e);
            events.diagnostic(&d);
            report.errors.push(d);
        }
        tracing::debug!(elapsed = ?started.elapsed(), "state written");
        (report, state)
    }
}

impl Shared {
    /// Runs one step (see [`Turn`]); reports it and records errors in the
    /// report.
    /// Returns success. Provider calls and intents reaching the disk are
    /// awaited.
    async fn run(&self, step: Step, turn: Turn) -> bool {
        let step = &step;
        let node = self.node_event(step);
        if self.applier.interrupt.is_stopped() {
            if let Some(node) = node {
                self.halted(node, 0, &Halt::NotStarted);
            }
            return false;
        }
        if let Some(node) = &node {
            self.applier.events.emit(node.start());
        }
        let started = Instant::now();
        let result = match step {
            Step::Local(name) => self.eval_local(name).map(|()| None).map_err(Halt::from),
            Step::Open(addr) => self.open_ephemeral(addr).await.map(|()| None).map_err(Halt::from),
            Step::Configure(name) => self.configure_provider(name).await.map(|()| None).map_err(Halt::from),
            Step::Join(_) => Ok(None),
            Step::Destroy(addr, None) => self.destroy(self.change(addr), &turn).await.map(|()| None),
            Step::Destroy(addr, Some(key)) => self.destroy_deposed(addr, key, &turn).await.map(|()| None),
            Step::Apply(addr, depose) => self.apply_change(self.change(addr), depose.as_deref(), &turn).await,
        };
        let ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        match result {
            Ok(id) => {
                if let Some(node) = node {
                    self.applier.events.emit(node.finish(Outcome::Done, ms, id));
                }
                true
            }
            Err(Halt::Failed(diags)) => {
                if let Some(node) = node {
                    self.applier.events.emit(node.finish(Outcome::Failed, ms, None));
                }
                let diags = match step {
                    Step::Apply(addr, _) => self.at_attributes(addr, diags),
                    _ => diags,
                };
                for d in &diags {
                    self.applier.events.diagnostic(d);
                }
                lock(&self.report).errors.extend(diags);
                false
            }
            Err(halt) => {
                if let Some(node) = node {
                    self.halted(node, ms, &halt);
                }
                false
            }
        }
    }

    /// Reports a step the interrupt kept from starting or cancelled.
    fn halted(&self, node: NodeEvent, ms: u64, halt: &Halt) {
        let entry = (node.address.clone(), node.action.to_string());
        {
            let mut report = lock(&self.report);
            match halt {
                Halt::Cancelled => report.cancelled.push(entry),
                _ => report.not_started.push(entry),
            }
        }
        self.applier.events.emit(node.finish(Outcome::Interrupted, ms, None));
    }

    /// What the node events of a step say, for steps that operate on an
    /// object (not locals, not no-ops).
    fn node_event(&self, step: &Step) -> Option<NodeEvent> {
        let (addr, deposed, action, replace) = match step {
            Step::Local(_) | Step::Open(_) | Step::Configure(_) | Step::Join(_) => return None,
            Step::Destroy(addr, key) => {
                let replace = key.as_ref().is_some_and(|k| self.deposed_change(addr, k).is_none())
                    || (key.is_none() && self.change(addr).action == Action::Replace);
                (addr, key.clone(), "delete", replace)
            }
            Step::Apply(addr, _) => {
                let change = self.change(addr);
                let action = match change.action {
                    Action::NoOp | Action::Delete | Action::Forget => return None,
                    Action::Create | Action::Replace => "create",
                    Action::Update => "update",
                    Action::Read => "read",
                };
                (addr, None, action, change.action == Action::Replace)
            }
        };
        Some(NodeEvent { address: addr.to_string(), action, deposed, replace })
    }

    /// Carries out the change of an instance's current object: its
    /// preconditions first, checked again now that more is known, and its
    /// postconditions after, with `self` the new object (which a failure
    /// leaves recorded in the state).
    async fn apply_change(
        &self,
        change: &ResourceChange,
        depose: Option<&str>,
        turn: &Turn,
    ) -> Result<Option<String>, Halt> {
        let resource = match change.action {
            Action::Delete | Action::Forget => None,
            _ => self.blocks.get(&change.addr.resource).map(|i| &self.applier.config.resources[*i]),
        };
        let checked =
            resource.filter(|r| !r.lifecycle.preconditions.is_empty() || !r.lifecycle.postconditions.is_empty());
        if let Some(resource) = checked {
            let failed = plan::preconditions_failed(resource, &self.resource_context(change));
            if !failed.is_empty() {
                turn.arrived();
                return Err(Halt::Failed(failed));
            }
        }
        let id = match change.action {
            Action::NoOp if change.importing.is_some() => self.adopt(change).map(|()| None).map_err(Halt::from),
            Action::NoOp => Ok(None),
            Action::Forget => self.forget(change).map(|()| None).map_err(Halt::from),
            Action::Read => self.read_data(change, turn).await.map(|()| None),
            _ => self.create_or_update(change, depose, turn).await,
        }?;
        if let Some(resource) = checked.filter(|r| !r.lifecycle.postconditions.is_empty()) {
            let object = lock(&self.values).0.instance(&change.addr).cloned().unwrap_or_else(|| change.planned.clone());
            plan::postconditions_hold(resource, &self.resource_context(change), object)?;
        }
        Ok(id)
    }

    fn change(&self, addr: &InstanceAddr) -> &ResourceChange {
        &self.applier.plan.changes[self.current[addr]]
    }

    /// The change of an instance's current object, if the plan has one.
    fn current_change(&self, addr: &InstanceAddr) -> Option<&ResourceChange> {
        self.current.get(addr).map(|i| &self.applier.plan.changes[*i])
    }

    /// The delete of one of an instance's deposed objects, if planned
    /// (the plan's [`Plan::deposed_change`], without searching it).
    fn deposed_change(&self, addr: &InstanceAddr, key: &str) -> Option<&ResourceChange> {
        self.deposed.get(&(addr.clone(), key.to_string())).map(|i| &self.applier.plan.changes[*i])
    }

    /// The contract gate of the change's provider, and the schema of its
    /// resource type (both were found when the change was planned).
    fn gate(&self, change: &ResourceChange) -> Result<(Gate<'_>, &Schema), Vec<Diagnostic>> {
        let gate = self.provider_gate(change);
        let schema = gate.schema_of(&change.addr.resource).map_err(|d| vec![d])?;
        Ok((gate, schema))
    }

    /// The contract gate of the change's provider.
    fn provider_gate(&self, change: &ResourceChange) -> Gate<'_> {
        Gate::new(self.applier.providers[&change.provider].as_ref())
    }

    fn location(change: &ResourceChange) -> Location {
        change.location.clone().unwrap_or_default()
    }

    fn eval_local(&self, name: &str) -> Result<(), Vec<Diagnostic>> {
        let ctx = self.node_context(&crate::graph::Node::Local(name.to_string()));
        let v = self.applier.config.locals[name].value(&ctx)?;
        lock(&self.values).1.insert(name.to_string(), v);
        Ok(())
    }

    /// Opens the instances of the ephemeral resource block `addr` when
    /// something this apply changes needs them; else they stay unknown.
    async fn open_ephemeral(&self, addr: &ResourceAddr) -> Result<(), Vec<Diagnostic>> {
        let resource = &self.applier.config.resources[self.blocks[addr]];
        if !self.ephemeral_needed.contains(addr) || self.applier.interrupt.is_stopped() {
            // What reads them anyway (a local) sees unknown values.
            if let Some(expansion) = self.applier.plan.expansions.get(addr) {
                let (values, _) = &mut *lock(&self.values);
                for key in expansion.instance_keys() {
                    values.set(&InstanceAddr { resource: addr.clone(), key }, Value::unknown());
                }
            }
            return Ok(());
        }
        let Some(provider) = self.applier.providers.get(&resource.provider) else {
            let d = Diagnostic::error(format!("Provider {:?} is not available", resource.provider));
            return Err(vec![d.at(&resource.location)]);
        };
        let ctx = self.node_context(&crate::graph::Node::Resource(addr.clone()));
        let opened = plan::ephemeral::open_resource(&self.ephemeral, resource, provider, &ctx).await?;
        for w in &opened.warnings {
            self.applier.events.diagnostic(w);
        }
        let (values, _) = &mut *lock(&self.values);
        values.declare(addr, &opened.expansion);
        for (instance, value) in opened.values {
            values.set(&instance, value);
        }
        Ok(())
    }

    /// The evaluation context of a local or an output: the values of what
    /// it reads.
    fn node_context(&self, node: &crate::graph::Node) -> EvalContext {
        let graph = &self.applier.graph;
        let (resources, locals) = (graph.resource_dependencies(node), graph.local_dependencies(node));
        self.eval_context(None, Reads { resources: &resources, locals: &locals })
    }

    /// The evaluation context with the values known so far of the resources
    /// and locals an expression `reads`, set up for one instance's
    /// `count.index`/`each`. Copying only what an expression can refer to
    /// keeps a step's cost independent of the size of the configuration.
    fn eval_context(&self, instance: Option<&InstanceAddr>, reads: Reads<'_>) -> EvalContext {
        let (values, all_locals) = &mut *lock(&self.values);
        let (resources, locals) = (values.snapshot_of(reads.resources), plan::locals_of(reads.locals, all_locals));
        let mut ctx = EvalContext {
            variables: self.applier.variables.clone(),
            locals,
            resources,
            phase: config::Phase::Apply,
            ephemeral: self.applier.config.ephemeral.clone(),
            ..EvalContext::new(&self.applier.config.dir)
        };
        if let Some(addr) = instance
            && let Some(expansion) = self.applier.plan.expansions.get(&addr.resource)
        {
            let resources = std::mem::take(&mut ctx.resources);
            ctx = plan::instance_context(&ctx, expansion, addr.key.as_ref());
            ctx.resources = resources;
            ctx.phase = config::Phase::Apply;
        }
        ctx
    }

    /// The evaluation context of the instance a change is of: what its
    /// resource block reads, as known now, and its `count.index`/`each`.
    fn resource_context(&self, change: &ResourceChange) -> EvalContext {
        let locals = self.applier.graph.local_dependencies(&crate::graph::Node::Resource(change.addr.resource.clone()));
        let reads = Reads { resources: &change.dependencies, locals: &locals };
        self.eval_context(Some(&change.addr), reads)
    }

    /// The instance's configuration, evaluated now that its dependencies are done.
    fn config_now(&self, change: &ResourceChange, schema: &Schema) -> Result<Value, Vec<Diagnostic>> {
        let block =
            self.blocks.get(&change.addr.resource).expect("a create, update or read comes from the configuration");
        let resource = &self.applier.config.resources[*block];
        let config = config::decode_body(&resource.body, &schema.block, &self.resource_context(change))?;
        // A replace creates anew: nothing of the old object is kept.
        let prior = if change.action == Action::Update { &change.prior } else { &Value::Null };
        Ok(plan::ignoring_changes(resource, config, prior))
    }

    async fn read_data(&self, change: &ResourceChange, turn: &Turn) -> Result<(), Halt> {
        // A read journals nothing: the journal need not wait for it.
        turn.arrived();
        let (gate, schema) = self.gate(change)?;
        let config = self.config_now(change, schema)?;
        let (state, warnings) = self
            .operation(turn, gate.read_data(schema, &change.addr, &config))
            .await?
            .map_err(|e| e.into_diagnostics(&Self::location(change)))?;
        self.warn(change, warnings);
        lock(&self.values).0.set(&change.addr, state);
        Ok(())
    }

    /// Runs `call`, a provider operation that changes nothing (a re-plan,
    /// a read), once one of the `-parallelism` operation permits is free
    /// (see [`Self::permit`], [`Self::call`]). Cancelled, it is as if it
    /// never started: nothing is pending.
    async fn operation<T>(&self, turn: &Turn, call: impl std::future::Future<Output = T>) -> Result<T, Halt> {
        let permit = self.permit(turn).await?;
        match self.call(permit, call).await {
            Err(Halt::Cancelled) => Err(Halt::NotStarted),
            answer => answer,
        }
    }

    /// Waits for one of the `-parallelism` operation permits; once the run
    /// is interrupted, no more are handed out: the operation never starts.
    async fn permit(&self, turn: &Turn) -> Result<SlotPermit<'_>, Halt> {
        self.slot(&self.operations, turn).await
    }

    /// A permit of `slots`; once the run is interrupted, none. A step that
    /// has to wait for it is not on its way to an intent meanwhile (see
    /// [`Turn`]).
    async fn slot<'s>(&'s self, slots: &'s Slots, turn: &Turn) -> Result<SlotPermit<'s>, Halt> {
        let interrupt = &self.applier.interrupt;
        if interrupt.is_stopped() {
            return Err(Halt::NotStarted);
        }
        if let Some(permit) = slots.try_acquire() {
            return Ok(permit);
        }
        let _stopped = turn.stopped();
        tokio::select! {
            biased;
            () = interrupt.stopped() => Err(Halt::NotStarted),
            permit = slots.acquire(turn.urgency) => Ok(permit),
        }
    }

    /// Waits for one of the permits to journal an intent ahead of its
    /// provider call (see [`INTENTS_PER_OPERATION`]); as [`Self::permit`],
    /// none once the run is interrupted.
    async fn intent_permit(&self, turn: &Turn) -> Result<SlotPermit<'_>, Halt> {
        self.slot(&self.intents, turn).await
    }

    /// Runs the provider call `call` holding `permit`, unless a second
    /// interrupt cancels it (the first lets it finish).
    async fn call<T>(&self, permit: SlotPermit<'_>, call: impl std::future::Future<Output = T>) -> Result<T, Halt> {
        let answer = tokio::select! {
            biased;
            () = self.applier.interrupt.aborted() => Err(Halt::Cancelled),
            answer = call => Ok(answer),
        };
        drop(permit);
        answer
    }

    /// Shows a provider's warnings about a change as they happen.
    fn warn(&self, change: &ResourceChange, warnings: Vec<Diagnostic>) {
        let location = Self::location(change);
        let located = warnings.into_iter().map(|w| crate::contract::located(w, &change.addr, &location)).collect();
        for w in self.at_attributes(&change.addr, located) {
            self.applier.events.diagnostic(&w);
        }
    }

    /// `diags` about the instance `addr`, each one about an attribute at
    /// the place in its block where that attribute is written (see
    /// [`plan::at_attributes_in`]); as they are when its block is gone.
    fn at_attributes(&self, addr: &InstanceAddr, diags: Vec<Diagnostic>) -> Vec<Diagnostic> {
        match self.blocks.get(&addr.resource) {
            Some(i) => plan::at_attributes_in(&self.applier.config.resources[*i].body, diags),
            None => diags,
        }
    }

    /// Create, update, or the create half of a replace. With `depose`, a
    /// create_before_destroy replace: the current object becomes deposed
    /// under that key first, and comes back if no new object was made.
    /// Returns the new object's id, if it has one.
    async fn create_or_update(
        &self,
        change: &ResourceChange,
        depose: Option<&str>,
        turn: &Turn,
    ) -> Result<Option<String>, Halt> {
        if let Some(key) = depose {
            self.depose(&change.addr, key)?;
        }
        let key = self.idempotency_key(change);
        let result = self.create_or_update_object(change, &key, turn).await;
        if let Err(Halt::Cancelled) = result {
            // The call may have done anything: its intent stays pending,
            // and the state as it was, for the next run to ask the provider.
            return result;
        }
        if let (Some(deposed), Err(_)) = (depose, &result) {
            self.restore_deposed(&change.addr, deposed);
        }
        // Only now, with the state as the failure left it, is the operation
        // over (a success ended it when it recorded the new object).
        let ended = self.end_operation(&change.addr, Self::operation_name(change), &key);
        let id = result?;
        ended?;
        Ok(id)
    }

    /// Re-plans, journals the intent, calls the provider with the
    /// idempotency key `key` and records the answer.
    async fn create_or_update_object(
        &self,
        change: &ResourceChange,
        key: &str,
        turn: &Turn,
    ) -> Result<Option<String>, Halt> {
        let (gate, schema) = self.gate(change)?;
        let location = Self::location(change);
        let creating = change.action != Action::Update;
        let config = self.config_now(change, schema)?;
        let (prior, prior_private) = match creating {
            true => (Value::Null, &[][..]),
            false => (change.prior.clone(), &change.prior_private[..]),
        };
        let replanned = self
            .operation(turn, gate.replan(schema, &change.addr, &change.planned, &prior, &config, prior_private))
            .await?
            .map_err(|e| e.into_diagnostics(&location))?;
        self.warn(change, replanned.diagnostics);
        // The secrets the provider is sent, known now even where the plan
        // had them unknown (a password made earlier in this apply): a copy
        // of one in its answer is found and marked by `record`.
        let secrets = config::marks::secrets(&config, &change.sensitive);
        let request = ApplyRequest {
            type_name: change.addr.resource.type_name.clone(),
            prior_state: prior,
            planned_state: replanned.planned_state,
            config,
            planned_private: replanned.planned_private,
            idempotency_key: key.to_string(),
        };
        let ahead = self.intent_permit(turn).await?;
        fault::point("before-intent", &change.addr);
        self.begin_operation(&change.addr, None, if creating { "create" } else { "update" }, key, turn).await?;
        fault::point("after-intent", &change.addr);
        // The operation permit only now: a step waiting for the disk holds
        // none, so that one flush serves the intents of many steps.
        let permit = self.permit(turn).await?;
        drop(ahead);
        let answer = self.call(permit, gate.apply(schema, &change.addr, request)).await?;
        fault::point("after-call", &change.addr);
        match answer {
            Ok(response) => {
                self.warn(change, response.diagnostics.clone());
                self.record(change, schema, &response, InstanceStatus::Ready, key, &secrets)?;
                fault::point("after-record", &change.addr);
                lock(&self.values).0.set(&change.addr, response.new_state.clone());
                {
                    let mut report = lock(&self.report);
                    if creating {
                        report.added += 1
                    } else {
                        report.changed += 1
                    }
                    report.imported += usize::from(change.importing.is_some());
                }
                Ok(response.new_state.get_attr("id").as_str().map(str::to_string))
            }
            Err(failed) => {
                // An object the answer still describes is kept, tainted,
                // so that it is not lost (the errors say so).
                if let Some(partial) = &failed.partial {
                    self.record(change, schema, partial, InstanceStatus::Tainted, key, &secrets)?;
                    fault::point("after-record", &change.addr);
                }
                Err(failed.into_diagnostics(&location).into())
            }
        }
    }

    /// Moves the current object of `addr` into its deposed objects under
    /// `key`, journaled before the replacement's intent (and so durable
    /// before the replacement is created).
    fn depose(&self, addr: &InstanceAddr, key: &str) -> Result<(), Vec<Diagnostic>> {
        self.change_state(addr, None, |state| {
            let Some(inst) = state.get_mut(addr).filter(|i| !i.attributes.is_null()) else { return false };
            let attributes = std::mem::take(&mut inst.attributes);
            let private = std::mem::take(&mut inst.private);
            inst.deposed.push(DeposedObject { key: key.to_string(), attributes, private });
            true
        })
    }

    /// Undoes [`Self::depose`] when the replacement made no object.
    fn restore_deposed(&self, addr: &InstanceAddr, key: &str) {
        let restored = self.change_state(addr, None, |state| {
            let Some(inst) = state.get_mut(addr).filter(|i| i.attributes.is_null()) else { return false };
            let Some(pos) = inst.deposed.iter().position(|d| d.key == key) else { return false };
            let old = inst.deposed.remove(pos);
            inst.attributes = old.attributes;
            inst.private = old.private;
            true
        });
        if let Err(e) = restored {
            lock(&self.report).errors.extend(e);
        }
    }

    /// Destroys the current object: a delete, or the first half of a replace.
    /// When the delete fails, the object stays in the state marked as being
    /// destroyed, and the next apply deletes it again.
    async fn destroy(&self, change: &ResourceChange, turn: &Turn) -> Result<(), Halt> {
        let key = self.delete_key(change, None, &change.prior);
        let deleted = self.delete_object(change, None, &change.prior, &change.prior_private, &key, turn).await?;
        self.change_state(&change.addr, Some(&key), |state| match (&deleted, state.get_mut(&change.addr)) {
            (Ok(()), _) => {
                state.forget_current(&change.addr);
                true
            }
            (Err(_), Some(inst)) if !inst.attributes.is_null() && inst.status != InstanceStatus::Destroying => {
                inst.status = InstanceStatus::Destroying;
                true
            }
            (Err(_), _) => false,
        })?;
        fault::point("after-record", &change.addr);
        deleted?;
        lock(&self.report).destroyed += 1;
        Ok(())
    }

    /// Destroys a deposed object: the old object of a create_before_destroy
    /// replace in this run, or one left by an earlier run.
    async fn destroy_deposed(&self, addr: &InstanceAddr, key: &str, turn: &Turn) -> Result<(), Halt> {
        let (change, prior, private) = match self.deposed_change(addr, key) {
            Some(c) => (c, c.prior.clone(), c.prior_private.clone()),
            None => {
                let c = self.change(addr);
                (c, c.prior.clone(), c.prior_private.clone())
            }
        };
        let delete_key = self.delete_key(change, Some(key), &prior);
        let deleted = self.delete_object(change, Some(key), &prior, &private, &delete_key, turn).await?;
        // A deposed object whose delete failed stays as it is, to be
        // deleted by a later apply.
        self.change_state(addr, Some(&delete_key), |state| {
            if deleted.is_ok() {
                state.forget_deposed(addr, key);
            }
            deleted.is_ok()
        })?;
        fault::point("after-record", addr);
        deleted?;
        lock(&self.report).destroyed += 1;
        Ok(())
    }

    /// Journals the intent, asks the provider to delete an object with the
    /// idempotency key `key`, and checks the answer. The outer error: the
    /// delete never started, or was cancelled (nothing is to be recorded).
    async fn delete_object(
        &self,
        change: &ResourceChange,
        deposed: Option<&str>,
        prior: &Value,
        private: &[u8],
        key: &str,
        turn: &Turn,
    ) -> Result<Result<(), Vec<Diagnostic>>, Halt> {
        let gate = self.provider_gate(change);
        let request = ApplyRequest {
            type_name: change.addr.resource.type_name.clone(),
            prior_state: prior.clone(),
            planned_state: Value::Null,
            config: Value::Null,
            planned_private: private.to_vec(),
            idempotency_key: key.to_string(),
        };
        let ahead = self.intent_permit(turn).await?;
        fault::point("before-intent", &change.addr);
        if let Err(e) = self.begin_operation(&change.addr, deposed, "delete", key, turn).await {
            return Ok(Err(e));
        }
        fault::point("after-intent", &change.addr);
        // The operation permit only now (see `create_or_update_object`);
        // refused one, the delete never starts, and its intent ends here.
        let permit = match self.permit(turn).await {
            Ok(permit) => permit,
            Err(halt) => {
                let _ = self.end_operation(&change.addr, "delete", key);
                return Err(halt);
            }
        };
        drop(ahead);
        let answer = self.call(permit, gate.delete(&change.addr, request)).await?;
        fault::point("after-call", &change.addr);
        Ok(answer.map(|warnings| self.warn(change, warnings)).map_err(|e| e.into_diagnostics(&Self::location(change))))
    }

    /// Writes the object a provider answered into the state and journals
    /// it, ending the operation with idempotency key `key`. `secrets` are
    /// the sensitive values the provider was sent: copies of them in the
    /// answer are marked sensitive.
    fn record(
        &self,
        change: &ResourceChange,
        schema: &Schema,
        response: &ApplyResponse,
        status: InstanceStatus,
        key: &str,
        secrets: &[String],
    ) -> Result<(), Vec<Diagnostic>> {
        let mut inst = instance_state(change, schema, &response.new_state, &response.private, status);
        // The provider's marks, and the plan's: those of the configuration
        // the values came from, which the provider may not repeat.
        let mut marks = config::conform(&change.sensitive, &response.new_state);
        marks.extend(response.sensitive.iter().cloned());
        marks.extend(config::marks::echoes(&response.new_state, secrets));
        marks.sort();
        marks.dedup();
        inst.sensitive_attributes = marks;
        self.change_state(&change.addr, Some(key), move |state| {
            inst.deposed = state.get(&change.addr).map(|i| i.deposed.clone()).unwrap_or_default();
            state.set(inst);
            true
        })
    }

    /// Records an object an `import` block adopted as it was read at plan
    /// time (an import with changes records it through its update).
    fn adopt(&self, change: &ResourceChange) -> Result<(), Vec<Diagnostic>> {
        let (_, schema) = self.gate(change)?;
        let inst = instance_state(change, schema, &change.prior, &change.prior_private, InstanceStatus::Ready);
        self.change_state(&change.addr, None, move |state| {
            state.set(inst);
            true
        })?;
        lock(&self.report).imported += 1;
        Ok(())
    }

    /// Drops an object from the state without touching it (a `removed`
    /// block with `destroy = false`).
    fn forget(&self, change: &ResourceChange) -> Result<(), Vec<Diagnostic>> {
        self.change_state(&change.addr, None, |state| {
            state.forget_current(&change.addr);
            true
        })?;
        lock(&self.report).forgotten += 1;
        Ok(())
    }

    /// Changes the instance `addr` in the state with `f` (which says
    /// whether it changed anything) and queues the change in the journal;
    /// with `ends`, the change ends that intent.
    ///
    /// It does not wait for the disk. The journal is one sequence, written
    /// in order, and stops for good at its first failed write, so a record
    /// is durable once any record queued after it is. Every provider call
    /// waits for its own intent, queued after every change it could have
    /// read; a crash before this change is durable leaves its intent
    /// pending, which the next run resolves by asking the provider, just as
    /// a crash a moment before the change was made; and the end of the run
    /// writes the whole state. So a step's dependents start without waiting
    /// a second flush, and an apply waits for one flush a step, not two.
    fn change_state(
        &self,
        addr: &InstanceAddr,
        ends: Option<&str>,
        f: impl FnOnce(&mut State) -> bool,
    ) -> Result<(), Vec<Diagnostic>> {
        self.queue(|state, journal| {
            let record = if f(state) {
                if ends.is_some() {
                    // The operation changed its instance: nothing is left
                    // to retry.
                    state.retries.retain(|r| r.addr != *addr);
                }
                Record::of_instance(state, addr, ends)
            } else {
                match ends {
                    Some(key) => Record::End { key: key.to_string() },
                    None => return Ok(None),
                }
            };
            journal.write(&record).map(Some)
        })
    }

    /// Journals that a provider is about to be asked for an operation
    /// (`create`, `update`, `delete`) on `addr` (or its deposed object),
    /// and returns once that, and so every change queued before it, is on
    /// disk. The wait holds no thread: other steps run meanwhile, and their
    /// intents join the same flush.
    async fn begin_operation(
        &self,
        addr: &InstanceAddr,
        deposed: Option<&str>,
        operation: &str,
        key: &str,
        turn: &Turn,
    ) -> Result<(), Vec<Diagnostic>> {
        let intent = Record::Intent(PendingOperation::now(addr.clone(), deposed, operation, key));
        let written = self.journal(|_, journal| journal.write(&intent).map(Some));
        turn.arrived();
        match written? {
            Some(unsynced) => unsynced.durable().await.map_err(|e| vec![write_failed(&e)]),
            None => Ok(()),
        }
    }

    /// Queues the end of `operation` of `addr`, unless a change ended it
    /// already. One that ended without a change made nothing: the next
    /// attempt is its retry (`State::keep_for_retry`).
    fn end_operation(&self, addr: &InstanceAddr, operation: &str, key: &str) -> Result<(), Vec<Diagnostic>> {
        self.queue(|state, journal| {
            let ended = journal.end(key)?;
            if ended.is_some() {
                state.keep_for_retry(PendingOperation::now(addr.clone(), None, operation, key));
            }
            Ok(ended)
        })
    }

    /// Lets `write` change the state and queue its record (if any) under
    /// the ledger's lock, so that the journal has changes in the order they
    /// were made. Returns once the record is queued, not durable: see
    /// [`Self::change_state`] for why that is enough, and
    /// [`Self::begin_operation`] for the one wait there is.
    fn journal(
        &self,
        write: impl FnOnce(&mut State, &mut dyn StateJournal) -> Result<Option<Unsynced>, StateError>,
    ) -> Result<Option<Unsynced>, Vec<Diagnostic>> {
        let mut ledger = lock(&self.ledger);
        let Ledger { state, journal } = &mut *ledger;
        write(state, journal.as_mut()).map_err(|e| vec![write_failed(&e)])
    }

    /// [`Self::journal`] for a record no step waits for: it is durable
    /// with the next intent's flush, or with the final state (see
    /// [`Self::change_state`]).
    fn queue(
        &self,
        write: impl FnOnce(&mut State, &mut dyn StateJournal) -> Result<Option<Unsynced>, StateError>,
    ) -> Result<(), Vec<Diagnostic>> {
        self.journal(write).map(drop)
    }

    /// `update` for an update, else `create` (alone or half of a replace).
    fn operation_name(change: &ResourceChange) -> &'static str {
        if change.action == Action::Update { "update" } else { "create" }
    }

    /// The idempotency key of the create or update of a change: the key of
    /// the attempt it retries, if an earlier run's made nothing, else one
    /// of its own.
    fn idempotency_key(&self, change: &ResourceChange) -> String {
        let op = Self::operation_name(change);
        match self.retries.get(&(change.addr.clone(), op.to_string())) {
            Some(key) => key.clone(),
            None => change_key(&self.lineage, self.serial, &change.addr, op, &change.prior, &change.planned),
        }
    }

    /// The idempotency key of deleting `prior`, an object of a change.
    fn delete_key(&self, change: &ResourceChange, deposed: Option<&str>, prior: &Value) -> String {
        delete_key(&self.lineage, &change.addr, deposed, prior)
    }

    /// Checks again the variable validations that refer to local values,
    /// resources or data sources (see `plan::deferred_validations`), now
    /// that the apply made their values known: a failure is an error of
    /// the apply, as in Terraform.
    fn deferred_validations(&self) {
        let applier = &self.applier;
        let deferred = |v: &crate::config::Variable| v.validations.iter().any(|r| r.refers_beyond_variables());
        let any_deferred =
            applier.config.variables.values().any(deferred) || !applier.config.module_validations.is_empty();
        if applier.plan.destroy || !any_deferred {
            return;
        }
        let (mut values, locals) = {
            let known = lock(&self.values);
            (known.0.clone(), known.1.clone())
        };
        let failed = plan::deferred_validations(&applier.config, &applier.variables, &locals, &mut values);
        for d in &failed {
            applier.events.diagnostic(d);
        }
        lock(&self.report).errors.extend(failed);
    }

    /// Checks the `check` blocks with the values the apply left, showing
    /// what they find as warnings (Terraform checks them after apply too).
    async fn check_blocks(&self) {
        let applier = &self.applier;
        if applier.plan.destroy || applier.config.checks.is_empty() {
            return;
        }
        let (mut values, locals) = {
            let known = lock(&self.values);
            (known.0.clone(), known.1.clone())
        };
        let warnings = plan::check_blocks(
            &applier.config,
            &applier.providers,
            &applier.variables,
            &locals,
            &mut values,
            plan::CheckPhase::Apply,
            &|event| applier.events.emit(event),
        )
        .await;
        for w in &warnings {
            applier.events.diagnostic(w);
        }
    }

    /// Evaluates outputs with the final values and records them.
    fn finish_outputs(&self) {
        let config = &self.applier.config;
        let mut outputs = BTreeMap::new();
        if !self.applier.plan.destroy {
            for (name, output) in &config.outputs {
                // With the values this output reads and no others: a
                // context of every resource took a third of a second to
                // build at 100,000, even for a configuration without outputs.
                let ctx = self.node_context(&crate::graph::Node::Output(name.clone()));
                let failed =
                    config::check_conditions(&output.preconditions, ConditionKind::OutputPrecondition, &ctx, &[]);
                if !failed.is_empty() {
                    for d in &failed {
                        self.applier.events.diagnostic(d);
                    }
                    lock(&self.report).errors.extend(failed);
                    continue;
                }
                if let Ok(v) = config::eval(&output.expr, &ctx)
                    && v.is_wholly_known()
                {
                    outputs.insert(name.clone(), (v, output.sensitive));
                }
            }
        }
        let written = self.queue(|state, journal| {
            let before = state.outputs.clone();
            state.outputs.retain(|name, _| !self.applier.plan.destroy && config.outputs.contains_key(name));
            for (name, (v, sensitive)) in &outputs {
                state.outputs.insert(name.clone(), OutputState::new(v, *sensitive));
            }
            if state.outputs == before {
                Ok(None)
            } else {
                journal.write(&Record::Outputs(state.outputs.clone())).map(Some)
            }
        });
        if let Err(e) = written {
            lock(&self.report).errors.extend(e);
        }
        lock(&self.report).outputs = outputs;
    }
}

/// The state entry of `change`'s object, `object` with `private`.
fn instance_state(
    change: &ResourceChange,
    schema: &Schema,
    object: &Value,
    private: &[u8],
    status: InstanceStatus,
) -> InstanceState {
    let kept = crate::contract::null_write_only(&schema.block, object);
    InstanceState {
        addr: change.addr.clone(),
        provider: change.provider.clone(),
        schema_version: schema.version,
        attributes: Attributes::new(&kept, &schema.block.implied_type()),
        private: private.to_vec(),
        // An ephemeral resource is no object to destroy after this one.
        dependencies: change.dependencies.iter().filter(|d| d.mode != crate::addr::Mode::Ephemeral).cloned().collect(),
        status,
        create_before_destroy: change.create_before_destroy,
        deposed: Vec::new(),
        sensitive_attributes: change.sensitive.clone(),
    }
}

/// The ephemeral resources the plan's creates, updates and reads refer to
/// (their dependencies list those read through other ephemeral resources
/// too): the ones an apply opens.
fn ephemeral_needed(plan: &Plan) -> BTreeSet<ResourceAddr> {
    let applied = plan.changes.iter().filter(|c| {
        c.deposed.is_none() && matches!(c.action, Action::Create | Action::Update | Action::Replace | Action::Read)
    });
    applied.flat_map(|c| c.dependencies.iter().filter(|d| d.mode == crate::addr::Mode::Ephemeral).cloned()).collect()
}

/// The idempotency key of a create or update: one planned change of one
/// instance — its operation, the object it replaces or updates (`prior`,
/// null for a first create), the planned new object, and the serial of
/// the state the plan was made from — so that every other change gets
/// another key: the create of a replacement is not the create that made
/// the object it replaces, and the same create after a destroy, or an
/// update back and forth, comes from another serial. A retry of a change
/// that made nothing is sent the first attempt's key, which the state
/// keeps for it (`State::retries`), and so is the retry of an interrupted
/// call, whose key its intent in the journal keeps.
pub fn change_key(lineage: &str, serial: u64, addr: &InstanceAddr, op: &str, prior: &Value, planned: &Value) -> String {
    key_of(&[
        lineage,
        &serial.to_string(),
        &addr.to_string(),
        op,
        &value::to_json_text(prior),
        &value::to_json_text(planned),
    ])
}

/// The idempotency key of deleting `prior`, the current object of `addr`
/// or its deposed object `deposed`: the object identifies the change, so
/// every retry of its delete is sent the same key.
pub fn delete_key(lineage: &str, addr: &InstanceAddr, deposed: Option<&str>, prior: &Value) -> String {
    key_of(&[lineage, &addr.to_string(), deposed.unwrap_or(""), "delete", &value::to_json_text(prior)])
}

/// 20 lowercase hex digits: 80 bits of a SHA-256 of `parts`, unique among
/// far more objects than one provider manages (a journal writes one per
/// provider call, so each digit counts).
fn key_of(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for part in parts {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    hex::encode(&h.finalize()[..10])
}

/// The data behind `mutex`: a step that panicked while holding it fails
/// alone (the walk counts a panic as that step's failure), so the data is
/// still what the other steps left.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn write_failed(e: &StateError) -> Diagnostic {
    Diagnostic::error(format!("Failed to write the state: {e}"))
}

/// The identifying fields of a node's events.
struct NodeEvent {
    address: String,
    action: &'static str,
    deposed: Option<String>,
    replace: bool,
}

impl NodeEvent {
    fn start(&self) -> Event {
        Event::NodeStart {
            address: self.address.clone(),
            action: self.action.to_string(),
            deposed: self.deposed.is_some(),
            deposed_key: self.deposed.clone(),
            replace: self.replace,
        }
    }

    fn finish(self, outcome: Outcome, duration_ms: u64, id: Option<String>) -> Event {
        Event::NodeFinish {
            address: self.address,
            action: self.action.to_string(),
            deposed: self.deposed.is_some(),
            deposed_key: self.deposed,
            replace: self.replace,
            outcome,
            duration_ms,
            id,
        }
    }
}

#[cfg(test)]
mod tests;
