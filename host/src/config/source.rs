//! Source files: their text and the mapping from byte offsets (what
//! `hcl-edit` spans give) to the 1-based line and column users read.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::diag::Location;

/// One configuration file's text, with where each line starts.
pub(crate) struct SourceFile {
    /// The name shown in diagnostics: relative to the configuration directory.
    name: Arc<Path>,
    text: String,
    /// Byte offset of the first character of each line.
    line_starts: Vec<usize>,
}

impl SourceFile {
    /// A file called `name` (as diagnostics should show it) containing `text`.
    pub(crate) fn new(name: impl Into<PathBuf>, text: String) -> SourceFile {
        let line_starts = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
        SourceFile { name: Arc::from(name.into()), text, line_starts }
    }

    /// The whole text.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// The location of a byte offset; the column counts characters.
    pub(crate) fn location(&self, offset: usize) -> Location {
        let offset = offset.min(self.text.len());
        let line = self.line_starts.partition_point(|&start| start <= offset);
        let line_start = self.line_starts[line - 1];
        let column = self.text.get(line_start..offset).map_or(1, |s| s.chars().count() + 1);
        Location { file: Arc::clone(&self.name), line, column }
    }

    /// The location of an item's span start, or of the file's start when
    /// the item has no span (items `hcl-edit` builds itself have none).
    pub(crate) fn span_location(&self, span: Option<std::ops::Range<usize>>) -> Location {
        self.location(span.map_or(0, |s| s.start))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_map_to_lines_and_columns() {
        let f = SourceFile::new("main.tf", "a = 1\nbé = 2\n\nc".to_string());
        let at = |o| {
            let l = f.location(o);
            (l.line, l.column)
        };
        assert_eq!(at(0), (1, 1));
        assert_eq!(at(4), (1, 5));
        assert_eq!(at(6), (2, 1));
        // "é" is two bytes: the `=` after it is the fourth character.
        assert_eq!(at(10), (2, 4));
        assert_eq!(at(15), (4, 1));
        assert_eq!(f.location(3).to_string(), "main.tf:1");
    }
}
