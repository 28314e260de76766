//! Applying a plan: the executor walks the apply graph and, for each step,
//! re-plans with the values now known, records its intent in the state's
//! journal, calls the provider, checks the new state against the plan and
//! journals the change before anything after it starts. The whole state is
//! written once, at the end.

pub mod events;
pub mod executor;
pub mod graph;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use sha2::{Digest, Sha256};

use crate::addr::{InstanceAddr, Mode, ResourceAddr};
use crate::config::{self, Config, EvalContext};
use crate::contract;
use crate::diag::{Diagnostic, Location};
use crate::graph::DependencyGraph;
use crate::plan::{self, Action, CheckedCallError, Plan, Providers, ResourceChange, ResourceValues};
use crate::provider::{ApplyRequest, Provider};
use crate::schema::Schema;
use crate::state::{
    DeposedObject, InstanceState, InstanceStatus, Journal, LocalBackend, OutputState, PendingOperation, Record, State,
    StateError, Unsynced,
};
use crate::value::{self, Value};

pub use events::{Event, EventSink};
pub use executor::Outcome;
pub use graph::{ApplyGraph, Step};

/// What an apply did.
#[derive(Debug, Default)]
pub struct ApplyReport {
    /// Objects created (a replace counts once here and once in `destroyed`).
    pub added: usize,
    /// Objects updated in place.
    pub changed: usize,
    /// Objects destroyed.
    pub destroyed: usize,
    /// Every error, in the order they happened.
    pub errors: Vec<Diagnostic>,
    /// Outputs after the apply, for display.
    pub outputs: BTreeMap<String, (Value, bool)>,
}

/// Everything an apply needs, owned so that steps can run on other threads.
pub struct Applier {
    /// The configuration.
    pub config: Config,
    /// Its dependency graph.
    pub graph: DependencyGraph,
    /// Configured providers.
    pub providers: Providers,
    /// The plan to carry out.
    pub plan: Plan,
    /// Resolved variables.
    pub variables: BTreeMap<String, Value>,
    /// Most steps running at once.
    pub parallelism: usize,
    /// Where progress, diagnostics and node events go.
    pub events: Arc<dyn EventSink>,
}

/// The state as the steps change it, and the journal that persists every
/// change as it is made.
struct Ledger {
    state: State,
    journal: Journal,
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
    /// Where each instance's current-object change is in the plan.
    current: BTreeMap<InstanceAddr, usize>,
}

impl Applier {
    /// Carries out the plan on `state`, persisting every change in the
    /// journal of `backend` as it is made and the whole state at the end.
    /// Returns what happened (errors are in the report) and the new state.
    ///
    /// Must run on a multi-threaded tokio runtime: steps do their blocking
    /// work in place ([`tokio::task::block_in_place`]).
    pub async fn apply(self, state: State, backend: LocalBackend) -> (ApplyReport, State) {
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
        let (mut state, mut backend) = (state, backend);
        let fail = |d: Diagnostic, state: State| {
            self.events.diagnostic(&d);
            (ApplyReport { errors: vec![d], ..ApplyReport::default() }, state)
        };
        // A state never written yet is written before any provider call, so
        // that its lineage — part of every idempotency key — survives a
        // first apply that records nothing, and a retry sends the same keys.
        // Operations left pending by a crash were shown with the plan; this
        // apply settles them.
        if state.serial == 0 || !state.pending.is_empty() {
            state.pending.clear();
            if let Err(e) = backend.write(&mut state) {
                return fail(write_failed(&e), state);
            }
        }
        let journal = match backend.start_journal(&state) {
            Ok(journal) => journal,
            Err(e) => return fail(write_failed(&e), state),
        };
        let shared = Arc::new(Shared {
            lineage: state.lineage.clone(),
            current: self
                .plan
                .changes
                .iter()
                .enumerate()
                .filter(|(_, c)| c.deposed.is_none())
                .map(|(i, c)| (c.addr.clone(), i))
                .collect(),
            applier: self,
            values: Mutex::new((values, BTreeMap::new())),
            ledger: Mutex::new(Ledger { state, journal }),
            report: Mutex::new(ApplyReport::default()),
        });
        let limits = executor::Limits {
            parallelism: shared.applier.parallelism,
            per_group: shared
                .applier
                .config
                .providers
                .iter()
                .filter_map(|p| {
                    let limit = p.sandbox.max_concurrency?;
                    Some((p.name.clone(), usize::try_from(limit).unwrap_or(usize::MAX)))
                })
                .collect(),
        };
        let worker = Arc::clone(&shared);
        let group = |step: &Step| {
            let addr = step.addr()?;
            let plan = &shared.applier.plan;
            let change = match shared.current.get(addr) {
                Some(i) => plan.changes.get(*i),
                None => plan.changes.iter().find(|c| &c.addr == addr),
            };
            change.map(|c| c.provider.clone())
        };
        let outcomes = executor::walk_limited(&apply_graph, &limits, group, move |step| {
            let worker = Arc::clone(&worker);
            async move { worker.run(step).await }
        })
        .await;
        for (n, outcome) in outcomes {
            if outcome == Outcome::Skipped
                && let Some(node) = shared.node_event(&apply_graph[n])
            {
                shared.applier.events.emit(node.finish(Outcome::Skipped, 0, None));
            }
        }
        shared.finish_outputs();
        let shared = Arc::into_inner(shared).expect("the walk is over, so no step holds the shared data");
        let Ledger { mut state, journal } = shared.ledger.into_inner().unwrap_or_else(|e| e.into_inner());
        let mut report = shared.report.into_inner().unwrap_or_else(|e| e.into_inner());
        // Every change is in the journal already; this write only folds
        // them into the state file. If it fails, the journal stays, and
        // the next command recovers the state from it.
        if let Err(e) = backend.finish_journal(journal, &mut state) {
            let d = write_failed(&e);
            shared.applier.events.diagnostic(&d);
            report.errors.push(d);
        }
        (report, state)
    }
}

impl Shared {
    /// Runs one step; reports it and records errors in the report.
    /// Returns success. The provider's apply is awaited; the rest (
    /// evaluation, contract checks, state writes) runs in place as blocking
    /// work.
    async fn run(&self, step: Step) -> bool {
        let step = &step;
        let node = self.node_event(step);
        if let Some(node) = &node {
            self.applier.events.emit(node.start());
        }
        let started = Instant::now();
        let result = match step {
            Step::Local(name) => blocking(|| self.eval_local(name)).map(|()| None),
            Step::Destroy(addr, None) => self.destroy(self.change(addr)).await.map(|()| None),
            Step::Destroy(addr, Some(key)) => self.destroy_deposed(addr, key).await.map(|()| None),
            Step::Apply(addr, depose) => {
                let change = self.change(addr);
                match change.action {
                    Action::NoOp => Ok(None),
                    Action::Read => blocking(|| self.read_data(change)).map(|()| None),
                    _ => self.create_or_update(change, depose.as_deref()).await,
                }
            }
        };
        let ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        match result {
            Ok(id) => {
                if let Some(node) = node {
                    self.applier.events.emit(node.finish(Outcome::Done, ms, id));
                }
                true
            }
            Err(diags) => {
                if let Some(node) = node {
                    self.applier.events.emit(node.finish(Outcome::Failed, ms, None));
                }
                for d in &diags {
                    self.applier.events.diagnostic(d);
                }
                self.report.lock().unwrap().errors.extend(diags);
                false
            }
        }
    }

    /// What the node events of a step say, for steps that operate on an
    /// object (not locals, not no-ops).
    fn node_event(&self, step: &Step) -> Option<NodeEvent> {
        let (addr, deposed, action, replace) = match step {
            Step::Local(_) => return None,
            Step::Destroy(addr, key) => {
                let replace = key.as_ref().is_some_and(|k| self.applier.plan.deposed_change(addr, k).is_none())
                    || (key.is_none() && self.change(addr).action == Action::Replace);
                (addr, key.clone(), "delete", replace)
            }
            Step::Apply(addr, _) => {
                let change = self.change(addr);
                let action = match change.action {
                    Action::NoOp | Action::Delete => return None,
                    Action::Create | Action::Replace => "create",
                    Action::Update => "update",
                    Action::Read => "read",
                };
                (addr, None, action, change.action == Action::Replace)
            }
        };
        Some(NodeEvent { address: addr.to_string(), action, deposed, replace })
    }

    fn change(&self, addr: &InstanceAddr) -> &ResourceChange {
        &self.applier.plan.changes[self.current[addr]]
    }

    fn provider(&self, change: &ResourceChange) -> &dyn Provider {
        self.applier.providers[&change.provider].as_ref()
    }

    fn schema<'a>(&self, provider: &'a dyn Provider, addr: &InstanceAddr) -> &'a Schema {
        let schemas = match addr.resource.mode {
            Mode::Managed => &provider.schema().resources,
            Mode::Data => &provider.schema().data_sources,
        };
        &schemas[&addr.resource.type_name]
    }

    fn location(change: &ResourceChange) -> Location {
        change.location.clone().unwrap_or_default()
    }

    fn eval_local(&self, name: &str) -> Result<(), Vec<Diagnostic>> {
        let needs = self.applier.graph.resource_dependencies(&crate::graph::Node::Local(name.to_string()));
        let ctx = self.eval_context(None, Some(&needs));
        let v = config::eval(&self.applier.config.locals[name].expr, &ctx)?;
        self.values.lock().unwrap().1.insert(name.to_string(), v);
        Ok(())
    }

    /// The evaluation context with the values known so far of the resources
    /// in `needs` (all of them for `None`), set up for one instance's
    /// `count.index`/`each`. Copying only what an expression can refer to
    /// keeps a step's cost independent of the size of the configuration.
    fn eval_context(&self, instance: Option<&InstanceAddr>, needs: Option<&[ResourceAddr]>) -> EvalContext {
        let (values, locals) = &*self.values.lock().unwrap();
        let resources = match needs {
            None => values.snapshot(),
            Some(needs) => values.snapshot_of(needs),
        };
        let mut ctx = EvalContext {
            variables: self.applier.variables.clone(),
            locals: locals.clone(),
            resources,
            ..EvalContext::new(&self.applier.config.dir)
        };
        if let Some(addr) = instance
            && let Some(expansion) = self.applier.plan.expansions.get(&addr.resource)
        {
            let resources = std::mem::take(&mut ctx.resources);
            ctx = plan::instance_context(&ctx, expansion, addr.key.as_ref());
            ctx.resources = resources;
        }
        ctx
    }

    /// The instance's configuration, evaluated now that its dependencies are done.
    fn config_now(&self, change: &ResourceChange, schema: &Schema) -> Result<Value, Vec<Diagnostic>> {
        let resource = self
            .applier
            .config
            .resources
            .iter()
            .find(|r| r.addr == change.addr.resource)
            .expect("a create, update or read comes from the configuration");
        let mut config = config::decode_body(
            &resource.body,
            &schema.block,
            &self.eval_context(Some(&change.addr), Some(&change.dependencies)),
        )?;
        if !change.prior.is_null() && change.action == Action::Update {
            for path in &resource.lifecycle.ignore_changes {
                config = plan::with_value_at(&config, path.steps(), change.prior.at(path));
            }
        }
        Ok(config)
    }

    fn read_data(&self, change: &ResourceChange) -> Result<(), Vec<Diagnostic>> {
        let provider = self.provider(change);
        let schema = self.schema(provider, &change.addr);
        let config = self.config_now(change, schema)?;
        let state = plan::read_data_checked(provider, schema, &change.addr, &config)
            .map_err(|e| e.into_diagnostics(&Self::location(change)))?;
        self.values.lock().unwrap().0.set(&change.addr, state);
        Ok(())
    }

    /// Create, update, or the create half of a replace. With `depose`, a
    /// create_before_destroy replace: the current object becomes deposed
    /// under that key first, and comes back if no new object was made.
    /// Returns the new object's id, if it has one.
    async fn create_or_update(
        &self,
        change: &ResourceChange,
        depose: Option<&str>,
    ) -> Result<Option<String>, Vec<Diagnostic>> {
        if let Some(key) = depose {
            blocking(|| self.depose(&change.addr, key))?;
        }
        let key = self.idempotency_key(change);
        let result = self.create_or_update_object(change, &key).await;
        if let (Some(deposed), Err(_)) = (depose, &result) {
            blocking(|| self.restore_deposed(&change.addr, deposed));
        }
        // Only now, with the state as the failure left it, is the operation
        // over (a success ended it when it recorded the new object).
        let ended = blocking(|| self.end_operation(&key));
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
    ) -> Result<Option<String>, Vec<Diagnostic>> {
        let provider = self.provider(change);
        let schema = self.schema(provider, &change.addr);
        let location = Self::location(change);
        let creating = change.action != Action::Update;
        let (request, planned) = blocking(|| {
            let config = self.config_now(change, schema)?;
            let replanned =
                plan::replan_and_check(provider, schema, change, &config).map_err(|e| e.into_diagnostics(&location))?;
            let prior = if creating { Value::Null } else { change.prior.clone() };
            let request = ApplyRequest {
                type_name: change.addr.resource.type_name.clone(),
                prior_state: prior,
                planned_state: replanned.planned_state.clone(),
                config,
                planned_private: replanned.planned_private,
                idempotency_key: key.to_string(),
            };
            self.begin_operation(&change.addr, None, if creating { "create" } else { "update" }, key)?;
            Ok::<_, Vec<Diagnostic>>((request, replanned.planned_state))
        })?;
        let response = provider
            .apply_resource_async(request)
            .await
            .map_err(|e| CheckedCallError::Call(change.addr.clone(), Box::new(e)).into_diagnostics(&location))?;
        blocking(|| self.finish_apply(change, schema, creating, &planned, response, key))
    }

    /// Checks a create's or update's answer and records the new object.
    fn finish_apply(
        &self,
        change: &ResourceChange,
        schema: &Schema,
        creating: bool,
        planned: &Value,
        response: crate::provider::ApplyResponse,
        key: &str,
    ) -> Result<Option<String>, Vec<Diagnostic>> {
        let provider = self.provider(change);
        let location = Self::location(change);
        let violations = contract::check_compatible(&schema.block, planned, &response.new_state, true);
        let what = "an inconsistent result after apply";
        if response.diagnostics.iter().any(Diagnostic::is_error) {
            // A create that failed part-way but returned an object of the
            // right shape is recorded as tainted, so that the next plan
            // replaces it; anything else from a failed answer is dropped.
            let recordable =
                response.new_state.is_wholly_known() && schema.block.implied_type().check(&response.new_state).is_ok();
            if creating && !response.new_state.is_null() && recordable {
                self.record(change, schema, &response, InstanceStatus::Tainted, key)?;
            }
            let mut errors =
                CheckedCallError::Reported(change.addr.clone(), response.diagnostics).into_diagnostics(&location);
            // Unknowns and wrong types are the provider's bug even in a
            // failed answer, so say so in the host's words too. (A changed
            // value is not: a failed update answers with the old object.)
            let bugs: Vec<_> = violations
                .into_iter()
                .filter(|v| v.rule == contract::RULE_NO_UNKNOWNS || v.rule == contract::RULE_TYPE)
                .collect();
            if !bugs.is_empty() {
                errors.push(plan::invalid_answer(provider.name(), &change.addr, what, &bugs).at(&location));
            }
            return Err(errors);
        }
        if !violations.is_empty() {
            return Err(vec![plan::invalid_answer(provider.name(), &change.addr, what, &violations).at(&location)]);
        }
        self.show_warnings(change, &response.diagnostics);
        self.record(change, schema, &response, InstanceStatus::Ready, key)?;
        self.values.lock().unwrap().0.set(&change.addr, response.new_state.clone());
        {
            let mut report = self.report.lock().unwrap();
            if creating { report.added += 1 } else { report.changed += 1 }
        }
        Ok(response.new_state.get_attr("id").as_str().map(str::to_string))
    }

    /// Moves the current object of `addr` into its deposed objects under
    /// `key`, and persists that before the replacement is created.
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
            self.report.lock().unwrap().errors.extend(e);
        }
    }

    /// Destroys the current object: a delete, or the first half of a replace.
    /// When the delete fails, the object stays in the state marked as being
    /// destroyed, and the next apply deletes it again.
    async fn destroy(&self, change: &ResourceChange) -> Result<(), Vec<Diagnostic>> {
        let key = self.delete_key(change, None, &change.prior);
        let deleted = self.delete_object(change, None, &change.prior, &change.prior_private, &key).await;
        blocking(|| {
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
            })
        })?;
        deleted?;
        self.report.lock().unwrap().destroyed += 1;
        Ok(())
    }

    /// Destroys a deposed object: the old object of a create_before_destroy
    /// replace in this run, or one left by an earlier run.
    async fn destroy_deposed(&self, addr: &InstanceAddr, key: &str) -> Result<(), Vec<Diagnostic>> {
        let (change, prior, private) = match self.applier.plan.deposed_change(addr, key) {
            Some(c) => (c, c.prior.clone(), c.prior_private.clone()),
            None => {
                let c = self.change(addr);
                (c, c.prior.clone(), c.prior_private.clone())
            }
        };
        let delete_key = self.delete_key(change, Some(key), &prior);
        let deleted = self.delete_object(change, Some(key), &prior, &private, &delete_key).await;
        // A deposed object whose delete failed stays as it is, to be
        // deleted by a later apply.
        blocking(|| {
            self.change_state(addr, Some(&delete_key), |state| {
                if deleted.is_ok() {
                    state.forget_deposed(addr, key);
                }
                deleted.is_ok()
            })
        })?;
        deleted?;
        self.report.lock().unwrap().destroyed += 1;
        Ok(())
    }

    /// Journals the intent, asks the provider to delete an object with the
    /// idempotency key `key`, and checks the answer.
    async fn delete_object(
        &self,
        change: &ResourceChange,
        deposed: Option<&str>,
        prior: &Value,
        private: &[u8],
        key: &str,
    ) -> Result<(), Vec<Diagnostic>> {
        let provider = self.provider(change);
        let location = Self::location(change);
        let request = ApplyRequest {
            type_name: change.addr.resource.type_name.clone(),
            prior_state: prior.clone(),
            planned_state: Value::Null,
            config: Value::Null,
            planned_private: private.to_vec(),
            idempotency_key: key.to_string(),
        };
        blocking(|| self.begin_operation(&change.addr, deposed, "delete", key))?;
        let response = provider
            .apply_resource_async(request)
            .await
            .map_err(|e| CheckedCallError::Call(change.addr.clone(), Box::new(e)).into_diagnostics(&location))?;
        if response.diagnostics.iter().any(Diagnostic::is_error) {
            return Err(
                CheckedCallError::Reported(change.addr.clone(), response.diagnostics).into_diagnostics(&location)
            );
        }
        if !response.new_state.is_null() {
            let v = contract::Violation {
                path: value::Path::root(),
                message: "returned an object after a delete".into(),
                rule: "a deleted object's new state must be null",
            };
            return Err(vec![plan::invalid_answer(provider.name(), &change.addr, "an invalid delete result", &[v])]);
        }
        self.show_warnings(change, &response.diagnostics);
        Ok(())
    }

    /// Shows the warnings of a provider's successful apply answer, named
    /// after the instance as the plan's are: nothing else reports them.
    fn show_warnings(&self, change: &ResourceChange, diagnostics: &[Diagnostic]) {
        for warning in diagnostics.iter().filter(|d| !d.is_error()) {
            let mut warning = warning.clone().at(&Self::location(change));
            warning.summary = format!("{}: {}", change.addr, warning.summary);
            self.applier.events.diagnostic(&warning);
        }
    }

    /// Writes the object a provider answered into the state and persists
    /// it, ending the operation with idempotency key `key`.
    fn record(
        &self,
        change: &ResourceChange,
        schema: &Schema,
        response: &crate::provider::ApplyResponse,
        status: InstanceStatus,
        key: &str,
    ) -> Result<(), Vec<Diagnostic>> {
        let attributes = value::to_json_typed(&response.new_state, &schema.block.implied_type());
        let mut inst = InstanceState {
            addr: change.addr.clone(),
            provider: change.provider.clone(),
            schema_version: schema.version,
            attributes,
            private: response.private.clone(),
            dependencies: change.dependencies.iter().map(ToString::to_string).collect(),
            status,
            create_before_destroy: change.create_before_destroy,
            deposed: Vec::new(),
        };
        self.change_state(&change.addr, Some(key), move |state| {
            inst.deposed = state.get(&change.addr).map(|i| i.deposed.clone()).unwrap_or_default();
            state.set(inst);
            true
        })
    }

    /// Changes the instance `addr` in the state with `f` (which says
    /// whether it changed anything) and returns once the change is in the
    /// journal on disk; with `ends`, the change ends that intent.
    fn change_state(
        &self,
        addr: &InstanceAddr,
        ends: Option<&str>,
        f: impl FnOnce(&mut State) -> bool,
    ) -> Result<(), Vec<Diagnostic>> {
        self.journal(|state, journal| {
            let record = if f(state) {
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
    /// and returns once that is on disk.
    fn begin_operation(
        &self,
        addr: &InstanceAddr,
        deposed: Option<&str>,
        operation: &str,
        key: &str,
    ) -> Result<(), Vec<Diagnostic>> {
        let intent = Record::Intent(PendingOperation::now(addr.clone(), deposed, operation, key));
        self.journal(|_, journal| journal.write(&intent).map(Some))
    }

    /// Journals the end of an operation, unless a change ended it already.
    fn end_operation(&self, key: &str) -> Result<(), Vec<Diagnostic>> {
        self.journal(|_, journal| journal.end(key))
    }

    /// Lets `write` change the state and queue its record (if any) under
    /// the ledger's lock, so that the journal has changes in the order they
    /// were made; then waits, outside the lock so that other steps' records
    /// can join the same flush, until the record is on disk.
    fn journal(
        &self,
        write: impl FnOnce(&mut State, &mut Journal) -> Result<Option<Unsynced>, StateError>,
    ) -> Result<(), Vec<Diagnostic>> {
        let written = {
            let mut ledger = self.ledger.lock().unwrap();
            let Ledger { state, journal } = &mut *ledger;
            write(state, journal)
        };
        match written {
            Ok(Some(unsynced)) => unsynced.wait(),
            Ok(None) => Ok(()),
            Err(e) => Err(e),
        }
        .map_err(|e| vec![write_failed(&e)])
    }

    /// The idempotency key of the create or update of a change.
    fn idempotency_key(&self, change: &ResourceChange) -> String {
        let op = if change.action == Action::Update { "update" } else { "create" };
        idempotency_key(&self.lineage, &change.addr, None, op, &change.planned)
    }

    /// The idempotency key of deleting `prior`, an object of a change.
    fn delete_key(&self, change: &ResourceChange, deposed: Option<&str>, prior: &Value) -> String {
        idempotency_key(&self.lineage, &change.addr, deposed, "delete", prior)
    }

    /// Evaluates outputs with the final values and records them.
    fn finish_outputs(&self) {
        let config = &self.applier.config;
        let ctx = self.eval_context(None, None);
        let mut outputs = BTreeMap::new();
        if !self.applier.plan.destroy {
            for (name, output) in &config.outputs {
                if let Ok(v) = config::eval(&output.expr, &ctx)
                    && v.is_wholly_known()
                {
                    outputs.insert(name.clone(), (v, output.sensitive));
                }
            }
        }
        let written = self.journal(|state, journal| {
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
            self.report.lock().unwrap().errors.extend(e);
        }
        self.report.lock().unwrap().outputs = outputs;
    }
}

/// The key passed to the provider with one operation: the same for every
/// retry of the same planned change — the same instance (and deposed
/// object), the same kind of operation (create, update, delete) and the
/// same planned new object (for a delete, the same object deleted) — so
/// that a provider can recognise an object an earlier, interrupted call
/// made. A create that follows a failed one of a replace is the same create.
pub fn idempotency_key(lineage: &str, addr: &InstanceAddr, deposed: Option<&str>, op: &str, object: &Value) -> String {
    let mut h = Sha256::new();
    for part in [lineage, &addr.to_string(), deposed.unwrap_or(""), op, &value::to_json(object).to_string()] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    hex::encode(&h.finalize()[..16])
}

/// Runs blocking work (evaluation, contract checks, state writes) from a
/// step's task without stalling the other tasks of the runtime's thread.
fn blocking<R>(f: impl FnOnce() -> R) -> R {
    tokio::task::block_in_place(f)
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
