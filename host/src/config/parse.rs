//! From text to our syntax tree: `hcl-edit` parses (keeping byte spans), and
//! this module converts its tree into [`Body`] and [`Expression`] with a
//! file and line on every node, applying template strip markers (`~`) on the
//! way so evaluation never sees them.

use std::ops::Range;

use hcl_edit::Span;
use hcl_edit::expr::{BinaryOperator, Expression as HclExpr, FuncCall, ObjectKey, TraversalOperator, UnaryOperator};
use hcl_edit::structure::{Block as HclBlock, Body as HclBody, Structure};
use hcl_edit::template::{Directive, Element, Template};

use crate::diag::{Diagnostic, Location};
use crate::value::{Number, Value};

use super::expr::{BinaryOp, ExprKind, Expression, ForExpr, Step, TemplatePart, UnaryOp};
use super::source::SourceFile;
use super::{Attribute, Block, Body, error_at};

/// Parses a whole file into a body, adding every problem to `diags`. A
/// syntax error leaves no body; lesser problems (an unsupported function
/// namespace) leave one, so that the rest of the file is still checked.
pub(crate) fn parse_file(file: &SourceFile, diags: &mut Vec<Diagnostic>) -> Option<Body> {
    // A large file is parsed a piece of whole blocks at a time: hcl-edit's
    // tree of a block is several times the size of ours, and parsed whole,
    // a file of 100,000 blocks made a tree of 340 MB that the machine's
    // caches could not hold (parsing it took 15 times as long as a tenth of
    // it). The pieces are shared out, in runs, between the cores. A piece
    // that does not parse alone (the splitter misread the text, or the
    // file has an error) sends the whole file to the parser, which says
    // what is wrong and where as it always has.
    let Some(pieces) = top_level_pieces(file.text(), PIECE_BYTES).filter(|p| p.len() > 1) else {
        return parse_whole_file(file, diags);
    };
    let parsed = crate::parallel::map_runs(&pieces, 1, |run| parse_pieces(file, run).ok());
    let Some(parsed) = parsed.into_iter().collect::<Option<Vec<Converted>>>() else {
        return parse_whole_file(file, diags);
    };
    let mut out = Body { location: file.location(0), ..Body::default() };
    for (body, found) in parsed {
        out.attributes.extend(body.attributes);
        out.blocks.extend(body.blocks);
        diags.extend(found);
    }
    Some(out)
}

/// A run of a file's pieces as one body, and what converting it found.
type Converted = (Body, Vec<Diagnostic>);

/// Parses and converts `pieces` of `file`, in order, as one body; fails
/// with the first piece that does not parse alone. Each block's hcl-edit
/// tree is dropped as soon as it is converted, so that the two trees are
/// never held whole at once.
fn parse_pieces(file: &SourceFile, pieces: &[Range<usize>]) -> Result<Converted, hcl_edit::parser::Error> {
    let mut converter = Converter { file, base: 0, diags: Vec::new() };
    let mut out = Body { location: file.location(0), ..Body::default() };
    for piece in pieces {
        let body = hcl_edit::parser::parse_body(&file.text()[piece.clone()])?;
        converter.base = piece.start;
        for structure in body {
            converter.structure(&structure, &mut out);
        }
    }
    Ok((out, converter.diags))
}

/// How large a piece of a file [`parse_file`] gives hcl-edit at a time, at
/// least.
const PIECE_BYTES: usize = 64 * 1024;

/// [`parse_file`] in one piece.
fn parse_whole_file(file: &SourceFile, diags: &mut Vec<Diagnostic>) -> Option<Body> {
    let whole = 0..file.text().len();
    match parse_pieces(file, std::slice::from_ref(&whole)) {
        Ok((body, found)) => {
            diags.extend(found);
            Some(body)
        }
        Err(e) => {
            diags.push(file_syntax_error(file, &e));
            None
        }
    }
}

/// Splits `text` into pieces of at least `size` bytes that each hold whole
/// top-level blocks and attributes: it cuts only at the start of a line
/// where no bracket, string, heredoc or comment is open. `None` when the
/// text ends with one open (a syntax error, or something this scan does
/// not know: the whole file is then parsed at once).
fn top_level_pieces(text: &str, size: usize) -> Option<Vec<Range<usize>>> {
    /// What is open at a point of the text, innermost last.
    enum Open {
        /// Brackets, braces or parentheses; for an interpolation
        /// (`${…}`, `%{…}`) its closing brace ends it.
        Code { depth: usize, interpolation: bool },
        /// A quoted string.
        Quoted,
    }
    let bytes = text.as_bytes();
    let mut open = vec![Open::Code { depth: 0, interpolation: false }];
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let rest = &bytes[i..];
        let top_level = open.len() == 1;
        match open.last_mut()? {
            Open::Quoted => match rest[0] {
                b'\\' => i += 1,
                b'"' => drop(open.pop()),
                b'\n' => return None,
                b'$' | b'%' if rest.get(1) == Some(&rest[0]) && rest.get(2) == Some(&b'{') => i += 2,
                b'$' | b'%' if rest.get(1) == Some(&b'{') => {
                    open.push(Open::Code { depth: 0, interpolation: true });
                    i += 1;
                }
                _ => {}
            },
            Open::Code { depth, interpolation } => match rest[0] {
                b'"' => open.push(Open::Quoted),
                b'{' | b'[' | b'(' => *depth += 1,
                b'}' if *depth == 0 && *interpolation => drop(open.pop()),
                b'}' | b']' | b')' => *depth = depth.checked_sub(1)?,
                b'#' => i += line_end(rest) - 1,
                b'/' if rest.get(1) == Some(&b'/') => i += line_end(rest) - 1,
                b'/' if rest.get(1) == Some(&b'*') => i += 2 + find(&rest[2..], b"*/")? + 1,
                b'<' if rest.get(1) == Some(&b'<') => i += heredoc_len(rest)? - 1,
                b'\n' if top_level && *depth == 0 && i + 1 - start >= size => {
                    pieces.push(start..i + 1);
                    start = i + 1;
                }
                _ => {}
            },
        }
        i += 1;
    }
    match open.as_slice() {
        [Open::Code { depth: 0, .. }] => {
            if start < bytes.len() {
                pieces.push(start..bytes.len());
            }
            Some(pieces)
        }
        _ => None,
    }
}

/// Bytes up to the end of the first line of `text`, its newline excluded.
fn line_end(text: &[u8]) -> usize {
    text.iter().position(|&b| b == b'\n').unwrap_or(text.len())
}

/// Where `needle` starts in `haystack`.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The length of the heredoc `text` starts with (`<<EOT` or `<<-EOT`, its
/// lines, and the line of its closing marker, newline excluded); `None`
/// when it is not one or does not end.
fn heredoc_len(text: &[u8]) -> Option<usize> {
    let after = if text.get(2) == Some(&b'-') { 3 } else { 2 };
    let header = line_end(text);
    let marker = std::str::from_utf8(&text[after..header]).ok()?.trim_end_matches('\r');
    if marker.is_empty() || !marker.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
        return None;
    }
    let mut at = header + 1;
    while at < text.len() {
        let len = line_end(&text[at..]);
        let line = std::str::from_utf8(&text[at..at + len]).ok()?;
        if line.trim() == marker {
            return Some(at + len);
        }
        at += len + 1;
    }
    None
}

/// Parses one expression given outside any file, such as the value of a
/// `-var` option; `name` is what diagnostics call its source.
pub fn parse_expression(text: &str, name: &str) -> Result<Expression, Vec<Diagnostic>> {
    let file = SourceFile::new(name, text.to_string());
    let expr = hcl_edit::parser::parse_expr(file.text()).map_err(|e| vec![syntax_error(&file, &e)])?;
    let mut converter = Converter { file: &file, base: 0, diags: Vec::new() };
    let expr = converter.expr(&expr);
    if converter.diags.is_empty() { Ok(expr) } else { Err(converter.diags) }
}

/// Parses `text` (the file `name`) as a template, `${…}` and `%{…}`
/// directives in literal text: what `templatefile` reads.
pub fn parse_template(text: &str, name: &str) -> Result<Expression, Vec<Diagnostic>> {
    let file = SourceFile::new(name, text.to_string());
    let template = hcl_edit::parser::parse_template(file.text()).map_err(|e| vec![syntax_error(&file, &e)])?;
    let mut converter = Converter { file: &file, base: 0, diags: Vec::new() };
    let location = converter.location(Some(0..0));
    let expr = Expression { kind: ExprKind::Template(converter.template(&template)), location };
    if converter.diags.is_empty() { Ok(expr) } else { Err(converter.diags) }
}

/// A parse error in a configuration file, at its line and column: the
/// file's line with a caret under the column is shown with it (see
/// [`crate::diag::source`]), so the detail is the message alone.
fn file_syntax_error(file: &SourceFile, error: &hcl_edit::parser::Error) -> Diagnostic {
    let at = error.location();
    let location = Location { line: at.line(), column: at.column(), ..file.location(0) };
    error_at("Syntax error", error.message(), &location)
}

/// A parse error from `hcl-edit` in text that is not a configuration
/// file (a `-var` value), at its line, with the offending line and a caret
/// under the column in the detail.
fn syntax_error(file: &SourceFile, error: &hcl_edit::parser::Error) -> Diagnostic {
    let at = error.location();
    let location = Location { line: at.line(), column: at.column(), ..file.location(0) };
    let caret = format!("{}^", " ".repeat(at.column().saturating_sub(1)));
    error_at("Syntax error", format!("{}\n{}\n{caret}", error.message(), error.line()), &location)
}

struct Converter<'a> {
    file: &'a SourceFile,
    /// Where in the file the text being converted starts (see
    /// [`parse_file`]): hcl-edit's spans are offsets into that text.
    base: usize,
    diags: Vec<Diagnostic>,
}

impl Converter<'_> {
    fn location(&self, span: Option<Range<usize>>) -> Location {
        self.file.span_location(span.map(|s| s.start + self.base..s.end + self.base))
    }

    fn body(&mut self, body: &HclBody, location: Location) -> Body {
        // Sized up front: grown from empty, a list has room for four
        // attributes, and most blocks have one or two.
        let attributes = body.attributes().count();
        let mut out = Body {
            attributes: Vec::with_capacity(attributes),
            blocks: Vec::with_capacity(body.len() - attributes),
            location,
        };
        for structure in body.iter() {
            self.structure(structure, &mut out);
        }
        out
    }

    /// Adds one attribute or block to `out`.
    fn structure(&mut self, structure: &Structure, out: &mut Body) {
        match structure {
            // hcl-edit already refuses an attribute set twice.
            Structure::Attribute(attr) => out.attributes.push(Attribute {
                name: attr.key.as_str().to_string(),
                expr: self.expr(&attr.value),
                location: self.location(attr.span()),
            }),
            Structure::Block(block) => out.blocks.push(self.block(block)),
        }
    }

    fn block(&mut self, block: &HclBlock) -> Block {
        let location = self.location(block.span());
        Block {
            type_name: block.ident.as_str().to_string(),
            labels: block.labels.iter().map(|l| l.as_str().to_string()).collect(),
            body: self.body(&block.body, location.clone()),
            location,
        }
    }

    fn expr(&mut self, expr: &HclExpr) -> Expression {
        let location = self.location(expr.span());
        let kind = match expr {
            HclExpr::Null(_) => ExprKind::Literal(Value::Null),
            HclExpr::Bool(b) => ExprKind::Literal(Value::Bool(*b.value())),
            HclExpr::Number(n) => ExprKind::Literal(Value::Number(number(n.value()))),
            HclExpr::String(s) => ExprKind::Literal(Value::String(s.value().clone())),
            HclExpr::Array(items) => ExprKind::Tuple(items.iter().map(|e| self.expr(e)).collect()),
            HclExpr::Object(object) => ExprKind::Object(
                object
                    .iter()
                    .map(|(key, value)| {
                        let value = self.expr(value.expr());
                        (self.object_key(key, &value.location), value)
                    })
                    .collect(),
            ),
            HclExpr::StringTemplate(t) => ExprKind::Template(self.template(t)),
            HclExpr::HeredocTemplate(h) => ExprKind::Template(self.template(&h.template)),
            // Parentheses only group; the tree's shape already says how.
            HclExpr::Parenthesis(p) => return self.expr(p.inner()),
            HclExpr::Variable(name) => ExprKind::Variable(name.as_str().to_string()),
            HclExpr::Conditional(c) => ExprKind::Conditional {
                condition: Box::new(self.expr(&c.cond_expr)),
                then: Box::new(self.expr(&c.true_expr)),
                otherwise: Box::new(self.expr(&c.false_expr)),
            },
            HclExpr::FuncCall(call) => self.call(call, &location),
            HclExpr::Traversal(t) => ExprKind::Traversal {
                source: Box::new(self.expr(&t.expr)),
                steps: t.operators.iter().map(|op| self.step(op.value(), op.span())).collect(),
            },
            HclExpr::UnaryOp(op) => ExprKind::Unary {
                op: match op.operator.value() {
                    UnaryOperator::Neg => UnaryOp::Negate,
                    UnaryOperator::Not => UnaryOp::Not,
                },
                operand: Box::new(self.expr(&op.expr)),
            },
            HclExpr::BinaryOp(op) => ExprKind::Binary {
                op: binary_op(*op.operator.value()),
                lhs: Box::new(self.expr(&op.lhs_expr)),
                rhs: Box::new(self.expr(&op.rhs_expr)),
            },
            HclExpr::ForExpr(f) => ExprKind::For(Box::new(ForExpr {
                key_var: f.intro.key_var.as_ref().map(|k| k.as_str().to_string()),
                value_var: f.intro.value_var.as_str().to_string(),
                collection: self.expr(&f.intro.collection_expr),
                key: f.key_expr.as_ref().map(|k| self.expr(k)),
                value: self.expr(&f.value_expr),
                condition: f.cond.as_ref().map(|c| self.expr(&c.expr)),
                grouping: f.grouping,
            })),
        };
        Expression { kind, location }
    }

    /// An object key: a bare name is the string itself, anything else an
    /// expression. `hcl-edit` gives bare-name keys no span, so they take
    /// their value's location (the same line in practice).
    fn object_key(&mut self, key: &ObjectKey, value_location: &Location) -> Expression {
        match key {
            ObjectKey::Ident(name) => {
                Expression { kind: ExprKind::Literal(Value::string(name.as_str())), location: value_location.clone() }
            }
            // A bare `null` is a name there, as in Terraform: the key "null".
            ObjectKey::Expression(HclExpr::Null(_)) => {
                Expression { kind: ExprKind::Literal(Value::string("null")), location: value_location.clone() }
            }
            ObjectKey::Expression(e) => self.expr(e),
        }
    }

    fn call(&mut self, call: &FuncCall, location: &Location) -> ExprKind {
        if call.name.is_namespaced() {
            self.diags.push(error_at(
                "Unsupported function namespace",
                "Namespaced functions (like provider::name::function) are not supported.",
                location,
            ));
        }
        ExprKind::Call {
            name: call.name.name.as_str().to_string(),
            args: call.args.iter().map(|a| self.expr(a)).collect(),
            expand_final: call.args.expand_final(),
        }
    }

    fn step(&mut self, op: &TraversalOperator, span: Option<Range<usize>>) -> Step {
        match op {
            TraversalOperator::AttrSplat(_) => Step::Splat { full: false },
            TraversalOperator::FullSplat(_) => Step::Splat { full: true },
            TraversalOperator::GetAttr(name) => Step::Attr(name.as_str().to_string()),
            TraversalOperator::Index(key) => Step::Index(Box::new(self.expr(key))),
            TraversalOperator::LegacyIndex(i) => Step::Index(Box::new(Expression {
                kind: ExprKind::Literal(Value::Number(Number::from_f64(*i.value() as f64))),
                location: self.location(span),
            })),
        }
    }

    /// A template's parts, with `~` strip markers applied to the literals
    /// next to each interpolation or directive.
    fn template(&mut self, template: &Template) -> Vec<TemplatePart> {
        let mut parts = Vec::new();
        // Set by a `~}`: strip the leading space of the literal that follows.
        let mut strip_next = false;
        for element in template.iter() {
            match element {
                Element::Literal(text) => {
                    let text = if strip_next { text.trim_start() } else { text.as_str() };
                    parts.push(TemplatePart::Literal(text.to_string()));
                    strip_next = false;
                }
                Element::Interpolation(interpolation) => {
                    if interpolation.strip.strip_start() {
                        trim_last_literal(&mut parts);
                    }
                    parts.push(TemplatePart::Interpolation(self.expr(&interpolation.expr)));
                    strip_next = interpolation.strip.strip_end();
                }
                Element::Directive(directive) => {
                    let (part, strip_before, strip_after) = self.directive(directive);
                    if strip_before {
                        trim_last_literal(&mut parts);
                    }
                    parts.push(part);
                    strip_next = strip_after;
                }
            }
        }
        parts
    }

    /// A directive as a template part, and whether it strips the space before
    /// it (`%{~ if`) and after it (`endif ~}`).
    fn directive(&mut self, directive: &Directive) -> (TemplatePart, bool, bool) {
        match directive {
            Directive::If(d) => {
                let mut then = self.template(&d.if_expr.template);
                if d.if_expr.strip.strip_end() {
                    trim_first_literal(&mut then);
                }
                let mut otherwise = Vec::new();
                if let Some(else_expr) = &d.else_expr {
                    if else_expr.strip.strip_start() {
                        trim_last_literal(&mut then);
                    }
                    otherwise = self.template(&else_expr.template);
                    if else_expr.strip.strip_end() {
                        trim_first_literal(&mut otherwise);
                    }
                }
                if d.endif_expr.strip.strip_start() {
                    trim_last_literal(if d.else_expr.is_some() { &mut otherwise } else { &mut then });
                }
                let part = TemplatePart::If { condition: self.expr(&d.if_expr.cond_expr), then, otherwise };
                (part, d.if_expr.strip.strip_start(), d.endif_expr.strip.strip_end())
            }
            Directive::For(d) => {
                let f = &d.for_expr;
                let mut body = self.template(&f.template);
                if f.strip.strip_end() {
                    trim_first_literal(&mut body);
                }
                if d.endfor_expr.strip.strip_start() {
                    trim_last_literal(&mut body);
                }
                let part = TemplatePart::For {
                    key_var: f.key_var.as_ref().map(|k| k.as_str().to_string()),
                    value_var: f.value_var.as_str().to_string(),
                    collection: self.expr(&f.collection_expr),
                    body,
                };
                (part, f.strip.strip_start(), d.endfor_expr.strip.strip_end())
            }
        }
    }
}

fn trim_last_literal(parts: &mut [TemplatePart]) {
    if let Some(TemplatePart::Literal(text)) = parts.last_mut() {
        text.truncate(text.trim_end().len());
    }
}

fn trim_first_literal(parts: &mut [TemplatePart]) {
    if let Some(TemplatePart::Literal(text)) = parts.first_mut() {
        *text = text.trim_start().to_string();
    }
}

/// A number literal, exact: integers as `i64` when they fit.
fn number(n: &hcl_edit::Number) -> Number {
    match n.as_i64() {
        Some(i) => Number::Int(i),
        None => Number::from_f64(n.as_f64().unwrap_or(f64::NAN)),
    }
}

fn binary_op(op: BinaryOperator) -> BinaryOp {
    match op {
        BinaryOperator::Eq => BinaryOp::Equal,
        BinaryOperator::NotEq => BinaryOp::NotEqual,
        BinaryOperator::LessEq => BinaryOp::LessEqual,
        BinaryOperator::GreaterEq => BinaryOp::GreaterEqual,
        BinaryOperator::Less => BinaryOp::Less,
        BinaryOperator::Greater => BinaryOp::Greater,
        BinaryOperator::Plus => BinaryOp::Add,
        BinaryOperator::Minus => BinaryOp::Subtract,
        BinaryOperator::Mul => BinaryOp::Multiply,
        BinaryOperator::Div => BinaryOp::Divide,
        BinaryOperator::Mod => BinaryOp::Modulo,
        BinaryOperator::And => BinaryOp::And,
        BinaryOperator::Or => BinaryOp::Or,
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::expr;
    use super::*;

    /// Top-level blocks with every kind of thing the splitter must not cut
    /// inside: heredocs (one with a line that is only `}`), strings with
    /// braces, escapes and interpolations, and comments with braces.
    const TRICKY: &str = r#"# a comment with { an open brace
resource "t" "a" {
  text = <<EOT
}
not the end: ${"}"}
EOT
  indented = <<-EOT
    {
    EOT
}

locals {
  s = "quote \" and { brace ${join("}", ["{"])} and $${ not an interpolation"
  // another { comment
  /* and a
     block comment { */
  list = [
    1,
    2,
  ]
}
"#;

    #[test]
    fn pieces_are_cut_only_where_nothing_is_open() {
        let pieces = top_level_pieces(TRICKY, 1).unwrap();
        let texts: Vec<&str> = pieces.iter().map(|p| &TRICKY[p.clone()]).collect();
        assert_eq!(texts.concat(), TRICKY);
        // Every top-level line is a cut; nothing inside a block is.
        assert_eq!(texts.len(), 4, "{texts:#?}");
        assert!(texts[1].starts_with("resource") && texts[1].ends_with("}\n"), "{texts:#?}");
        assert!(texts[3].starts_with("locals") && texts[3].ends_with("}\n"), "{texts:#?}");
        for text in texts {
            hcl_edit::parser::parse_body(text).unwrap();
        }
        // Something left open at the end: no pieces, the file is parsed whole.
        assert_eq!(top_level_pieces("a = \"open\n", 1), None);
        assert_eq!(top_level_pieces("b {\n", 1), None);
        assert_eq!(top_level_pieces("c = <<EOT\nno end\n", 1), None);
    }

    #[test]
    fn a_file_parsed_in_pieces_is_the_file_parsed_whole() {
        let text = TRICKY.repeat(2 * PIECE_BYTES / TRICKY.len() + 1).replace("\"a\"", "\"b\"");
        let file = SourceFile::new("main.tf", text);
        assert!(top_level_pieces(file.text(), PIECE_BYTES).unwrap().len() > 1);
        let (mut in_pieces, mut whole) = (Vec::new(), Vec::new());
        let body = parse_file(&file, &mut in_pieces).unwrap();
        assert_eq!(Some(body), parse_whole_file(&file, &mut whole), "the same tree, locations and all");
        assert_eq!(in_pieces, whole);

        // A syntax error far into a large file is reported where it is.
        let broken = format!("{}resource \"t\" \"x\" {{\n  a = = 1\n}}\n", file.text());
        let line = broken.lines().count() - 1;
        let mut diags = Vec::new();
        assert!(parse_file(&SourceFile::new("main.tf", broken), &mut diags).is_none());
        assert_eq!(diags.len(), 1, "{diags:?}");
        assert_eq!(diags[0].location.as_ref().map(|l| l.line), Some(line), "{diags:?}");
    }

    fn literal(text: &str) -> Value {
        match expr(text).kind {
            ExprKind::Literal(v) => v,
            other => panic!("not a literal: {other:?}"),
        }
    }

    #[test]
    fn numbers_are_exact() {
        assert_eq!(literal("9007199254740993"), Value::int(9_007_199_254_740_993));
        assert_eq!(literal("0.1"), Value::Number(Number::Float(0.1)));
        assert_eq!(literal("1.0"), Value::int(1));
        assert_eq!(literal("1e3"), Value::int(1000));
    }

    #[test]
    fn strings_decode_escapes() {
        assert_eq!(literal(r#""a\n\"b\" $${x} %%{y}""#), Value::string("a\n\"b\" ${x} %{y}"));
    }

    #[test]
    fn locations_are_file_line_and_column() {
        let file = SourceFile::new("main.tf", "a = 1\n\nblock \"x\" {\n  b = var.y\n}\n".to_string());
        let body = parse_file(&file, &mut Vec::new()).unwrap();
        assert_eq!(body.attributes[0].location.to_string(), "main.tf:1");
        let block = &body.blocks[0];
        assert_eq!((block.location.line, block.labels.clone()), (3, vec!["x".to_string()]));
        let b = &block.body.attributes[0];
        assert_eq!((b.location.line, b.location.column), (4, 3));
        assert_eq!((b.expr.location.line, b.expr.location.column), (4, 7));
    }

    #[test]
    fn syntax_errors_have_file_and_line() {
        let file = SourceFile::new("bad.tf", "a = 1\nb = [1,\n".to_string());
        let mut errors = Vec::new();
        assert!(parse_file(&file, &mut errors).is_none());
        assert_eq!(errors.len(), 1);
        let shown = errors[0].to_string();
        assert!(shown.starts_with("Error: bad.tf:"), "{shown}");
        assert!(shown.contains("Syntax error"), "{shown}");
    }

    #[test]
    fn duplicate_attributes_are_errors() {
        let file = SourceFile::new("main.tf", "a = 1\nb = 2\na = 3\n".to_string());
        let mut errors = Vec::new();
        assert!(parse_file(&file, &mut errors).is_none());
        assert_eq!(errors.len(), 1);
        assert!(errors[0].to_string().starts_with("Error: main.tf:3: Syntax error\n  invalid attribute; expected unique attribute key; found redefined attribute"), "{}", errors[0]);
    }

    #[test]
    fn strip_markers_trim_neighbouring_space() {
        let parts = match expr("\"a  ${~ 1 ~}  b %{~ if true ~}  c  %{~ endif ~} d\"").kind {
            ExprKind::Template(parts) => parts,
            other => panic!("{other:?}"),
        };
        let literals: Vec<&str> = parts
            .iter()
            .filter_map(|p| match p {
                TemplatePart::Literal(s) => Some(s.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(literals, ["a", "b", "d"]);
        match &parts[3] {
            TemplatePart::If { then, .. } => {
                assert_eq!(then, &[TemplatePart::Literal("c".to_string())])
            }
            other => panic!("{other:?}"),
        }
    }
}
