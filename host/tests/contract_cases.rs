//! The contract conformance table: runs every case in every `*.json` file
//! under `host/tests/contract-cases/` (searched recursively) against
//! `cairn::contract`, and reports every failing case by name. The case
//! format and the JSON encoding of schemas and values are described in
//! `host/tests/contract-cases/README.md`. New files are picked up as they
//! are dropped in.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path as FsPath, PathBuf};

use cairn::contract::{self, Violation};
use cairn::schema::{Attribute, Block, NestedBlock, Nesting};
use cairn::value::{Number, Path, Type, Value, refinements_from_json, to_json, type_from_json};
use serde_json::{Map, Value as Json};

type Object = Map<String, Json>;

/// The keys a case may have; anything else is a typo.
const CASE_KEYS: [&str; 13] = [
    "name", "why", "check", "schema", "final", "prior", "config", "planned", "earlier", "later", "expect", "hidden",
    "state",
];

#[test]
fn contract_cases() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/contract-cases");
    let mut files = Vec::new();
    find_json(&dir, &mut files);
    files.sort();

    let mut failures = Vec::new();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    for file in &files {
        let label = file.strip_prefix(&dir).unwrap_or(file).display().to_string();
        let cases = match load(file) {
            Ok(cases) => cases,
            Err(e) => {
                failures.push(format!("{label}: cannot read the file: {e}"));
                continue;
            }
        };
        for (case, schemas) in cases {
            let name = case.get("name").and_then(Json::as_str).unwrap_or("(unnamed)").to_string();
            let check = case.get("check").and_then(Json::as_str).unwrap_or("?").to_string();
            if let Some(other) = seen.insert(name.clone(), label.clone()) {
                failures.push(format!("{label}: {name}: the name is already used in {other}"));
            }
            *counts.entry(check).or_default() += 1;
            if let Err(e) = run(&case, &schemas) {
                failures.push(format!("{label}: {name}:\n    {}", e.replace('\n', "\n    ")));
            }
        }
    }

    let total: usize = counts.values().sum();
    let summary: Vec<String> = counts.iter().map(|(check, n)| format!("{check} {n}")).collect();
    eprintln!("contract cases: {total} ({})", summary.join(", "));
    // A wrong directory or a lost file must not pass as "nothing failed".
    for check in ["proposed_new", "plan_valid", "compatible"] {
        if !counts.contains_key(check) {
            failures.push(format!("no `{check}` cases found under {}", dir.display()));
        }
    }
    if !failures.is_empty() {
        panic!("{} of {total} contract cases failed:\n\n{}\n", failures.len(), failures.join("\n\n"));
    }
}

/// Every `*.json` file under `dir`, recursively.
fn find_json(dir: &FsPath, out: &mut Vec<PathBuf>) {
    let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            find_json(&path, out);
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
}

/// The cases of one file, each with the file's named schemas. A file holds
/// one case, a list of cases, or `{"schemas": {…}, "cases": […]}`.
fn load(file: &FsPath) -> Result<Vec<(Object, Object)>, String> {
    let text = fs::read_to_string(file).map_err(|e| e.to_string())?;
    let json: Json = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let (schemas, cases) = match json {
        Json::Array(cases) => (Object::new(), cases),
        Json::Object(mut o) if o.contains_key("cases") => {
            let schemas = match o.remove("schemas") {
                Some(Json::Object(s)) => s,
                None => Object::new(),
                Some(_) => return Err("`schemas` must be an object".into()),
            };
            let Some(Json::Array(cases)) = o.remove("cases") else { return Err("`cases` must be a list".into()) };
            if let Some(k) = o.keys().next() {
                return Err(format!("unexpected key `{k}` beside `cases`"));
            }
            (schemas, cases)
        }
        Json::Object(case) => (Object::new(), vec![Json::Object(case)]),
        _ => return Err("a file holds a case, a list of cases, or {\"schemas\", \"cases\"}".into()),
    };
    cases
        .into_iter()
        .map(|c| match c {
            Json::Object(c) => Ok((c, schemas.clone())),
            _ => Err("every case must be a JSON object".into()),
        })
        .collect()
}

/// Runs one case: `Err` says how it failed.
fn run(case: &Object, schemas: &Object) -> Result<(), String> {
    if let Some(k) = case.keys().find(|k| !CASE_KEYS.contains(&k.as_str())) {
        return Err(format!("unexpected key `{k}`"));
    }
    let schema = match case.get("schema") {
        Some(Json::String(name)) => {
            schemas.get(name).ok_or_else(|| format!("no schema named `{name}` in this file"))?
        }
        Some(s) => s,
        None => return Err("`schema` is missing".into()),
    };
    let schema = decode_block(schema).map_err(|e| format!("schema: {e}"))?;
    let ty = schema.implied_type();
    let mut marks = Vec::new();
    // `prior` defaults to null (a create); the others must be written out.
    let mut input = |key: &str, default: Option<Json>| -> Result<Value, String> {
        let json = case.get(key).cloned().or(default).ok_or_else(|| format!("`{key}` is missing"))?;
        decode(&json, &ty, &Path::root(), &mut marks).map_err(|e| format!("{key}: {e}"))
    };
    let check = case.get("check").and_then(Json::as_str).ok_or("`check` is missing")?;
    let violations = match check {
        "proposed_new" => {
            let (prior, config) = (input("prior", Some(Json::Null))?, input("config", None)?);
            let expect = case.get("expect").and_then(|e| e.get("value")).ok_or("expect {\"value\": …}")?;
            let want = decode(expect, &ty, &Path::root(), &mut Vec::new()).map_err(|e| format!("expect: {e}"))?;
            let got = contract::proposed_new(&schema, &prior, &config);
            if !contract::same(&got, &want) {
                return Err(format!("proposed new state\n  expected {}\n       got {}", show(&want), show(&got)));
            }
            return Ok(());
        }
        "null_write_only" => {
            let state = input("state", None)?;
            let expect = case.get("expect").and_then(|e| e.get("value")).ok_or("expect {\"value\": …}")?;
            let want = decode(expect, &ty, &Path::root(), &mut Vec::new()).map_err(|e| format!("expect: {e}"))?;
            let got = contract::null_write_only(&schema, &state);
            if !contract::same(&got, &want) {
                return Err(format!(
                    "with write-only attributes nulled\n  expected {}\n       got {}",
                    show(&want),
                    show(&got)
                ));
            }
            return Ok(());
        }
        "plan_valid" => {
            let (prior, config) = (input("prior", Some(Json::Null))?, input("config", None)?);
            let planned = input("planned", None)?;
            contract::check_plan_marked(&schema, &prior, &config, &planned, &marks)
        }
        "compatible" => {
            let final_state = case.get("final").and_then(Json::as_bool).ok_or("`final` (true or false) is missing")?;
            let (earlier, later) = (input("earlier", None)?, input("later", None)?);
            contract::check_compatible_marked(&schema, &earlier, &later, final_state, &marks)
        }
        other => return Err(format!("unknown check `{other}`")),
    };
    let hidden: Vec<&str> = case
        .get("hidden")
        .and_then(Json::as_array)
        .map(|h| h.iter().filter_map(Json::as_str).collect())
        .unwrap_or_default();
    for v in &violations {
        let text = v.to_string();
        if let Some(secret) = hidden.iter().find(|s| text.contains(**s)) {
            return Err(format!("the violation shows the hidden text {secret:?}: {text}"));
        }
    }
    match case.get("expect") {
        Some(Json::String(s)) if s == "valid" => {
            if violations.is_empty() {
                Ok(())
            } else {
                Err(format!("expected valid, got\n{}", list(&violations)))
            }
        }
        Some(Json::Object(o)) if o.contains_key("invalid") => {
            let expected = o["invalid"].as_array().ok_or("`invalid` must be a list")?;
            if expected.is_empty() {
                return Err("`invalid` lists no violation; write \"valid\"".into());
            }
            match_violations(expected, &violations)
        }
        _ => Err("expect must be \"valid\" or {\"invalid\": […]}".into()),
    }
}

/// Each expected violation must match a distinct actual one, and every
/// actual one must be expected: the checks must report all violations and
/// nothing else.
fn match_violations(expected: &[Json], actual: &[Violation]) -> Result<(), String> {
    let mut wanted = Vec::new();
    for e in expected {
        let (path, rule, message) = match e {
            Json::String(p) => (p.as_str(), None, None),
            Json::Object(o) => {
                if let Some(k) = o.keys().find(|k| !["path", "rule", "message"].contains(&k.as_str())) {
                    return Err(format!("unexpected key `{k}` in an expected violation"));
                }
                let path = o.get("path").and_then(Json::as_str).ok_or("an expected violation needs a `path`")?;
                (path, o.get("rule").and_then(Json::as_str), o.get("message").and_then(Json::as_str))
            }
            _ => return Err("an expected violation is a path or {\"path\", \"rule\", \"message\"}".into()),
        };
        if let Some(r) = rule
            && !contract::RULES.iter().any(|(id, _)| *id == r)
        {
            return Err(format!("unknown rule `{r}`"));
        }
        wanted.push((path, rule, message));
    }
    // The most specific expectations claim their violation first.
    wanted.sort_by_key(|(_, rule, message)| std::cmp::Reverse(rule.is_some() as u8 + message.is_some() as u8));
    let mut used = vec![false; actual.len()];
    let mut missing = Vec::new();
    for (path, rule, message) in &wanted {
        let found = actual.iter().enumerate().position(|(i, v)| {
            !used[i]
                && v.path.to_string() == *path
                && rule.is_none_or(|r| contract::rule_id(v.rule) == Some(r))
                && message.is_none_or(|m| v.message == m)
        });
        match found {
            Some(i) => used[i] = true,
            None => missing.push(format!(
                "  {path}{}{}",
                rule.map(|r| format!(" (rule {r})")).unwrap_or_default(),
                message.map(|m| format!(": {m}")).unwrap_or_default()
            )),
        }
    }
    let extra: Vec<&Violation> = actual.iter().enumerate().filter(|(i, _)| !used[*i]).map(|(_, v)| v).collect();
    if missing.is_empty() && extra.is_empty() {
        return Ok(());
    }
    let mut report = String::new();
    if !missing.is_empty() {
        report.push_str(&format!("expected but not reported:\n{}\n", missing.join("\n")));
    }
    if !extra.is_empty() {
        let extra: Vec<Violation> = extra.into_iter().cloned().collect();
        report.push_str(&format!("reported but not expected:\n{}\n", list(&extra)));
    }
    report.push_str(&format!("all reported:\n{}", list(actual)));
    Err(report)
}

fn list(violations: &[Violation]) -> String {
    if violations.is_empty() {
        return "  (none)".into();
    }
    violations
        .iter()
        .map(|v| format!("  {v} [{}]", contract::rule_id(v.rule).unwrap_or("?")))
        .collect::<Vec<_>>()
        .join("\n")
}

fn show(v: &Value) -> String {
    serde_json::to_string(&to_json(v)).unwrap_or_default()
}

/// A block: `{"attributes": {name: attribute}, "blocks": {name: nested}}`.
fn decode_block(json: &Json) -> Result<Block, String> {
    let o = json.as_object().ok_or("a block is a JSON object")?;
    if let Some(k) = o.keys().find(|k| !["attributes", "blocks"].contains(&k.as_str())) {
        return Err(format!("unexpected key `{k}` in a block"));
    }
    let mut block = Block::default();
    for (name, a) in o.get("attributes").and_then(Json::as_object).into_iter().flatten() {
        block.attributes.insert(name.clone(), decode_attribute(a).map_err(|e| format!("{name}: {e}"))?);
    }
    for (name, b) in o.get("blocks").and_then(Json::as_object).into_iter().flatten() {
        block.blocks.insert(name.clone(), decode_nested(b).map_err(|e| format!("{name}: {e}"))?);
    }
    Ok(block)
}

/// An attribute: `"string optional computed sensitive"` (a primitive type
/// and flags), or `{"type": <JSON type>, "required": true, …}`.
fn decode_attribute(json: &Json) -> Result<Attribute, String> {
    let mut attr = Attribute { optional: false, ..Attribute::optional(Type::Dynamic) };
    let flag = |attr: &mut Attribute, name: &str| -> Result<(), String> {
        match name {
            "required" => attr.required = true,
            "optional" => attr.optional = true,
            "computed" => attr.computed = true,
            "sensitive" => attr.sensitive = true,
            "write_only" => attr.write_only = true,
            other => return Err(format!("unknown flag `{other}`")),
        }
        Ok(())
    };
    match json {
        Json::String(s) => {
            let mut words = s.split_whitespace();
            attr.ty = type_from_json(&Json::String(words.next().unwrap_or_default().into()))?;
            for word in words {
                flag(&mut attr, word)?;
            }
        }
        Json::Object(o) => {
            match (o.get("type"), o.get("nested")) {
                (Some(t), None) => attr.ty = type_from_json(t)?,
                (None, Some(n)) => {
                    let nested = decode_nested(n)?;
                    if !nested.block.blocks.is_empty() {
                        return Err("a nested attribute type holds attributes, not blocks".into());
                    }
                    attr = Attribute { optional: false, ..Attribute::nested(nested.nesting, nested.block.attributes) };
                }
                _ => return Err("an attribute needs a `type` or a `nested` type, not both".into()),
            }
            for (k, v) in o.iter().filter(|(k, _)| *k != "type" && *k != "nested") {
                if v != &Json::Bool(true) && v != &Json::Bool(false) {
                    return Err(format!("`{k}` must be true or false"));
                }
                if v == &Json::Bool(true) {
                    flag(&mut attr, k)?;
                }
            }
        }
        _ => return Err("an attribute is a string or an object".into()),
    }
    if !(attr.required || attr.optional || attr.computed) {
        return Err("an attribute is at least one of required, optional and computed".into());
    }
    Ok(attr)
}

/// A nested block type: `{"nesting": "single|list|set|map", "attributes": …,
/// "blocks": …, "min_items": n, "max_items": n}`.
fn decode_nested(json: &Json) -> Result<NestedBlock, String> {
    let o = json.as_object().ok_or("a nested block is a JSON object")?;
    let nesting = match o.get("nesting").and_then(Json::as_str) {
        Some("single") => Nesting::Single,
        Some("list") => Nesting::List,
        Some("set") => Nesting::Set,
        Some("map") => Nesting::Map,
        _ => return Err("`nesting` must be single, list, set or map".into()),
    };
    let items = |k: &str| o.get(k).and_then(Json::as_u64).unwrap_or(0) as u32;
    let mut content = o.clone();
    for k in ["nesting", "min_items", "max_items"] {
        content.remove(k);
    }
    Ok(NestedBlock {
        nesting,
        block: decode_block(&Json::Object(content))?,
        min_items: items("min_items"),
        max_items: items("max_items"),
    })
}

/// A value of type `ty` (see the README): plain JSON read with the type,
/// plus the directives `{"$unknown": true}`, `{"$sensitive": v}` (recorded
/// in `marks`) and `{"$type": t, "$value": v}`. JSON that does not fit the
/// type is read as it is (arrays as tuples, objects as objects), so that
/// cases can hold values of the wrong type.
fn decode(json: &Json, ty: &Type, path: &Path, marks: &mut Vec<Path>) -> Result<Value, String> {
    if let Json::Object(o) = json
        && o.keys().any(|k| k.starts_with('$'))
    {
        return directive(o, ty, path, marks);
    }
    Ok(match (ty, json) {
        (_, Json::Null) => Value::Null,
        (_, Json::Bool(b)) => Value::Bool(*b),
        (_, Json::Number(n)) => Value::Number(match n.as_i64() {
            Some(i) => Number::Int(i),
            None => Number::from_f64(n.as_f64().ok_or("a number out of range")?),
        }),
        (_, Json::String(s)) => Value::String(s.clone()),
        (Type::List(t), Json::Array(a)) => Value::List(decode_all(a, t, path, marks)?),
        // As written: order and duplicates kept, so that cases can hold
        // sets as a provider may send them.
        (Type::Set(t), Json::Array(a)) => Value::Set(decode_all(a, t, path, marks)?),
        (Type::Tuple(ts), Json::Array(a)) if ts.len() == a.len() => Value::Tuple(
            a.iter()
                .zip(ts)
                .enumerate()
                .map(|(i, (e, t))| decode(e, t, &path.index(i), marks))
                .collect::<Result<_, _>>()?,
        ),
        (_, Json::Array(a)) => Value::Tuple(decode_all(a, &Type::Dynamic, path, marks)?),
        (Type::Map(t), Json::Object(o)) => Value::Map(
            o.iter()
                .map(|(k, e)| Ok((k.clone(), decode(e, t, &path.key(k), marks)?)))
                .collect::<Result<_, String>>()?,
        ),
        (Type::Object(attrs), Json::Object(o)) => {
            // Every schema attribute (absent ones null), and any others as
            // written, for cases about attributes outside the schema.
            let mut out = cairn::value::Map::new();
            for (name, t) in attrs {
                let e = o.get(name).unwrap_or(&Json::Null);
                out.insert(name.clone(), decode(e, t, &path.attr(name), marks)?);
            }
            for (name, e) in o.iter().filter(|(k, _)| !attrs.contains_key(*k)) {
                out.insert(name.clone(), decode(e, &Type::Dynamic, &path.attr(name), marks)?);
            }
            Value::Object(out)
        }
        (_, Json::Object(o)) => Value::Object(
            o.iter()
                .map(|(k, e)| Ok((k.clone(), decode(e, &Type::Dynamic, &path.attr(k), marks)?)))
                .collect::<Result<_, String>>()?,
        ),
    })
}

fn decode_all(a: &[Json], t: &Type, path: &Path, marks: &mut Vec<Path>) -> Result<Vec<Value>, String> {
    a.iter().enumerate().map(|(i, e)| decode(e, t, &path.index(i), marks)).collect()
}

fn directive(o: &Object, ty: &Type, path: &Path, marks: &mut Vec<Path>) -> Result<Value, String> {
    let keys: Vec<&str> = o.keys().map(String::as_str).collect();
    match keys.as_slice() {
        ["$unknown"] => {
            Ok(Value::refined(refinements_from_json(&o["$unknown"]).map_err(|e| format!("at {path}: {e}"))?))
        }
        ["$sensitive"] => {
            marks.push(path.clone());
            decode(&o["$sensitive"], ty, path, marks)
        }
        ["$type", "$value"] => {
            let t = type_from_json(&o["$type"]).map_err(|e| format!("at {path}: {e}"))?;
            decode(&o["$value"], &t, path, marks)
        }
        _ => Err(format!(
            "at {path}: unknown directive {}; use {{\"$unknown\": true}} (or {{\"$unknown\": {{refinements}}}}), {{\"$sensitive\": v}} or {{\"$type\": t, \"$value\": v}}",
            Json::Object(o.clone())
        )),
    }
}
