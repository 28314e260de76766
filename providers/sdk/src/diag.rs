//! Diagnostics (messages for the user) and attribute paths.

use std::fmt;

use crate::bindings::cairn::provider::types as wire;

/// One step of an attribute [`Path`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathStep {
    /// An attribute or nested block type by name.
    Attr(String),
    /// A map element by key.
    Key(String),
    /// A list or tuple element by position.
    Index(u64),
}

/// A path from the root of a value to one of its parts, such as
/// `Path::attr("keepers").key("a")` for `.keepers["a"]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Path(Vec<PathStep>);

impl Path {
    /// The empty path: the whole object.
    pub fn root() -> Path {
        Path(Vec::new())
    }

    /// A path starting at the top-level attribute `name`.
    pub fn attr(name: impl Into<String>) -> Path {
        Path(vec![PathStep::Attr(name.into())])
    }

    /// This path, then the attribute (or nested block) `name`.
    pub fn then_attr(mut self, name: impl Into<String>) -> Path {
        self.0.push(PathStep::Attr(name.into()));
        self
    }

    /// This path, then the map element `key`.
    pub fn key(mut self, key: impl Into<String>) -> Path {
        self.0.push(PathStep::Key(key.into()));
        self
    }

    /// This path, then the list or tuple element `index`.
    pub fn index(mut self, index: u64) -> Path {
        self.0.push(PathStep::Index(index));
        self
    }

    /// The steps, root first.
    pub fn steps(&self) -> &[PathStep] {
        &self.0
    }

    /// `step`, then this path.
    pub(crate) fn prepend(mut self, step: PathStep) -> Path {
        self.0.insert(0, step);
        self
    }

    pub(crate) fn to_wire(&self) -> Vec<wire::PathStep> {
        self.0
            .iter()
            .map(|s| match s {
                PathStep::Attr(a) => wire::PathStep::Attribute(a.clone()),
                PathStep::Key(k) => wire::PathStep::Key(k.clone()),
                PathStep::Index(i) => wire::PathStep::Index(*i),
            })
            .collect()
    }
}

/// Shown in Terraform's spelling: `.keepers["a"]`, `.rule[0]`.
impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for step in &self.0 {
            match step {
                PathStep::Attr(a) => write!(f, ".{a}")?,
                PathStep::Key(k) => write!(f, "[{k:?}]")?,
                PathStep::Index(i) => write!(f, "[{i}]")?,
            }
        }
        Ok(())
    }
}

/// How serious a [`Diagnostic`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    /// The operation failed.
    Error,
    /// The operation went ahead; the user should know.
    Warning,
}

/// A message for the user about an operation.
///
/// ```
/// use cairn_sdk::{Diagnostic, Path};
/// let d = Diagnostic::error("cannot write file")
///     .detail("permission denied")
///     .at(Path::attr("filename"));
/// assert!(d.is_error());
/// ```
///
/// A single diagnostic converts into `Vec<Diagnostic>`, so `?` and `.into()`
/// work in the [`Provider`](crate::Provider) methods.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// How serious it is.
    pub severity: Severity,
    /// One line.
    pub summary: String,
    /// Any length; may be empty.
    pub detail: String,
    /// The attribute it is about; empty for the whole object.
    pub path: Path,
}

impl Diagnostic {
    /// An error: the operation failed.
    pub fn error(summary: impl Into<String>) -> Diagnostic {
        Diagnostic { severity: Severity::Error, summary: summary.into(), detail: String::new(), path: Path::root() }
    }

    /// A warning: the operation went ahead.
    pub fn warning(summary: impl Into<String>) -> Diagnostic {
        Diagnostic { severity: Severity::Warning, ..Diagnostic::error(summary) }
    }

    /// Set the longer explanation.
    pub fn detail(mut self, detail: impl Into<String>) -> Diagnostic {
        self.detail = detail.into();
        self
    }

    /// Set the attribute the message is about.
    pub fn at(mut self, path: Path) -> Diagnostic {
        self.path = path;
        self
    }

    /// Is this an error?
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    pub(crate) fn to_wire(&self) -> wire::Diagnostic {
        wire::Diagnostic {
            severity: match self.severity {
                Severity::Error => wire::Severity::Error,
                Severity::Warning => wire::Severity::Warning,
            },
            summary: self.summary.clone(),
            detail: self.detail.clone(),
            path: self.path.to_wire(),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = if self.is_error() { "error" } else { "warning" };
        write!(f, "{level}: {}", self.summary)?;
        if !self.path.steps().is_empty() {
            write!(f, " (at {})", self.path)?;
        }
        if !self.detail.is_empty() {
            write!(f, ": {}", self.detail)?;
        }
        Ok(())
    }
}

impl From<Diagnostic> for Vec<Diagnostic> {
    fn from(d: Diagnostic) -> Vec<Diagnostic> {
        vec![d]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_build_and_encode_in_order() {
        let p = Path::attr("rule").index(2).then_attr("keepers").key("a");
        assert_eq!(p.to_string(), r#".rule[2].keepers["a"]"#);
        assert_eq!(
            p.to_wire(),
            vec![
                wire::PathStep::Attribute("rule".into()),
                wire::PathStep::Index(2),
                wire::PathStep::Attribute("keepers".into()),
                wire::PathStep::Key("a".into()),
            ]
        );
    }

    #[test]
    fn diagnostics_encode_with_severity_and_path() {
        let d = Diagnostic::warning("careful").detail("why").at(Path::attr("x"));
        let w = d.to_wire();
        assert_eq!(w.severity, wire::Severity::Warning);
        assert_eq!((w.summary.as_str(), w.detail.as_str()), ("careful", "why"));
        assert_eq!(w.path, vec![wire::PathStep::Attribute("x".into())]);
        assert_eq!(d.to_string(), "warning: careful (at .x): why");
        let v: Vec<Diagnostic> = Diagnostic::error("e").into();
        assert!(v[0].is_error());
    }
}
