//! Splits HCL source into the tokens the formatter moves: each knows its
//! kind and its exact text; the spaces before it are what formatting sets.
//! Concatenating every token's text gives back the source without the
//! spaces and tabs between tokens, so formatting changes only whitespace.
//!
//! The kinds are those of HCL's own scanner that the canonical layout
//! (`hclwrite`) distinguishes: template pieces (quoted text, `${`, `%{`,
//! the `}` that closes them, heredoc markers and lines) are kept apart from
//! the expression tokens inside them.

/// What a token is, as far as layout cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Newline,
    /// `# …` or `// …` with its newline, or `/* … */`.
    Comment,
    Ident,
    Number,
    OBrace,
    CBrace,
    OBrack,
    CBrack,
    OParen,
    CParen,
    /// `=` (an assignment).
    Equal,
    Comma,
    Dot,
    Ellipsis,
    Colon,
    DoubleColon,
    Question,
    Minus,
    Bang,
    /// `+ * / %`.
    Arithmetic,
    /// `== != < <= > >=`.
    Comparison,
    /// `&& ||`.
    Logical,
    /// `=>`.
    FatArrow,
    /// The opening `"` of a quoted template.
    OQuote,
    /// The closing `"`.
    CQuote,
    /// Literal text inside quotes.
    QuotedLit,
    /// `${`
    TemplateInterp,
    /// `%{`
    TemplateControl,
    /// The `}` (or `~}`) that ends an interpolation or directive.
    TemplateSeqEnd,
    /// `<<EOT` or `<<-EOT` and its newline.
    OHeredoc,
    /// Literal text inside a heredoc.
    StringLit,
    /// The heredoc's closing marker, with the spaces before it.
    CHeredoc,
    /// Anything else, kept as it is.
    Other,
}

/// One token: its kind, its text, and the spaces to write before it.
#[derive(Debug, Clone)]
pub(super) struct Token {
    pub kind: Kind,
    pub text: String,
    pub spaces_before: usize,
}

/// What the lexer is inside of.
enum Context {
    /// Expressions, with the depth of braces opened within (so that the
    /// `}` ending an interpolation is told from an object's).
    Expr { braces: usize },
    /// A quoted template.
    Quoted,
    /// A heredoc template, with its closing marker.
    Heredoc { marker: String },
}

/// The tokens of `src`, or why it cannot be split (an unterminated string or
/// heredoc).
pub(super) fn tokens(src: &str) -> Result<Vec<Token>, String> {
    Lexer { chars: src.chars().collect(), at: 0, out: Vec::new(), stack: vec![Context::Expr { braces: 0 }], spaces: 0 }
        .run()
}

struct Lexer {
    chars: Vec<char>,
    at: usize,
    out: Vec<Token>,
    stack: Vec<Context>,
    /// Spaces and tabs seen since the last token (the original layout, kept
    /// where formatting leaves a token's spacing alone).
    spaces: usize,
}

impl Lexer {
    fn run(mut self) -> Result<Vec<Token>, String> {
        while self.at < self.chars.len() {
            match self.stack.last() {
                Some(Context::Quoted) => self.quoted()?,
                Some(Context::Heredoc { .. }) => self.heredoc_line()?,
                _ => self.expr()?,
            }
        }
        match self.stack.last() {
            Some(Context::Quoted) => Err("a quoted string is not closed".into()),
            Some(Context::Heredoc { marker }) => Err(format!("the heredoc {marker} is not closed")),
            _ => Ok(self.out),
        }
    }

    fn peek(&self, n: usize) -> Option<char> {
        self.chars.get(self.at + n).copied()
    }

    fn starts_with(&self, s: &str) -> bool {
        s.chars().enumerate().all(|(i, c)| self.peek(i) == Some(c))
    }

    fn push(&mut self, kind: Kind, len: usize) {
        let text: String = self.chars[self.at..self.at + len].iter().collect();
        self.at += len;
        self.out.push(Token { kind, text, spaces_before: std::mem::take(&mut self.spaces) });
    }

    fn expr(&mut self) -> Result<(), String> {
        let Some(c) = self.peek(0) else { return Ok(()) };
        match c {
            ' ' | '\t' => {
                self.at += 1;
                self.spaces += 1;
            }
            '\r' if self.peek(1) == Some('\n') => self.push(Kind::Newline, 2),
            '\n' => self.push(Kind::Newline, 1),
            '#' => self.line_comment(),
            '/' if self.peek(1) == Some('/') => self.line_comment(),
            '/' if self.peek(1) == Some('*') => {
                let len = self.chars[self.at + 2..]
                    .windows(2)
                    .position(|w| w == ['*', '/'])
                    .map(|p| p + 4)
                    .ok_or("a /* comment is not closed")?;
                self.push(Kind::Comment, len);
            }
            '"' => {
                self.push(Kind::OQuote, 1);
                self.stack.push(Context::Quoted);
            }
            '<' if self.peek(1) == Some('<') && self.heredoc_start().is_some() => {
                let (len, marker) = self.heredoc_start().unwrap_or_default();
                self.push(Kind::OHeredoc, len);
                self.stack.push(Context::Heredoc { marker });
            }
            '{' => {
                if let Some(Context::Expr { braces }) = self.stack.last_mut() {
                    *braces += 1;
                }
                self.push(Kind::OBrace, 1);
            }
            '}' => self.close_brace(),
            '~' if self.peek(1) == Some('}') => self.close_brace(),
            '[' => self.push(Kind::OBrack, 1),
            ']' => self.push(Kind::CBrack, 1),
            '(' => self.push(Kind::OParen, 1),
            ')' => self.push(Kind::CParen, 1),
            ',' => self.push(Kind::Comma, 1),
            '?' => self.push(Kind::Question, 1),
            '.' if self.starts_with("...") => self.push(Kind::Ellipsis, 3),
            '.' if !self.peek(1).is_some_and(|d| d.is_ascii_digit()) || !self.after_number_context() => {
                self.push(Kind::Dot, 1)
            }
            ':' if self.peek(1) == Some(':') => self.push(Kind::DoubleColon, 2),
            ':' => self.push(Kind::Colon, 1),
            '=' if self.peek(1) == Some('>') => self.push(Kind::FatArrow, 2),
            '=' if self.peek(1) == Some('=') => self.push(Kind::Comparison, 2),
            '=' => self.push(Kind::Equal, 1),
            '!' if self.peek(1) == Some('=') => self.push(Kind::Comparison, 2),
            '!' => self.push(Kind::Bang, 1),
            '<' | '>' if self.peek(1) == Some('=') => self.push(Kind::Comparison, 2),
            '<' | '>' => self.push(Kind::Comparison, 1),
            '&' if self.peek(1) == Some('&') => self.push(Kind::Logical, 2),
            '|' if self.peek(1) == Some('|') => self.push(Kind::Logical, 2),
            '-' => self.push(Kind::Minus, 1),
            '+' | '*' | '/' | '%' => self.push(Kind::Arithmetic, 1),
            c if c.is_ascii_digit() || c == '.' => {
                let len = self.number_len();
                self.push(Kind::Number, len);
            }
            c if c.is_alphabetic() || c == '_' => {
                let len = self.chars[self.at..]
                    .iter()
                    .take_while(|c| c.is_alphanumeric() || **c == '_' || **c == '-')
                    .count();
                self.push(Kind::Ident, len);
            }
            _ => self.push(Kind::Other, 1),
        }
        Ok(())
    }

    /// A `.` followed by a digit starts a number only where a value may
    /// start; after a name or bracket it is a legacy index (`x.0`).
    fn after_number_context(&self) -> bool {
        !matches!(
            self.out.last().map(|t| t.kind),
            Some(Kind::Ident | Kind::CBrack | Kind::CParen | Kind::CBrace | Kind::Number | Kind::CQuote)
        )
    }

    fn number_len(&self) -> usize {
        let rest = &self.chars[self.at..];
        let mut len = rest.iter().take_while(|c| c.is_ascii_digit()).count();
        if rest.get(len) == Some(&'.') && rest.get(len + 1).is_some_and(char::is_ascii_digit) {
            len += 1 + rest[len + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        }
        if matches!(rest.get(len), Some('e' | 'E')) {
            let sign = usize::from(matches!(rest.get(len + 1), Some('+' | '-')));
            let digits = rest[len + 1 + sign..].iter().take_while(|c| c.is_ascii_digit()).count();
            if digits > 0 {
                len += 1 + sign + digits;
            }
        }
        len.max(1)
    }

    fn line_comment(&mut self) {
        let len = self.chars[self.at..].iter().position(|c| *c == '\n').map_or(self.chars.len() - self.at, |p| p + 1);
        self.push(Kind::Comment, len);
    }

    /// A `}` closes an object or block, or the interpolation it is in.
    fn close_brace(&mut self) {
        let len = if self.peek(0) == Some('~') { 2 } else { 1 };
        let nested = self.stack.len() > 1;
        match self.stack.last_mut() {
            Some(Context::Expr { braces }) if *braces > 0 => {
                *braces -= 1;
                self.push(Kind::CBrace, len);
            }
            Some(Context::Expr { .. }) if nested => {
                self.stack.pop();
                self.push(Kind::TemplateSeqEnd, len);
            }
            _ => self.push(Kind::CBrace, len),
        }
    }

    /// The length of `<<EOT\n` or `<<-EOT\n` here, and the marker.
    fn heredoc_start(&self) -> Option<(usize, String)> {
        let dash = usize::from(self.peek(2) == Some('-'));
        let name: String = self.chars[self.at + 2 + dash..]
            .iter()
            .take_while(|c| c.is_alphanumeric() || **c == '_' || **c == '-')
            .collect();
        if name.is_empty() {
            return None;
        }
        let mut len = 2 + dash + name.chars().count();
        match (self.peek(len), self.peek(len + 1)) {
            (Some('\n'), _) => len += 1,
            (Some('\r'), Some('\n')) => len += 2,
            _ => return None,
        }
        Some((len, name))
    }

    /// Text of a quoted template up to `"`, `${` or `%{`.
    fn quoted(&mut self) -> Result<(), String> {
        if self.peek(0) == Some('"') {
            self.stack.pop();
            self.push(Kind::CQuote, 1);
            return Ok(());
        }
        if let Some(kind) = self.template_opener() {
            self.open_template(kind);
            return Ok(());
        }
        let mut len = 0;
        while let Some(c) = self.peek(len) {
            match c {
                '"' => break,
                '\\' => len += 2,
                '$' | '%' if self.peek(len + 1) == Some('{') => {
                    // `$${` and `%%{` are escapes, not openers.
                    if len > 0 && self.peek(len - 1) == Some(c) {
                        len += 2;
                    } else {
                        break;
                    }
                }
                '\n' => return Err("a quoted string does not end on its line".into()),
                _ => len += 1,
            }
        }
        let len = len.min(self.chars.len() - self.at);
        self.push(Kind::QuotedLit, len);
        Ok(())
    }

    fn template_opener(&self) -> Option<Kind> {
        match (self.peek(0), self.peek(1)) {
            (Some('$'), Some('{')) => Some(Kind::TemplateInterp),
            (Some('%'), Some('{')) => Some(Kind::TemplateControl),
            _ => None,
        }
    }

    fn open_template(&mut self, kind: Kind) {
        let len = if self.peek(2) == Some('~') { 3 } else { 2 };
        self.push(kind, len);
        self.stack.push(Context::Expr { braces: 0 });
    }

    /// One line of a heredoc (or the text before an interpolation in it),
    /// or its closing marker.
    fn heredoc_line(&mut self) -> Result<(), String> {
        let Some(Context::Heredoc { marker }) = self.stack.last() else { return Ok(()) };
        let marker = marker.clone();
        let at_line_start = self.out.last().is_some_and(|t| t.text.ends_with('\n'));
        if at_line_start {
            let indent = self.chars[self.at..].iter().take_while(|c| **c == ' ' || **c == '\t').count();
            let rest: String = self.chars[self.at + indent..].iter().take(marker.chars().count() + 2).collect();
            let closes = rest
                .strip_prefix(marker.as_str())
                .is_some_and(|after| after.is_empty() || after.starts_with('\n') || after.starts_with('\r'));
            if closes {
                self.stack.pop();
                self.push(Kind::CHeredoc, indent + marker.chars().count());
                return Ok(());
            }
        }
        if let Some(kind) = self.template_opener() {
            self.open_template(kind);
            return Ok(());
        }
        let mut len = 0;
        while let Some(c) = self.peek(len) {
            if c == '\n' {
                len += 1;
                break;
            }
            if matches!(c, '$' | '%') && self.peek(len + 1) == Some('{') {
                if len > 0 && self.peek(len - 1) == Some(c) {
                    len += 2;
                    continue;
                }
                break;
            }
            len += 1;
        }
        self.push(Kind::StringLit, len);
        Ok(())
    }
}
