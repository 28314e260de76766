//! The `-json` event stream in Terraform's machine-readable UI format
//! (Terraform 1.11's `ui` 1.2), so that tools written for `terraform plan
//! -json` and `terraform apply -json` read cairn's.
//!
//! Every line carries Terraform's envelope (`@level`, `@message`,
//! `@module`, `@timestamp`) and its `type`. Where Terraform has the same
//! message, its fields are there too (`planned_change`'s `change`,
//! `change_summary`'s `changes`, `diagnostic`'s `diagnostic`), beside
//! cairn's own fields; Terraform's messages cairn has no event of its own
//! for are lines of their own: `version` first, `apply_start`,
//! `apply_complete` and `apply_errored` beside cairn's `node_start` and
//! `node_finish`, and the apply's `change_summary` before cairn's
//! `summary`; the plan's and the apply's `outputs` are events of cairn's
//! too. cairn's other events (`run_start`, `recovered`, `summary`)
//! stay as extra message types, which Terraform's readers skip.

use serde_json::{Map, Value as Json, json};

use super::output::human_line;
use crate::apply::{Event, Outcome};

/// The version of Terraform's machine-readable UI this follows.
pub const UI_VERSION: &str = "1.2";

/// The lines of `event`, in order, each a whole JSON object.
pub fn lines(event: &Event) -> Vec<Json> {
    let own = serde_json::to_value(event).expect("events are plain data");
    let mut out = Vec::new();
    if let Event::RunStart { cairn_version, .. } = event {
        let mut version = Map::new();
        version.insert("type".into(), json!("version"));
        version.insert("terraform".into(), json!(crate::config::TERRAFORM_VERSION));
        version.insert("cairn".into(), json!(cairn_version));
        version.insert("ui".into(), json!(UI_VERSION));
        out.push(enveloped(version, "info", format!("cairn {cairn_version}")));
    }
    if let Some((line, level, message)) = hook_line(event) {
        out.push(enveloped(line, level, message));
    }
    if let Some((line, message)) = apply_summary(event) {
        out.push(enveloped(line, "info", message));
    }
    let Json::Object(mut fields) = own else { return out };
    let level = match event {
        Event::Diagnostic { severity, .. } if severity == "error" => "error",
        Event::Diagnostic { .. } => "warn",
        _ => "info",
    };
    add_terraform_fields(event, &mut fields);
    out.push(enveloped(fields, level, message(event)));
    out
}

/// `fields` with Terraform's envelope.
fn enveloped(mut fields: Map<String, Json>, level: &str, message: String) -> Json {
    fields.insert("@level".into(), json!(level));
    fields.insert("@message".into(), json!(message));
    fields.insert("@module".into(), json!("terraform.ui"));
    fields.insert("@timestamp".into(), json!(crate::state::format_utc(std::time::SystemTime::now())));
    Json::Object(fields)
}

/// Terraform's fields of the messages cairn's events share a type with.
fn add_terraform_fields(event: &Event, fields: &mut Map<String, Json>) {
    match event {
        Event::PlannedChange { address, action, importing, previous_address, reason, .. } => {
            let mut change = Map::new();
            change.insert("resource".into(), resource(address));
            change.insert("action".into(), json!(terraform_action(action)));
            if let Some(reason) = reason {
                change.insert("reason".into(), json!(reason));
            }
            if let Some(from) = previous_address {
                change.insert("previous_resource".into(), resource(from));
            }
            if let Some(importing) = importing {
                change.insert("importing".into(), json!({"id": importing.id}));
            }
            fields.insert("change".into(), Json::Object(change));
        }
        Event::ResourceDrift { address, action } => {
            fields.insert("change".into(), json!({"resource": resource(address), "action": action}));
        }
        Event::RefreshStart { address, id } | Event::RefreshComplete { address, id } => {
            let mut hook = Map::new();
            hook.insert("resource".into(), resource(address));
            if let Some(id) = id {
                hook.insert("id_key".into(), json!("id"));
                hook.insert("id_value".into(), json!(id));
            }
            fields.insert("hook".into(), Json::Object(hook));
        }
        Event::ChangeSummary { add, change, destroy, import, .. } => {
            let changes =
                json!({"add": add, "change": change, "import": import, "remove": destroy, "operation": "plan"});
            fields.insert("changes".into(), changes);
        }
        Event::Diagnostic { severity, summary, detail, range, path, .. } => {
            let mut diagnostic = Map::new();
            diagnostic.insert("severity".into(), json!(severity));
            diagnostic.insert("summary".into(), json!(summary));
            diagnostic.insert("detail".into(), json!(detail));
            if let Some(range) = range {
                diagnostic.insert("range".into(), json!(range));
            }
            if let Some(path) = path {
                diagnostic.insert("address".into(), json!(path));
            }
            fields.insert("diagnostic".into(), Json::Object(diagnostic));
        }
        _ => {}
    }
}

/// The `@message` of an event of cairn's, as Terraform words its own.
fn message(event: &Event) -> String {
    match event {
        Event::RunStart { command, cairn_version, .. } => format!("cairn {cairn_version}: {command}"),
        Event::Recovered { message, .. } => message.clone(),
        Event::PlannedChange { address, action, .. } => format!("{address}: Plan to {}", terraform_action(action)),
        Event::ResourceDrift { address, action } => format!("{address}: Drift detected ({action})"),
        Event::RefreshStart { address, id } => format!("{address}: Refreshing state...{}", id_suffix(id)),
        Event::RefreshComplete { address, id } => format!("{address}: Refresh complete{}", id_suffix(id)),
        Event::ChangeSummary { add, change, destroy, .. } => {
            format!("Plan: {add} to add, {change} to change, {destroy} to destroy.")
        }
        Event::NodeStart { .. } | Event::NodeFinish { .. } => hook_message(event),
        Event::EphemeralStart { .. } | Event::EphemeralFinish { .. } => human_line(event).unwrap_or_default(),
        Event::Diagnostic { severity, summary, .. } => {
            format!("{}: {summary}", if severity == "error" { "Error" } else { "Warning" })
        }
        Event::Summary { command, outcome, .. } => format!("{command}: {outcome}"),
        Event::Outputs { outputs } => format!("Outputs: {}", outputs.len()),
    }
}

/// ` [id=ID]`, or nothing without an id.
fn id_suffix(id: &Option<String>) -> String {
    id.as_ref().map(|id| format!(" [id={id}]")).unwrap_or_default()
}

/// Terraform's `apply_start`, `apply_complete` or `apply_errored` line of
/// an operation on an object: its fields, level and message.
fn hook_line(event: &Event) -> Option<(Map<String, Json>, &'static str, String)> {
    let (kind, address, action, hook_extra) = match event {
        Event::NodeStart { address, action, .. } => ("apply_start", address, action, Map::new()),
        Event::NodeFinish { address, action, outcome, duration_ms, id, .. } => {
            let mut extra = Map::new();
            extra.insert("elapsed_seconds".into(), json!(duration_ms / 1000));
            let kind = match outcome {
                Outcome::Done => {
                    if let Some(id) = id {
                        extra.insert("id_key".into(), json!("id"));
                        extra.insert("id_value".into(), json!(id));
                    }
                    "apply_complete"
                }
                Outcome::Failed => "apply_errored",
                _ => return None,
            };
            (kind, address, action, extra)
        }
        // Terraform's `ephemeral_op_start` / `ephemeral_op_complete`; a
        // failure is told by the diagnostic alone, as Terraform's is.
        Event::EphemeralStart { address, action } => ("ephemeral_op_start", address, action, Map::new()),
        Event::EphemeralFinish { address, action, done: true, duration_ms } => {
            let mut extra = Map::new();
            extra.insert("elapsed_seconds".into(), json!(duration_ms / 1000));
            ("ephemeral_op_complete", address, action, extra)
        }
        _ => return None,
    };
    let mut hook = Map::new();
    hook.insert("resource".into(), resource(address));
    hook.insert("action".into(), json!(action));
    hook.extend(hook_extra);
    let mut line = Map::new();
    line.insert("hook".into(), Json::Object(hook));
    line.insert("type".into(), json!(kind));
    let level = if kind == "apply_errored" { "error" } else { "info" };
    Some((line, level, hook_message(event)))
}

/// The `@message` of a hook: the human progress line, except for a data
/// source's read, which Terraform's JSON words as a refresh
/// (`Refreshing...`, `Refresh complete after 0s`) where its human output
/// says `Reading...`.
fn hook_message(event: &Event) -> String {
    let line = human_line(event).unwrap_or_default();
    match event {
        Event::NodeStart { action, .. } if action == "read" => line.replace(": Reading...", ": Refreshing..."),
        Event::NodeFinish { action, .. } if action == "read" => line.replace(": Read complete", ": Refresh complete"),
        _ => line,
    }
}

/// Terraform's closing `change_summary` of an apply or a destroy, from
/// cairn's `summary`.
fn apply_summary(event: &Event) -> Option<(Map<String, Json>, String)> {
    let Event::Summary { command, added, changed, destroyed, imported, .. } = event else { return None };
    if command == "plan" {
        return None;
    }
    let operation = if command == "destroy" { "destroy" } else { "apply" };
    let mut line = Map::new();
    line.insert(
        "changes".into(),
        json!({"add": added, "change": changed, "import": imported, "remove": destroyed, "operation": operation}),
    );
    line.insert("type".into(), json!("change_summary"));
    let message = match operation {
        "destroy" => format!("Destroy complete! Resources: {destroyed} destroyed."),
        _ => format!("Apply complete! Resources: {added} added, {changed} changed, {destroyed} destroyed."),
    };
    Some((line, message))
}

/// Terraform's description of a resource instance in UI messages.
fn resource(address: &str) -> Json {
    let parsed = address.parse::<crate::addr::InstanceAddr>().ok();
    let (module, type_name, name, key) = match &parsed {
        Some(a) => {
            let r = &a.resource;
            let key = match &a.key {
                Some(crate::addr::InstanceKey::Int(i)) => json!(i),
                Some(crate::addr::InstanceKey::String(s)) => json!(s),
                None => Json::Null,
            };
            let module = if r.module.is_root() { String::new() } else { r.module.to_string() };
            (module, r.type_name.clone(), r.name.clone(), key)
        }
        None => (String::new(), String::new(), String::new(), Json::Null),
    };
    let local = match module.is_empty() {
        true => address.to_string(),
        false => address.strip_prefix(&format!("{module}.")).unwrap_or(address).to_string(),
    };
    let implied_provider = type_name.split('_').next().unwrap_or_default().to_string();
    json!({
        "addr": address,
        "module": module,
        "resource": local,
        "implied_provider": implied_provider,
        "resource_type": type_name,
        "resource_name": name,
        "resource_key": key,
    })
}

/// Terraform's name of a planned action: cairn's `forget` is Terraform's
/// `remove`.
fn terraform_action(action: &str) -> &str {
    match action {
        "forget" => "remove",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_planned_change_has_terraform_s_envelope_and_change_beside_cairn_s_fields() {
        let event = Event::PlannedChange {
            address: "module.m.terraform_data.a[\"k\"]".into(),
            action: "create".into(),
            create_before_destroy: false,
            deposed_key: None,
            importing: None,
            previous_address: None,
            reason: None,
        };
        let lines = lines(&event);
        assert_eq!(lines.len(), 1);
        let line = &lines[0];
        assert_eq!((line["type"].as_str(), line["@level"].as_str()), (Some("planned_change"), Some("info")));
        assert_eq!(line["@module"], "terraform.ui");
        assert_eq!(line["@message"], "module.m.terraform_data.a[\"k\"]: Plan to create");
        assert_eq!(line["address"], "module.m.terraform_data.a[\"k\"]", "cairn's own field stays");
        let resource = &line["change"]["resource"];
        assert_eq!(resource["module"], "module.m");
        assert_eq!(resource["resource"], "terraform_data.a[\"k\"]");
        assert_eq!(resource["resource_key"], "k");
        assert_eq!(resource["implied_provider"], "terraform");
    }

    #[test]
    fn an_apply_gets_terraform_s_hooks_and_closing_summary() {
        let finish = Event::NodeFinish {
            address: "terraform_data.a".into(),
            action: "create".into(),
            deposed: false,
            deposed_key: None,
            replace: false,
            outcome: Outcome::Done,
            duration_ms: 2500,
            id: Some("x1".into()),
        };
        let out = lines(&finish);
        assert_eq!(out[0]["type"], "apply_complete");
        assert_eq!(out[0]["hook"]["id_value"], "x1");
        assert_eq!(out[0]["hook"]["elapsed_seconds"], 2);
        assert_eq!(out[1]["type"], "node_finish");
        let summary = Event::Summary {
            command: "apply".into(),
            outcome: "success".into(),
            added: 1,
            changed: 0,
            destroyed: 0,
            imported: 0,
            forgotten: 0,
            errors: 0,
        };
        let out = lines(&summary);
        assert_eq!(out[0]["type"], "change_summary");
        assert_eq!(out[0]["changes"]["operation"], "apply");
        assert_eq!(out[0]["@message"], "Apply complete! Resources: 1 added, 0 changed, 0 destroyed.");
        assert_eq!(out[1]["type"], "summary");
    }
}
