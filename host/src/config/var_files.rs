//! Variable files: `.tfvars` (HCL `name = value` lines) and `.tfvars.json`
//! (one JSON object), given with `-var-file=FILE` or found beside the
//! configuration (`terraform.tfvars`, then `*.auto.tfvars` in name order,
//! each also as `.json`), as Terraform loads them.
//!
//! A value in a file is a literal: it may be any HCL value (strings,
//! numbers, lists, objects) but may refer to nothing. Every problem names
//! the file, line and column.

use std::path::{Path, PathBuf};

use crate::diag::{Diagnostic, Location};
use crate::value::Value;

use super::blocks::literal;
use super::parse::parse_file;
use super::source::SourceFile;

/// The file Terraform loads first from the configuration directory.
const DEFAULT_FILE: &str = "terraform.tfvars";

/// The suffix of the files loaded after it, in name order.
const AUTO_SUFFIX: &str = ".auto.tfvars";

/// One value a variable file assigns.
#[derive(Debug, Clone, PartialEq)]
pub struct Assignment {
    /// The variable's name.
    pub name: String,
    /// The value.
    pub value: Value,
    /// Where it is assigned.
    pub location: Location,
}

/// The variable files of the configuration directory `dir` that are loaded
/// without being named: `terraform.tfvars` (or `.json`) first, then every
/// `*.auto.tfvars` (or `.json`) in name order.
pub fn automatic_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = [DEFAULT_FILE.to_string(), format!("{DEFAULT_FILE}.json")]
        .iter()
        .map(|name| dir.join(name))
        .filter(|p| p.is_file())
        .collect();
    let mut auto: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            (name.ends_with(AUTO_SUFFIX) || name.ends_with(&format!("{AUTO_SUFFIX}.json"))) && p.is_file()
        })
        .collect();
    auto.sort();
    files.extend(auto);
    files
}

/// Reads the variable file `path`, shown in messages as `shown`: JSON when
/// its name ends in `.json`, HCL otherwise.
pub fn read(path: &Path, shown: &str) -> Result<Vec<Assignment>, Vec<Diagnostic>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| vec![Diagnostic::error("Cannot read variable file").with_detail(format!("{shown}: {e}"))])?;
    let assignments = if path.extension().is_some_and(|e| e == "json") {
        parse_json(&text, shown).map_err(|d| vec![d])
    } else {
        parse_hcl(&text, shown, path.parent().unwrap_or(Path::new(".")))
    };
    assignments.map_err(|diags| diags.into_iter().map(with_column).collect())
}

/// `name = value` lines.
fn parse_hcl(text: &str, shown: &str, dir: &Path) -> Result<Vec<Assignment>, Vec<Diagnostic>> {
    let file = SourceFile::new(shown, text.to_string());
    let mut diags = Vec::new();
    let Some(body) = parse_file(&file, &mut diags) else { return Err(diags) };
    for block in &body.blocks {
        diags.push(
            Diagnostic::error("Unexpected block in variable file")
                .with_detail(format!(
                    "A variable file holds only assignments like name = \"value\"; a \"{}\" block is not one.",
                    block.type_name
                ))
                .at(&block.location),
        );
    }
    let mut assignments = Vec::new();
    for attr in &body.attributes {
        match literal(&attr.expr, dir, &format!("value of \"{}\"", attr.name)) {
            Ok(value) => {
                assignments.push(Assignment { name: attr.name.clone(), value, location: attr.location.clone() })
            }
            Err(d) => diags.extend(d),
        }
    }
    if diags.iter().any(Diagnostic::is_error) { Err(diags) } else { Ok(assignments) }
}

/// One JSON object of names to values.
fn parse_json(text: &str, shown: &str) -> Result<Vec<Assignment>, Diagnostic> {
    let at = |line: usize, column: usize| Location::new(shown, line, column);
    let json: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        Diagnostic::error("Invalid JSON in variable file")
            .with_detail(format!("{e}."))
            .at(&at(e.line().max(1), e.column().max(1)))
    })?;
    let serde_json::Value::Object(entries) = json else {
        return Err(Diagnostic::error("Invalid variable file")
            .with_detail("A JSON variable file must hold one object of variable names to values.")
            .at(&at(1, 1)));
    };
    Ok(entries
        .into_iter()
        .map(|(name, v)| Assignment { name, value: crate::value::from_json_untyped(&v), location: at(1, 1) })
        .collect())
}

/// A diagnostic whose detail starts with its full `file:line:column`: the
/// usual `file:line` is not enough to find a value on a long line.
fn with_column(d: Diagnostic) -> Diagnostic {
    match d.location.clone() {
        Some(l) => {
            let place = format!("{}:{}:{}", l.file.display(), l.line, l.column);
            let detail = if d.detail.is_empty() { place } else { format!("{place}: {}", d.detail) };
            d.with_detail(detail)
        }
        None => d,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn hcl_files_assign_literal_values() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "a.tfvars", "name = \"web\"\ncount_of = 3\ntags = { a = \"b\" }\n");
        let found = read(&path, "a.tfvars").unwrap();
        let names: Vec<&str> = found.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["name", "count_of", "tags"]);
        assert_eq!(found[1].value, Value::int(3));
        assert_eq!(found[1].location.line, 2);
    }

    #[test]
    fn errors_name_the_file_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "bad.tfvars", "ok = 1\nbad = var.other\n");
        let errors = read(&path, "bad.tfvars").unwrap_err();
        assert!(errors[0].detail.starts_with("bad.tfvars:2:7: "), "{}", errors[0]);
        let path = write(dir.path(), "syntax.tfvars", "a = 1\nb = \n");
        let errors = read(&path, "syntax.tfvars").unwrap_err();
        assert!(errors[0].detail.starts_with("syntax.tfvars:"), "{}", errors[0]);
        let path = write(dir.path(), "block.tfvars", "x {\n}\n");
        assert!(read(&path, "block.tfvars").unwrap_err()[0].summary.contains("Unexpected block"));
        let path = write(dir.path(), "b.tfvars.json", "{\n  \"a\": [1,\n}");
        assert!(read(&path, "b.tfvars.json").unwrap_err()[0].detail.starts_with("b.tfvars.json:3:"));
    }

    #[test]
    fn automatic_files_are_the_default_then_auto_files_in_name_order() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["b.auto.tfvars", "a.auto.tfvars.json", "terraform.tfvars", "other.tfvars", "main.tf"] {
            write(dir.path(), name, "");
        }
        let names: Vec<String> =
            automatic_files(dir.path()).iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(names, ["terraform.tfvars", "a.auto.tfvars.json", "b.auto.tfvars"]);
    }
}
