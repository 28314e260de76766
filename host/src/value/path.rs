//! Attribute paths: where inside a value something is, such as
//! `.keepers["a"]` or `.rule[0].port`.

use std::fmt;

/// One step from a value into one of its parts. In JSON (state files):
/// `{"attr": "a"}`, `{"key": "k"}`, `{"index": 0}`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PathStep {
    /// An object attribute or nested block type.
    Attr(String),
    /// A map element.
    Key(String),
    /// A list, tuple or set element by position.
    Index(u64),
}

/// A path from the root of a value. The empty path is the value itself.
/// In JSON, the list of its steps.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default, serde::Serialize, serde::Deserialize)]
pub struct Path(Vec<PathStep>);

impl Path {
    /// The path to the value itself.
    pub fn root() -> Path {
        Path(Vec::new())
    }

    /// A path from its steps.
    pub fn from_steps(steps: Vec<PathStep>) -> Path {
        Path(steps)
    }

    /// This path followed by attribute `name`.
    pub fn attr(&self, name: &str) -> Path {
        self.push(PathStep::Attr(name.to_string()))
    }

    /// This path followed by map key `key`.
    pub fn key(&self, key: &str) -> Path {
        self.push(PathStep::Key(key.to_string()))
    }

    /// This path followed by element `i`.
    pub fn index(&self, i: usize) -> Path {
        self.push(PathStep::Index(i as u64))
    }

    /// This path followed by `step`.
    pub fn push(&self, step: PathStep) -> Path {
        let mut steps = self.0.clone();
        steps.push(step);
        Path(steps)
    }

    /// This path followed by all the steps of `rest`.
    pub fn join(&self, rest: &Path) -> Path {
        let mut steps = self.0.clone();
        steps.extend(rest.0.iter().cloned());
        Path(steps)
    }

    /// The steps, root first.
    pub fn steps(&self) -> &[PathStep] {
        &self.0
    }

    /// Whether this is the empty path.
    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `self` is `prefix` or lies inside it.
    pub fn starts_with(&self, prefix: &Path) -> bool {
        self.0.starts_with(&prefix.0)
    }
}

impl fmt::Display for Path {
    /// `.a.b["k"][0]`; the root path shows as `.`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str(".");
        }
        for step in &self.0 {
            match step {
                PathStep::Attr(a) => write!(f, ".{a}")?,
                PathStep::Key(k) => write!(f, "[{}]", super::quote(k))?,
                PathStep::Index(i) => write!(f, "[{i}]")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_like_terraform() {
        let p = Path::root().attr("keepers").key("a").attr("x").index(2);
        assert_eq!(p.to_string(), r#".keepers["a"].x[2]"#);
        assert_eq!(Path::root().to_string(), ".");
        assert!(p.starts_with(&Path::root().attr("keepers")));
    }
}
