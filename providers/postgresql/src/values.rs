//! Reading attributes out of states and catalog rows, and writing them back.

#[cfg(test)]
use cairn_sdk::Schema;
use cairn_sdk::Value;

use crate::conn::Row;

/// The string attribute `name`, if set.
pub fn text(state: &Value, name: &str) -> Option<String> {
    state.get_attr(name).as_str().map(str::to_owned)
}

/// The boolean attribute `name`, or `default` when unset.
pub fn flag(state: &Value, name: &str, default: bool) -> bool {
    state.get_attr(name).as_bool().unwrap_or(default)
}

/// The whole-number attribute `name`, or `default` when unset.
pub fn int(state: &Value, name: &str, default: i64) -> i64 {
    state.get_attr(name).as_i64().unwrap_or(default)
}

/// The strings of the set (or list) attribute `name`, sorted.
pub fn strings(state: &Value, name: &str) -> Vec<String> {
    let mut out: Vec<String> = state
        .get_attr(name)
        .as_slice()
        .unwrap_or_default()
        .iter()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// A set of strings.
pub fn string_set(items: impl IntoIterator<Item = String>) -> Value {
    Value::set(items.into_iter().map(Value::from))
}

/// Column `i` of `row` as text (`None` for SQL NULL or a missing column).
pub fn column(row: &Row, i: usize) -> Option<&str> {
    row.get(i).and_then(|v| v.as_deref())
}

/// Column `i` of `row` as a boolean (PostgreSQL's text form `t`/`f`).
pub fn column_bool(row: &Row, i: usize) -> bool {
    column(row, i) == Some("t")
}

/// Column `i` of `row` as a whole number.
pub fn column_int(row: &Row, i: usize) -> i64 {
    column(row, i).and_then(|v| v.parse().ok()).unwrap_or(0)
}

/// `read`'s value where `state` says the same thing in other words (case,
/// spelling), so that reading back what was configured shows no change:
/// the state's own spelling when `same(state's, read)`, else the read one.
pub fn keep_spelling(state: &Value, name: &str, read: &str, same: impl Fn(&str, &str) -> bool) -> Value {
    match state.get_attr(name).as_str() {
        Some(mine) if same(mine, read) => Value::from(mine),
        _ => Value::from(read),
    }
}

/// The planned state with each unknown attribute taken from `read` (what
/// the catalog says after the change): known planned values are kept as
/// planned, as the apply contract requires.
pub fn fill_unknowns(planned: &Value, read: &Value) -> Value {
    let mut out = planned.clone();
    if let Value::Object(attrs) = planned {
        for (name, value) in attrs {
            if !value.is_known() {
                out.set_attr(name.clone(), read.get_attr(name).clone());
            }
        }
    }
    out
}

/// A configuration of a resource of `schema` for unit tests: `given`,
/// then `attrs` over it, and null for every other attribute.
#[cfg(test)]
pub fn test_config(schema: &Schema, given: &[(&str, Value)], attrs: &[(&str, Value)]) -> Value {
    let mut v = Value::object(schema.block.attributes.iter().map(|(name, _)| (name.as_str(), Value::Null)));
    for (name, value) in given.iter().chain(attrs) {
        v.set_attr(*name, value.clone());
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknowns_are_filled_and_known_values_kept() {
        let planned = Value::object([("encoding", Value::from("utf8")), ("owner", Value::unknown())]);
        let read = Value::object([("encoding", Value::from("UTF8")), ("owner", Value::from("postgres"))]);
        let new = fill_unknowns(&planned, &read);
        assert_eq!(new.get_attr("encoding").as_str(), Some("utf8"));
        assert_eq!(new.get_attr("owner").as_str(), Some("postgres"));
    }

    #[test]
    fn the_states_spelling_is_kept_when_it_means_the_same() {
        let state = Value::object([("encoding", Value::from("utf8"))]);
        let same = |a: &str, b: &str| a.eq_ignore_ascii_case(b);
        assert_eq!(keep_spelling(&state, "encoding", "UTF8", same).as_str(), Some("utf8"));
        assert_eq!(keep_spelling(&state, "encoding", "LATIN1", same).as_str(), Some("LATIN1"));
    }

    #[test]
    fn string_sets_are_sorted_without_repeats() {
        let state = Value::object([("roles", Value::set(["b", "a", "b"]))]);
        assert_eq!(strings(&state, "roles"), ["a", "b"]);
    }
}
