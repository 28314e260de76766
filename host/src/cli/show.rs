//! `cairn show`: the current state, as configuration-like text or JSON.

use anyhow::Result;

use super::{Common, render};
use crate::engine::Engine;
use crate::state::{InstanceStatus, State};
use crate::value::{self, Value};

/// Runs `cairn show`.
pub(super) fn run(common: &Common, json: bool) -> Result<i32> {
    let ws = common.workspace()?;
    let engine = Engine::new()?;
    let Some(state) = engine.read_state(&ws)? else {
        println!("No state.");
        return Ok(0);
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&state)?);
        return Ok(0);
    }
    if state.resources.is_empty() && state.outputs.is_empty() && state.pending.is_empty() {
        println!("The state is empty.");
        return Ok(0);
    }
    // Only the providers of what the state holds: their schemas say how to
    // read the stored attributes and which ones are sensitive.
    let names = state.resources.iter().map(|r| r.provider.clone()).collect();
    let schemas = engine.schemas(&ws, &names)?;
    for inst in &state.resources {
        let schema = schemas.get(&inst.provider).and_then(|s| s.resources.get(&inst.addr.resource.type_name));
        let value = match schema {
            Some(s) => value::from_json(&inst.attributes, &s.block.implied_type()).unwrap_or(Value::Null),
            None => value::from_json_untyped(&inst.attributes),
        };
        let status = match inst.status {
            InstanceStatus::Tainted => " (tainted)",
            InstanceStatus::Destroying => " (being destroyed)",
            InstanceStatus::Ready => "",
        };
        println!("# {}:{status}", inst.addr);
        let name = inst.addr.to_string();
        let label = name.split_once('.').map_or("", |(_, n)| n);
        println!("resource \"{}\" \"{label}\" {{", inst.addr.resource.type_name);
        let block = schema.map(|s| &s.block);
        if let Value::Object(attrs) = &value {
            for (k, v) in attrs.iter().filter(|(_, v)| !v.is_null()) {
                let path = value::Path::root().attr(k);
                let marked = inst.sensitive_attributes.iter().any(|m| path.starts_with(m));
                let sensitive = marked || block.is_some_and(|b| b.is_sensitive(&path));
                println!("    {k} = {}", render::show_value(v, sensitive));
            }
        }
        println!("}}\n");
    }
    print_pending_and_outputs(&state);
    Ok(0)
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
