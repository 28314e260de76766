//! Expanding `count` and `for_each` into a resource's instances, with the
//! rules Terraform users know: `count` is a whole number of at least 0,
//! `for_each` a map or a set of strings, and both must be known at plan
//! time, since the instances are what a plan is made of.

use crate::addr::InstanceKey;
use crate::diag::{Diagnostic, Location};
use crate::value::{Type, Value};

use super::expr::ExprKind;
use super::{EvalContext, Expression, Resource, error_at, eval};

/// One instance of a resource, and what `count.index` or `each` is inside it.
#[derive(Debug, Clone, PartialEq)]
pub struct Instance {
    /// `None` without `count` or `for_each`, `[i]` with `count`, `["k"]` with `for_each`.
    pub key: Option<InstanceKey>,
    /// `count.index`, with `count`.
    pub count_index: Option<i64>,
    /// `each.key` and `each.value`, with `for_each`.
    pub each: Option<(Value, Value)>,
}

impl Instance {
    /// Sets `count.index` and `each` in `ctx` for evaluating this
    /// instance's body.
    pub fn apply_to(&self, ctx: &mut EvalContext) {
        ctx.count_index = self.count_index;
        ctx.each = self.each.clone();
    }
}

/// The instances of a resource, in key order: one without `count` or
/// `for_each`, else one per index or key. `count` and `for_each` are
/// evaluated in `ctx`.
pub fn instances(resource: &Resource, ctx: &EvalContext) -> Result<Vec<Instance>, Vec<Diagnostic>> {
    expand(resource.count.as_deref(), resource.for_each.as_deref(), ctx)
}

/// The instances a block with these `count` and `for_each` arguments (a
/// resource's or a module call's) has, evaluated in `ctx`.
pub(crate) fn expand(
    count: Option<&Expression>,
    for_each: Option<&Expression>,
    ctx: &EvalContext,
) -> Result<Vec<Instance>, Vec<Diagnostic>> {
    if let Some(for_each) = for_each.filter(|_| count.is_none())
        && super::marks::marks(for_each, ctx).iter().any(crate::value::Path::is_root)
    {
        return Err(vec![sensitive_for_each(&for_each.location)]);
    }
    match count.or(for_each) {
        Some(argument) => expand_value(count, for_each, eval(argument, ctx)?),
        None => expand_value(None, None, Value::Null),
    }
}

/// Terraform's error for a `for_each` whose value is sensitive as a whole
/// (its keys would show it), at the argument. A sensitive `count` is
/// allowed, as in Terraform.
pub(crate) fn sensitive_for_each(location: &Location) -> Diagnostic {
    error_at(
        "Invalid for_each argument",
        "Sensitive values, or values derived from sensitive values, cannot be used as for_each arguments. If used, \
         the sensitive value could be exposed as a resource instance key.",
        location,
    )
}

/// The instances a block with these `count` and `for_each` arguments has
/// when the one it has evaluated to `value` (a module call whose argument
/// was evaluated while planning; see `engine::staged`). Errors are at the
/// argument's location, worded as Terraform words them.
pub(crate) fn expand_value(
    count: Option<&Expression>,
    for_each: Option<&Expression>,
    value: Value,
) -> Result<Vec<Instance>, Vec<Diagnostic>> {
    if let Some(count) = count {
        let n = count_value(value, &count.location)?;
        return Ok((0..n)
            .map(|i| Instance { key: Some(InstanceKey::Int(i)), count_index: Some(i), each: None })
            .collect());
    }
    if let Some(for_each) = for_each {
        return Ok(for_each_entries(value, for_each)?
            .into_iter()
            .map(|(key, value)| Instance {
                key: Some(InstanceKey::String(key.clone())),
                count_index: None,
                each: Some((Value::String(key), value)),
            })
            .collect());
    }
    Ok(vec![Instance { key: None, count_index: None, each: None }])
}

/// Terraform's detail for a `count` not known while planning.
const UNKNOWN_COUNT: &str = "The \"count\" value depends on resource attributes that cannot be determined until \
                             apply, so cairn cannot predict how many instances will be created. To work around \
                             this, use the -target argument to first apply only the resources that the count \
                             depends on.";

/// Terraform's advice after an unknown `for_each`.
const UNKNOWN_FOR_EACH_TARGET: &str = "Alternatively, you could use the -target planning option to first apply \
                                       only the resources that the for_each value depends on, and then apply a \
                                       second time to fully converge.";

/// Terraform's detail for a `for_each` set with elements not known while
/// planning.
fn unknown_set_detail() -> String {
    format!(
        "The \"for_each\" set includes values derived from resource attributes that cannot be determined until \
         apply, and so cairn cannot determine the full set of keys that will identify the instances of this \
         resource.\n\nWhen working with unknown values in for_each, it's better to use a map value where the keys \
         are defined statically in your configuration and where only the values contain apply-time \
         results.\n\n{UNKNOWN_FOR_EACH_TARGET}"
    )
}

/// Terraform's detail for a `for_each` map (or a value of a type not known
/// yet) whose keys are not known while planning.
fn unknown_map_detail() -> String {
    format!(
        "The \"for_each\" map includes keys derived from resource attributes that cannot be determined until \
         apply, and so cairn cannot determine the full set of keys that will identify the instances of this \
         resource.\n\nWhen working with unknown values in for_each, it's better to define the map keys statically \
         in your configuration and place apply-time results only in the map values.\n\n{UNKNOWN_FOR_EACH_TARGET}"
    )
}

fn count_value(value: Value, location: &Location) -> Result<i64, Vec<Diagnostic>> {
    let invalid = |detail: String| vec![error_at("Invalid count argument", detail, location)];
    match Type::Number.convert(&value) {
        Ok(Value::Number(n)) => match n.as_i64() {
            Some(i) if i >= 0 => Ok(i),
            _ => Err(invalid(format!("The \"count\" argument must be a whole number of at least 0, got {n}."))),
        },
        Ok(Value::Unknown(_)) => Err(invalid(UNKNOWN_COUNT.into())),
        Ok(Value::Null) => Err(invalid("The \"count\" argument is null; a whole number is required.".into())),
        _ => Err(invalid(format!("The \"count\" argument must be a whole number, got {}.", value.kind_name()))),
    }
}

/// The (key, value) pairs of a `for_each` value: a map or object's
/// entries, or a set of strings (each string both key and value).
fn for_each_entries(value: Value, expr: &Expression) -> Result<Vec<(String, Value)>, Vec<Diagnostic>> {
    let invalid = |detail: String| vec![error_at("Invalid for_each argument", detail, &expr.location)];
    match value {
        Value::Map(entries) | Value::Object(entries) => Ok(entries.into_iter().collect()),
        Value::Set(elements) => elements
            .into_iter()
            .map(|e| match e {
                Value::String(s) => Ok((s.clone(), Value::String(s))),
                Value::Unknown(_) => Err(invalid(unknown_set_detail())),
                other => Err(invalid(format!(
                    "The \"for_each\" set must contain strings, but it contains {}.",
                    other.to_hcl()
                ))),
            })
            .collect(),
        // Terraform tells a set from a map by its type, which an unknown
        // value here does not carry: `toset(…)` is a set.
        Value::Unknown(_) if matches!(&expr.kind, ExprKind::Call { name, .. } if name == "toset") => {
            Err(invalid(unknown_set_detail()))
        }
        Value::Unknown(_) => Err(invalid(unknown_map_detail())),
        Value::Null => Err(invalid("The \"for_each\" argument is null; a map or a set of strings is required.".into())),
        Value::List(_) | Value::Tuple(_) => Err(invalid(
            "The \"for_each\" argument must be a map or a set of strings, got a list. Convert a list of strings \
             with toset(...)."
                .into(),
        )),
        other => Err(invalid(format!(
            "The \"for_each\" argument must be a map or a set of strings, got {}.",
            other.kind_name()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{load_main, shown};
    use super::*;

    /// The instances of each resource in `main.tf`, or the errors, shown.
    fn expand(text: &str) -> Vec<Result<Vec<Instance>, String>> {
        let (dir, config) = load_main(text);
        let mut ctx = EvalContext::new(dir.path());
        ctx.variables.insert("unknown".into(), Value::unknown());
        config.resources.iter().map(|r| instances(r, &ctx).map_err(|d| shown(&d))).collect()
    }

    fn keys(instances: &[Instance]) -> Vec<Option<InstanceKey>> {
        instances.iter().map(|i| i.key.clone()).collect()
    }

    #[test]
    fn single_counted_and_for_each() {
        let results = expand(
            r#"variable "unknown" {}
resource "random_id" "one" {}
resource "random_id" "counted" {
  count = 1 + 1
}
resource "random_id" "by_set" {
  for_each = toset(["b", "a"])
}
resource "random_id" "by_map" {
  for_each = { x = 1, y = var.unknown }
}
resource "random_id" "none" {
  count = 0
}
"#,
        );
        let one = results[0].as_ref().unwrap();
        assert_eq!(one, &[Instance { key: None, count_index: None, each: None }]);
        let counted = results[1].as_ref().unwrap();
        assert_eq!(keys(counted), [Some(InstanceKey::Int(0)), Some(InstanceKey::Int(1))]);
        assert_eq!(counted[1].count_index, Some(1));
        let by_set = results[2].as_ref().unwrap();
        assert_eq!(keys(by_set), [Some(InstanceKey::String("a".into())), Some(InstanceKey::String("b".into()))]);
        assert_eq!(by_set[0].each, Some((Value::string("a"), Value::string("a"))));
        let by_map = results[3].as_ref().unwrap();
        assert_eq!(by_map[1].each, Some((Value::string("y"), Value::unknown())));
        assert_eq!(results[4].as_ref().unwrap(), &[]);
        let mut ctx = EvalContext::new(".");
        by_map[0].apply_to(&mut ctx);
        assert_eq!((ctx.count_index, ctx.each), (None, Some((Value::string("x"), Value::int(1)))));
    }

    #[test]
    fn invalid_count_and_for_each() {
        let results = expand(
            r#"variable "unknown" {}
resource "a" "unknown_count" {
  count = var.unknown
}
resource "a" "negative" {
  count = -1
}
resource "a" "fraction" {
  count = 1.5
}
resource "a" "list" {
  for_each = ["a"]
}
resource "a" "numbers" {
  for_each = toset([1])
}
resource "a" "unknown_keys" {
  for_each = toset(["a", var.unknown])
}
resource "a" "null" {
  for_each = null
}
"#,
        );
        let errors: Vec<String> = results.into_iter().map(|r| r.unwrap_err()).collect();
        assert!(errors[0].starts_with("Error: main.tf:3: Invalid count argument\n  The \"count\" value depends on resource attributes that cannot be determined until apply"), "{}", errors[0]);
        assert!(errors[1].contains("must be a whole number of at least 0, got -1"), "{}", errors[1]);
        assert!(errors[2].contains("got 1.5"), "{}", errors[2]);
        assert!(errors[3].starts_with("Error: main.tf:12: Invalid for_each argument"), "{}", errors[3]);
        assert!(errors[3].contains("toset(...)"), "{}", errors[3]);
        assert!(errors[4].contains("must contain strings, but it contains 1."), "{}", errors[4]);
        assert!(
            errors[5].contains("The \"for_each\" set includes values derived from resource attributes"),
            "{}",
            errors[5]
        );
        assert!(errors[6].contains("is null"), "{}", errors[6]);
    }
}
