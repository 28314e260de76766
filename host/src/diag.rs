//! Diagnostics: errors and warnings that say what went wrong and where —
//! a configuration file, line and column, an attribute path, or both.
//! [`source`] shows them to people with the offending line and a caret,
//! and gives `-json` its `range`; the `Display` here is the short form.

pub mod source;

use std::fmt;
use std::sync::Arc;

use crate::value::Path;

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum Severity {
    /// The operation failed.
    Error,
    /// The operation went ahead; the user should know.
    Warning,
}

/// A place in a configuration file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub struct Location {
    /// The file, relative to the configuration directory. Shared: every
    /// node of a configuration's syntax tree has a location, and a path of
    /// its own each was an allocation per node.
    pub file: Arc<std::path::Path>,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
}

impl Location {
    /// A place in `file`.
    pub fn new(file: impl AsRef<std::path::Path>, line: usize, column: usize) -> Location {
        Location { file: Arc::from(file.as_ref()), line, column }
    }
}

impl Default for Location {
    fn default() -> Location {
        Location { file: Arc::from(std::path::Path::new("")), line: 0, column: 0 }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file.display(), self.line)
    }
}

/// One message for the user.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// One line.
    pub summary: String,
    /// More, possibly several lines; may be empty.
    pub detail: String,
    /// Where in the configuration, when known.
    pub location: Option<Location>,
    /// Which attribute, when known.
    pub path: Option<Path>,
}

impl Diagnostic {
    /// An error with a summary.
    pub fn error(summary: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            summary: summary.into(),
            detail: String::new(),
            location: None,
            path: None,
        }
    }

    /// A warning with a summary.
    pub fn warning(summary: impl Into<String>) -> Diagnostic {
        Diagnostic { severity: Severity::Warning, ..Diagnostic::error(summary) }
    }

    /// The same diagnostic with a detail text.
    pub fn with_detail(mut self, detail: impl Into<String>) -> Diagnostic {
        self.detail = detail.into();
        self
    }

    /// The same diagnostic located in a file.
    pub fn at(mut self, location: &Location) -> Diagnostic {
        self.location = Some(location.clone());
        self
    }

    /// The same diagnostic about an attribute; keeps an existing location.
    pub fn at_path(mut self, path: Path) -> Diagnostic {
        self.path = Some(path);
        self
    }

    /// Whether this is an error.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Diagnostic {
    /// `Error: main.tf:3: summary` then the path and detail on the next lines.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let label = match self.severity {
            Severity::Error => "Error",
            Severity::Warning => "Warning",
        };
        write!(f, "{label}: ")?;
        if let Some(loc) = &self.location {
            write!(f, "{loc}: ")?;
        }
        f.write_str(&self.summary)?;
        if let Some(path) = self.path.as_ref().filter(|p| !p.is_root()) {
            write!(f, "\n  at attribute {path}")?;
        }
        if !self.detail.is_empty() {
            for line in self.detail.lines() {
                write!(f, "\n  {line}")?;
            }
        }
        Ok(())
    }
}

/// A list of diagnostics that contains at least one error, as an error type.
#[derive(Debug, Clone)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    /// Whether any of them is an error.
    pub fn has_errors(diags: &[Diagnostic]) -> bool {
        diags.iter().any(Diagnostic::is_error)
    }

    /// The diagnostics an error carries, or the error itself as one.
    pub fn of_error(e: anyhow::Error) -> Vec<Diagnostic> {
        match e.downcast_ref::<Diagnostics>() {
            Some(d) => d.0.clone(),
            None => vec![Diagnostic::error(format!("{e:#}"))],
        }
    }
}

impl From<Diagnostic> for Diagnostics {
    fn from(d: Diagnostic) -> Diagnostics {
        Diagnostics(vec![d])
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n\n")?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_file_line_and_path() {
        let d = Diagnostic::error("Unsupported attribute")
            .at(&Location::new("main.tf", 7, 3))
            .at_path(Path::root().attr("content"))
            .with_detail("This object has no attribute \"contnt\".");
        assert_eq!(
            d.to_string(),
            "Error: main.tf:7: Unsupported attribute\n  at attribute .content\n  This object has no attribute \"contnt\"."
        );
    }
}
