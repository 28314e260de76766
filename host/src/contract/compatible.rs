//! Compatibility of a later value with an earlier one: the second plan with
//! the first, and the new state with the plan (Terraform's
//! `objchange.AssertObjectCompatible`, with no exemptions).

use std::collections::HashMap;

use super::{
    RULE_KNOWN_UNCHANGED, RULE_NO_UNKNOWNS, RULE_REFINEMENT, Redactor, Violation, conform, finish, key, same,
    write_only_kept,
};
use crate::schema::Block;
use crate::value::{Path, Value};

/// Checks that `later` keeps every value known in `earlier`: the second plan
/// against the first (`final_state` false), or the new state against the
/// plan (`final_state` true, which also forbids unknowns).
///
/// - every value of `later` conforms to the schema type;
/// - a value known in `earlier` is the same in `later`, with null and empty
///   collections told apart, list elements and map keys neither vanishing
///   nor appearing; an unknown in `earlier` may become anything;
/// - in sets, every earlier element must still be matched by a later one
///   and every later element by an earlier one; elements with unknowns
///   inside may coalesce, but a set never grows;
/// - an unknown in `earlier` with refinements (not null, prefix, bounds,
///   length) holds `later` to them: a known value must satisfy them, and
///   an unknown one (a re-plan) must promise at least as much;
/// - with `final_state`, nothing in `later` is unknown, and every
///   write-only attribute is null.
///
/// A difference inside a sensitive value is reported once, at the
/// sensitive path, with both values redacted.
pub fn check_compatible(schema: &Block, earlier: &Value, later: &Value, final_state: bool) -> Vec<Violation> {
    check_compatible_marked(schema, earlier, later, final_state, &[])
}

/// [`check_compatible`], also redacting the values at or under the paths in
/// `sensitive`.
pub fn check_compatible_marked(
    schema: &Block,
    earlier: &Value,
    later: &Value,
    final_state: bool,
    sensitive: &[Path],
) -> Vec<Violation> {
    let r = Redactor { schema, marks: sensitive };
    let types = conform::check(&r, &schema.implied_type(), later);
    let mut found = Vec::new();
    if final_state {
        unknowns(later, &Path::root(), &mut found);
    }
    if final_state {
        write_only_kept(schema, later, &Path::root(), &mut found);
    }
    let mut walk = Compat { r: &r, final_state, hidden: false, out: found };
    walk.value(earlier, later, &Path::root());
    finish(types, walk.out)
}

/// A violation for every unknown inside `v`.
fn unknowns(v: &Value, path: &Path, out: &mut Vec<Violation>) {
    match v {
        Value::Unknown(_) => out.push(Violation {
            path: path.clone(),
            message: "the new state leaves this value unknown".to_string(),
            rule: RULE_NO_UNKNOWNS,
        }),
        Value::Object(m) => m.iter().for_each(|(k, e)| unknowns(e, &path.attr(k), out)),
        Value::Map(m) => m.iter().for_each(|(k, e)| unknowns(e, &path.key(k), out)),
        Value::List(items) | Value::Set(items) | Value::Tuple(items) => {
            items.iter().enumerate().for_each(|(i, e)| unknowns(e, &path.index(i), out))
        }
        _ => {}
    }
}

/// Whether `v` holds an unknown with refinements anywhere inside.
fn refined_inside(v: &Value) -> bool {
    match v {
        Value::Unknown(r) => r.is_some(),
        Value::List(items) | Value::Set(items) | Value::Tuple(items) => items.iter().any(refined_inside),
        Value::Map(m) | Value::Object(m) => m.values().any(refined_inside),
        _ => false,
    }
}

/// The walk over one comparison, collecting violations.
struct Compat<'a> {
    r: &'a Redactor<'a>,
    /// Unknowns left in `later` are reported by [`unknowns`], not here.
    final_state: bool,
    /// Inside a sensitive value, whose differences are reported once.
    hidden: bool,
    out: Vec<Violation>,
}

impl Compat<'_> {
    fn changed(&mut self, path: &Path, message: String) {
        self.out.push(Violation { path: path.clone(), message, rule: RULE_KNOWN_UNCHANGED });
    }

    /// A dry run with no violations: for correlating set elements.
    fn fits(&self, earlier: &Value, later: &Value, path: &Path) -> bool {
        let mut dry = Compat { r: self.r, final_state: self.final_state, hidden: true, out: Vec::new() };
        dry.value(earlier, later, path);
        dry.out.is_empty()
    }

    /// Whether comparing `earlier` with `later` can find anything: not
    /// when `earlier` is an unknown that promises nothing, nor when the two
    /// are the same (with no refinement inside that a re-plan could drop).
    /// Children that cannot are skipped before their path is even built.
    fn needs_walk(&self, earlier: &Value, later: &Value) -> bool {
        match earlier {
            Value::Unknown(refined) => refined.is_some(),
            // `same` takes any two unknowns as the same; a re-plan that
            // drops a refinement inside is not, so such values are walked.
            _ => !(same(earlier, later) && (self.final_state || !refined_inside(earlier))),
        }
    }

    /// Compares a child of a value being walked, at `path` built only when
    /// there is something to compare.
    fn child(&mut self, earlier: &Value, later: &Value, path: impl FnOnce() -> Path) {
        if self.needs_walk(earlier, later) {
            self.walk(earlier, later, &path());
        }
    }

    fn value(&mut self, earlier: &Value, later: &Value, path: &Path) {
        // Identical values (the usual case) need no walk, and spare sets
        // their quadratic correlation. Unknown in both is identical too:
        // in a new state, `unknowns` has reported it.
        if self.needs_walk(earlier, later) {
            self.walk(earlier, later, path);
        }
    }

    /// [`Self::value`] once [`Self::needs_walk`] said yes.
    fn walk(&mut self, earlier: &Value, later: &Value, path: &Path) {
        if let Value::Unknown(refined) = earlier {
            // An unknown left in a new state is reported by `unknowns`.
            if let Some(refined) = refined
                && !(self.final_state && later.is_unknown())
                && let Some(message) = refined.violation(later, &self.r.show(path, later))
            {
                // A prefix or a bound is part of a secret value too.
                let message = if self.r.is_sensitive(path) {
                    "the new value (sensitive value) does not satisfy the refinements of its planned unknown"
                        .to_string()
                } else {
                    message
                };
                self.out.push(Violation { path: path.clone(), message, rule: RULE_REFINEMENT });
            }
            return;
        }
        if later.is_unknown() {
            if !self.final_state {
                let message = format!("was {}, but now (known after apply)", self.r.show(path, earlier));
                self.changed(path, message);
            }
            return;
        }
        if !self.hidden && self.r.is_sensitive(path) {
            let mut inner = Compat { r: self.r, final_state: self.final_state, hidden: true, out: Vec::new() };
            inner.inside(earlier, later, path);
            if !inner.out.is_empty() {
                self.changed(path, "was (sensitive value), but now (sensitive value)".to_string());
            }
            return;
        }
        self.inside(earlier, later, path);
    }

    fn inside(&mut self, earlier: &Value, later: &Value, path: &Path) {
        let show = |path: &Path, v: &Value| self.r.show(path, v);
        match (earlier, later) {
            (Value::Null, Value::Null) => {}
            (Value::Null, _) if path.is_root() => self.changed(path, "was absent, but now present".to_string()),
            (_, Value::Null) if path.is_root() => self.changed(path, "was present, but now absent".to_string()),
            (Value::List(a), Value::List(b)) | (Value::Tuple(a), Value::Tuple(b)) => {
                for (i, (x, y)) in a.iter().zip(b).enumerate() {
                    self.child(x, y, || path.index(i));
                }
                for (i, x) in a.iter().enumerate().skip(b.len()) {
                    let message = format!("was {}, but the element is now gone", show(&path.index(i), x));
                    self.changed(&path.index(i), message);
                }
                for (i, y) in b.iter().enumerate().skip(a.len()) {
                    let message = format!("a new element {} appeared", show(&path.index(i), y));
                    self.changed(&path.index(i), message);
                }
            }
            (Value::Map(a), Value::Map(b)) => {
                for (k, x) in a {
                    match b.get(k) {
                        Some(y) => self.child(x, y, || path.key(k)),
                        None => {
                            let message = format!("was {}, but the element is now gone", show(&path.key(k), x));
                            self.changed(&path.key(k), message);
                        }
                    }
                }
                for (k, y) in b.iter().filter(|(k, _)| !a.contains_key(*k)) {
                    let message = format!("a new element {} appeared", show(&path.key(k), y));
                    self.changed(&path.key(k), message);
                }
            }
            (Value::Object(a), Value::Object(b)) => {
                // An absent attribute is null; one not in the schema is
                // reported by the type check.
                let names: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
                for name in names {
                    self.child(earlier.get_attr(name), later.get_attr(name), || path.attr(name));
                }
            }
            (Value::Set(a), Value::Set(b)) => self.set(a, b, path),
            (a, b) if same(a, b) => {}
            // Values of different kinds can look alike (`[1]`): name them.
            (a, b) if !a.is_null() && !b.is_null() && a.kind_name() != b.kind_name() => {
                let (ka, kb) = (a.kind_name(), b.kind_name());
                let message = format!("was the {ka} {}, but now the {kb} {}", show(path, a), show(path, b));
                self.changed(path, message);
            }
            (a, b) => {
                let message = format!("was {}, but now {}", show(path, a), show(path, b));
                self.changed(path, message);
            }
        }
    }

    /// Sets: elements have no identity but their value, and an element with
    /// unknowns inside changes identity as it becomes known. So every
    /// earlier element must be matched by some later element it is
    /// compatible with, and the other way round; elements may coalesce, but
    /// the set never grows.
    fn set(&mut self, earlier: &[Value], later: &[Value], path: &Path) {
        let mut earlier_ok = vec![false; earlier.len()];
        let mut later_ok = vec![false; later.len()];
        let earlier_known: Vec<bool> = earlier.iter().map(Value::is_wholly_known).collect();
        let later_known: Vec<bool> = later.iter().map(Value::is_wholly_known).collect();
        // A wholly known element matches only an equal one: find those by
        // key rather than comparing every pair (sets can be large).
        let mut by_key: HashMap<String, Vec<usize>> = HashMap::new();
        for j in (0..later.len()).filter(|&j| later_known[j]) {
            by_key.entry(key(&later[j])).or_default().push(j);
        }
        for i in (0..earlier.len()).filter(|&i| earlier_known[i]) {
            if let Some(js) = by_key.get(&key(&earlier[i])) {
                earlier_ok[i] = true;
                js.iter().for_each(|&j| later_ok[j] = true);
            }
        }
        // Pairs with unknowns on either side: a dry run each.
        for (i, x) in earlier.iter().enumerate() {
            for (j, y) in later.iter().enumerate() {
                let settled = (earlier_known[i] && later_known[j]) || (earlier_ok[i] && later_ok[j]);
                if !settled && self.fits(x, y, &path.index(j)) {
                    earlier_ok[i] = true;
                    later_ok[j] = true;
                }
            }
        }
        let gone: Vec<String> =
            (0..earlier.len()).filter(|&i| !earlier_ok[i]).map(|i| self.r.show(&path.index(i), &earlier[i])).collect();
        for shown in &gone {
            self.changed(path, format!("had the element {shown}, which is now gone"));
        }
        // A changed element is also a new one; say so only when nothing
        // has gone.
        if gone.is_empty() {
            for j in (0..later.len()).filter(|&j| !later_ok[j]) {
                let message = format!("a new element {} appeared", self.r.show(&path.index(j), &later[j]));
                self.changed(path, message);
            }
        }
        if later.len() > earlier.len() {
            let message = format!("the set grew from {} to {} elements", earlier.len(), later.len());
            self.changed(path, message);
        }
    }
}
