//! Applying a plan: the executor walks the apply graph and, for each step,
//! re-plans with the values now known, calls the provider, checks the new
//! state against the plan and persists the state before anything else
//! continues.

pub mod executor;
pub mod graph;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use sha2::{Digest, Sha256};

use crate::addr::{InstanceAddr, Mode};
use crate::config::{self, Config, EvalContext};
use crate::contract;
use crate::diag::{Diagnostic, Location};
use crate::graph::DependencyGraph;
use crate::plan::{self, Action, CheckedCallError, Plan, Providers, ResourceChange, ResourceValues};
use crate::provider::{ApplyRequest, Provider};
use crate::schema::Schema;
use crate::state::{InstanceState, InstanceStatus, LocalBackend, OutputState, State};
use crate::value::{self, Value};

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
}

/// The state and where it is written, shared by all steps.
struct StateWriter {
    state: State,
    backend: LocalBackend,
}

/// What steps share while the walk runs.
struct Shared {
    applier: Applier,
    values: Mutex<(ResourceValues, BTreeMap<String, Value>)>,
    writer: Mutex<StateWriter>,
    report: Mutex<ApplyReport>,
    lineage: String,
}

impl Applier {
    /// Carries out the plan, writing `state` through `backend` after every
    /// finished step. Returns what happened; errors are in the report.
    pub async fn apply(self, state: State, backend: LocalBackend) -> (ApplyReport, State) {
        let apply_graph = graph::build(&self.plan, &self.graph);
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
        let shared = Arc::new(Shared {
            lineage: state.lineage.clone(),
            applier: self,
            values: Mutex::new((values, BTreeMap::new())),
            writer: Mutex::new(StateWriter { state, backend }),
            report: Mutex::new(ApplyReport::default()),
        });
        let parallelism = shared.applier.parallelism;
        let worker = Arc::clone(&shared);
        executor::walk(&apply_graph, parallelism, move |step| worker.run(step)).await;
        shared.finish_outputs();
        let shared = Arc::into_inner(shared).expect("the walk is over, so no step holds the shared data");
        let writer = shared.writer.into_inner().unwrap_or_else(|e| e.into_inner());
        let report = shared.report.into_inner().unwrap_or_else(|e| e.into_inner());
        (report, writer.state)
    }
}

impl Shared {
    /// Runs one step; records errors in the report. Returns success.
    fn run(&self, step: &Step) -> bool {
        let result = match step {
            Step::Local(name) => self.eval_local(name),
            Step::Destroy(addr) => self.destroy(self.change(addr)),
            Step::Apply(addr) => {
                let change = self.change(addr);
                match change.action {
                    Action::NoOp => Ok(()),
                    Action::Read => self.read_data(change),
                    _ => self.create_or_update(change),
                }
            }
        };
        match result {
            Ok(()) => true,
            Err(diags) => {
                for d in &diags {
                    eprintln!("{d}\n");
                }
                self.report.lock().unwrap().errors.extend(diags);
                false
            }
        }
    }

    fn change(&self, addr: &InstanceAddr) -> &ResourceChange {
        self.applier.plan.change(addr).expect("every step comes from a planned change")
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
        let ctx = self.eval_context(None);
        let v = config::eval(&self.applier.config.locals[name].expr, &ctx)?;
        self.values.lock().unwrap().1.insert(name.to_string(), v);
        Ok(())
    }

    /// The evaluation context with every value known so far, set up for one
    /// instance's `count.index`/`each`.
    fn eval_context(&self, instance: Option<&InstanceAddr>) -> EvalContext {
        let (values, locals) = &*self.values.lock().unwrap();
        let mut ctx = EvalContext {
            variables: self.applier.variables.clone(),
            locals: locals.clone(),
            resources: values.snapshot(),
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
        let mut config = config::decode_body(&resource.body, &schema.block, &self.eval_context(Some(&change.addr)))?;
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

    /// Create, update, or the create half of a replace.
    fn create_or_update(&self, change: &ResourceChange) -> Result<(), Vec<Diagnostic>> {
        let provider = self.provider(change);
        let schema = self.schema(provider, &change.addr);
        let location = Self::location(change);
        let creating = change.action != Action::Update;
        progress(&change.addr, if creating { "Creating..." } else { "Modifying..." });
        let started = Instant::now();
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
            idempotency_key: self.idempotency_key(change),
        };
        let response = provider
            .apply_resource(request)
            .map_err(|e| CheckedCallError::Call(change.addr.clone(), Box::new(e)).into_diagnostics(&location))?;
        let violations = contract::check_compatible(&schema.block, &replanned.planned_state, &response.new_state, true);
        let what = "an inconsistent result after apply";
        if response.diagnostics.iter().any(Diagnostic::is_error) {
            // A create that failed part-way but returned an object of the
            // right shape is recorded as tainted, so that the next plan
            // replaces it; anything else from a failed answer is dropped.
            let recordable =
                response.new_state.is_wholly_known() && schema.block.implied_type().check(&response.new_state).is_ok();
            if creating && !response.new_state.is_null() && recordable {
                self.record(change, schema, &response.new_state, &response.private, InstanceStatus::Tainted)?;
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
        self.record(change, schema, &response.new_state, &response.private, InstanceStatus::Ready)?;
        self.values.lock().unwrap().0.set(&change.addr, response.new_state.clone());
        {
            let mut report = self.report.lock().unwrap();
            if creating { report.added += 1 } else { report.changed += 1 }
        }
        let verb = if creating { "Creation" } else { "Modifications" };
        progress(
            &change.addr,
            &format!("{verb} complete after {}{}", elapsed(started), id_suffix(&response.new_state)),
        );
        Ok(())
    }

    /// Destroys the current object: a delete, or the first half of a replace.
    fn destroy(&self, change: &ResourceChange) -> Result<(), Vec<Diagnostic>> {
        let provider = self.provider(change);
        let location = Self::location(change);
        progress(&change.addr, &format!("Destroying...{}", id_suffix(&change.prior)));
        let started = Instant::now();
        let request = ApplyRequest {
            type_name: change.addr.resource.type_name.clone(),
            prior_state: change.prior.clone(),
            planned_state: Value::Null,
            config: Value::Null,
            planned_private: change.prior_private.clone(),
            idempotency_key: self.idempotency_key(change),
        };
        let response = provider
            .apply_resource(request)
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
        {
            let mut w = self.writer.lock().unwrap();
            w.state.remove(&change.addr);
            persist(&mut w)?;
        }
        self.report.lock().unwrap().destroyed += 1;
        progress(&change.addr, &format!("Destruction complete after {}", elapsed(started)));
        Ok(())
    }

    /// Writes one instance into the state and persists it.
    fn record(
        &self,
        change: &ResourceChange,
        schema: &Schema,
        new_state: &Value,
        private: &[u8],
        status: InstanceStatus,
    ) -> Result<(), Vec<Diagnostic>> {
        let attributes = value::to_json_typed(new_state, &schema.block.implied_type());
        let mut w = self.writer.lock().unwrap();
        let deposed = w.state.get(&change.addr).map(|i| i.deposed.clone()).unwrap_or_default();
        w.state.set(InstanceState {
            addr: change.addr.clone(),
            provider: change.provider.clone(),
            schema_version: schema.version,
            attributes,
            private: private.to_vec(),
            dependencies: change.dependencies.iter().map(ToString::to_string).collect(),
            status,
            deposed,
        });
        persist(&mut w)
    }

    /// Stable for every retry of the same planned change.
    fn idempotency_key(&self, change: &ResourceChange) -> String {
        let mut h = Sha256::new();
        h.update(self.lineage.as_bytes());
        h.update(change.addr.to_string().as_bytes());
        h.update(change.action.to_string().as_bytes());
        h.update(value::to_json(&change.planned).to_string().as_bytes());
        hex::encode(&h.finalize()[..16])
    }

    /// Evaluates outputs with the final values and records them.
    fn finish_outputs(&self) {
        let config = &self.applier.config;
        let ctx = self.eval_context(None);
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
        let mut w = self.writer.lock().unwrap();
        let before = w.state.outputs.clone();
        w.state.outputs.retain(|name, _| !self.applier.plan.destroy && config.outputs.contains_key(name));
        for (name, (v, sensitive)) in &outputs {
            w.state.outputs.insert(name.clone(), OutputState::new(v, *sensitive));
        }
        if w.state.outputs != before
            && let Err(e) = persist(&mut w)
        {
            self.report.lock().unwrap().errors.extend(e);
        }
        self.report.lock().unwrap().outputs = outputs;
    }
}

fn persist(w: &mut StateWriter) -> Result<(), Vec<Diagnostic>> {
    let StateWriter { state, backend } = w;
    backend.write(state).map_err(|e| vec![Diagnostic::error(format!("Failed to write the state: {e}"))])
}

fn progress(addr: &InstanceAddr, message: &str) {
    println!("{addr}: {message}");
}

fn elapsed(started: Instant) -> String {
    format!("{}s", started.elapsed().as_secs())
}

/// ` [id=…]` when the object has an id attribute.
fn id_suffix(v: &Value) -> String {
    match v.get_attr("id").as_str() {
        Some(id) => format!(" [id={id}]"),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests;
