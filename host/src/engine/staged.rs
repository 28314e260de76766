//! Module calls whose `count` or `for_each` only planning can decide
//! (`for_each = toset(null_resource.a.triggers["names"])`,
//! `count = length(module.other.names)`), planned in stages as Terraform
//! plans them: the value is evaluated once what it refers to is planned,
//! and the module expands if it is known.
//!
//! Loading expands every call it can ([`config::expand_modules`]) and
//! *defers* the others: the flat configuration holds a local with each
//! deferred call's argument (`module.m.for_each`) and nothing of the
//! module's instances. A plan then goes in rounds ([`expand_in_rounds`]):
//!
//! 1. the resources the deferred arguments depend on (only those, as
//!    `-target` would) are planned, quietly;
//! 2. each argument is evaluated from that plan's values
//!    ([`argument_values`]: configured values, prior state, data sources
//!    read while planning, module outputs of those);
//! 3. the known ones are *pinned* and the configuration is expanded again
//!    with them, which may defer calls nested in the new instances.
//!
//! When a round pins nothing, the arguments left are unknown (or invalid):
//! Terraform's "Invalid for_each argument" / "Invalid count argument", at
//! the argument. Once nothing is deferred, the whole configuration is
//! planned as usual, so a plan reads the same whatever the thread count and
//! however many rounds it took; the preliminary rounds' plans are dropped.
//!
//! Applying uses the plan's expansion: a run's [`Planned`](super::Planned)
//! carries the configuration it planned, and a saved plan expands again in
//! the same rounds from its own planned values (no provider is asked), so
//! its instances are those it was made with.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use anyhow::Result;

use crate::addr::{InstanceAddr, ResourceAddr};
use crate::config::{self, Config, DeferredCall, EvalContext, Pinned};
use crate::diag::Diagnostic;
use crate::graph::{DependencyGraph, Node};
use crate::plan::{Action, Plan, ResourceValues, locals_of, sensitivity};
use crate::value::{Path, Value};

use super::diagnostics;

/// What a workspace whose configuration has deferred module calls keeps
/// to expand them once their arguments are known.
#[derive(Debug)]
pub(crate) struct Staging {
    /// The configuration as parsed (and adjusted), its calls unexpanded.
    pub parsed: Config,
    /// The calls loading deferred.
    pub deferred: Vec<DeferredCall>,
    /// The provider configurations their modules use: started with the
    /// run's others.
    pub providers: BTreeSet<String>,
}

/// A configuration expanded as far as its pinned arguments allow: the flat
/// configuration, its graph, and the calls left for planning.
pub(crate) struct Stage {
    /// The flat configuration.
    pub config: Arc<Config>,
    /// Its dependency graph.
    pub graph: Arc<DependencyGraph>,
    /// The calls whose `count` or `for_each` planning decides.
    pub deferred: Vec<DeferredCall>,
    /// The provider configurations the deferred calls' modules use.
    pub deferred_providers: BTreeSet<String>,
}

/// `config` (as parsed, its module calls unexpanded) expanded with its
/// root `variables` and the `pinned` arguments of deferred calls, its
/// imports expanded, its ephemeral values marked, and its graph built.
pub(crate) fn expand_config(config: Config, variables: &BTreeMap<String, Value>, pinned: &Pinned) -> Result<Stage> {
    let expanded = config::expand_modules(config, variables, pinned).map_err(diagnostics)?;
    let mut config = expanded.config;
    let dir = config.dir.clone();
    config::expand_imports(&mut config.imports, variables, &dir).map_err(diagnostics)?;
    config::ephemeral::mark(&mut config).map_err(diagnostics)?;
    let ephemeral_arguments: Vec<Diagnostic> = (expanded.deferred.iter())
        .filter_map(|d| d.check_ephemerality(&config.locals[&d.local].expr, &config.ephemeral).err())
        .collect();
    if !ephemeral_arguments.is_empty() {
        return Err(diagnostics(ephemeral_arguments));
    }
    let graph = DependencyGraph::build(&config).map_err(|d| diagnostics(vec![d]))?;
    Ok(Stage {
        config: Arc::new(config),
        graph: Arc::new(graph),
        deferred: expanded.deferred,
        deferred_providers: expanded.deferred_providers,
    })
}

/// Expands `parsed` (with `variables`) from its first `stage` until no
/// call is deferred, pinning each round the arguments that `plan_of`'s
/// plan of the resources they depend on makes known (see the module
/// documentation). `plan_of` is given the stage and those resources.
pub(crate) fn expand_in_rounds(
    parsed: &Config,
    variables: &BTreeMap<String, Value>,
    first: Stage,
    mut plan_of: impl FnMut(&Stage, Vec<InstanceAddr>) -> Result<Plan>,
) -> Result<Stage> {
    let mut pinned = Pinned::new();
    let mut stage = first;
    while !stage.deferred.is_empty() {
        let upstream: BTreeSet<ResourceAddr> = (stage.deferred.iter())
            .flat_map(|d| stage.graph.resource_dependencies(&Node::Local(d.local.clone())))
            .collect();
        let plan = match upstream.is_empty() {
            true => Plan::default(),
            false => plan_of(&stage, upstream.iter().map(ResourceAddr::instance).collect())?,
        };
        let locals: Vec<&str> = stage.deferred.iter().map(|d| d.local.as_str()).collect();
        let mut values = argument_values(&stage.config, &stage.graph, &plan, variables, &locals);
        let mut errors = Vec::new();
        let mut progressed = false;
        for d in &stage.deferred {
            let value = values.remove(&d.local).unwrap_or_else(|| Ok((Value::unknown(), Vec::new())));
            let checked = value.and_then(|(v, marks)| d.check_sensitivity(&marks).map(|()| v));
            match checked.and_then(|v| d.instances(v.clone()).map(|_| v)) {
                Ok(v) => {
                    pinned.insert(d.name.clone(), v);
                    progressed = true;
                }
                Err(e) => errors.extend(e),
            }
        }
        // An argument unknown this round may refer to a call pinned in it:
        // it is refused only once a round pins nothing.
        if !progressed {
            return Err(diagnostics(errors));
        }
        stage = expand_config(parsed.clone(), variables, &pinned)?;
    }
    Ok(stage)
}

/// The key of the one instance a deferred call whose `for_each` is not
/// known yet is shown and validated as (`module.m["*"]`); one whose
/// `count` is not known is instance 0.
pub(crate) const UNKNOWN_INSTANCE_KEY: &str = "*";

/// `parsed` (with `variables`) from its first `stage`, every call planning
/// would decide expanded once, recursively, into an instance that stands
/// for all of them: `count` as 1, `for_each` as the key
/// [`UNKNOWN_INSTANCE_KEY`] whose value is unknown. Nothing is planned:
/// this is what `cairn validate` checks (every value in a module instance
/// is unknown then anyway) and `cairn graph` shows, as Terraform validates
/// a module whose instances it does not know yet; never what is planned.
pub(crate) fn with_unknown_instances(
    parsed: &Config,
    variables: &BTreeMap<String, Value>,
    first: Stage,
) -> Result<Stage> {
    let mut pinned = Pinned::new();
    let mut stage = first;
    while !stage.deferred.is_empty() {
        for d in &stage.deferred {
            let stand_in = match d.count {
                Some(_) => Value::int(1),
                None => Value::Map([(UNKNOWN_INSTANCE_KEY.to_string(), Value::unknown())].into_iter().collect()),
            };
            pinned.insert(d.name.clone(), stand_in);
        }
        stage = expand_config(parsed.clone(), variables, &pinned)?;
    }
    Ok(stage)
}

impl super::Workspace {
    /// This workspace with the calls whose `count` or `for_each` planning
    /// decides expanded once each (see [`with_unknown_instances`]), for
    /// validating and showing their modules' blocks; itself, as a copy,
    /// when it has none. Not for planning.
    pub fn with_unknown_instances(&self) -> Result<super::Workspace> {
        let (config, graph) = match &self.staging {
            None => (Arc::clone(&self.config), Arc::clone(&self.graph)),
            Some(staging) => {
                let stage = with_unknown_instances(&staging.parsed, &self.variables, self.first_stage(staging))?;
                (stage.config, stage.graph)
            }
        };
        Ok(super::Workspace {
            config,
            graph,
            variables: self.variables.clone(),
            files: self.files.clone(),
            module_files: self.module_files.clone(),
            warnings: Vec::new(),
            staging: None,
        })
    }
}

/// A deferred call's argument: its value, and the paths of it that are
/// sensitive (the root path when all of it is).
pub(crate) type Argument = (Value, Vec<Path>);

/// The values of the locals `wanted` of `config`, evaluated from `plan`'s
/// values of the resources they depend on: each planned object (or a data
/// source's value read while planning), and the locals between, in the
/// graph's order. A resource the plan does not have is unknown. Each
/// value comes with its sensitivity marks (from sensitive variables, the
/// plan's marks of the objects, and the locals between), as the plan walk
/// would mark it.
pub(crate) fn argument_values(
    config: &Config,
    graph: &DependencyGraph,
    plan: &Plan,
    variables: &BTreeMap<String, Value>,
    wanted: &[&str],
) -> BTreeMap<String, Result<Argument, Vec<Diagnostic>>> {
    let needed = upstream_nodes(graph, wanted);
    let mut resources = ResourceValues::default();
    for (addr, expansion) in &plan.expansions {
        resources.declare(addr, expansion);
    }
    for change in &plan.changes {
        if change.deposed.is_none() && !matches!(change.action, Action::Delete | Action::Forget) {
            resources.set(&change.addr, change.planned.clone());
        }
    }
    for (addr, value) in &plan.data_values {
        resources.set(addr, value.clone());
    }
    let sensitive_variables = sensitivity::sensitive_variables(config);
    let mut marks = sensitivity::Marks { instances: plan.reference_marks.clone(), ..Default::default() };
    let mut locals = BTreeMap::new();
    let mut results = BTreeMap::new();
    for node in graph.topo_order() {
        let Node::Local(name) = &node else { continue };
        if !needed.contains(&node) {
            continue;
        }
        let dependencies = graph.resource_dependencies(&node);
        let ctx = EvalContext {
            variables: variables.clone(),
            locals: locals_of(&graph.local_dependencies(&node), &locals),
            resources: resources.snapshot_of(&dependencies),
            ephemeral: Arc::clone(&config.ephemeral),
            sensitivity: marks.sensitivity(&sensitive_variables, &dependencies, |a| plan.expansions.get(a).cloned()),
            ..EvalContext::new(&config.dir)
        };
        let local = &config.locals[name];
        let value = local.value(&ctx);
        let local_marks = config::marks(&local.expr, &ctx);
        if let Ok(v) = &value {
            locals.insert(name.clone(), v.clone());
            if !local_marks.is_empty() {
                marks.locals.insert(name.clone(), local_marks.clone());
            }
        }
        if wanted.contains(&name.as_str()) {
            results.insert(name.clone(), value.map(|v| (v, local_marks)));
        }
    }
    results
}

/// The locals `wanted` and every node they depend on, directly or not.
fn upstream_nodes(graph: &DependencyGraph, wanted: &[&str]) -> BTreeSet<Node> {
    let mut seen = BTreeSet::new();
    let mut stack: Vec<Node> = wanted.iter().map(|w| Node::Local(w.to_string())).collect();
    while let Some(node) = stack.pop() {
        if seen.insert(node.clone()) {
            stack.extend(graph.direct_dependencies(&node).cloned());
        }
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::addr::Mode;
    use crate::plan::Expansion;

    /// The configuration in `files`, as parsed, and its first stage.
    fn load(files: &[(&str, &str)]) -> (tempfile::TempDir, Config, Stage) {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let parsed = config::load(dir.path()).unwrap();
        let first = expand_config(parsed.clone(), &BTreeMap::new(), &Pinned::new()).unwrap();
        (dir, parsed, first)
    }

    /// A plan in which each data source of `values` was read with its value.
    fn plan_reading(values: &[(&str, Value)]) -> Plan {
        let mut plan = Plan::default();
        for (addr, value) in values {
            let addr: InstanceAddr = addr.parse().unwrap();
            plan.expansions.insert(addr.resource.clone(), Expansion::Single);
            plan.data_values.insert(addr, value.clone());
        }
        plan
    }

    fn object(entries: &[(&str, Value)]) -> Value {
        Value::Object(entries.iter().map(|(k, v)| (k.to_string(), v.clone())).collect())
    }

    const OUTER: &str = r#"variable "name" {}
data "x_list" "items" {
  of = var.name
}
module "inner" {
  source = "../inner"
  count  = length(data.x_list.items.items)
}
"#;

    #[test]
    fn each_round_pins_what_the_plan_knows_and_expands_what_it_uncovers() {
        let (_dir, parsed, first) = load(&[
            (
                "main.tf",
                "data \"x_list\" \"names\" {}\nmodule \"outer\" {\n  source   = \"./outer\"\n  for_each = toset(data.x_list.names.items)\n  name     = each.key\n}\n",
            ),
            ("outer/main.tf", OUTER),
            ("inner/main.tf", "resource \"x_thing\" \"t\" {}\n"),
        ]);
        assert_eq!(first.deferred.iter().map(|d| d.local.as_str()).collect::<Vec<_>>(), ["module.outer.for_each"]);
        assert_eq!(first.deferred_providers, BTreeSet::from(["x".to_string()]));
        let names = Value::Tuple(vec![Value::string("a"), Value::string("b")]);
        let mut asked = Vec::new();
        let stage = expand_in_rounds(&parsed, &BTreeMap::new(), first, |_, upstream| {
            asked.push(upstream.iter().map(ToString::to_string).collect::<Vec<_>>());
            Ok(plan_reading(&[
                ("data.x_list.names", object(&[("items", names.clone())])),
                (r#"module.outer["a"].data.x_list.items"#, object(&[("items", Value::Tuple(vec![Value::Null]))])),
                (r#"module.outer["b"].data.x_list.items"#, object(&[("items", Value::unknown())])),
            ]))
        });
        // Round two pins module.outer["a"]'s count; round three finds
        // module.outer["b"]'s still unknown: the error is at the argument,
        // with Terraform's words.
        let err = stage.err().expect("an unknown count is an error").to_string();
        assert!(err.contains("outer/main.tf:7: Invalid count argument"), "{err}");
        assert!(err.contains("so cairn cannot predict how many instances will be created"), "{err}");
        let b = r#"module.outer["b"].data.x_list.items"#.to_string();
        let both = vec![r#"module.outer["a"].data.x_list.items"#.to_string(), b.clone()];
        assert_eq!(asked, [vec!["data.x_list.names".to_string()], both, vec![b]]);
    }

    #[test]
    fn known_arguments_expand_the_whole_configuration() {
        let (_dir, parsed, first) = load(&[
            (
                "main.tf",
                "data \"x_list\" \"n\" {}\nmodule \"m\" {\n  source = \"./outer\"\n  count  = data.x_list.n.n\n  name   = \"x\"\n}\n",
            ),
            ("outer/main.tf", OUTER),
            ("inner/main.tf", "resource \"x_thing\" \"t\" {}\n"),
        ]);
        let stage = expand_in_rounds(&parsed, &BTreeMap::new(), first, |_, _| {
            Ok(plan_reading(&[
                ("data.x_list.n", object(&[("n", Value::int(2))])),
                ("module.m[0].data.x_list.items", object(&[("items", Value::Tuple(vec![Value::Null]))])),
                ("module.m[1].data.x_list.items", object(&[("items", Value::Tuple(vec![]))])),
            ]))
        })
        .unwrap();
        assert!(stage.deferred.is_empty());
        let managed: Vec<String> = (stage.config.resources.iter())
            .filter(|r| r.addr.mode == Mode::Managed)
            .map(|r| r.addr.to_string())
            .collect();
        assert_eq!(managed, ["module.m[0].module.inner[0].x_thing.t"]);
        // The argument stays a local of the graph, for plan and apply.
        assert!(stage.config.locals.contains_key("module.m.count"));
    }
}
