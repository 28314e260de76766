//! `cairn show -json` of the state, in the shape of `terraform show -json`
//! (Terraform's JSON output format, `format_version` 1.0): the outputs and
//! `values.root_module`, whose resources are listed in their module,
//! child modules nested by module instance, each with its `values` and
//! `sensitive_values` mask. Tools written for Terraform's JSON (policy
//! checks, cost estimates, `hashicorp/terraform-json`) read it. As in
//! Terraform's, sensitive values are given and marked `true` in the mask;
//! cairn's own state file is what `cairn state pull` prints.

use std::collections::BTreeMap;

use serde_json::{Map, Value as Json, json};

use super::plan_config_json::provider_full_name;
use super::plan_json::{instance_fields, known_json, sensitive_mask};
use crate::addr::ModuleInstance;
use crate::config::Config;
use crate::schema::ProviderSchema;
use crate::state::{InstanceState, InstanceStatus, State};
use crate::value::{self, Path, Type, Value};

/// The format of Terraform's state JSON this follows.
const FORMAT_VERSION: &str = "1.0";

/// The state as `terraform show -json` shows one; `schemas` (by provider
/// local name) give each object's type and sensitive attributes, and
/// `config` each provider's full address.
pub fn state_json(state: &State, schemas: &BTreeMap<String, ProviderSchema>, config: &Config) -> Json {
    let mut modules: BTreeMap<ModuleInstance, Vec<Json>> = BTreeMap::new();
    for inst in state.resources.iter() {
        let schema = schemas.get(&inst.provider).and_then(|s| s.of(&inst.addr.resource));
        let module = modules.entry(inst.addr.resource.module.clone()).or_default();
        if !inst.attributes.is_null() {
            module.push(resource(inst, schema, None, config));
        }
        for deposed in &inst.deposed {
            let object = InstanceState { attributes: deposed.attributes.clone(), ..inst.clone() };
            module.push(resource(&object, schema, Some(&deposed.key), config));
        }
    }
    let outputs: Map<String, Json> = state
        .outputs
        .iter()
        .map(|(name, o)| {
            let v = o.decode().unwrap_or(Value::Null);
            let ty = value::type_to_json(&Type::of(&v));
            (name.clone(), json!({"sensitive": o.sensitive, "value": known_json(&v), "type": ty}))
        })
        .collect();
    let version = crate::state::CAIRN_VERSION;
    json!({
        "format_version": FORMAT_VERSION,
        "terraform_version": version,
        "cairn_version": version,
        "values": {
            "outputs": outputs,
            "root_module": module_json(&ModuleInstance::root(), &mut modules),
        },
    })
}

/// One module's entry: its resources and, nested, the modules inside it
/// (every module instance with resources, and those on the way to one).
fn module_json(module: &ModuleInstance, modules: &mut BTreeMap<ModuleInstance, Vec<Json>>) -> Json {
    let mut entry = Map::new();
    if !module.is_root() {
        entry.insert("address".into(), json!(module.to_string()));
    }
    entry.insert("resources".into(), Json::Array(modules.remove(module).unwrap_or_default()));
    let mut children: Vec<ModuleInstance> = modules.keys().filter_map(|m| child_towards(module, m)).collect();
    children.sort();
    children.dedup();
    if !children.is_empty() {
        let nested: Vec<Json> = children.iter().map(|c| module_json(c, modules)).collect();
        entry.insert("child_modules".into(), Json::Array(nested));
    }
    Json::Object(entry)
}

/// The child of `parent` on the way to `descendant`, if `descendant` is
/// inside `parent`.
fn child_towards(parent: &ModuleInstance, descendant: &ModuleInstance) -> Option<ModuleInstance> {
    let (p, d) = (&parent.0, &descendant.0);
    (d.len() > p.len() && d[..p.len()] == p[..]).then(|| ModuleInstance(d[..=p.len()].to_vec()))
}

/// One object: the current object of an instance, or a deposed one.
fn resource(
    inst: &InstanceState,
    schema: Option<&crate::schema::Schema>,
    deposed: Option<&str>,
    config: &Config,
) -> Json {
    let value = match schema {
        Some(s) if s.version == inst.schema_version => {
            inst.attributes.decode(&s.block.implied_type()).unwrap_or(Value::Null)
        }
        _ => inst.attributes.to_json().map_or(Value::Null, |j| value::from_json_untyped(&j)),
    };
    let block = schema.map(|s| &s.block);
    let sensitive = |p: &Path| {
        !p.is_root()
            && (inst.sensitive_attributes.iter().any(|m| p.starts_with(m)) || block.is_some_and(|b| b.is_sensitive(p)))
    };
    let mut entry = instance_fields(&inst.addr, &provider_full_name(&inst.provider, config));
    entry.insert("schema_version".into(), json!(inst.schema_version));
    entry.insert("values".into(), known_json(&value));
    entry.insert("sensitive_values".into(), sensitive_mask(&value, &Path::root(), &sensitive));
    if !inst.dependencies.is_empty() {
        let depends: Vec<String> = inst.dependencies.iter().map(ToString::to_string).collect();
        entry.insert("depends_on".into(), json!(depends));
    }
    if inst.status == InstanceStatus::Tainted && deposed.is_none() {
        entry.insert("tainted".into(), json!(true));
    }
    if let Some(key) = deposed {
        entry.insert("deposed_key".into(), json!(key));
    }
    Json::Object(entry)
}
