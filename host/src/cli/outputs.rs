//! `cairn output [-json] [-raw] [NAME]`: the root module's outputs as the
//! state recorded them at the last apply, as Terraform prints them.
//!
//! The list hides sensitive values (`<sensitive>`); asking for one output
//! by name, or for JSON, shows it in clear: that is how a script reads a
//! secret it needs. `-raw` prints a string, number or bool with no quotes
//! and no newline, for shell substitution.

use std::io::Write;

use anyhow::{Result, bail};

use super::StateFlags;
use crate::state::{OutputState, State};
use crate::value::Value;

/// Runs `cairn output`.
pub(super) fn run(flags: &StateFlags, name: Option<&str>, json: bool, raw: bool) -> Result<i32> {
    if raw && json {
        bail!("-raw and -json cannot be used together: -raw prints one value as plain text, -json as JSON");
    }
    let state = crate::engine::backend_at(&flags.dir())?.read()?;
    match name {
        Some(name) => one(&state, name, json, raw),
        None if raw => bail!("the -raw option needs the name of one output: cairn output -raw NAME"),
        None if json => {
            let all: serde_json::Map<String, serde_json::Value> =
                state.outputs.iter().map(|(name, o)| (name.clone(), output_json(o))).collect();
            println!("{}", serde_json::to_string_pretty(&all)?);
            Ok(0)
        }
        None => {
            if state.outputs.is_empty() {
                eprintln!(
                    "Warning: No outputs found\n  The state has no outputs: the configuration declares none, or \
                     it has not been applied since they were added."
                );
            }
            for (name, o) in &state.outputs {
                println!("{name} = {}", super::render::output_value(&decoded(o), o.sensitive));
            }
            Ok(0)
        }
    }
}

/// The stored outputs decoded, each with whether it is sensitive: what an
/// apply reports, for the apply that had nothing to do.
pub(super) fn all_decoded(state: &State) -> std::collections::BTreeMap<String, (Value, bool)> {
    state.outputs.iter().map(|(name, o)| (name.clone(), (decoded(o), o.sensitive))).collect()
}

/// One output by name, in clear even when sensitive.
fn one(state: &State, name: &str, json: bool, raw: bool) -> Result<i32> {
    let Some(output) = state.outputs.get(name) else {
        bail!(
            "output {name:?} not found: the state has no output of that name. If it was just added to the \
             configuration, run `cairn apply`: the state records outputs only when it is applied"
        );
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&output.value)?);
        return Ok(0);
    }
    let value = decoded(output);
    if raw {
        let text = raw_text(name, &value)?;
        let mut stdout = std::io::stdout();
        stdout.write_all(text.as_bytes())?;
        stdout.flush()?;
        return Ok(0);
    }
    println!("{}", super::render::output_value(&value, false));
    Ok(0)
}

/// The text `-raw` prints: only strings, numbers and bools have one.
fn raw_text(name: &str, value: &Value) -> Result<String> {
    match value {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        Value::Bool(b) => Ok(b.to_string()),
        Value::Null => bail!("output {name:?} is null: -raw has nothing to print"),
        other => bail!(
            "unsupported value for raw output: the -raw option only supports strings, numbers and bools, \
             but output {name:?} is a {}; use -json for it",
            other.kind_name()
        ),
    }
}

/// An output as `-json` lists it: Terraform's `sensitive`, `type`, `value`.
fn output_json(output: &OutputState) -> serde_json::Value {
    serde_json::json!({ "sensitive": output.sensitive, "type": output.ty, "value": output.value })
}

/// The stored value with its type; plain JSON if the stored type cannot be read.
fn decoded(output: &OutputState) -> Value {
    output.decode().unwrap_or_else(|| crate::value::from_json_untyped(&output.value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_prints_scalars_without_quotes_and_refuses_the_rest() {
        assert_eq!(raw_text("a", &Value::string("hi \"x\"")).unwrap(), "hi \"x\"");
        assert_eq!(raw_text("a", &Value::int(42)).unwrap(), "42");
        assert_eq!(raw_text("a", &Value::Bool(true)).unwrap(), "true");
        let err = raw_text("list", &Value::List(vec![Value::int(1)])).unwrap_err().to_string();
        assert!(err.contains("output \"list\" is a list"), "{err}");
        assert!(raw_text("n", &Value::Null).unwrap_err().to_string().contains("is null"));
    }

    #[test]
    fn json_lists_sensitive_type_and_value() {
        let o = OutputState::new(&Value::string("s3cret"), true);
        assert_eq!(output_json(&o), serde_json::json!({"sensitive": true, "type": "string", "value": "s3cret"}));
    }
}
