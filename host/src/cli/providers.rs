//! `cairn providers schema` and `cairn providers inspect`: what providers
//! offer and what they could ask for.

use std::collections::BTreeMap;

use anyhow::Result;

use super::Common;
use crate::engine::Engine;
use crate::schema::{Block, Nesting, ProviderSchema};
use crate::value;

/// Runs `cairn providers schema`.
pub(super) fn schema(common: &Common, json: bool) -> Result<i32> {
    let ws = common.workspace()?;
    let mut names = ws.provider_names();
    if names.is_empty() {
        names.extend(crate::engine::BUILTIN_PROVIDERS.iter().map(|s| s.to_string()));
    }
    let schemas = Engine::new()?.schemas(&ws, &names)?;
    if json {
        let out: serde_json::Map<String, serde_json::Value> =
            schemas.iter().map(|(name, s)| (name.clone(), schema_json(s))).collect();
        println!("{}", serde_json::to_string_pretty(&serde_json::Value::Object(out))?);
    } else {
        for (name, s) in &schemas {
            print!("{}", schema_text(name, s));
        }
    }
    Ok(0)
}

/// Runs `cairn providers inspect FILE`: what a provider component is and
/// what it could ask for, without granting it anything.
pub(super) fn inspect(file: &std::path::Path) -> Result<i32> {
    let (name, wasm) = super::check::component(file)?;
    let found = Engine::new()?.inspect(&name, &wasm)?;
    println!("provider {name:?}");
    println!("  file:    {}", file.display());
    println!("  sha256:  {}", hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&wasm)));
    println!("  version: not declared (the cairn:provider@0.2.0 ABI has no version; the sha256 identifies it)");
    for (kind, table) in [("resource types", &found.schema.resources), ("data sources", &found.schema.data_sources)] {
        println!("\n{kind}:");
        if table.is_empty() {
            println!("  (none)");
        }
        for type_name in table.keys() {
            println!("  {type_name}");
        }
    }
    println!("\nimports (what it could ask for; each works only as far as its sandbox grants):");
    let width = found.imports.iter().map(|(i, _)| i.len()).max().unwrap_or(0);
    for (import, gives) in &found.imports {
        println!("  {import:width$}  {gives}");
    }
    Ok(0)
}

fn schema_text(name: &str, schema: &ProviderSchema) -> String {
    let mut out = format!("provider \"{name}\"\n");
    out.push_str(&block_text(&schema.provider.block, 2));
    for (kind, table) in [("resource", &schema.resources), ("data", &schema.data_sources)] {
        for (type_name, s) in table {
            out.push_str(&format!("\n{kind} \"{type_name}\" (schema version {})\n", s.version));
            out.push_str(&block_text(&s.block, 2));
        }
    }
    out.push('\n');
    out
}

fn block_text(block: &Block, indent: usize) -> String {
    let pad = " ".repeat(indent);
    let mut out = String::new();
    for (name, a) in &block.attributes {
        let flags: Vec<&str> = [
            (a.required, "required"),
            (a.optional, "optional"),
            (a.computed, "computed"),
            (a.sensitive, "sensitive"),
            (a.write_only, "write-only"),
        ]
        .into_iter()
        .filter_map(|(set, flag)| set.then_some(flag))
        .collect();
        let desc = if a.description.is_empty() { String::new() } else { format!(" — {}", a.description) };
        let nested = a.nested.as_ref().map(|n| format!(", nested {}", nesting_name(n.nesting))).unwrap_or_default();
        out.push_str(&format!("{pad}{name}: {} ({}{nested}){desc}\n", a.ty, flags.join(", ")));
        if let Some(n) = &a.nested {
            out.push_str(&block_text(&n.block, indent + 2));
        }
    }
    for (name, nb) in &block.blocks {
        out.push_str(&format!("{pad}{name} {{ }} ({} block)\n", nesting_name(nb.nesting)));
        out.push_str(&block_text(&nb.block, indent + 2));
    }
    out
}

fn nesting_name(nesting: Nesting) -> &'static str {
    match nesting {
        Nesting::Single => "single",
        Nesting::List => "list",
        Nesting::Set => "set",
        Nesting::Map => "map",
    }
}

fn schema_json(schema: &ProviderSchema) -> serde_json::Value {
    fn block(b: &Block) -> serde_json::Value {
        let attrs: serde_json::Map<String, serde_json::Value> = b
            .attributes
            .iter()
            .map(|(n, a)| {
                (n.clone(), {
                    let mut attr = serde_json::json!({
                        "type": value::type_to_json(&a.ty), "required": a.required, "optional": a.optional,
                        "computed": a.computed, "sensitive": a.sensitive, "write_only": a.write_only,
                        "description": a.description,
                    });
                    if let Some(n) = &a.nested {
                        attr["nested_type"] =
                            serde_json::json!({"nesting_mode": nesting_name(n.nesting), "block": block(&n.block)});
                    }
                    attr
                })
            })
            .collect();
        let blocks: serde_json::Map<String, serde_json::Value> = b
            .blocks
            .iter()
            .map(|(n, nb)| {
                let nesting = format!("{:?}", nb.nesting).to_lowercase();
                (
                    n.clone(),
                    serde_json::json!({"nesting_mode": nesting, "min_items": nb.min_items, "max_items": nb.max_items, "block": block(&nb.block)}),
                )
            })
            .collect();
        serde_json::json!({"attributes": attrs, "block_types": blocks, "description": b.description})
    }
    let table = |t: &BTreeMap<String, crate::schema::Schema>| -> serde_json::Value {
        t.iter()
            .map(|(n, s)| (n.clone(), serde_json::json!({"version": s.version, "block": block(&s.block)})))
            .collect()
    };
    serde_json::json!({
        "provider": {"version": schema.provider.version, "block": block(&schema.provider.block)},
        "resource_schemas": table(&schema.resources),
        "data_source_schemas": table(&schema.data_sources),
    })
}
