//! `cairn show`: the current state, as configuration-like text or, with
//! `-json`, in the shape of `terraform show -json` (see `state_json`);
//! or, given a plan file (`cairn show FILE`), the saved plan as `cairn
//! plan` showed it, or with `-json` in the shape of `terraform show -json`
//! (see `plan_json`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::Result;

use super::{Common, plan_config_json, plan_json, render, state_json};
use crate::engine::{Engine, SavedPlan, Workspace};
use crate::schema::{ProviderSchema, Schema};
use crate::state::{InstanceState, InstanceStatus, State};
use crate::value::{self, Value};

/// Runs `cairn show`.
pub(super) fn run(common: &Common, json: bool) -> Result<i32> {
    if let Some(path) = common.plan_file() {
        return show_plan(common, &path, json);
    }
    let ws = common.workspace()?;
    let engine = Engine::new()?;
    let Some(state) = engine.read_state(&ws)? else {
        // As Terraform's: a document with only its format when there is
        // no state.
        println!("{}", if json { "{\"format_version\":\"1.0\"}" } else { "No state." });
        return Ok(0);
    };
    if !json && state.resources.is_empty() && state.outputs.is_empty() && state.pending.is_empty() {
        println!("The state is empty.");
        return Ok(0);
    }
    // Only the providers of what the state holds: their schemas say how to
    // read the stored attributes and which ones are sensitive.
    let names = state.resources.iter().map(|r| r.provider.clone()).collect();
    let schemas = engine.schemas(&ws, &names)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&state_json::state_json(&state, &schemas, &ws.config))?);
        return Ok(0);
    }
    for inst in &state.resources {
        let schema = schemas.get(&inst.provider).and_then(|s| s.resources.get(&inst.addr.resource.type_name));
        println!("{}", render_instance(inst, schema));
    }
    print_pending_and_outputs(&state);
    Ok(0)
}

/// A saved plan, as `cairn plan` showed it or as Terraform's plan JSON.
fn show_plan(common: &Common, path: &Path, json: bool) -> Result<i32> {
    if !common.variables.is_empty() {
        anyhow::bail!("a saved plan is shown with the variables it was made with: -var and -var-file cannot be given");
    }
    let saved = SavedPlan::read(path)?;
    let ws = Workspace::with_variables(&common.config_dir(), saved.variables.clone())?;
    let engine = Engine::new()?;
    let names: BTreeSet<String> = saved.plan.changes.iter().map(|c| c.provider.clone()).collect();
    let schemas: BTreeMap<String, ProviderSchema> = engine.schemas(&ws, &names)?;
    if json {
        let (config, _) = ws.planned_config(&saved.plan)?;
        let mut document = plan_json::plan_json(&saved.plan, &saved.variables, &schemas, &config);
        // As written, module calls and all: the workspace holds the
        // configuration with its modules expanded.
        let written = crate::config::load(ws.dir()).map_err(crate::diag::Diagnostics)?;
        document["configuration"] = plan_config_json::configuration_json(&written);
        println!("{}", serde_json::to_string_pretty(&document)?);
    } else {
        print!("{}", render::render_plan(&saved.plan, &schemas, common.colors()));
    }
    Ok(0)
}

/// One instance as `show` and `state show` print it: a `resource` block
/// with its attributes, sensitive ones hidden, ending with a blank line.
pub(super) fn render_instance(inst: &InstanceState, schema: Option<&Schema>) -> String {
    let value = match schema {
        Some(s) => inst.attributes.decode(&s.block.implied_type()).unwrap_or(Value::Null),
        None => inst.attributes.to_json().map_or(Value::Null, |j| value::from_json_untyped(&j)),
    };
    let status = match inst.status {
        InstanceStatus::Tainted => " (tainted)",
        InstanceStatus::Destroying => " (being destroyed)",
        InstanceStatus::Ready => "",
    };
    let mut out = format!("# {}:{status}\n", inst.addr);
    // As written in its module: without the module path.
    let local = crate::addr::InstanceAddr {
        resource: inst.addr.resource.clone().in_module(Default::default()),
        key: inst.addr.key.clone(),
    };
    let name = local.to_string();
    let label = name.split_once('.').map_or("", |(_, n)| n);
    out.push_str(&format!("resource \"{}\" \"{label}\" {{\n", inst.addr.resource.type_name));
    let block = schema.map(|s| &s.block);
    if let Value::Object(attrs) = &value {
        for (k, v) in attrs.iter().filter(|(_, v)| !v.is_null()) {
            let path = value::Path::root().attr(k);
            let sensitive = |p: &value::Path| {
                inst.sensitive_attributes.iter().any(|m| p.starts_with(m)) || block.is_some_and(|b| b.is_sensitive(p))
            };
            out.push_str(&format!("    {k} = {}\n", render::show_redacted(v, &path, &sensitive)));
        }
    }
    out.push_str("}\n");
    out
}

fn print_pending_and_outputs(state: &State) {
    for op in &state.pending {
        let object = op.deposed.as_ref().map_or(String::new(), |key| format!(" (deposed object {key})"));
        println!(
            "# Interrupted: the {} of {}{object}, started {}; the object may exist (idempotency key {}).\n",
            op.operation, op.addr, op.started, op.idempotency_key
        );
    }
    if !state.outputs.is_empty() {
        println!("Outputs:\n");
        for (name, o) in &state.outputs {
            let v = o.decode().unwrap_or(Value::Null);
            println!("{name} = {}", render::show_value(&v, o.sensitive));
        }
    }
}
