//! The canonical layout of HCL's `hclwrite` (what `terraform fmt` writes),
//! over tokens: each line is split into cells (what comes before an
//! attribute's `=`, the `=` and its value, a trailing comment); lines are
//! indented two spaces for each bracket left open; the spaces between
//! tokens follow one set of rules; and the `=` (then the comments) of
//! consecutive lines are aligned in a column.

use super::lexer::{Kind, Token};

/// Sets every token's `spaces_before` to the canonical layout.
pub(super) fn format(tokens: &mut [Token]) {
    let lines = lines(tokens);
    indent(tokens, &lines);
    space(tokens, &lines);
    align(tokens, &lines);
}

/// One line's cells, as index ranges into the tokens.
struct Line {
    lead: std::ops::Range<usize>,
    assign: Option<std::ops::Range<usize>>,
    comment: Option<usize>,
}

/// Whether a token ends a line: a newline, or a line comment (which holds
/// its newline).
fn ends_line(token: &Token) -> bool {
    token.kind == Kind::Newline || (token.kind == Kind::Comment && token.text.ends_with('\n'))
}

/// How a token changes the bracket depth.
fn bracket_change(token: &Token) -> i32 {
    match token.kind {
        Kind::OBrace | Kind::OBrack | Kind::OParen | Kind::TemplateInterp | Kind::TemplateControl => 1,
        Kind::CBrace | Kind::CBrack | Kind::CParen | Kind::TemplateSeqEnd => -1,
        _ => 0,
    }
}

fn lines(tokens: &[Token]) -> Vec<Line> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, token) in tokens.iter().enumerate() {
        if ends_line(token) {
            out.push(cells(tokens, start..i + 1));
            start = i + 1;
        }
    }
    if start < tokens.len() {
        out.push(cells(tokens, start..tokens.len()));
    }
    out
}

/// Splits a line into its cells: a trailing comment, and an `=` whose value
/// closes every bracket it opens.
fn cells(tokens: &[Token], range: std::ops::Range<usize>) -> Line {
    let mut lead = range;
    let mut comment = None;
    if lead.len() > 1 && tokens[lead.end - 1].kind == Kind::Comment {
        comment = Some(lead.end - 1);
        lead.end -= 1;
    }
    let mut assign = None;
    if let Some(eq) = (lead.start + 1..lead.end).find(|&i| tokens[i].kind == Kind::Equal) {
        let net: i32 = tokens[eq..lead.end].iter().map(bracket_change).sum();
        if net == 0 {
            assign = Some(eq..lead.end);
            lead.end = eq;
        }
    }
    Line { lead, assign, comment }
}

fn indent(tokens: &mut [Token], lines: &[Line]) {
    let mut indents: Vec<i32> = Vec::new();
    for line in lines {
        if line.lead.is_empty() {
            continue;
        }
        let first = line.lead.start;
        if tokens[first].kind == Kind::Newline {
            tokens[first].spaces_before = 0;
            continue;
        }
        let mut net = 0;
        for token in &tokens[line.lead.clone()] {
            net += bracket_change(token);
            if token.kind == Kind::OHeredoc {
                break;
            }
        }
        if let Some(assign) = &line.assign {
            net += tokens[assign.clone()].iter().map(bracket_change).sum::<i32>();
        }
        if net > 0 {
            tokens[first].spaces_before = 2 * indents.len();
            indents.push(net);
            continue;
        }
        let mut closed = -net;
        while closed > 0 {
            let Some(top) = indents.last_mut() else { break };
            if closed >= *top {
                closed -= *top;
                indents.pop();
            } else {
                *top -= closed;
                closed = 0;
            }
        }
        tokens[first].spaces_before = 2 * indents.len();
    }
}

fn space(tokens: &mut [Token], lines: &[Line]) {
    for line in lines {
        space_cell(tokens, line.lead.clone());
        if let Some(assign) = &line.assign {
            tokens[assign.start].spaces_before = 1;
            space_cell(tokens, assign.clone());
        }
    }
}

fn space_cell(tokens: &mut [Token], cell: std::ops::Range<usize>) {
    for i in cell.start..cell.end.saturating_sub(1) {
        let before = (i > cell.start).then(|| tokens[i - 1].kind);
        let spaced = space_after(&tokens[i], before, &tokens[i + 1]);
        tokens[i + 1].spaces_before = usize::from(spaced);
    }
}

/// Whether `subject` is followed by a space when `after` follows it and
/// `before` (if any) precedes it: hclwrite's rules, in its order.
fn space_after(subject: &Token, before: Option<Kind>, after: &Token) -> bool {
    use Kind::*;
    let (s, a) = (subject.kind, after.kind);
    let template_text = |k: Kind| matches!(k, QuotedLit | StringLit);
    match () {
        _ if a == Newline => false,
        _ if s == Ident && a == OParen => false,
        _ if (s == Ident && a == DoubleColon) || (s == DoubleColon && a == Ident) => false,
        _ if s == Dot || a == Dot => false,
        _ if a == Comma || a == Ellipsis => false,
        _ if s == Comma => true,
        _ if template_text(s) || s == OQuote || s == OHeredoc || template_text(a) || a == CQuote || a == CHeredoc => {
            false
        }
        _ if s == Ident && subject.text == "in" && before == Some(Ident) => true,
        _ if a == OBrack && (s == Ident || s == Number || bracket_change(subject) < 0) => false,
        _ if s == Bang => false,
        _ if s == Minus => !matches!(
            before,
            None | Some(
                OParen
                    | OBrace
                    | OBrack
                    | Equal
                    | Colon
                    | Comma
                    | Question
                    | Arithmetic
                    | Minus
                    | Comparison
                    | Logical
                    | Bang
            )
        ),
        _ if s == OBrace || a == CBrace => !(s == OBrace && a == CBrace),
        _ if matches!(s, TemplateInterp | TemplateControl) && a == OBrace => true,
        _ if s == CBrace && a == TemplateSeqEnd => true,
        _ if s == TemplateSeqEnd && matches!(a, TemplateInterp | TemplateControl) => false,
        _ if bracket_change(subject) > 0 => false,
        _ if bracket_change(after) < 0 => false,
        _ => true,
    }
}

/// The width of a cell as written: its tokens and the spaces before them.
fn columns(tokens: &[Token], cell: std::ops::Range<usize>) -> usize {
    tokens[cell].iter().map(|t| t.spaces_before + t.text.chars().count()).sum()
}

/// Aligns the `=` of consecutive assignment lines, then their trailing
/// comments; any other line ends a run.
fn align(tokens: &mut [Token], lines: &[Line]) {
    let mut run: Vec<&Line> = Vec::new();
    for line in lines.iter().chain([&Line { lead: 0..0, assign: None, comment: None }]) {
        if line.assign.is_some() {
            run.push(line);
            continue;
        }
        let widest = run.iter().map(|l| columns(tokens, l.lead.clone())).max().unwrap_or(0);
        for l in run.drain(..) {
            let eq = l.assign.as_ref().map_or(0, |a| a.start);
            tokens[eq].spaces_before = widest - columns(tokens, l.lead.clone()) + 1;
        }
    }
    let mut run: Vec<&Line> = Vec::new();
    for line in lines.iter().chain([&Line { lead: 0..0, assign: None, comment: None }]) {
        if line.comment.is_some() {
            run.push(line);
            continue;
        }
        let width = |l: &Line| columns(tokens, l.lead.clone()) + l.assign.clone().map_or(0, |a| columns(tokens, a));
        let widest = run.iter().map(|l| width(l)).max().unwrap_or(0);
        let moves: Vec<(usize, usize)> =
            run.drain(..).map(|l| (l.comment.unwrap_or(0), widest - width(l) + 1)).collect();
        for (at, spaces) in moves {
            tokens[at].spaces_before = spaces;
        }
    }
}
