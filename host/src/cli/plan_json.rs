//! A plan in the JSON shape of `terraform show -json PLANFILE` (its
//! format 1.2), so that plan-review tools written for Terraform read
//! cairn's plans: `resource_changes` (address, mode, type, name, index,
//! provider_name, and a `change` with its actions, before/after values,
//! `after_unknown`, `before_sensitive`, `after_sensitive`),
//! `output_changes`, `planned_values`, `prior_state` and `variables`.
//!
//! As in Terraform, unknown values are left out of `after` and marked
//! `true` in `after_unknown`; sensitive values are shown (the file is as
//! secret as the state) and marked `true` in the `*_sensitive` masks. The
//! prior state is the refreshed one the plan was made from. Only
//! `configuration` and `relevant_attributes` are not produced: cairn has
//! no JSON form of its configuration.

use std::collections::BTreeMap;

use serde_json::{Map, Value as Json, json};

use super::plan_config_json::provider_full_name;
use crate::addr::{InstanceAddr, InstanceKey, Mode};
use crate::config::Config;
use crate::plan::{Action, Plan, ResourceChange};
use crate::schema::{Block, ProviderSchema};
use crate::value::{Path, PathStep, Value};

/// The format of Terraform's plan JSON this follows.
pub const FORMAT_VERSION: &str = "1.2";

/// The format of Terraform's state JSON `prior_state` follows.
const STATE_FORMAT_VERSION: &str = "1.0";

/// The whole plan as `terraform show -json` shows a saved plan; `config`
/// (the plan's configuration) gives each provider's full address.
pub fn plan_json(
    plan: &Plan,
    variables: &BTreeMap<String, Value>,
    schemas: &BTreeMap<String, ProviderSchema>,
    config: &Config,
) -> Json {
    let version = crate::state::CAIRN_VERSION;
    let block_of = |c: &ResourceChange| schemas.get(&c.provider).and_then(|s| s.of(&c.addr.resource)).map(|s| &s.block);
    let resource_changes: Vec<Json> = plan.changes.iter().map(|c| resource_change(c, block_of(c), config)).collect();
    let planned: Vec<Json> = plan
        .changes
        .iter()
        .filter(|c| c.deposed.is_none() && !c.planned.is_null())
        .map(|c| resource_values(c, &c.planned, block_of(c), config))
        .collect();
    let prior: Vec<Json> = plan
        .changes
        .iter()
        .filter(|c| c.deposed.is_none() && !c.prior.is_null() && c.addr.resource.mode == Mode::Managed)
        .map(|c| resource_values(c, &c.prior, block_of(c), config))
        .collect();
    json!({
        "format_version": FORMAT_VERSION,
        "terraform_version": version,
        "cairn_version": version,
        "variables": variables.iter().map(|(k, v)| (k.clone(), json!({"value": known_json(v)}))).collect::<Map<_, _>>(),
        "planned_values": {
            "outputs": planned_outputs(plan),
            "root_module": { "resources": planned },
        },
        "resource_changes": resource_changes,
        "output_changes": output_changes(plan),
        "prior_state": {
            "format_version": STATE_FORMAT_VERSION,
            "terraform_version": version,
            "values": {
                "outputs": prior_outputs(plan),
                "root_module": { "resources": prior },
            },
        },
        "applyable": plan.has_changes(),
        "complete": true,
        "errored": false,
    })
}

/// Terraform's list of actions for one change: a replace is two, in the
/// order they happen.
pub fn actions(change: &ResourceChange) -> Vec<&'static str> {
    match change.action {
        Action::NoOp => vec!["no-op"],
        Action::Create => vec!["create"],
        Action::Read => vec!["read"],
        Action::Update => vec!["update"],
        Action::Delete => vec!["delete"],
        Action::Forget => vec!["forget"],
        Action::Replace if change.create_before_destroy => vec!["create", "delete"],
        Action::Replace => vec!["delete", "create"],
    }
}

/// The address fields every resource entry starts with.
fn address_fields(change: &ResourceChange, config: &Config) -> Map<String, Json> {
    let mut fields = instance_fields(&change.addr, &provider_full_name(&change.provider, config));
    // As Terraform's: only for a resource inside a module.
    if !change.addr.resource.module.is_root() {
        fields.insert("module_address".into(), json!(change.addr.resource.module.to_string()));
    }
    fields
}

/// The fields that name a resource instance in Terraform's JSON, in a
/// plan and in a state: `address`, `mode`, `type`, `name`, `index` and
/// `provider_name`, the provider's full address as Terraform writes it
/// (`registry.terraform.io/hashicorp/random`, see [`provider_full_name`]).
pub fn instance_fields(addr: &InstanceAddr, provider_address: &str) -> Map<String, Json> {
    let r = &addr.resource;
    let mut fields = Map::new();
    fields.insert("address".into(), json!(addr.to_string()));
    fields.insert("mode".into(), json!(if r.mode == Mode::Data { "data" } else { "managed" }));
    fields.insert("type".into(), json!(r.type_name));
    fields.insert("name".into(), json!(r.name));
    match &addr.key {
        Some(InstanceKey::Int(i)) => fields.insert("index".into(), json!(i)),
        Some(InstanceKey::String(s)) => fields.insert("index".into(), json!(s)),
        None => None,
    };
    fields.insert("provider_name".into(), json!(provider_address));
    fields
}

/// One entry of `resource_changes`.
fn resource_change(change: &ResourceChange, block: Option<&Block>, config: &Config) -> Json {
    let mut entry = address_fields(change, config);
    if let Some(key) = &change.deposed {
        entry.insert("deposed".into(), json!(key));
    }
    let sensitive = |v: &Value| sensitive_mask(v, &Path::root(), &|p| is_sensitive(change, block, p));
    entry.insert(
        "change".into(),
        json!({
            "actions": actions(change),
            "before": known_json(&change.prior),
            "after": known_json(&change.planned),
            "after_unknown": unknown_mask(&change.planned),
            "before_sensitive": sensitive(&change.prior),
            "after_sensitive": sensitive(&change.planned),
        }),
    );
    if let Some(reason) = action_reason(change) {
        entry.insert("action_reason".into(), json!(reason));
    }
    // Terraform 1.5+: an object adopted by an `import` block, and one a
    // `moved` block rebound.
    if let Some(id) = &change.importing
        && let Some(Json::Object(inner)) = entry.get_mut("change")
    {
        inner.insert("importing".into(), json!({ "id": id }));
    }
    if let Some(from) = &change.moved_from {
        entry.insert("previous_address".into(), json!(from.to_string()));
    }
    Json::Object(entry)
}

/// Terraform's `action_reason` for a replace, a destroy or a read during
/// apply.
pub(super) fn action_reason(change: &ResourceChange) -> Option<&'static str> {
    use crate::plan::ReplaceReason;
    let reason = change.replace_reason.as_ref()?;
    Some(match (&change.action, reason) {
        (Action::Replace, ReplaceReason::Tainted | ReplaceReason::Destroying) => "replace_because_tainted",
        (Action::Replace, ReplaceReason::RequiresReplace(_)) => "replace_because_cannot_update",
        (Action::Replace, ReplaceReason::Requested) => "replace_by_request",
        (Action::Replace, ReplaceReason::Triggered(_)) => "replace_by_triggers",
        (Action::Delete, ReplaceReason::DeleteNoResourceConfig) => "delete_because_no_resource_config",
        (Action::Delete, ReplaceReason::DeleteNoModule(_)) => "delete_because_no_module",
        (Action::Delete, ReplaceReason::DeleteCountIndex) => "delete_because_count_index",
        (Action::Delete, ReplaceReason::DeleteEachKey) => "delete_because_each_key",
        (Action::Delete, ReplaceReason::DeleteWrongRepetition) => "delete_because_wrong_repetition",
        (Action::Read, ReplaceReason::ReadConfigUnknown) => "read_because_config_unknown",
        (Action::Read, ReplaceReason::ReadDependencyPending) => "read_because_dependency_pending",
        _ => return None,
    })
}

/// A resource as `planned_values` and `prior_state` list it.
fn resource_values(change: &ResourceChange, value: &Value, block: Option<&Block>, config: &Config) -> Json {
    let mut entry = address_fields(change, config);
    entry.insert("schema_version".into(), json!(change.schema_version));
    entry.insert("values".into(), known_json(value));
    entry.insert("sensitive_values".into(), sensitive_mask(value, &Path::root(), &|p| is_sensitive(change, block, p)));
    Json::Object(entry)
}

/// Whether the value at `path` of a change's object is sensitive: by its
/// schema, or marked so by its provider.
fn is_sensitive(change: &ResourceChange, block: Option<&Block>, path: &Path) -> bool {
    !path.is_root()
        && (block.is_some_and(|b| b.is_sensitive(path)) || change.sensitive.iter().any(|m| path.starts_with(m)))
}

/// `output_changes`: every output, with what happens to it.
fn output_changes(plan: &Plan) -> Map<String, Json> {
    let mut changes = Map::new();
    for (name, o) in &plan.outputs {
        let action = match &o.prior {
            None => "create",
            Some(prior) if prior != &o.value => "update",
            Some(_) => "no-op",
        };
        let mut change = Map::new();
        change.insert("actions".into(), json!([action]));
        change.insert("before".into(), o.prior.as_ref().map_or(Json::Null, known_json));
        if o.value.is_wholly_known() {
            change.insert("after".into(), known_json(&o.value));
        }
        change.insert("after_unknown".into(), unknown_mask(&o.value));
        // As Terraform: an output's sensitivity is the same before and after.
        change.insert("before_sensitive".into(), json!(o.sensitive));
        change.insert("after_sensitive".into(), json!(o.sensitive));
        changes.insert(name.clone(), Json::Object(change));
    }
    for name in &plan.removed_outputs {
        changes.insert(
            name.clone(),
            json!({
                "actions": ["delete"], "before": null, "after": null, "after_unknown": false,
                "before_sensitive": false, "after_sensitive": false,
            }),
        );
    }
    changes
}

/// `planned_values.outputs`: each output's new value, when known.
fn planned_outputs(plan: &Plan) -> Map<String, Json> {
    plan.outputs
        .iter()
        .map(|(name, o)| {
            let mut entry = Map::new();
            entry.insert("sensitive".into(), json!(o.sensitive));
            if o.value.is_wholly_known() {
                entry.insert("type".into(), crate::value::type_to_json(&crate::value::Type::of(&o.value)));
                entry.insert("value".into(), known_json(&o.value));
            }
            (name.clone(), Json::Object(entry))
        })
        .collect()
}

/// `prior_state.values.outputs`: the outputs as the state holds them.
fn prior_outputs(plan: &Plan) -> Map<String, Json> {
    plan.outputs
        .iter()
        .filter_map(|(name, o)| Some((name, o.prior.as_ref()?, o.sensitive)))
        .map(|(name, prior, sensitive)| {
            let ty = crate::value::type_to_json(&crate::value::Type::of(prior));
            (name.clone(), json!({"sensitive": sensitive, "value": known_json(prior), "type": ty}))
        })
        .collect()
}

/// The value as plain JSON with its unknown parts left out: an unknown
/// attribute or map element is absent, an unknown element of a sequence
/// is null (Terraform's `after`).
pub fn known_json(value: &Value) -> Json {
    match value {
        Value::Unknown(_) | Value::Null => Json::Null,
        Value::Map(m) | Value::Object(m) => {
            Json::Object(m.iter().filter(|(_, v)| !v.is_unknown()).map(|(k, v)| (k.clone(), known_json(v))).collect())
        }
        Value::List(e) | Value::Set(e) | Value::Tuple(e) => Json::Array(e.iter().map(known_json).collect()),
        other => crate::value::to_json(other),
    }
}

/// Terraform's `after_unknown`: `true` where the value is unknown, `false`
/// for a known primitive or null; objects keep only their entries that are
/// not `false`, sequences every element.
pub fn unknown_mask(value: &Value) -> Json {
    match value {
        Value::Unknown(_) => Json::Bool(true),
        Value::Map(m) | Value::Object(m) => Json::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), unknown_mask(v)))
                .filter(|(_, mask)| mask != &Json::Bool(false))
                .collect(),
        ),
        Value::List(e) | Value::Set(e) | Value::Tuple(e) => Json::Array(e.iter().map(unknown_mask).collect()),
        _ => Json::Bool(false),
    }
}

/// Terraform's `*_sensitive` masks: `true` at every path `sensitive` says
/// is, in the same shape as [`unknown_mask`]. A null value is `false`.
pub fn sensitive_mask(value: &Value, path: &Path, sensitive: &dyn Fn(&Path) -> bool) -> Json {
    if sensitive(path) {
        return Json::Bool(true);
    }
    let entries = |m: &crate::value::Map, step: fn(String) -> PathStep| {
        Json::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), sensitive_mask(v, &path.push(step(k.clone())), sensitive)))
                .filter(|(_, mask)| mask != &Json::Bool(false))
                .collect(),
        )
    };
    match value {
        Value::Object(m) => entries(m, PathStep::Attr),
        Value::Map(m) => entries(m, PathStep::Key),
        Value::List(e) | Value::Set(e) | Value::Tuple(e) => {
            Json::Array(e.iter().enumerate().map(|(i, v)| sensitive_mask(v, &path.index(i), sensitive)).collect())
        }
        _ => Json::Bool(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(pairs: &[(&str, Value)]) -> Value {
        Value::object(pairs.iter().map(|(k, v)| (*k, v.clone())))
    }

    #[test]
    fn unknowns_are_left_out_of_the_value_and_marked_in_the_mask() {
        let v = object(&[
            ("id", Value::unknown()),
            ("name", Value::string("a")),
            ("tags", object(&[("x", Value::string("1"))])),
            ("list", Value::List(vec![Value::string("k"), Value::unknown()])),
        ]);
        assert_eq!(known_json(&v), json!({"name": "a", "tags": {"x": "1"}, "list": ["k", null]}));
        assert_eq!(unknown_mask(&v), json!({"id": true, "tags": {}, "list": [false, true]}));
        assert_eq!(unknown_mask(&Value::Null), json!(false));
    }

    #[test]
    fn sensitive_paths_are_marked_and_everything_else_left_out() {
        let v = object(&[("result", Value::string("s3cret")), ("length", Value::int(8))]);
        let secret = Path::root().attr("result");
        assert_eq!(sensitive_mask(&v, &Path::root(), &|p| p == &secret), json!({"result": true}));
        let tags = object(&[("tags", Value::Map([("k".to_string(), Value::string("v"))].into_iter().collect()))]);
        let key = Path::root().attr("tags").key("k");
        assert_eq!(sensitive_mask(&tags, &Path::root(), &|p| p == &key), json!({"tags": {"k": true}}));
        assert_eq!(sensitive_mask(&v, &Path::root(), &|_| false), json!({}));
        assert_eq!(sensitive_mask(&Value::Null, &Path::root(), &|_| false), json!(false));
    }
}
