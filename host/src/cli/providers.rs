//! `cairn providers …`: what providers offer and what they could ask for
//! (`schema`, `inspect`), signing them (`keygen`, `sign`, `verify`) and the
//! compiled-code cache (`cache clean`).

use std::collections::BTreeMap;

use anyhow::{Context, Result, bail};

use super::Common;
use crate::engine::Engine;
use crate::registry;
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
    let (file_stem, wasm) = super::check::component(file)?;
    // The identity is read from the file's bytes, before anything runs.
    let identity = registry::identity::read(&wasm).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    let name = identity.as_ref().map_or(file_stem, |i| i.name.clone());
    let found = Engine::new()?.inspect(&name, &wasm)?;
    println!("provider {name:?}");
    println!("  file:    {}", file.display());
    println!("  sha256:  {}", registry::sha256_hex(&wasm));
    match &identity {
        Some(identity) => println!("  version: {}", identity.version),
        None => println!(
            "  version: not declared (no {} section; the name is the file's, the sha256 identifies it)",
            registry::identity::SECTION
        ),
    }
    let signature = registry::signature::signature_path(file);
    if signature.exists() {
        println!("  signed:  {} (check it with `cairn providers verify`)", signature.display());
    }
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

/// Runs `cairn providers componentize MODULE -o OUT [--wit PATH] [--world NAME]`.
pub(super) fn componentize(
    module: &std::path::Path,
    output: &std::path::Path,
    wit: Option<&std::path::Path>,
    world: Option<&str>,
) -> Result<i32> {
    let bytes = std::fs::read(module).with_context(|| format!("cannot read {}", module.display()))?;
    let component = crate::componentize::componentize(&bytes, crate::componentize::WorldSource { wit, world })
        .with_context(|| format!("cannot make a provider component of {}", module.display()))?;
    std::fs::write(output, &component).with_context(|| format!("cannot write {}", output.display()))?;
    println!("Wrote {} ({} bytes).", output.display(), component.len());
    Ok(0)
}

/// Runs `cairn providers keygen PREFIX`: a minisign key pair in
/// `PREFIX.key` and `PREFIX.pub`.
pub(super) fn keygen(prefix: &std::path::Path) -> Result<i32> {
    let public = registry::signature::keygen(prefix).map_err(anyhow::Error::msg)?;
    println!("Secret key: {}.key (keep it private; it is not encrypted)", prefix.display());
    println!("Public key: {}.pub", prefix.display());
    println!("\nTrust it in a configuration with:\n  cairn {{\n    trusted_keys = [\"{public}\"]\n  }}");
    Ok(0)
}

/// Runs `cairn providers sign --key KEY FILE`: writes `FILE.minisig`.
pub(super) fn sign(key: &std::path::Path, file: &std::path::Path) -> Result<i32> {
    let wasm = std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
    let signature = registry::signature::sign(key, &wasm).map_err(anyhow::Error::msg)?;
    let path = registry::signature::signature_path(file);
    std::fs::write(&path, signature).with_context(|| format!("cannot write {}", path.display()))?;
    println!("Signed {} (sha256 {}): {}", file.display(), registry::sha256_hex(&wasm), path.display());
    Ok(0)
}

/// Runs `cairn providers verify --key KEY FILE`: checks `FILE.minisig`
/// against the keys (one-line public keys or `.pub` files); exit 1 when no
/// key signed it.
pub(super) fn verify(keys: &[String], file: &std::path::Path) -> Result<i32> {
    if keys.is_empty() {
        anyhow::bail!("give the public key to check against: --key RW… or --key FILE.pub");
    }
    let keys: Vec<String> = keys
        .iter()
        .map(|k| match std::fs::read_to_string(k) {
            Ok(text) => text,
            Err(_) => k.clone(),
        })
        .collect();
    let wasm = std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
    let path = registry::signature::signature_path(file);
    let signature = std::fs::read_to_string(&path)
        .with_context(|| format!("{} is not signed: cannot read {}", file.display(), path.display()))?;
    match registry::signature::verify(&wasm, &signature, &keys) {
        Ok(key) => {
            let public = registry::signature::parse_public_key(&key).map(|k| k.to_base64()).unwrap_or(key);
            println!("{} is signed by {public}", file.display());
            Ok(0)
        }
        Err(e) => {
            eprintln!("Error: {}: {e}", file.display());
            Ok(1)
        }
    }
}

/// Runs `cairn providers push FILE oci://HOST/REPOSITORY:TAG`: publishes
/// the component as a Wasm OCI artifact, with its signature
/// (`FILE.minisig`) when there is one.
pub(super) fn push(file: &std::path::Path, target: &str) -> Result<i32> {
    let wasm = std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
    registry::identity::read(&wasm).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    let signature_path = registry::signature::signature_path(file);
    let signature = match std::fs::read(&signature_path) {
        Ok(bytes) => Some(bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", signature_path.display())),
    };
    let url = registry::oci::push(&wasm, signature.as_deref(), target).map_err(anyhow::Error::msg)?;
    let signed = if signature.is_some() { ", with its signature" } else { "" };
    println!("Pushed {} (sha256 {}{signed}) to {target}\n  {url}", file.display(), registry::sha256_hex(&wasm));
    Ok(0)
}

/// Runs `cairn providers cache clean`: removes the compiled code of every
/// provider (the next run compiles again).
pub(super) fn cache_clean() -> Result<i32> {
    let Some(root) = crate::runtime::default_cache_root() else {
        println!("No cache directory (set CAIRN_CACHE_DIR).");
        return Ok(0);
    };
    let removed = crate::runtime::clean_component_cache(&root)
        .with_context(|| format!("cannot clean {}", root.join("components").display()))?;
    println!("Removed {removed} compiled provider(s) from {}.", root.join("components").display());
    Ok(0)
}

/// Runs `cairn providers cache warm`: loads every provider the
/// configuration uses, which compiles into the cache whatever is not
/// there yet, one at a time, saying how long each took.
pub(super) fn cache_warm(common: &Common) -> Result<i32> {
    let Some(root) = crate::runtime::default_cache_root() else {
        bail!("there is no compiled-code cache to warm: set CAIRN_CACHE_DIR (or HOME)");
    };
    let ws = common.workspace()?;
    let engine = Engine::with_optimized_code()?;
    for name in ws.provider_names() {
        let started = std::time::Instant::now();
        engine.schemas(&ws, &[name.clone()].into())?;
        println!("- {name}: ready ({:.1} s)", started.elapsed().as_secs_f64());
    }
    println!("The compiled providers are in {}.", root.join("components").display());
    Ok(0)
}

/// Runs the hidden `cairn providers cache compile-background --name NAME
/// --dir DIR`: the optimised compile a tiered first run started, reading
/// the cache key and the `.wasm` from standard input.
pub(super) fn cache_compile_background(name: &str, dir: &std::path::Path) -> Result<i32> {
    crate::runtime::compile_into_cache(std::io::stdin().lock(), dir)
        .with_context(|| format!("cannot compile provider {name:?} into {}", dir.display()))?;
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
