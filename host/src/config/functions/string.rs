//! String functions. Positions and lengths count characters, not bytes.

use crate::value::{Type, Value};

use super::{Args, FnError};

pub(super) fn upper(args: &Args) -> Result<Value, FnError> {
    Ok(Value::String(args.string(0)?.to_uppercase()))
}

pub(super) fn lower(args: &Args) -> Result<Value, FnError> {
    Ok(Value::String(args.string(0)?.to_lowercase()))
}

pub(super) fn trimspace(args: &Args) -> Result<Value, FnError> {
    Ok(Value::string(args.string(0)?.trim()))
}

pub(super) fn chomp(args: &Args) -> Result<Value, FnError> {
    let s = args.string(0)?;
    Ok(Value::string(s.trim_end_matches(['\n', '\r'])))
}

pub(super) fn trim(args: &Args) -> Result<Value, FnError> {
    let (s, cutset) = (args.string(0)?, args.string(1)?);
    Ok(Value::string(s.trim_matches(|c| cutset.contains(c))))
}

pub(super) fn trimprefix(args: &Args) -> Result<Value, FnError> {
    let (s, prefix) = (args.string(0)?, args.string(1)?);
    Ok(Value::string(s.strip_prefix(prefix.as_str()).unwrap_or(&s)))
}

pub(super) fn trimsuffix(args: &Args) -> Result<Value, FnError> {
    let (s, suffix) = (args.string(0)?, args.string(1)?);
    Ok(Value::string(s.strip_suffix(suffix.as_str()).unwrap_or(&s)))
}

pub(super) fn startswith(args: &Args) -> Result<Value, FnError> {
    Ok(Value::Bool(args.string(0)?.starts_with(&args.string(1)?)))
}

pub(super) fn endswith(args: &Args) -> Result<Value, FnError> {
    Ok(Value::Bool(args.string(0)?.ends_with(&args.string(1)?)))
}

/// `replace(str, substr, replacement)`: every occurrence of `substr`, or,
/// when it is written `/…/`, every match of that regular expression, whose
/// groups the replacement may name as `$1` or `${name}` (as Terraform's).
pub(super) fn replace(args: &Args) -> Result<Value, FnError> {
    let (s, substr, replacement) = (args.string(0)?, args.string(1)?, args.string(2)?);
    if let Some(pattern) = substr.strip_prefix('/').and_then(|p| p.strip_suffix('/')) {
        let re = regex::Regex::new(pattern)
            .map_err(|e| FnError::arg(1, format!("invalid regular expression pattern: {e}")))?;
        return Ok(Value::String(re.replace_all(&s, replacement.as_str()).into_owned()));
    }
    Ok(Value::String(s.replace(&substr, &replacement)))
}

/// `strcontains(str, substr)`: whether `substr` occurs in `str`.
pub(super) fn strcontains(args: &Args) -> Result<Value, FnError> {
    Ok(Value::Bool(args.string(0)?.contains(&args.string(1)?)))
}

/// `strrev(str)`: the characters in reverse order.
pub(super) fn strrev(args: &Args) -> Result<Value, FnError> {
    Ok(Value::String(args.string(0)?.chars().rev().collect()))
}

/// `title(str)`: the first letter of every word in upper case; a word
/// starts after anything but a letter, a digit or `_` (Go's `strings.Title`).
pub(super) fn title(args: &Args) -> Result<Value, FnError> {
    let mut after_separator = true;
    let titled = args
        .string(0)?
        .chars()
        .flat_map(|c| {
            let upper = after_separator;
            after_separator = !(c.is_alphanumeric() || c == '_');
            let mapped: Vec<char> = if upper { c.to_uppercase().collect() } else { vec![c] };
            mapped
        })
        .collect();
    Ok(Value::String(titled))
}

/// `indent(num_spaces, str)`: every line but the first indented.
pub(super) fn indent(args: &Args) -> Result<Value, FnError> {
    let spaces = args.integer(0)?;
    let pad = " ".repeat(usize::try_from(spaces).unwrap_or(0));
    Ok(Value::String(args.string(1)?.replace('\n', &format!("\n{pad}"))))
}

/// `split(separator, str)`: a list of strings; an empty separator splits
/// into characters.
pub(super) fn split(args: &Args) -> Result<Value, FnError> {
    let (separator, s) = (args.string(0)?, args.string(1)?);
    let parts: Vec<Value> = if separator.is_empty() {
        s.chars().map(|c| Value::String(c.to_string())).collect()
    } else {
        s.split(separator.as_str()).map(Value::string).collect()
    };
    Ok(Value::List(parts))
}

/// `join(separator, lists...)`: the strings of every list, in order.
pub(super) fn join(args: &Args) -> Result<Value, FnError> {
    let separator = args.string(0)?;
    if args.rest().is_empty() {
        return Err(FnError::call("at least one list is required"));
    }
    let mut items = Vec::new();
    for i in 1..args.values.len() {
        for (j, element) in args.elements(i)?.iter().enumerate() {
            match Type::String.convert(element) {
                Ok(Value::String(s)) => items.push(s),
                Ok(_) => return Err(FnError::arg(i, format!("element {j} is null"))),
                Err(e) => return Err(FnError::arg(i, format!("element {j}: {}", e.message))),
            }
        }
    }
    Ok(Value::String(items.join(&separator)))
}

/// `substr(str, offset, length)`: a negative offset counts from the end;
/// a length of -1 takes everything after the offset.
pub(super) fn substr(args: &Args) -> Result<Value, FnError> {
    let chars: Vec<char> = args.string(0)?.chars().collect();
    let (offset, length) = (args.integer(1)?, args.integer(2)?);
    let len = chars.len() as i64;
    let start = if offset < 0 { len + offset } else { offset };
    if start < 0 || start > len {
        return Err(FnError::arg(1, format!("offset {offset} is outside a string of {len} characters")));
    }
    let end = if length < 0 { len } else { (start + length).min(len) };
    Ok(Value::String(chars[start as usize..end as usize].iter().collect()))
}

/// Argument `i` as a regular expression (RE2 syntax, as Terraform's).
fn pattern(args: &Args, i: usize) -> Result<regex::Regex, FnError> {
    let text = args.string(i)?;
    regex::Regex::new(&text).map_err(|e| FnError::arg(i, format!("invalid regular expression pattern: {e}")))
}

/// One match as Terraform gives it: the matched text without capture
/// groups, a tuple of the groups, or an object of named groups.
fn capture_value(re: &regex::Regex, caps: &regex::Captures) -> Value {
    let text = |m: Option<regex::Match>| m.map_or(Value::Null, |m| Value::string(m.as_str()));
    if re.captures_len() == 1 {
        return text(caps.get(0));
    }
    if re.capture_names().flatten().next().is_some() {
        return Value::Object(re.capture_names().flatten().map(|n| (n.to_string(), text(caps.name(n)))).collect());
    }
    Value::Tuple((1..re.captures_len()).map(|i| text(caps.get(i))).collect())
}

/// `regex(pattern, string)`: the first match (see [`capture_value`]); no
/// match is an error.
pub(super) fn regex(args: &Args) -> Result<Value, FnError> {
    let re = pattern(args, 0)?;
    let text = args.string(1)?;
    let caps = re.captures(&text).ok_or_else(|| FnError::call("pattern did not match any part of the given string"))?;
    Ok(capture_value(&re, &caps))
}

/// `regexall(pattern, string)`: every match, as a list.
pub(super) fn regexall(args: &Args) -> Result<Value, FnError> {
    let re = pattern(args, 0)?;
    let text = args.string(1)?;
    Ok(Value::List(re.captures_iter(&text).map(|caps| capture_value(&re, &caps)).collect()))
}

#[cfg(test)]
mod tests {
    use super::super::super::testutil::{error, value};
    use super::*;

    fn s(text: &str) -> Value {
        Value::string(text)
    }

    #[test]
    fn case_and_space() {
        assert_eq!(value("upper(\"abc\")"), s("ABC"));
        assert_eq!(value("lower(\"ÀB\")"), s("àb"));
        assert_eq!(value("trimspace(\"  a b \\n\")"), s("a b"));
        assert_eq!(value("chomp(\"a\\n\\n\")"), s("a"));
        assert_eq!(value("trim(\"?!a?!\", \"!?\")"), s("a"));
        assert_eq!(value("trimprefix(\"foobar\", \"foo\")"), s("bar"));
        assert_eq!(value("trimsuffix(\"foobar\", \"baz\")"), s("foobar"));
        assert_eq!(value("startswith(\"foobar\", \"foo\")"), Value::Bool(true));
        assert_eq!(value("endswith(\"foobar\", \"foo\")"), Value::Bool(false));
        assert_eq!(value("upper(12)"), s("12"));
    }

    #[test]
    fn replace_split_join() {
        assert_eq!(value("replace(\"a-b-c\", \"-\", \"+\")"), s("a+b+c"));
        // developer.hashicorp.com/terraform/language/functions/replace
        assert_eq!(value("replace(\"1 + 2 + 3\", \"+\", \"-\")"), s("1 - 2 - 3"));
        assert_eq!(value("replace(\"hello world\", \"/w.*d/\", \"everybody\")"), s("hello everybody"));
        // Checked with `terraform console` 1.11.4.
        assert_eq!(value("replace(\"hello world\", \"/(h)(e)/\", \"$2$1\")"), s("ehllo world"));
        assert!(error("replace(\"a\", \"/(/\", \"b\")").contains("invalid regular expression"));
        assert_eq!(value("split(\",\", \"a,b,,c\")"), Value::List(vec![s("a"), s("b"), s(""), s("c")]));
        assert_eq!(value("split(\",\", \"\")"), Value::List(vec![s("")]));
        assert_eq!(value("split(\"\", \"ab\")"), Value::List(vec![s("a"), s("b")]));
        assert_eq!(value("join(\"-\", [\"a\", 1, true])"), s("a-1-true"));
        assert_eq!(value("join(\",\", [\"a\"], [\"b\", \"c\"])"), s("a,b,c"));
        assert_eq!(value("join(\",\", [])"), s(""));
        assert!(error("join(\",\", [\"a\", null])").contains("parameter of join(): element 1 is null"));
        assert!(error("join(\",\", [[\"a\"]])").contains("Invalid value for \"lists\" parameter of join(): element 0"));
        assert!(error("join(\",\")").contains("at least one list is required"));
    }

    #[test]
    fn substrings() {
        assert_eq!(value("substr(\"héllo\", 1, 3)"), s("éll"));
        assert_eq!(value("substr(\"hello\", -3, -1)"), s("llo"));
        assert_eq!(value("substr(\"hello\", 2, 100)"), s("llo"));
        assert!(error("substr(\"hi\", 5, 1)").contains("offset 5 is outside a string of 2 characters"));
    }

    #[test]
    fn more_string_functions_agree_with_terraform_docs() {
        // developer.hashicorp.com/terraform/language/functions/strcontains
        assert_eq!(value("strcontains(\"hello world\", \"wor\")"), Value::Bool(true));
        assert_eq!(value("strcontains(\"hello world\", \"wod\")"), Value::Bool(false));
        // …/functions/strrev
        assert_eq!(value("strrev(\"hello\")"), s("olleh"));
        assert_eq!(value("strrev(\"a ☃\")"), s("☃ a"));
        // …/functions/title
        assert_eq!(value("title(\"hello world\")"), s("Hello World"));
        // …/functions/indent
        assert_eq!(value("indent(2, \"[\\n  foo,\\n  bar,\\n]\\n\")"), s("[\n    foo,\n    bar,\n  ]\n  "));
    }
}
