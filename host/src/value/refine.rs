//! Refinements of unknown values: what is already known about a value that
//! will only be known after apply (cty's `unknown_refinement.go`).
//!
//! A provider may plan `hex` as "unknown, but not null and starting with
//! `arn:`"; that is a promise, and the contract checks hold the final value
//! to it ([`Refinements::violation`]). The configuration language uses them
//! too: an unknown list whose length bounds are equal has a known
//! `length()`.

use std::fmt;

use super::{Number, Value, quote};

/// What is known about an unknown value. The default says nothing.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Refinements {
    /// The value will not be null.
    pub not_null: bool,
    /// A string: the value starts with this prefix.
    pub prefix: Option<String>,
    /// A number: the value is at least (inclusive) or above this bound.
    pub lower: Option<Bound>,
    /// A number: the value is at most (inclusive) or below this bound.
    pub upper: Option<Bound>,
    /// A collection: it has at least this many elements.
    pub min_length: Option<u64>,
    /// A collection: it has at most this many elements.
    pub max_length: Option<u64>,
}

/// One end of a range of numbers.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Bound {
    /// The bound.
    pub value: Number,
    /// Whether the bound itself is in the range.
    pub inclusive: bool,
}

impl Refinements {
    /// Whether these refinements say nothing (a plain unknown).
    pub fn is_empty(&self) -> bool {
        *self == Refinements::default()
    }

    /// The length, when the bounds pin it down (`min_length == max_length`).
    pub fn known_length(&self) -> Option<u64> {
        match (self.min_length, self.max_length) {
            (Some(lo), Some(hi)) if lo == hi => Some(lo),
            _ => None,
        }
    }

    /// Why `value` (known, the final value) breaks these refinements, in
    /// words for a violation message; `None` when it keeps them. An
    /// unknown `value` (a re-plan) keeps them when it is at least as
    /// refined; values of another kind than a refinement is about (a
    /// number for a prefix) are for the type check, not here. `shown` is
    /// the value as the message may show it (redacted when sensitive).
    pub fn violation(&self, value: &Value, shown: &str) -> Option<String> {
        if let Value::Unknown(later) = value {
            return self.weaker_than(later.as_deref().unwrap_or(&Refinements::default()));
        }
        if value.is_null() {
            return self.not_null.then(|| "planned as an unknown that is not null, but the new value is null".into());
        }
        if let (Some(prefix), Value::String(s)) = (&self.prefix, value)
            && !s.starts_with(prefix.as_str())
        {
            return Some(format!(
                "planned as an unknown with prefix {}, but the new value {} does not start with it",
                quote(prefix),
                shown
            ));
        }
        if let Value::Number(n) = value {
            if let Some(b) = self.lower
                && !b.admits_above(*n)
            {
                return Some(format!(
                    "planned as an unknown {} {}, but the new value is {}",
                    if b.inclusive { ">=" } else { ">" },
                    b.value,
                    shown
                ));
            }
            if let Some(b) = self.upper
                && !b.admits_below(*n)
            {
                return Some(format!(
                    "planned as an unknown {} {}, but the new value is {}",
                    if b.inclusive { "<=" } else { "<" },
                    b.value,
                    shown
                ));
            }
        }
        let len = match value {
            Value::List(v) | Value::Set(v) => Some(v.len() as u64),
            Value::Map(m) => Some(m.len() as u64),
            _ => None,
        };
        if let Some(len) = len {
            if let Some(min) = self.min_length
                && len < min
            {
                return Some(format!(
                    "planned as an unknown of at least {min} element(s), but the new value has {len}"
                ));
            }
            if let Some(max) = self.max_length
                && len > max
            {
                return Some(format!("planned as an unknown of at most {max} element(s), but the new value has {len}"));
            }
        }
        None
    }

    /// Why a later unknown with `later`'s refinements no longer keeps
    /// these: a re-plan may refine an unknown further, never loosen it.
    fn weaker_than(&self, later: &Refinements) -> Option<String> {
        let lost = |what: String| Some(format!("planned as an unknown {what}, but the new plan no longer promises it"));
        if self.not_null && !later.not_null {
            return lost("that is not null".into());
        }
        if let Some(p) = &self.prefix
            && !later.prefix.as_ref().is_some_and(|q| q.starts_with(p.as_str()))
        {
            return lost(format!("with prefix {}", quote(p)));
        }
        if let Some(b) = self.lower
            && !later
                .lower
                .is_some_and(|l| b.admits_above(l.value) && (b.inclusive || !l.inclusive || l.value != b.value))
        {
            return lost(format!("{} {}", if b.inclusive { ">=" } else { ">" }, b.value));
        }
        if let Some(b) = self.upper
            && !later
                .upper
                .is_some_and(|u| b.admits_below(u.value) && (b.inclusive || !u.inclusive || u.value != b.value))
        {
            return lost(format!("{} {}", if b.inclusive { "<=" } else { "<" }, b.value));
        }
        if let Some(min) = self.min_length
            && later.min_length.is_none_or(|m| m < min)
        {
            return lost(format!("of at least {min} element(s)"));
        }
        if let Some(max) = self.max_length
            && later.max_length.is_none_or(|m| m > max)
        {
            return lost(format!("of at most {max} element(s)"));
        }
        None
    }

    /// The refinements as `cairn::value::to_json` writes them (the inside
    /// of `{"$unknown": …}`).
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if self.not_null {
            parts.push("not null".to_string());
        }
        if let Some(p) = &self.prefix {
            parts.push(format!("prefix {}", quote(p)));
        }
        if let Some(b) = self.lower {
            parts.push(format!("{} {}", if b.inclusive { ">=" } else { ">" }, b.value));
        }
        if let Some(b) = self.upper {
            parts.push(format!("{} {}", if b.inclusive { "<=" } else { "<" }, b.value));
        }
        match (self.min_length, self.max_length) {
            (Some(a), Some(b)) if a == b => parts.push(format!("length {a}")),
            (a, b) => {
                if let Some(a) = a {
                    parts.push(format!("length >= {a}"));
                }
                if let Some(b) = b {
                    parts.push(format!("length <= {b}"));
                }
            }
        }
        parts.join(", ")
    }
}

impl Bound {
    /// An inclusive bound.
    pub fn inclusive(value: Number) -> Bound {
        Bound { value, inclusive: true }
    }

    /// Whether `n` is within this bound taken as a lower bound.
    pub fn admits_above(self, n: Number) -> bool {
        match compare(n, self.value) {
            Some(std::cmp::Ordering::Greater) => true,
            Some(std::cmp::Ordering::Equal) => self.inclusive,
            _ => false,
        }
    }

    /// Whether `n` is within this bound taken as an upper bound.
    pub fn admits_below(self, n: Number) -> bool {
        match compare(n, self.value) {
            Some(std::cmp::Ordering::Less) => true,
            Some(std::cmp::Ordering::Equal) => self.inclusive,
            _ => false,
        }
    }
}

/// Numbers compared exactly: two integers as integers (no rounding through
/// f64), anything else as doubles.
fn compare(a: Number, b: Number) -> Option<std::cmp::Ordering> {
    match (a, b) {
        (Number::Int(x), Number::Int(y)) => Some(x.cmp(&y)),
        _ => a.as_f64().partial_cmp(&b.as_f64()),
    }
}

impl fmt::Display for Refinements {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refined(r: Refinements) -> Value {
        Value::Unknown(Some(Box::new(r)))
    }

    #[test]
    fn final_values_are_held_to_refinements() {
        let r = Refinements { not_null: true, prefix: Some("arn:".into()), ..Default::default() };
        assert_eq!(r.violation(&Value::string("arn:x"), "v"), None);
        assert_eq!(
            r.violation(&Value::string("x"), "\"x\"").unwrap(),
            r#"planned as an unknown with prefix "arn:", but the new value "x" does not start with it"#
        );
        assert!(r.violation(&Value::Null, "null").unwrap().contains("not null"));
        let n = Refinements {
            lower: Some(Bound::inclusive(Number::Int(1))),
            upper: Some(Bound { value: Number::Int(10), inclusive: false }),
            ..Default::default()
        };
        assert_eq!(n.violation(&Value::int(1), "v"), None);
        assert!(n.violation(&Value::int(10), "v").unwrap().contains("< 10"));
        assert!(n.violation(&Value::int(0), "v").unwrap().contains(">= 1"));
        let l = Refinements { min_length: Some(2), max_length: Some(2), ..Default::default() };
        assert_eq!(l.known_length(), Some(2));
        assert!(l.violation(&Value::List(vec![Value::int(1)]), "[1]").unwrap().contains("at least 2"));
        assert_eq!(l.describe(), "length 2");
    }

    #[test]
    fn a_replan_may_refine_but_not_loosen() {
        let r = Refinements { not_null: true, prefix: Some("arn:".into()), ..Default::default() };
        let tighter = Refinements { prefix: Some("arn:aws:".into()), ..r.clone() };
        assert_eq!(r.violation(&refined(tighter), "v"), None);
        assert!(r.violation(&Value::unknown(), "v").unwrap().contains("no longer promises"));
        assert!(Refinements::default().violation(&Value::unknown(), "v").is_none());
    }
}
