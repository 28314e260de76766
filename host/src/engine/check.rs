//! `cairn providers check`: the conformance run a provider author points at
//! their own provider.
//!
//! Every answer goes through the same contract gate as in a real run, so a
//! provider that passes here keeps the contracts cairn enforces. For each
//! resource type: planning a create with every optional attribute unknown,
//! then with generated values, gives answers that pass the checks; planning
//! twice gives the same answer; apply returns what the plan promised; a read
//! of what apply made shows no drift; a second plan proposes nothing; a
//! change that forces replacement is replaced as the engine replaces (see
//! below); delete answers null, and a read after it says the object is
//! gone. Each data source is read once. The schema itself must be well
//! formed.
//!
//! Replacement: the run changes one attribute at a time (those the
//! configuration sets first, then the unset optional ones) until the
//! provider's plan of the update answers requires-replace for a path that
//! changes; a type none of whose changes does so is reported as
//! "replacement not exercised", with what was tried. As the planner does,
//! the replacement is then planned as a create from no prior object, and
//! that plan must not carry values over from the replaced object: a value
//! the configuration leaves null, unknown in the create plan of the
//! replaced object (only its apply could make it), must not be known and
//! equal to the replaced object's value in the plan of its replacement (a
//! provider that plans from state it keeps about the old object, rather
//! than from the configuration). Values a create plan already knew from
//! the configuration may be derived again alike. Then the replaced object
//! is deleted and the replacement created (delete before create, the
//! default order), and the remaining steps run on the replacement.
//!
//! Values are generated from the schema (see [`config_of`]); a provider
//! that rejects them with its own diagnostics is not at fault, and the steps
//! that needed them are reported as skipped, with its words.

use anyhow::{Context, Result};

use super::{Engine, ProviderSource};
use crate::addr::{InstanceAddr, ResourceAddr};
use crate::contract::{CheckedCallError, FailedApply, Gate, call_failed};
use crate::diag::Diagnostic;
use crate::provider::{ApplyRequest, ApplyResponse, PlanResponse, Provider};
use crate::runtime::{ConfigureError, Sandbox};
use crate::schema::{Attribute, Block, Nesting, Schema};
use crate::value::{Path, Type, Value};

/// What one step of the run found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The answer kept every contract.
    Passed,
    /// The provider broke a contract, crashed, or was inconsistent: what.
    Failed(String),
    /// The step could not run: why (the provider rejected generated
    /// values, or an earlier step failed).
    Skipped(String),
    /// The answer keeps the contracts, but may be a bug: why.
    Warned(String),
}

/// One step of the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// What was exercised: `schema`, `resource "local_file"`,
    /// `data "local_file"`.
    pub subject: String,
    /// The operation, in words: `plan a create with unknown optional attributes`.
    pub operation: &'static str,
    /// What it found.
    pub verdict: Verdict,
}

/// The steps of a conformance run of one provider.
#[derive(Debug, Clone, Default)]
pub struct CheckReport {
    /// Every step, in the order run.
    pub steps: Vec<Step>,
}

impl CheckReport {
    /// How many steps failed.
    pub fn failures(&self) -> usize {
        self.steps.iter().filter(|s| matches!(s.verdict, Verdict::Failed(_))).count()
    }

    fn push(&mut self, subject: &str, operation: &'static str, verdict: Verdict) {
        self.steps.push(Step { subject: subject.to_string(), operation, verdict });
    }
}

/// What a conformance run grants the provider beyond its scratch
/// directory, as a `sandbox` block would: for a provider that manages a
/// server, pointed at a test one (`cairn providers check postgresql
/// -connect 127.0.0.1:5432 -env PGPORT`).
#[derive(Debug, Clone, Default)]
pub struct CheckGrants {
    /// Outgoing TCP targets, `host:port` (`sandbox { connect }`).
    pub connect: Vec<String>,
    /// Environment variables of cairn's the provider sees (`sandbox { env }`);
    /// its configuration can come from them.
    pub env: Vec<String>,
}

/// The key every apply of the run uses: one planned change each.
const IDEMPOTENCY_KEY: &str = "cairn-providers-check";

impl Engine {
    /// Runs the conformance steps against the component `wasm`, called
    /// `name`, in a throw-away sandbox: a fresh temporary directory granted
    /// read-write as `.`, and what `grants` names. Its `provider` block
    /// gets generated required attributes.
    pub fn check(&self, name: &str, wasm: &[u8], grants: &CheckGrants) -> Result<CheckReport> {
        let ProviderSource::Components(runtime) = &self.source else {
            anyhow::bail!("only a WebAssembly component can be checked");
        };
        let scratch = tempfile::tempdir().context("cannot make a scratch directory")?;
        let mut sandbox = Sandbox::resolve(scratch.path(), &[".".to_string()], &[]).map_err(anyhow::Error::msg)?;
        for target in &grants.connect {
            sandbox.grant_connect(target).map_err(|e| anyhow::anyhow!("-connect {target}: {e}"))?;
        }
        for variable in &grants.env {
            sandbox.grant_env(variable).map_err(|e| anyhow::anyhow!("-env {variable}: {e}"))?;
        }
        sandbox.create_writable_dirs().map_err(anyhow::Error::msg)?;
        let loaded = runtime.load(name, wasm)?;
        self.tokio.block_on(async {
            let schema = loaded.schema(&sandbox).await?;
            let config = config_of(&schema.provider.block, Fill::Null);
            let e = match loaded.configure(sandbox, config).await {
                Ok(provider) => return Ok(conformance(&*provider).await),
                Err(e) => e,
            };
            let mut report = schema_steps(&schema);
            let verdict = match &e {
                ConfigureError::Call(_) => Verdict::Failed(e.to_string()),
                ConfigureError::Diagnostics { .. } => {
                    Verdict::Skipped(format!("{}; nothing else could be checked", e.to_string().replace('\n', " ")))
                }
            };
            report.push("provider", "configure with generated required attributes", verdict);
            Ok(report)
        })
    }
}

/// The schema's one step, or one failure per problem.
fn schema_steps(schema: &crate::schema::ProviderSchema) -> CheckReport {
    let mut report = CheckReport::default();
    let problems = schema.problems();
    if problems.is_empty() {
        report.push("schema", "is well formed", Verdict::Passed);
    }
    for problem in problems {
        report.push("schema", "is well formed", Verdict::Failed(problem.to_string()));
    }
    report
}

/// Runs every step against `provider` (configured).
pub async fn conformance(provider: &dyn Provider) -> CheckReport {
    let mut report = schema_steps(provider.schema());
    let gate = Gate::new(provider);
    for (type_name, schema) in &provider.schema().resources {
        resource_steps(&gate, type_name, schema, &mut report).await;
    }
    for (type_name, schema) in &provider.schema().data_sources {
        let subject = format!("data {type_name:?}");
        let addr = ResourceAddr::data(type_name, "check").instance();
        let config = config_of(&schema.block, Fill::Null);
        let verdict = match gate.read_data(schema, &addr, &config).await {
            Ok(_) => Verdict::Passed,
            Err(e) => verdict_of(e),
        };
        report.push(&subject, "read with generated required attributes", verdict);
    }
    report
}

/// The steps for one resource type.
async fn resource_steps(gate: &Gate<'_>, type_name: &str, schema: &Schema, report: &mut CheckReport) {
    let subject = format!("resource {type_name:?}");
    let addr = ResourceAddr::managed(type_name, "check").instance();
    let block = &schema.block;

    let verdict = first_plan_accepted(gate, schema, &addr, candidates(block, Fill::Unknown, Fill::Unknown)).await;
    report.push(&subject, "plan a create with unknown optional attributes", verdict);

    let verdict = first_plan_accepted(gate, schema, &addr, candidates(block, Fill::Generated, Fill::Generated)).await;
    report.push(&subject, "plan a create with generated optional attributes", verdict);

    // The lifecycle runs with the least configuration the provider
    // accepts: required attributes only, else with one optional attribute
    // set (a provider may need one of several, as `local_file` needs
    // `content` or `content_base64`).
    let mut first = None;
    for config in candidates(block, Fill::Null, Fill::Generated) {
        let mut steps = CheckReport::default();
        let rejected =
            lifecycle(gate, schema, &addr, &config, &mut Lifecycle { subject: &subject, done: 0, report: &mut steps })
                .await;
        if !rejected {
            report.steps.extend(steps.steps);
            return;
        }
        first.get_or_insert(steps);
    }
    report.steps.extend(first.map(|f| f.steps).unwrap_or_default());
}

/// The configurations to try, in order: every optional attribute filled
/// as `all` says; then, for each optional attribute, the required ones
/// with only that one filled as `each` says. A provider may reject all of
/// them set at once (`content` and `content_base64`), yet accept each alone.
fn candidates(block: &Block, all: Fill, each: Fill) -> Vec<Value> {
    let mut out = vec![config_of(block, all)];
    let Value::Object(least) = config_of(block, Fill::Null) else { return out };
    for (name, a) in block.attributes.iter().filter(|(_, a)| a.optional) {
        let mut config = least.clone();
        config.insert(name.clone(), attribute_config(name, a, each));
        out.push(Value::Object(config));
    }
    out
}

/// Plans a create twice with each configuration in turn, until the
/// provider accepts one: its verdict, or the first rejection.
async fn first_plan_accepted(gate: &Gate<'_>, schema: &Schema, addr: &InstanceAddr, configs: Vec<Value>) -> Verdict {
    let mut rejected = None;
    for config in configs {
        match planned_twice(gate, schema, addr, &Value::Null, &config).await {
            Ok(_) => return Verdict::Passed,
            Err(verdict @ Verdict::Skipped(_)) => {
                rejected.get_or_insert(verdict);
            }
            Err(verdict) => return verdict,
        }
    }
    rejected.unwrap_or(Verdict::Passed)
}

/// Runs the lifecycle of one object configured with `config`; true when
/// the provider rejected the configuration (so another may be tried).
async fn lifecycle(
    gate: &Gate<'_>,
    schema: &Schema,
    addr: &InstanceAddr,
    config: &Value,
    lifecycle: &mut Lifecycle<'_>,
) -> bool {
    let type_name = &addr.resource.type_name;
    let plan = match planned_twice(gate, schema, addr, &Value::Null, config).await {
        Ok(plan) => {
            lifecycle.record(Verdict::Passed);
            plan
        }
        Err(verdict) => {
            let rejected = matches!(verdict, Verdict::Skipped(_));
            lifecycle.record(verdict);
            lifecycle.skip_rest("the plan did not pass");
            return rejected;
        }
    };
    let request = ApplyRequest {
        type_name: type_name.to_string(),
        prior_state: Value::Null,
        planned_state: plan.planned_state.clone(),
        config: config.clone(),
        planned_private: plan.planned_private.clone(),
        idempotency_key: IDEMPOTENCY_KEY.to_string(),
    };
    let applied = match gate.apply(schema, addr, request).await {
        Ok(applied) => {
            lifecycle.record(Verdict::Passed);
            applied
        }
        Err(FailedApply { errors, .. }) => {
            let verdict = errors.into_iter().map(verdict_of).fold(Verdict::Passed, worse);
            let rejected = matches!(verdict, Verdict::Skipped(_));
            lifecycle.record(verdict);
            lifecycle.skip_rest("apply did not pass");
            return rejected;
        }
    };
    let read = gate.refresh(schema, addr, &applied.new_state, &applied.private).await;
    lifecycle.record(match read {
        Ok((Some((current, _)), _)) => match difference(&applied.new_state, &current, &Path::root()) {
            None => Verdict::Passed,
            Some(at) => Verdict::Failed(format!(
                "a read right after apply shows drift at {at}: apply returned {}, read returned {}",
                applied.new_state.at(&at).to_hcl(),
                current.at(&at).to_hcl()
            )),
        },
        Ok((None, _)) => Verdict::Failed("a read right after apply says the object does not exist".into()),
        Err(e) => verdict_of(e),
    });
    // Replacement is only planned for paths that change (as the planner
    // does), so only a change counts here.
    lifecycle.record(match gate.plan(schema, addr, &applied.new_state, config, &applied.private).await {
        Ok(again) => match difference(&applied.new_state, &again.planned_state, &Path::root()) {
            None => Verdict::Passed,
            Some(at) => Verdict::Failed(format!(
                "a plan with the configuration just applied changes {at}: from {} to {}",
                applied.new_state.at(&at).to_hcl(),
                again.planned_state.at(&at).to_hcl()
            )),
        },
        Err(e) => verdict_of(e),
    });
    let Some(applied) = replacement(gate, schema, addr, config, &plan, applied, lifecycle).await else {
        return false;
    };
    let delete = delete_request(type_name, &applied, "delete");
    if let Err(e) = gate.delete(addr, delete).await {
        lifecycle.record(verdict_of(e));
        lifecycle.skip_rest("delete did not pass");
        return false;
    }
    lifecycle.record(Verdict::Passed);
    lifecycle.record(match gate.refresh(schema, addr, &applied.new_state, &applied.private).await {
        Ok((None, _)) => Verdict::Passed,
        Ok((Some((current, _)), _)) if current == applied.new_state => Verdict::Warned(
            "a read after delete still returns the object as it was: right for a provider whose objects live only \
             in the state (like random's), a bug for one that manages real objects (an object deleted outside \
             cairn would never be noticed)"
                .into(),
        ),
        Ok((Some(_), _)) => Verdict::Failed("a read after delete says the object still exists".into()),
        Err(e) => verdict_of(e),
    });
    false
}

/// The request that deletes `object` (`what` tells its key apart).
fn delete_request(type_name: &str, object: &ApplyResponse, what: &str) -> ApplyRequest {
    ApplyRequest {
        type_name: type_name.to_string(),
        prior_state: object.new_state.clone(),
        planned_state: Value::Null,
        config: Value::Null,
        planned_private: object.private.clone(),
        idempotency_key: format!("{IDEMPOTENCY_KEY}-{what}"),
    }
}

/// The replacement steps of the lifecycle, on the object `old` made from
/// `config` with the create plan `created` (see the module's doc). Returns
/// the object the remaining steps run on: the replacement once created,
/// else `old` (the replacement not exercised, or its plan or the delete
/// of `old` refused); `None` when the replacement's create failed after
/// `old` was deleted, with the remaining steps recorded as skipped.
async fn replacement(
    gate: &Gate<'_>,
    schema: &Schema,
    addr: &InstanceAddr,
    config: &Value,
    created: &PlanResponse,
    old: ApplyResponse,
    lifecycle: &mut Lifecycle<'_>,
) -> Option<ApplyResponse> {
    let forcing = match forcing_change(gate, schema, addr, config, &old).await {
        Ok(Forcing::Found(forcing)) => {
            lifecycle.record(Verdict::Passed);
            forcing
        }
        Ok(Forcing::NotFound(why)) => {
            lifecycle.record(Verdict::Skipped(format!("replacement not exercised: {why}")));
            lifecycle.omit(REPLACEMENT_STEPS);
            return Some(old);
        }
        Err(verdict) => {
            lifecycle.record(verdict);
            lifecycle.skip(REPLACEMENT_STEPS, "no change that forces replacement was planned");
            return Some(old);
        }
    };
    // As the planner does: the replacement is a create, planned from no
    // prior object.
    let plan = match planned_twice(gate, schema, addr, &Value::Null, &forcing).await {
        Ok(plan) => plan,
        Err(verdict) => {
            lifecycle.record(verdict);
            lifecycle.skip(REPLACEMENT_STEPS - 1, "the replacement's plan did not pass");
            return Some(old);
        }
    };
    lifecycle.record(
        match stale(&created.planned_state, &old.new_state, &plan.planned_state, &forcing, &Path::root()) {
            None => Verdict::Passed,
            Some(at) => Verdict::Failed(format!(
                "provider {:?} planned the replacement of {addr} with {at} = {}, the replaced object's value, though \
             it left {at} unknown in the create of that object: a replacement is a new object, planned as a \
             create from no prior object, so a value only the old object's apply made cannot be known yet \
             (plan it unknown, or from the configuration)",
                gate.name(),
                old.new_state.at(&at).to_hcl()
            )),
        },
    );
    let type_name = &addr.resource.type_name;
    if let Err(e) = gate.delete(addr, delete_request(type_name, &old, "replaced")).await {
        lifecycle.record(verdict_of(e));
        lifecycle.skip(1, "the replaced object's delete did not pass");
        return Some(old);
    }
    lifecycle.record(Verdict::Passed);
    let request = ApplyRequest {
        type_name: type_name.to_string(),
        prior_state: Value::Null,
        planned_state: plan.planned_state,
        config: forcing,
        planned_private: plan.planned_private,
        // Another key than the first create's: another planned change.
        idempotency_key: format!("{IDEMPOTENCY_KEY}-replacement"),
    };
    match gate.apply(schema, addr, request).await {
        Ok(applied) => {
            lifecycle.record(Verdict::Passed);
            Some(applied)
        }
        Err(FailedApply { errors, .. }) => {
            lifecycle.record(errors.into_iter().map(verdict_of).fold(Verdict::Passed, worse));
            lifecycle.skip_rest("the replacement's create did not pass");
            None
        }
    }
}

/// How many steps follow "plan a change that forces replacement" in the
/// replacement.
const REPLACEMENT_STEPS: usize = 3;

/// What the search for a change that forces replacement found.
enum Forcing {
    /// A configuration whose plan from the object replaces it.
    Found(Value),
    /// None: why not, in words.
    NotFound(String),
}

/// Changes one attribute of `config` at a time until the provider's plan
/// of the update from `old` replaces it. A change the provider rejects
/// with its own errors is passed over; a broken contract fails.
async fn forcing_change(
    gate: &Gate<'_>,
    schema: &Schema,
    addr: &InstanceAddr,
    config: &Value,
    old: &ApplyResponse,
) -> Result<Forcing, Verdict> {
    let mut tried = Vec::new();
    for (name, changed) in changes(&schema.block, config) {
        match planned_update(gate, schema, addr, old, &changed).await {
            Ok(plan) if forces_replacement(&old.new_state, &plan) => return Ok(Forcing::Found(changed)),
            Ok(_) => tried.push(format!("{name}: updated in place")),
            Err(CheckedCallError::Reported(..)) => tried.push(format!("{name}: rejected")),
            Err(e) => return Err(verdict_of(e)),
        }
    }
    Ok(Forcing::NotFound(if tried.is_empty() {
        "the resource type has no attribute a configuration sets".to_string()
    } else {
        format!("no change of one attribute made the provider answer requires-replace ({})", tried.join("; "))
    }))
}

/// Validates `config`, then plans the update of `old` to it.
async fn planned_update(
    gate: &Gate<'_>,
    schema: &Schema,
    addr: &InstanceAddr,
    old: &ApplyResponse,
    config: &Value,
) -> Result<PlanResponse, CheckedCallError> {
    gate.validate(addr, config).await?;
    gate.plan(schema, addr, &old.new_state, config, &old.private).await
}

/// Whether `plan` replaces `prior`: a path it says requires replacement
/// changes (the planner's rule).
fn forces_replacement(prior: &Value, plan: &PlanResponse) -> bool {
    plan.requires_replace.iter().any(|p| prior.at(p) != plan.planned_state.at(p))
}

/// The configurations one attribute away from `config`, named by that
/// attribute: first each attribute it sets, given another value; then
/// each optional one it leaves null, set. (A set nested attribute is left
/// alone: the run has no second value for it.)
fn changes(block: &Block, config: &Value) -> Vec<(String, Value)> {
    let configurable = block.attributes.iter().filter(|(_, a)| a.required || a.optional);
    let (set, unset): (Vec<_>, Vec<_>) = configurable.partition(|(name, _)| !config.get_attr(name).is_null());
    let changed =
        set.into_iter().filter(|(_, a)| a.nested.is_none()).map(|(name, a)| (name, other_sample(name, &a.ty)));
    let filled = unset.into_iter().map(|(name, a)| (name, attribute_config(name, a, Fill::Generated)));
    let Value::Object(attrs) = config else { return Vec::new() };
    changed
        .chain(filled)
        .filter(|(name, value)| config.get_attr(name) != value)
        .map(|(name, value)| {
            let mut attrs = attrs.clone();
            attrs.insert(name.clone(), value);
            (name.clone(), Value::Object(attrs))
        })
        .collect()
}

/// The first place where the replacement's create plan (`replacement`)
/// knows a value of the replaced object (`old`) that the object's own
/// create plan (`created`) left unknown and the replacement's
/// configuration (`config`) leaves null: a value carried over, since only
/// the old object's apply could have made it.
fn stale(created: &Value, old: &Value, replacement: &Value, config: &Value, at: &Path) -> Option<Path> {
    match created {
        Value::Unknown(_) => {
            let carried = !old.is_null() && config.is_null() && replacement.is_wholly_known() && replacement == old;
            carried.then(|| at.clone())
        }
        Value::Object(attrs) => attrs
            .iter()
            .find_map(|(k, v)| stale(v, old.get_attr(k), replacement.get_attr(k), config.get_attr(k), &at.attr(k))),
        Value::Map(entries) => entries
            .iter()
            .find_map(|(k, v)| stale(v, old.get_attr(k), replacement.get_attr(k), config.get_attr(k), &at.key(k))),
        Value::List(items) | Value::Tuple(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, v)| stale(v, element(old, i), element(replacement, i), element(config, i), &at.index(i))),
        // Set elements have no place to compare at.
        _ => None,
    }
}

/// The `i`th element of a list or tuple; null when there is none.
fn element(value: &Value, i: usize) -> &Value {
    match value {
        Value::List(items) | Value::Tuple(items) => items.get(i).unwrap_or(&Value::Null),
        _ => &Value::Null,
    }
}

/// The lifecycle of one resource type, step by step.
const LIFECYCLE: &[&str] = &[
    "plan a create twice, with required attributes only",
    "apply the create",
    "read what apply made",
    "plan again: no changes",
    "plan a change that forces replacement",
    "plan the replacement's create: no stale computed values",
    "delete the replaced object",
    "apply the replacement's create",
    "delete",
    "read after delete",
];

/// Records the lifecycle's steps in order.
struct Lifecycle<'a> {
    subject: &'a str,
    done: usize,
    report: &'a mut CheckReport,
}

impl Lifecycle<'_> {
    fn record(&mut self, verdict: Verdict) {
        let operation = LIFECYCLE.get(self.done).copied().unwrap_or("(more)");
        self.report.push(self.subject, operation, verdict);
        self.done += 1;
    }

    /// Records every step not run yet as skipped, because of `why`.
    fn skip_rest(&mut self, why: &str) {
        self.skip(LIFECYCLE.len().saturating_sub(self.done), why);
    }

    /// Records the next `count` steps as skipped, because of `why`.
    fn skip(&mut self, count: usize, why: &str) {
        for _ in 0..count {
            self.record(Verdict::Skipped(why.to_string()));
        }
    }

    /// Passes over the next `count` steps without a word: they do not
    /// apply (the replacement's, when it was not exercised).
    fn omit(&mut self, count: usize) {
        self.done += count;
    }
}

/// Plans a change twice from `prior` to `config`; the two answers must be
/// the same (a plan depends on its inputs only).
async fn planned_twice(
    gate: &Gate<'_>,
    schema: &Schema,
    addr: &InstanceAddr,
    prior: &Value,
    config: &Value,
) -> Result<PlanResponse, Verdict> {
    // As in a run, the provider validates the configuration first.
    gate.validate(addr, config).await.map_err(verdict_of)?;
    let first = gate.plan(schema, addr, prior, config, &[]).await.map_err(verdict_of)?;
    let second = gate.plan(schema, addr, prior, config, &[]).await.map_err(verdict_of)?;
    if let Some(at) = difference(&first.planned_state, &second.planned_state, &Path::root()) {
        return Err(Verdict::Failed(format!(
            "provider {:?} planned the same change twice with different answers for {addr} at {at}: {} and then {}",
            gate.name(),
            first.planned_state.at(&at).to_hcl(),
            second.planned_state.at(&at).to_hcl()
        )));
    }
    Ok(first)
}

/// A failed call as a verdict: the provider's own errors mean it rejected
/// what the run generated (skipped); a crash or a broken contract fails.
fn verdict_of(e: CheckedCallError) -> Verdict {
    match e {
        CheckedCallError::Call(addr, e) => Verdict::Failed(call_failed(&addr, &e).to_string()),
        CheckedCallError::Contract(d) => Verdict::Failed(shown(&d)),
        CheckedCallError::Reported(_, diags) => {
            let words: Vec<String> = diags.iter().filter(|d| d.is_error()).map(shown).collect();
            Verdict::Skipped(format!("the provider rejected the generated values: {}", words.join("; ")))
        }
    }
}

/// The worse of two verdicts: a failure over a skip over a pass.
fn worse(a: Verdict, b: Verdict) -> Verdict {
    match (&a, &b) {
        (Verdict::Failed(_), _) => a,
        (_, Verdict::Failed(_)) => b,
        (Verdict::Skipped(_), _) => a,
        _ => b,
    }
}

/// A diagnostic on one line (its summary and detail).
fn shown(d: &Diagnostic) -> String {
    if d.detail.is_empty() { d.summary.clone() } else { format!("{} ({})", d.summary, d.detail.replace('\n', "; ")) }
}

/// The first place where `a` and `b` differ, if they do.
fn difference(a: &Value, b: &Value, at: &Path) -> Option<Path> {
    if a == b {
        return None;
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) | (Value::Map(x), Value::Map(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            let object = matches!(a, Value::Object(_));
            keys.into_iter().find_map(|k| {
                let (p, q) = (x.get(k).unwrap_or(&Value::Null), y.get(k).unwrap_or(&Value::Null));
                difference(p, q, &if object { at.attr(k) } else { at.key(k) })
            })
        }
        (Value::List(x), Value::List(y)) | (Value::Tuple(x), Value::Tuple(y)) if x.len() == y.len() => {
            x.iter().zip(y).enumerate().find_map(|(i, (p, q))| difference(p, q, &at.index(i)))
        }
        _ => Some(at.clone()),
    }
}

/// What the run puts in an optional attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fill {
    /// Nothing: null, and nested blocks only as many as required.
    Null,
    /// An unknown value, as when it refers to what another resource will
    /// only know after apply.
    Unknown,
    /// A value generated from its type, and one nested block of each kind.
    Generated,
}

/// A configuration of `block`: required attributes generated from their
/// types, optional ones as `fill` says, computed-only ones null.
pub fn config_of(block: &Block, fill: Fill) -> Value {
    let mut object: crate::value::Map =
        block.attributes.iter().map(|(name, a)| (name.clone(), attribute_config(name, a, fill))).collect();
    for (name, nested) in &block.blocks {
        let wanted = match fill {
            Fill::Generated => nested.min_items.max(1),
            Fill::Null | Fill::Unknown => nested.min_items,
        };
        let count = if nested.max_items == 0 { wanted } else { wanted.min(nested.max_items) };
        let items: Vec<Value> = (0..count).map(|_| config_of(&nested.block, fill)).collect();
        object.insert(name.clone(), gathered(nested.nesting, items));
    }
    Value::Object(object)
}

fn attribute_config(name: &str, a: &Attribute, fill: Fill) -> Value {
    if !a.required && !a.optional {
        return Value::Null;
    }
    if !a.required {
        match fill {
            Fill::Null => return Value::Null,
            Fill::Unknown => return Value::unknown(),
            Fill::Generated => {}
        }
    }
    match &a.nested {
        Some(nested) => gathered(nested.nesting, vec![config_of(&nested.block, fill)]),
        None => sample(name, &a.ty),
    }
}

/// Objects gathered the way `nesting` says (none: null, or an empty collection).
fn gathered(nesting: Nesting, items: Vec<Value>) -> Value {
    match nesting {
        Nesting::Single => items.into_iter().next().unwrap_or(Value::Null),
        Nesting::List => Value::List(items),
        Nesting::Set => Value::set(items),
        Nesting::Map => Value::Map(items.into_iter().enumerate().map(|(i, v)| (format!("key{i}"), v)).collect()),
    }
}

/// A plain value of `ty` other than [`sample`]'s, for a change of the
/// attribute `name`.
fn other_sample(name: &str, ty: &Type) -> Value {
    match ty {
        Type::Bool => Value::Bool(false),
        Type::Number => Value::int(2),
        Type::String | Type::Dynamic => Value::string(format!("cairn-check-{name}-changed")),
        Type::List(element) => Value::List(vec![other_sample(name, element)]),
        Type::Set(element) => Value::set(vec![other_sample(name, element)]),
        Type::Map(element) => Value::Map([("key".to_string(), other_sample(name, element))].into_iter().collect()),
        Type::Object(attrs) => Value::Object(attrs.iter().map(|(k, t)| (k.clone(), other_sample(k, t))).collect()),
        Type::Tuple(elements) => Value::Tuple(elements.iter().map(|t| other_sample(name, t)).collect()),
    }
}

/// A plain value of `ty` for the attribute `name`: strings name the
/// attribute (`cairn-check-filename`), so that a provider that makes files
/// or objects from them makes recognisable ones.
fn sample(name: &str, ty: &Type) -> Value {
    match ty {
        Type::Bool => Value::Bool(true),
        Type::Number => Value::int(1),
        Type::String | Type::Dynamic => Value::string(format!("cairn-check-{name}")),
        Type::List(element) => Value::List(vec![sample(name, element)]),
        Type::Set(element) => Value::set(vec![sample(name, element)]),
        Type::Map(element) => Value::Map([("key".to_string(), sample(name, element))].into_iter().collect()),
        Type::Object(attrs) => Value::Object(attrs.iter().map(|(k, t)| (k.clone(), sample(k, t))).collect()),
        Type::Tuple(elements) => Value::Tuple(elements.iter().map(|t| sample(name, t)).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_configurations_follow_the_schema() {
        let mut block = Block::default();
        block.attributes.insert("name".into(), Attribute::required(Type::String));
        block.attributes.insert("size".into(), Attribute::optional(Type::Number));
        block.attributes.insert("id".into(), Attribute::computed(Type::String));
        block.attributes.insert("tags".into(), Attribute::optional(Type::Map(Box::new(Type::Bool))));
        let rule =
            crate::schema::NestedBlock { nesting: Nesting::List, block: block.clone(), min_items: 0, max_items: 0 };
        block.blocks.insert("rule".into(), rule);
        let least = config_of(&block, Fill::Null);
        assert_eq!(least.get_attr("name"), &Value::string("cairn-check-name"));
        assert!(least.get_attr("size").is_null() && least.get_attr("id").is_null());
        assert_eq!(least.get_attr("rule"), &Value::List(vec![]));
        let unknown = config_of(&block, Fill::Unknown);
        assert!(unknown.get_attr("size").is_unknown() && unknown.get_attr("id").is_null());
        let all = config_of(&block, Fill::Generated);
        assert_eq!(all.get_attr("size"), &Value::int(1));
        assert_eq!(all.get_attr("tags"), &Value::Map([("key".to_string(), Value::Bool(true))].into_iter().collect()));
        let Value::List(rules) = all.get_attr("rule") else { panic!("a list of rules") };
        assert_eq!(rules.len(), 1);
        assert_eq!(block.implied_type().check(&all), Ok(()));
    }

    #[test]
    fn differences_are_found_where_they_are() {
        let a = Value::object([("x", Value::List(vec![Value::int(1), Value::int(2)])), ("y", Value::Null)]);
        let b = Value::object([("x", Value::List(vec![Value::int(1), Value::int(3)])), ("y", Value::Null)]);
        assert_eq!(difference(&a, &b, &Path::root()), Some(Path::root().attr("x").index(1)));
        assert_eq!(difference(&a, &a, &Path::root()), None);
        let c = Value::object([("x", Value::List(vec![Value::int(1)]))]);
        assert_eq!(difference(&a, &c, &Path::root()), Some(Path::root().attr("x")));
    }

    #[test]
    fn a_value_only_the_old_object_s_apply_made_is_stale_in_its_replacement() {
        // The old object's create plan left `id` unknown and knew `size`
        // from its configuration; apply made `id`.
        let created = Value::object([("id", Value::unknown()), ("size", Value::int(8)), ("name", Value::string("a"))]);
        let old = Value::object([("id", Value::string("id-1")), ("size", Value::int(8)), ("name", Value::string("a"))]);
        let config = Value::object([("id", Value::Null), ("size", Value::Null), ("name", Value::string("b"))]);
        let planned = |id: Value| Value::object([("id", id), ("size", Value::int(8)), ("name", Value::string("b"))]);
        // Unknown again, or another value: a new object.
        assert_eq!(stale(&created, &old, &planned(Value::unknown()), &config, &Path::root()), None);
        assert_eq!(stale(&created, &old, &planned(Value::string("id-2")), &config, &Path::root()), None);
        // The old object's `id`: carried over.
        let carried = planned(Value::string("id-1"));
        assert_eq!(stale(&created, &old, &carried, &config, &Path::root()), Some(Path::root().attr("id")));
        // Configured, it is the configuration's to set.
        let configured =
            Value::object([("id", Value::string("id-1")), ("size", Value::Null), ("name", Value::string("b"))]);
        assert_eq!(stale(&created, &old, &carried, &configured, &Path::root()), None);
        // Inside a list, at its place.
        let nested = |v: Value| Value::object([("rules", Value::List(vec![Value::object([("id", v)])]))]);
        let at = Path::root().attr("rules").index(0).attr("id");
        let (created, old) = (nested(Value::unknown()), nested(Value::string("r-1")));
        assert_eq!(stale(&created, &old, &old, &Value::Null, &Path::root()), Some(at));
    }

    #[test]
    fn changes_are_one_attribute_away_configured_ones_first() {
        let mut block = Block::default();
        block.attributes.insert("name".into(), Attribute::required(Type::String));
        block.attributes.insert("count".into(), Attribute::optional(Type::Number));
        block.attributes.insert("id".into(), Attribute::computed(Type::String));
        let config = config_of(&block, Fill::Null);
        let changes = changes(&block, &config);
        let names: Vec<&str> = changes.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(names, ["name", "count"]);
        assert_eq!(changes[0].1.get_attr("name"), &Value::string("cairn-check-name-changed"));
        assert!(changes[0].1.get_attr("count").is_null());
        assert_eq!(changes[1].1.get_attr("count"), &Value::int(1));
        assert_eq!(changes[1].1.get_attr("name"), config.get_attr("name"));
    }

    #[test]
    fn the_worst_verdict_wins() {
        let failed = Verdict::Failed("f".into());
        let skipped = Verdict::Skipped("s".into());
        assert_eq!(worse(Verdict::Passed, skipped.clone()), skipped);
        assert_eq!(worse(skipped.clone(), failed.clone()), failed);
        assert_eq!(worse(failed.clone(), Verdict::Passed), failed);
    }
}
