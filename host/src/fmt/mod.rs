//! `cairn fmt`'s formatter: HCL source in the canonical style of
//! `terraform fmt`. It changes only whitespace (indentation, spaces between
//! tokens, alignment of `=` and comments) plus the rewrites Terraform
//! makes (see [`rewrite`]), so comments and the order of everything stay.
//!
//! No Rust crate writes this style: `hcl-edit` keeps a file's layout as it
//! is and can only carry one, so the layout rules of HCL's `hclwrite` are
//! applied here to tokens, after `hcl-edit` has checked the syntax.

mod layout;
mod lexer;
mod rewrite;

/// `src` (the text of `name`, for messages) in canonical style, or why it
/// cannot be formatted: a syntax error, as `file:line:col: message`.
pub fn format_source(src: &str, name: &str) -> Result<String, String> {
    hcl_edit::parser::parse_body(src)
        .map_err(|e| format!("{name}:{}:{}: {}", e.location().line(), e.location().column(), e.message()))?;
    let tokens = lexer::tokens(src).map_err(|e| format!("{name}: {e}"))?;
    let mut tokens = rewrite::rewrite(tokens);
    layout::format(&mut tokens);
    let mut out = String::with_capacity(src.len());
    for token in &tokens {
        out.extend(std::iter::repeat_n(' ', token.spaces_before));
        out.push_str(&token.text);
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
