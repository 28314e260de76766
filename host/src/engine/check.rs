//! `cairn providers check`: the conformance run a provider author points at
//! their own provider.
//!
//! Every answer goes through the same contract gate as in a real run, so a
//! provider that passes here keeps the contracts cairn enforces. For each
//! resource type: planning a create with every optional attribute unknown,
//! then with generated values, gives answers that pass the checks; planning
//! twice gives the same answer; apply returns what the plan promised; a read
//! of what apply made shows no drift; a second plan proposes nothing; delete
//! answers null, and a read after it says the object is gone. Each data
//! source is read once. The schema itself must be well formed.
//!
//! Values are generated from the schema (see [`config_of`]); a provider
//! that rejects them with its own diagnostics is not at fault, and the steps
//! that needed them are reported as skipped, with its words.

use anyhow::{Context, Result};

use super::{Engine, ProviderSource};
use crate::addr::{InstanceAddr, ResourceAddr};
use crate::contract::{CheckedCallError, FailedApply, Gate, call_failed};
use crate::diag::Diagnostic;
use crate::provider::{ApplyRequest, PlanResponse, Provider};
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

/// The key every apply of the run uses: one planned change each.
const IDEMPOTENCY_KEY: &str = "cairn-providers-check";

impl Engine {
    /// Runs the conformance steps against the component `wasm`, called
    /// `name`, in a throw-away sandbox: a fresh temporary directory granted
    /// read-write as `.`, nothing else. Its `provider` block gets generated
    /// required attributes.
    pub fn check(&self, name: &str, wasm: &[u8]) -> Result<CheckReport> {
        let ProviderSource::Components(runtime) = &self.source else {
            anyhow::bail!("only a WebAssembly component can be checked");
        };
        let scratch = tempfile::tempdir().context("cannot make a scratch directory")?;
        let sandbox = Sandbox::resolve(scratch.path(), &[".".to_string()], &[]).map_err(anyhow::Error::msg)?;
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
    let delete = ApplyRequest {
        type_name: type_name.to_string(),
        prior_state: applied.new_state.clone(),
        planned_state: Value::Null,
        config: Value::Null,
        planned_private: applied.private.clone(),
        idempotency_key: format!("{IDEMPOTENCY_KEY}-delete"),
    };
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

/// The lifecycle of one resource type, step by step.
const LIFECYCLE: &[&str] = &[
    "plan a create twice, with required attributes only",
    "apply the create",
    "read what apply made",
    "plan again: no changes",
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
        while self.done < LIFECYCLE.len() {
            self.record(Verdict::Skipped(why.to_string()));
        }
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
    fn the_worst_verdict_wins() {
        let failed = Verdict::Failed("f".into());
        let skipped = Verdict::Skipped("s".into());
        assert_eq!(worse(Verdict::Passed, skipped.clone()), skipped);
        assert_eq!(worse(skipped.clone(), failed.clone()), failed);
        assert_eq!(worse(failed.clone(), Verdict::Passed), failed);
    }
}
