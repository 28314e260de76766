//! Diagnostics shown with their source: `file:line:column`, the offending
//! line and a caret under the span, and for `-json` Terraform's `range`
//! (`filename`, `start` and `end`, each with `line`, `column` and `byte`).
//!
//! A [`Location`] records where something starts. The span's end is the
//! end of the token that starts there (a name or reference, a quoted
//! string, a bracketed or braced expression on that line, or one
//! character), which is what a caret needs. The text is read from the
//! configuration directory that [`remember_dir`] was last given (the one
//! [`crate::config::load`] read), when a diagnostic is shown, so that
//! nothing the engine keeps grows with the source.
//!
//! This module only renders. What a diagnostic says, and where, is decided
//! where it is made.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::{Diagnostic, Location, Severity};

static SOURCE_DIR: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Remembers the configuration directory whose files diagnostics point
/// into (their `file` is relative to it).
pub fn remember_dir(dir: &Path) {
    *SOURCE_DIR.lock().unwrap_or_else(|e| e.into_inner()) = Some(dir.to_path_buf());
}

fn source_dir() -> Option<PathBuf> {
    SOURCE_DIR.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

static SECRETS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Remembers the values of sensitive variables, so that a diagnostic
/// never shows one: an error about an expression that reads a sensitive
/// value (`"x" + var.secret`) may quote the value it got, and [`scrub`]
/// redacts it. Values shorter than [`crate::config::marks::ECHO_MIN`] are
/// left alone (redacting every `1` would garble messages).
pub fn remember_secrets(secrets: Vec<String>) {
    let mut kept: Vec<String> =
        secrets.into_iter().filter(|s| s.chars().count() >= crate::config::marks::ECHO_MIN).collect();
    // The longest first, so that a secret that contains another is
    // redacted whole.
    kept.sort_by_key(|s| std::cmp::Reverse(s.len()));
    kept.dedup();
    *SECRETS.lock().unwrap_or_else(|e| e.into_inner()) = kept;
}

/// `text` with every remembered secret replaced by `(sensitive value)`.
pub fn scrub(text: &str) -> String {
    let secrets = SECRETS.lock().unwrap_or_else(|e| e.into_inner());
    let mut out = text.to_string();
    for secret in secrets.iter() {
        if out.contains(secret.as_str()) {
            out = out.replace(secret.as_str(), "(sensitive value)");
        }
    }
    out
}

/// A position in a file as Terraform's JSON gives it: 1-based line and
/// column (in characters), 0-based byte offset.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Pos {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// Byte offset from the start of the file.
    pub byte: usize,
}

/// A span of a configuration file, as `-json` diagnostics carry it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Range {
    /// The file, relative to the configuration directory.
    pub filename: String,
    /// Where the span starts.
    pub start: Pos,
    /// Where it ends (exclusive).
    pub end: Pos,
}

/// The span that starts at `location` in the file's `text`: the line's
/// text, the start and the end.
fn span(location: &Location, text: &str) -> Option<(String, Range)> {
    let line_text = text.lines().nth(location.line.checked_sub(1)?)?;
    let line_start: usize = text.split_inclusive('\n').take(location.line - 1).map(str::len).sum();
    let start_in_line = line_text.char_indices().nth(location.column - 1).map_or(line_text.len(), |(i, _)| i);
    let token = token_len(&line_text[start_in_line..]);
    let end_in_line = start_in_line + token;
    // At the end of the line (a syntax error there): the line break.
    let end_column = location.column + line_text[start_in_line..end_in_line].chars().count().max(1);
    let end_in_line = end_in_line.max(start_in_line + 1);
    let range = Range {
        filename: location.file.display().to_string(),
        start: Pos { line: location.line, column: location.column, byte: line_start + start_in_line },
        end: Pos { line: location.line, column: end_column, byte: line_start + end_in_line },
    };
    Some((line_text.to_string(), range))
}

/// The length in bytes of the token at the start of `rest`: a name or
/// reference (`var.x`, `local_file.a[0].id`), a quoted string, a bracketed
/// or braced group closed on the same line, or one character.
fn token_len(rest: &str) -> usize {
    let Some(first) = rest.chars().next() else { return 0 };
    if first.is_alphanumeric() || first == '_' {
        let mut end = 0;
        let mut depth = 0usize;
        for (i, c) in rest.char_indices() {
            let inside = depth > 0;
            match c {
                '[' => depth += 1,
                ']' if inside => depth -= 1,
                _ if inside => {}
                c if c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '*') => {}
                _ => break,
            }
            end = i + c.len_utf8();
        }
        return rest[..end].trim_end_matches('.').len();
    }
    let close = match first {
        '"' => '"',
        '[' => ']',
        '{' => '}',
        '(' => ')',
        _ => return first.len_utf8(),
    };
    let mut escaped = false;
    let mut depth = 0usize;
    for (i, c) in rest.char_indices().skip(1) {
        match c {
            _ if escaped => escaped = false,
            '\\' if first == '"' => escaped = true,
            c if c == first && first != '"' => depth += 1,
            c if c == close && depth == 0 => return i + c.len_utf8(),
            c if c == close => depth -= 1,
            _ => {}
        }
    }
    // Not closed on this line: the rest of it.
    rest.trim_end().len().max(first.len_utf8())
}

/// The range of `location` for `-json`, when its file can be read.
pub fn range(location: &Location) -> Option<Range> {
    let text = std::fs::read_to_string(source_dir()?.join(&location.file)).ok()?;
    span(location, &text).map(|(_, range)| range)
}

/// The text of the line a range starts on, when its file can be read.
pub fn line(range: &Range) -> Option<String> {
    let text = std::fs::read_to_string(source_dir()?.join(&range.filename)).ok()?;
    text.lines().nth(range.start.line.checked_sub(1)?).map(str::to_string)
}

/// `file:line:column`.
pub fn position(location: &Location) -> String {
    format!("{}:{}:{}", location.file.display(), location.line, location.column)
}

/// A diagnostic for people, with its source: the first line says what
/// and where (`Error: main.tf:3:5: Unsupported argument`), then the
/// offending line with a caret under the span, then the attribute path
/// and the detail.
pub fn render(d: &Diagnostic) -> String {
    let text = d.location.as_ref().and_then(|l| Some((l, std::fs::read_to_string(source_dir()?.join(&l.file)).ok()?)));
    scrub(&render_with(d, text.as_ref().map(|(l, t)| (*l, t.as_str()))))
}

/// [`render`] with the located file's text given (`None`: not readable).
pub fn render_with(d: &Diagnostic, source: Option<(&Location, &str)>) -> String {
    let label = match d.severity {
        Severity::Error => "Error",
        Severity::Warning => "Warning",
    };
    let mut out = format!("{label}: ");
    if let Some(location) = &d.location {
        let _ = write!(out, "{}: ", position(location));
    }
    out.push_str(&d.summary);
    if let Some((line, range)) = source.and_then(|(location, text)| span(location, text)) {
        let number = range.start.line.to_string();
        let gutter = " ".repeat(number.len());
        let before: String =
            line.chars().take(range.start.column - 1).map(|c| if c == '\t' { '\t' } else { ' ' }).collect();
        let width = (range.end.column - range.start.column).max(1);
        let _ = write!(out, "\n\n  {number} | {line}\n  {gutter} | {before}{}", "^".repeat(width));
        if !d.detail.is_empty() || d.path.as_ref().is_some_and(|p| !p.is_root()) {
            out.push('\n');
        }
    }
    if let Some(path) = d.path.as_ref().filter(|p| !p.is_root()) {
        let _ = write!(out, "\n  at attribute {path}");
    }
    for line in d.detail.lines() {
        let _ = write!(out, "\n  {line}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(line: usize, column: usize) -> Location {
        Location::new("main.tf", line, column)
    }

    const TEXT: &str = "resource \"x\" \"y\" {\n  contnt = \"a\\\"b\"\n  v = var.lst[0].id + 1\n  o = { a = 1 }\n}\n";

    fn token(line: usize, column: usize) -> String {
        let (line_text, range) = span(&at(line, column), TEXT).unwrap();
        let from = line_text.char_indices().nth(column - 1).unwrap().0;
        line_text[from..from + (range.end.byte - range.start.byte)].to_string()
    }

    #[test]
    fn spans_cover_the_token_that_starts_there() {
        assert_eq!(token(2, 3), "contnt");
        assert_eq!(token(2, 12), "\"a\\\"b\"");
        assert_eq!(token(3, 7), "var.lst[0].id");
        assert_eq!(token(4, 7), "{ a = 1 }");
        assert_eq!(token(3, 21), "+");
        let (_, range) = span(&at(2, 3), TEXT).unwrap();
        assert_eq!(range.start, Pos { line: 2, column: 3, byte: 21 });
        assert_eq!(range.end, Pos { line: 2, column: 9, byte: 27 });
    }

    #[test]
    fn secrets_are_scrubbed_longest_first_and_short_ones_left() {
        remember_secrets(vec!["hunter2".into(), "hunter2-long".into(), "ab".into()]);
        assert_eq!(
            scrub("got \"hunter2-long\" and hunter2, ab"),
            "got \"(sensitive value)\" and (sensitive value), ab"
        );
        remember_secrets(Vec::new());
    }

    #[test]
    fn renders_the_line_with_a_caret_under_the_span() {
        let d = Diagnostic::error("Unsupported argument")
            .with_detail("An argument named \"contnt\" is not expected here.")
            .at(&at(2, 3));
        assert_eq!(
            render_with(&d, Some((&at(2, 3), TEXT))),
            "Error: main.tf:2:3: Unsupported argument\n\n  2 |   contnt = \"a\\\"b\"\n    |   ^^^^^^\n\n  An argument \
             named \"contnt\" is not expected here."
        );
        // Without the file: where, what and the detail.
        assert_eq!(
            render_with(&d, None),
            "Error: main.tf:2:3: Unsupported argument\n  An argument named \"contnt\" is not expected here."
        );
    }
}
