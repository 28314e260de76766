//! The `configuration` section of a saved plan's `show -json`, as
//! Terraform writes it: each module's resources with their expressions,
//! outputs, input variables and module calls (recursively), and the
//! provider configurations. Policy tools (OPA/conftest, Sentinel-like
//! checks) read it to see what an attribute is written as: a constant, or
//! the objects it refers to.

use serde_json::{Map, Value as Json, json};

use super::plan_json::known_json;
use crate::addr::Mode;
use crate::config::{Body, Config, EvalContext, Expression, Reference, Step};

/// The `configuration` section for the root module `config`, as loaded
/// (`config::load`: its module calls not expanded).
pub fn configuration_json(config: &Config) -> Json {
    let mut providers = Map::new();
    let names = config.resources.iter().map(|r| &r.provider).chain(config.providers.iter().map(|p| &p.name));
    for name in names {
        let entry = || json!({"name": name, "full_name": provider_full_name(name, config)});
        providers.entry(name.clone()).or_insert_with(entry);
    }
    json!({"provider_config": providers, "root_module": module_json(config)})
}

/// The provider's address as Terraform writes it in `full_name`
/// (`registry.terraform.io/hashicorp/random`): the registry address its
/// `required_providers` entry gives, or else the one Terraform implies for
/// the local name, `terraform.io/builtin/terraform` for the built-in one.
/// Tools written for Terraform key providers by it.
pub fn provider_full_name(name: &str, config: &Config) -> String {
    let local = name.split('.').next().unwrap_or(name);
    let written = config.required_providers.get(local).and_then(|r| r.source.as_deref());
    if let Some((host, namespace, type_name)) = written.and_then(crate::registry::registry_address) {
        return format!("{host}/{namespace}/{type_name}");
    }
    match local {
        "terraform" => "terraform.io/builtin/terraform".to_string(),
        _ => format!("registry.terraform.io/hashicorp/{local}"),
    }
}

/// One module, as written: its resources, outputs, variables and module
/// calls.
fn module_json(config: &Config) -> Json {
    let resources: Vec<Json> = config
        .resources
        .iter()
        .map(|r| {
            let mut entry = Map::new();
            entry.insert("address".into(), json!(r.addr.to_string()));
            entry.insert(
                "mode".into(),
                json!(match r.addr.mode {
                    Mode::Data => "data",
                    Mode::Ephemeral => "ephemeral",
                    Mode::Managed => "managed",
                }),
            );
            entry.insert("type".into(), json!(r.addr.type_name));
            entry.insert("name".into(), json!(r.addr.name));
            entry.insert("provider_config_key".into(), json!(r.provider));
            entry.insert("expressions".into(), body_json(&r.body, &config.dir));
            if let Some(count) = &r.count {
                entry.insert("count_expression".into(), expression_json(count, &config.dir));
            }
            if let Some(for_each) = &r.for_each {
                entry.insert("for_each_expression".into(), expression_json(for_each, &config.dir));
            }
            Json::Object(entry)
        })
        .collect();
    let outputs: Map<String, Json> = config
        .outputs
        .iter()
        .map(|(name, o)| {
            let mut entry = Map::new();
            entry.insert("expression".into(), expression_json(&o.expr, &config.dir));
            if o.sensitive {
                entry.insert("sensitive".into(), json!(true));
            }
            if !o.description.is_empty() {
                entry.insert("description".into(), json!(o.description));
            }
            (name.clone(), Json::Object(entry))
        })
        .collect();
    let variables: Map<String, Json> = config
        .variables
        .iter()
        .map(|(name, v)| {
            let mut entry = Map::new();
            if let Some(default) = &v.default {
                entry.insert("default".into(), known_json(default));
            }
            if !v.description.is_empty() {
                entry.insert("description".into(), json!(v.description));
            }
            if v.sensitive {
                entry.insert("sensitive".into(), json!(true));
            }
            (name.clone(), Json::Object(entry))
        })
        .collect();
    let calls: Map<String, Json> = config
        .modules
        .iter()
        .map(|call| {
            let mut entry = Map::new();
            entry.insert("source".into(), json!(call.source));
            let inputs: Map<String, Json> =
                call.inputs.iter().map(|(name, a)| (name.clone(), expression_json(&a.expr, &config.dir))).collect();
            entry.insert("expressions".into(), Json::Object(inputs));
            if let Some(count) = &call.count {
                entry.insert("count_expression".into(), expression_json(count, &config.dir));
            }
            if let Some(for_each) = &call.for_each {
                entry.insert("for_each_expression".into(), expression_json(for_each, &config.dir));
            }
            entry.insert("module".into(), module_json(&call.config));
            (call.name.clone(), Json::Object(entry))
        })
        .collect();
    let mut module = Map::new();
    module.insert("resources".into(), Json::Array(resources));
    if !outputs.is_empty() {
        module.insert("outputs".into(), Json::Object(outputs));
    }
    if !variables.is_empty() {
        module.insert("variables".into(), Json::Object(variables));
    }
    if !calls.is_empty() {
        module.insert("module_calls".into(), Json::Object(calls));
    }
    Json::Object(module)
}

/// A body's expressions: each attribute's, and each nested block type as
/// a list of its blocks' bodies.
fn body_json(body: &Body, dir: &std::path::Path) -> Json {
    let mut out = Map::new();
    for attr in &body.attributes {
        out.insert(attr.name.clone(), expression_json(&attr.expr, dir));
    }
    for block in &body.blocks {
        let entry = out.entry(block.type_name.clone()).or_insert_with(|| Json::Array(Vec::new()));
        if let Json::Array(blocks) = entry {
            blocks.push(body_json(&block.body, dir));
        }
    }
    Json::Object(out)
}

/// An expression as Terraform describes one: its value when it refers to
/// nothing (`constant_value`), else what it refers to (`references`,
/// each reference with the attribute read and without, as Terraform
/// lists them).
fn expression_json(expr: &Expression, dir: &std::path::Path) -> Json {
    let mut references: Vec<String> = Vec::new();
    expr.visit_traversals(&mut Vec::new(), &mut |root, steps, _| {
        let Ok((reference, consumed)) = Reference::from_traversal(root, steps) else { return };
        let base = reference.to_string();
        if let (Reference::Resource(_) | Reference::Module(_), Some(Step::Attr(attr))) =
            (&reference, steps.get(consumed))
        {
            references.push(format!("{base}.{attr}"));
        }
        references.push(base);
    });
    if references.is_empty()
        && let Ok(value) = crate::config::eval(expr, &EvalContext::new(dir))
        && value.is_wholly_known()
    {
        return json!({"constant_value": known_json(&value)});
    }
    let mut seen = std::collections::BTreeSet::new();
    references.retain(|r| seen.insert(r.clone()));
    json!({"references": references})
}
