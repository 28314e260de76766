//! What `terraform fmt` changes besides whitespace: block labels written as
//! bare names are quoted (`resource aws_instance x` becomes
//! `resource "aws_instance" "x"`), and in the attributes of blocks (not in
//! object constructors) a value that is only one interpolation
//! (`"${var.x}"`) becomes the expression itself (`var.x`), and a variable's
//! `type` written the pre-0.12 way (`"string"`, `"list"`, `"map"`, or a
//! bare `list`/`map`/`set`) is written as today.

use super::lexer::{Kind, Token};

/// Rewrites the value of every attribute of a block or of the file.
pub(super) fn rewrite(tokens: Vec<Token>) -> Vec<Token> {
    let mut out = Vec::with_capacity(tokens.len());
    // What each open bracket is: a block's body (with the block's type) or
    // anything else.
    let mut open: Vec<Option<String>> = Vec::new();
    let mut line_start = 0;
    let mut i = 0;
    while i < tokens.len() {
        let token = &tokens[i];
        if token.kind == Kind::Equal && in_body(&open) && is_attribute_name(&out, line_start) {
            let end = value_end(&tokens, i + 1);
            let value = &tokens[i + 1..end];
            let types = open.iter().flatten().collect::<Vec<_>>();
            let name = out.last().map(|t: &Token| t.text.as_str()).unwrap_or_default();
            let rewritten = if types.len() == 1 && types[0] == "variable" && name == "type" {
                type_expr(value)
            } else {
                value_expr(value)
            };
            out.push(token.clone());
            out.extend(rewritten);
            i = end;
            continue;
        }
        match token.kind {
            Kind::OBrace => {
                let block = block_type(&out, line_start).filter(|_| in_body(&open));
                if block.is_some() {
                    quote_labels(&mut out, line_start);
                }
                open.push(block);
            }
            Kind::OBrack | Kind::OParen | Kind::TemplateInterp | Kind::TemplateControl => open.push(None),
            Kind::CBrace | Kind::CBrack | Kind::CParen | Kind::TemplateSeqEnd => {
                open.pop();
            }
            _ => {}
        }
        out.push(token.clone());
        if token.kind == Kind::Newline || (token.kind == Kind::Comment && token.text.ends_with('\n')) {
            line_start = out.len();
        }
        i += 1;
    }
    out
}

/// Whether the innermost open bracket is a block's body (or none is open).
fn in_body(open: &[Option<String>]) -> bool {
    open.last().is_none_or(Option::is_some)
}

/// Whether the line so far is just one name: an attribute's.
fn is_attribute_name(out: &[Token], line_start: usize) -> bool {
    matches!(&out[line_start..], [t] if t.kind == Kind::Ident)
}

/// The type of the block a `{` opens, when the line so far is a block
/// header: a name and then names or quoted labels.
fn block_type(out: &[Token], line_start: usize) -> Option<String> {
    let header = &out[line_start..];
    let first = header.first().filter(|t| t.kind == Kind::Ident)?;
    header
        .iter()
        .all(|t| matches!(t.kind, Kind::Ident | Kind::OQuote | Kind::QuotedLit | Kind::CQuote))
        .then(|| first.text.clone())
}

/// Writes the bare-name labels of the block header from `line_start` as
/// quoted strings.
fn quote_labels(out: &mut Vec<Token>, line_start: usize) {
    let header = out.split_off(line_start);
    for (i, t) in header.into_iter().enumerate() {
        if i > 0 && t.kind == Kind::Ident {
            out.extend([token(Kind::OQuote, "\""), token(Kind::QuotedLit, &t.text), token(Kind::CQuote, "\"")]);
        } else {
            out.push(t);
        }
    }
}

/// Where the value starting at `start` ends: the newline (or line comment)
/// after it with every bracket closed.
fn value_end(tokens: &[Token], start: usize) -> usize {
    let mut depth = 0i32;
    for (i, token) in tokens.iter().enumerate().skip(start) {
        match token.kind {
            Kind::OBrace | Kind::OBrack | Kind::OParen | Kind::TemplateInterp | Kind::TemplateControl => depth += 1,
            Kind::CBrace | Kind::CBrack | Kind::CParen | Kind::TemplateSeqEnd => depth -= 1,
            Kind::Newline if depth <= 0 => return i,
            Kind::Comment if depth <= 0 => return i,
            _ => {}
        }
    }
    tokens.len()
}

fn token(kind: Kind, text: &str) -> Token {
    Token { kind, text: text.to_string(), spaces_before: 0 }
}

/// `"${expr}"` as `expr` (in parentheses when it spans lines).
fn value_expr(value: &[Token]) -> Vec<Token> {
    let n = value.len();
    let wrapped = n >= 5
        && value[0].kind == Kind::OQuote
        && value[1].kind == Kind::TemplateInterp
        && value[n - 2].kind == Kind::TemplateSeqEnd
        && value[n - 1].kind == Kind::CQuote;
    if !wrapped || value[1].text != "${" || value[n - 2].text != "}" {
        return value.to_vec();
    }
    let inside = &value[2..n - 2];
    let mut quotes = 0;
    for t in inside {
        match t.kind {
            Kind::OQuote => quotes += 1,
            Kind::CQuote => quotes -= 1,
            // Templates inside a nested string are part of the expression.
            _ if quotes > 0 => {}
            Kind::TemplateInterp | Kind::TemplateSeqEnd | Kind::QuotedLit => return value.to_vec(),
            _ => {}
        }
    }
    let first = inside.iter().position(|t| t.kind != Kind::Newline).unwrap_or(inside.len());
    let last = inside.iter().rposition(|t| t.kind != Kind::Newline).map_or(first, |p| p + 1);
    let trimmed = &inside[first..last];
    let multi_line = trimmed.iter().any(|t| t.kind == Kind::Newline);
    let parenthesised = trimmed.first().is_some_and(|t| t.kind == Kind::OParen)
        && trimmed.last().is_some_and(|t| t.kind == Kind::CParen);
    if multi_line && !parenthesised {
        let mut out = vec![token(Kind::OParen, "(")];
        out.extend_from_slice(trimmed);
        out.push(token(Kind::CParen, ")"));
        return out;
    }
    trimmed.to_vec()
}

/// A variable's `type`: legacy spellings in today's words.
fn type_expr(value: &[Token]) -> Vec<Token> {
    let collection = |name: &str, element: &str| {
        vec![token(Kind::Ident, name), token(Kind::OParen, "("), token(Kind::Ident, element), token(Kind::CParen, ")")]
    };
    match value {
        [t] if t.kind == Kind::Ident && matches!(t.text.as_str(), "list" | "map" | "set") => collection(&t.text, "any"),
        [o, t, c] if o.kind == Kind::OQuote && t.kind == Kind::QuotedLit && c.kind == Kind::CQuote => {
            match t.text.as_str() {
                "string" => vec![token(Kind::Ident, "string")],
                "list" | "map" => collection(&t.text, "string"),
                _ => value.to_vec(),
            }
        }
        _ => value.to_vec(),
    }
}
