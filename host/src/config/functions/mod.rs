//! Built-in functions: the table of names, parameters and bodies, the
//! argument checks they share, and the rule for unknown arguments.
//!
//! Most functions give unknown as soon as any argument contains an unknown.
//! A few ("shallow" ones: `length`, `concat`, `merge`, `keys`, …) look inside
//! known collections, so `length([random_id.x.hex])` is still 1. `try`,
//! `can`, `templatefile` and `templatestring` are not here: they need
//! unevaluated arguments or a template's scope, so the evaluator handles
//! them.

mod collection;
mod conversion;
mod encoding;
mod file;
mod format;
mod ids;
mod lists;
mod network;
mod number;
mod sets;
mod string;
mod time;
mod yaml;

use std::path::Path;

use crate::diag::Diagnostic;
use crate::value::{Number, Type, Value};

use super::suggest;

/// When an expression is evaluated: while planning (and validating), or
/// while applying. `timestamp()` and `uuid()` differ on every call, so, as in
/// Terraform, they are unknown until apply ("(known after apply)").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Phase {
    /// Planning or validating: values that change on every call are unknown.
    #[default]
    Plan,
    /// Applying: every function gives its value.
    Apply,
}

/// Calls the built-in function `name` with evaluated arguments; `dir` is the
/// configuration directory, the only place `file()` may read.
pub(crate) fn call(name: &str, values: Vec<Value>, dir: &Path, phase: Phase) -> Result<Value, Diagnostic> {
    let Some(function) = FUNCTIONS.iter().find(|f| f.name == name) else {
        return Err(unknown_function(name));
    };
    function.check_arity(values.len())?;
    let undecided = match function.unknowns {
        Unknowns::Propagate => values.iter().any(|v| !v.is_wholly_known()),
        Unknowns::Shallow => values.iter().any(Value::is_unknown),
        Unknowns::Handled | Unknowns::UntilApply => false,
    };
    if undecided {
        if function.name == "length"
            && let Some(r) = values.first().and_then(Value::refinements)
        {
            return Ok(length_of_refined(r));
        }
        return Ok(Value::unknown());
    }
    if function.unknowns == Unknowns::UntilApply && phase == Phase::Plan {
        return Ok(Value::refined(crate::value::Refinements { not_null: true, ..Default::default() }));
    }
    let args = Args { function, values, dir };
    (function.body)(&args).map_err(|e| e.into_diagnostic(function))
}

/// `length()` of an unknown collection: known when its length bounds meet
/// (so `count = length(x)` can be planned), else an unknown number within
/// those bounds.
fn length_of_refined(r: &crate::value::Refinements) -> Value {
    use crate::value::{Bound, Number, Refinements};
    if let Some(n) = r.known_length() {
        return Value::int(i64::try_from(n).unwrap_or(i64::MAX));
    }
    let bound = |n: u64| Bound::inclusive(Number::Int(i64::try_from(n).unwrap_or(i64::MAX)));
    Value::refined(Refinements {
        not_null: true,
        lower: Some(bound(r.min_length.unwrap_or(0))),
        upper: r.max_length.map(bound),
        ..Refinements::default()
    })
}

/// The names of every function, including those the evaluator handles.
fn all_names() -> impl Iterator<Item = &'static str> {
    FUNCTIONS.iter().map(|f| f.name).chain([
        "try",
        "can",
        "templatefile",
        "templatestring",
        "sensitive",
        "nonsensitive",
        "issensitive",
        "ephemeralasnull",
    ])
}

fn unknown_function(name: &str) -> Diagnostic {
    let close = suggest::close_names(name, all_names());
    let hint = match close.as_slice() {
        [] => String::new(),
        [one] => format!(" Did you mean \"{one}\"?"),
        many => {
            format!(" Did you mean one of {}?", many.iter().map(|n| format!("\"{n}\"")).collect::<Vec<_>>().join(", "))
        }
    };
    Diagnostic::error("Call to unknown function").with_detail(format!("There is no function named \"{name}\".{hint}"))
}

/// How a function treats unknown arguments.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Unknowns {
    /// Any argument that is or contains an unknown makes the result unknown.
    Propagate,
    /// Only a wholly unknown argument does; the body handles unknowns inside.
    Shallow,
    /// The body handles every unknown itself.
    Handled,
    /// The result differs on every call (it has no arguments that could be
    /// unknown): unknown, but not null, until apply.
    UntilApply,
}

/// One built-in function.
struct Function {
    name: &'static str,
    /// The fixed parameters, by name, for messages.
    params: &'static [&'static str],
    /// The name of the parameter that takes any number of further arguments.
    variadic: Option<&'static str>,
    unknowns: Unknowns,
    body: fn(&Args) -> Result<Value, FnError>,
}

impl Function {
    const fn new(
        name: &'static str,
        params: &'static [&'static str],
        body: fn(&Args) -> Result<Value, FnError>,
    ) -> Function {
        Function { name, params, variadic: None, unknowns: Unknowns::Propagate, body }
    }

    /// The same function taking any number of `name` arguments after its fixed ones.
    const fn variadic(mut self, name: &'static str) -> Function {
        self.variadic = Some(name);
        self
    }

    /// The same function looking inside known collections for unknowns itself.
    const fn shallow(mut self) -> Function {
        self.unknowns = Unknowns::Shallow;
        self
    }

    /// The same function handling every unknown argument itself.
    const fn handles_unknowns(mut self) -> Function {
        self.unknowns = Unknowns::Handled;
        self
    }

    /// The same function giving a new value on every call: unknown while planning.
    const fn known_at_apply(mut self) -> Function {
        self.unknowns = Unknowns::UntilApply;
        self
    }

    fn param_name(&self, i: usize) -> &'static str {
        self.params.get(i).copied().or(self.variadic).unwrap_or("?")
    }

    fn check_arity(&self, given: usize) -> Result<(), Diagnostic> {
        let wanted = self.params.len();
        let plural = |n: usize| if n == 1 { "argument" } else { "arguments" };
        if given < wanted {
            let at_least = if self.variadic.is_some() { "at least " } else { "" };
            return Err(Diagnostic::error("Not enough function arguments").with_detail(format!(
                "Function \"{}\" expects {at_least}{wanted} {}. Missing value for \"{}\".",
                self.name,
                plural(wanted),
                self.params[given]
            )));
        }
        if given > wanted && self.variadic.is_none() {
            return Err(Diagnostic::error("Too many function arguments").with_detail(format!(
                "Function \"{}\" expects only {wanted} {}.",
                self.name,
                plural(wanted)
            )));
        }
        Ok(())
    }
}

/// What went wrong in a function body: about one argument, or the call.
struct FnError {
    arg: Option<usize>,
    /// A lowercase fragment, e.g. `a string is required, got a list`.
    message: String,
}

impl FnError {
    /// A problem with argument `i` (0-based).
    fn arg(i: usize, message: impl Into<String>) -> FnError {
        FnError { arg: Some(i), message: message.into() }
    }

    /// A problem with the call as a whole.
    fn call(message: impl Into<String>) -> FnError {
        FnError { arg: None, message: message.into() }
    }

    fn into_diagnostic(self, function: &Function) -> Diagnostic {
        let name = function.name;
        match self.arg {
            Some(i) => Diagnostic::error("Invalid function argument").with_detail(format!(
                "Invalid value for \"{}\" parameter of {name}(): {}.",
                function.param_name(i),
                self.message
            )),
            None => Diagnostic::error("Error in function call")
                .with_detail(format!("Call to function \"{name}\" failed: {}.", self.message)),
        }
    }
}

/// A function's evaluated arguments and what the body may use.
struct Args<'a> {
    function: &'a Function,
    values: Vec<Value>,
    dir: &'a Path,
}

impl Args<'_> {
    /// Argument `i`.
    fn get(&self, i: usize) -> &Value {
        &self.values[i]
    }

    /// The arguments after the fixed parameters.
    fn rest(&self) -> &[Value] {
        &self.values[self.function.params.len()..]
    }

    /// Argument `i`, which must not be null.
    fn not_null(&self, i: usize) -> Result<&Value, FnError> {
        let v = self.get(i);
        if v.is_null() { Err(FnError::arg(i, "the value must not be null")) } else { Ok(v) }
    }

    /// Argument `i` converted to `ty`; null is refused.
    fn converted(&self, i: usize, ty: &Type) -> Result<Value, FnError> {
        let v = self.not_null(i)?;
        ty.convert(v).map_err(|e| FnError::arg(i, e.message))
    }

    /// Argument `i` as a string (numbers and bools convert).
    fn string(&self, i: usize) -> Result<String, FnError> {
        match self.converted(i, &Type::String)? {
            Value::String(s) => Ok(s),
            other => Err(FnError::arg(i, format!("a string is required, got {}", other.kind_name()))),
        }
    }

    /// Argument `i` as a number (numeric strings convert).
    fn number(&self, i: usize) -> Result<Number, FnError> {
        match self.converted(i, &Type::Number)? {
            Value::Number(n) => Ok(n),
            other => Err(FnError::arg(i, format!("a number is required, got {}", other.kind_name()))),
        }
    }

    /// Argument `i` as a whole number.
    fn integer(&self, i: usize) -> Result<i64, FnError> {
        let n = self.number(i)?;
        n.as_i64().ok_or_else(|| FnError::arg(i, format!("a whole number is required, got {n}")))
    }

    /// Argument `i` as the elements of a list, tuple or set.
    fn elements(&self, i: usize) -> Result<&[Value], FnError> {
        let v = self.not_null(i)?;
        v.elements().ok_or_else(|| FnError::arg(i, format!("a list, tuple or set is required, got {}", v.kind_name())))
    }

    /// The configuration directory.
    fn dir(&self) -> &Path {
        self.dir
    }
}

/// Every function, by name.
const FUNCTIONS: &[Function] = &[
    // Strings.
    Function::new("chomp", &["str"], string::chomp),
    Function::new("endswith", &["str", "suffix"], string::endswith),
    Function::new("format", &["format"], format::format).variadic("args"),
    Function::new("join", &["separator"], string::join).variadic("lists"),
    Function::new("formatlist", &["format"], format::formatlist).variadic("args"),
    Function::new("lower", &["str"], string::lower),
    Function::new("regex", &["pattern", "string"], string::regex),
    Function::new("regexall", &["pattern", "string"], string::regexall),
    Function::new("replace", &["str", "substr", "replace"], string::replace),
    Function::new("split", &["separator", "str"], string::split),
    Function::new("startswith", &["str", "prefix"], string::startswith),
    Function::new("substr", &["str", "offset", "length"], string::substr),
    Function::new("trim", &["str", "cutset"], string::trim),
    Function::new("trimprefix", &["str", "prefix"], string::trimprefix),
    Function::new("trimspace", &["str"], string::trimspace),
    Function::new("trimsuffix", &["str", "suffix"], string::trimsuffix),
    Function::new("upper", &["str"], string::upper),
    Function::new("indent", &["num_spaces", "str"], string::indent),
    Function::new("strcontains", &["str", "substr"], string::strcontains),
    Function::new("strrev", &["str"], string::strrev),
    Function::new("title", &["str"], string::title),
    // Collections.
    Function::new("coalesce", &[], collection::coalesce).variadic("vals").handles_unknowns(),
    Function::new("compact", &["list"], collection::compact),
    Function::new("concat", &[], collection::concat).variadic("seqs").shallow(),
    Function::new("contains", &["list", "value"], collection::contains),
    Function::new("distinct", &["list"], collection::distinct),
    Function::new("element", &["list", "index"], collection::element).shallow(),
    Function::new("flatten", &["list"], collection::flatten),
    Function::new("index", &["list", "value"], collection::index),
    Function::new("keys", &["inputMap"], collection::keys).shallow(),
    Function::new("length", &["value"], collection::length).shallow(),
    Function::new("lookup", &["inputMap", "key"], collection::lookup).variadic("default").shallow(),
    Function::new("merge", &[], collection::merge).variadic("maps").shallow(),
    Function::new("one", &["list"], collection::one).shallow(),
    Function::new("range", &[], collection::range).variadic("params"),
    Function::new("slice", &["list", "start_index", "end_index"], collection::slice).shallow(),
    Function::new("sort", &["list"], collection::sort),
    Function::new("sum", &["list"], collection::sum),
    Function::new("values", &["mapping"], collection::values).shallow(),
    Function::new("zipmap", &["keys", "values"], collection::zipmap),
    Function::new("alltrue", &["list"], lists::alltrue),
    Function::new("anytrue", &["list"], lists::anytrue),
    Function::new("chunklist", &["list", "size"], lists::chunklist),
    Function::new("coalescelist", &[], lists::coalescelist).variadic("vals"),
    Function::new("matchkeys", &["values", "keys", "searchset"], lists::matchkeys),
    Function::new("reverse", &["list"], lists::reverse),
    Function::new("transpose", &["values"], lists::transpose),
    Function::new("setintersection", &["first_set"], sets::setintersection).variadic("other_sets"),
    Function::new("setproduct", &[], sets::setproduct).variadic("sets"),
    Function::new("setsubtract", &["a", "b"], sets::setsubtract),
    Function::new("setunion", &["first_set"], sets::setunion).variadic("other_sets"),
    // Type conversions.
    Function::new("tobool", &["v"], conversion::tobool),
    Function::new("tolist", &["v"], conversion::tolist).shallow(),
    Function::new("tomap", &["v"], conversion::tomap).shallow(),
    Function::new("tonumber", &["v"], conversion::tonumber),
    Function::new("toset", &["v"], conversion::toset),
    Function::new("tostring", &["v"], conversion::tostring),
    // Encodings and hashes.
    Function::new("base64decode", &["str"], encoding::base64decode),
    Function::new("base64encode", &["str"], encoding::base64encode),
    Function::new("base64sha256", &["str"], encoding::base64sha256),
    Function::new("jsondecode", &["str"], encoding::jsondecode),
    Function::new("jsonencode", &["val"], encoding::jsonencode),
    Function::new("md5", &["str"], encoding::md5),
    Function::new("sha1", &["str"], encoding::sha1),
    Function::new("sha256", &["str"], encoding::sha256),
    Function::new("sha512", &["str"], encoding::sha512),
    Function::new("base64sha512", &["str"], encoding::base64sha512),
    Function::new("csvdecode", &["str"], encoding::csvdecode),
    Function::new("urlencode", &["str"], encoding::urlencode),
    Function::new("textencodebase64", &["string", "encoding"], encoding::textencodebase64),
    Function::new("textdecodebase64", &["source", "encoding"], encoding::textdecodebase64),
    Function::new("yamldecode", &["src"], yaml::yamldecode),
    Function::new("yamlencode", &["value"], yaml::yamlencode),
    // Identifiers; uuid() is known only at apply.
    Function::new("uuid", &[], ids::uuid).known_at_apply(),
    Function::new("uuidv5", &["namespace", "name"], ids::uuidv5),
    // Dates and times; timestamp() is known only at apply.
    Function::new("timestamp", &[], time::timestamp).known_at_apply(),
    Function::new("timeadd", &["timestamp", "duration"], time::timeadd),
    Function::new("timecmp", &["timestamp_a", "timestamp_b"], time::timecmp),
    Function::new("formatdate", &["format", "time"], time::formatdate),
    // Paths (text only) and files, inside the configuration directory only.
    Function::new("basename", &["path"], file::basename),
    Function::new("dirname", &["path"], file::dirname),
    Function::new("file", &["path"], file::file),
    Function::new("filebase64", &["path"], file::filebase64),
    Function::new("fileexists", &["path"], file::fileexists),
    Function::new("fileset", &["path", "pattern"], file::fileset),
    Function::new("filemd5", &["path"], file::filemd5),
    Function::new("filesha1", &["path"], file::filesha1),
    Function::new("filesha256", &["path"], file::filesha256),
    Function::new("filesha512", &["path"], file::filesha512),
    Function::new("filebase64sha256", &["path"], file::filebase64sha256),
    Function::new("filebase64sha512", &["path"], file::filebase64sha512),
    Function::new("abspath", &["path"], file::abspath),
    Function::new("pathexpand", &["path"], file::pathexpand),
    // Numbers.
    Function::new("abs", &["num"], number::abs),
    Function::new("ceil", &["num"], number::ceil),
    Function::new("floor", &["num"], number::floor),
    Function::new("max", &[], number::max).variadic("numbers"),
    Function::new("min", &[], number::min).variadic("numbers"),
    Function::new("log", &["num", "base"], number::log),
    Function::new("pow", &["num", "power"], number::pow),
    Function::new("signum", &["num"], number::signum),
    Function::new("parseint", &["number", "base"], number::parseint),
    // IP networks.
    Function::new("cidrhost", &["prefix", "hostnum"], network::cidrhost),
    Function::new("cidrnetmask", &["prefix"], network::cidrnetmask),
    Function::new("cidrsubnet", &["prefix", "newbits", "netnum"], network::cidrsubnet),
    Function::new("cidrsubnets", &["prefix"], network::cidrsubnets).variadic("newbits"),
];

#[cfg(test)]
mod tests {
    use super::super::testutil::{error, value};
    use super::*;

    #[test]
    fn names_are_unique() {
        let mut names: Vec<&str> = all_names().collect();
        let count = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), count);
    }

    #[test]
    fn unknown_functions_list_close_names() {
        assert_eq!(
            error("uper(\"a\")"),
            "Error: test.tf:1: Call to unknown function\n  There is no function named \"uper\". Did you mean \"upper\"?"
        );
        assert!(error("jion(\",\", [])").ends_with("Did you mean \"join\"?"));
        assert!(error("mix(1)").ends_with("Did you mean one of \"max\", \"min\"?"));
        assert!(error("nothing_like_it()").ends_with("There is no function named \"nothing_like_it\"."));
    }

    #[test]
    fn arity_is_checked() {
        assert_eq!(
            error("join()"),
            "Error: test.tf:1: Not enough function arguments\n  Function \"join\" expects at least 1 argument. Missing value for \"separator\"."
        );
        assert!(error("upper(\"a\", \"b\")").contains("Function \"upper\" expects only 1 argument."));
        assert!(error("replace(\"a\")").contains("expects 3 arguments. Missing value for \"substr\""));
    }

    #[test]
    fn argument_errors_name_function_and_parameter() {
        assert_eq!(
            error("upper([])"),
            "Error: test.tf:1: Invalid function argument\n  Invalid value for \"str\" parameter of upper(): a string is required, got a tuple."
        );
        assert!(
            error("upper(null)")
                .contains("Invalid value for \"str\" parameter of upper(): the value must not be null.")
        );
    }

    #[test]
    fn unknown_arguments_give_unknown() {
        let mut ctx = super::super::EvalContext::new(".");
        ctx.variables.insert("u".into(), Value::unknown());
        let eval = |text: &str| super::super::testutil::eval_in(text, &ctx).unwrap();
        assert_eq!(eval("upper(var.u)"), Value::unknown());
        assert_eq!(eval("join(\",\", [\"a\", var.u])"), Value::unknown());
        assert_eq!(eval("jsonencode({a = var.u})"), Value::unknown());
        // Shallow functions look inside known collections.
        assert_eq!(eval("length([var.u, 1])"), Value::int(2));
        assert_eq!(eval("length(var.u)"), Value::unknown());
        assert_eq!(eval("keys({a = var.u})"), Value::Tuple(vec![Value::string("a")]));
        assert_eq!(value("length(\"héllo\")"), Value::int(5));
    }

    #[test]
    fn length_of_an_unknown_with_a_known_length_is_known() {
        use crate::value::Refinements;
        let mut ctx = super::super::EvalContext::new(".");
        let two = Refinements { min_length: Some(2), max_length: Some(2), ..Refinements::default() };
        let some = Refinements { min_length: Some(1), max_length: Some(3), ..Refinements::default() };
        ctx.variables.insert("two".into(), Value::refined(two));
        ctx.variables.insert("some".into(), Value::refined(some));
        let eval = |text: &str| super::super::testutil::eval_in(text, &ctx).unwrap();
        assert_eq!(eval("length(var.two)"), Value::int(2));
        let bounded = eval("length(var.some)");
        let r = bounded.refinements().expect("a refined unknown");
        assert!(r.not_null && r.lower.is_some() && r.upper.is_some(), "{r:?}");
    }

    #[test]
    fn collection_path_hash_and_pattern_functions_agree_with_terraform() {
        // Each result as `terraform console` 1.11.4 prints it.
        let s = |t: &str| Value::string(t);
        assert_eq!(value("one([])"), Value::Null);
        assert_eq!(value("one([\"a\"])"), s("a"));
        assert!(error("one([1, 2])").contains("either zero or one elements"));
        assert_eq!(value("sum([1, 2.5, 3])"), Value::Number(crate::value::Number::Float(6.5)));
        assert_eq!(value("sum([1, 2])"), Value::int(3));
        assert!(error("sum([])").contains("cannot sum an empty list"));
        assert_eq!(value("index([\"a\", \"b\", \"c\"], \"b\")"), Value::int(1));
        assert!(error("index([\"a\"], \"z\")").contains("item not found"));
        assert_eq!(value("md5(\"hello world\")"), s("5eb63bbbe01eeed093cb22bb8f5acdc3"));
        assert_eq!(value("basename(\"foo/bar/baz.txt\")"), s("baz.txt"));
        assert_eq!(value("basename(\"/\")"), s("/"));
        assert_eq!(value("dirname(\"foo/bar/baz.txt\")"), s("foo/bar"));
        assert_eq!(value("dirname(\"foo\")"), s("."));
        assert_eq!(
            value("formatlist(\"%s, %s!\", \"Salutations\", [\"Valentina\", \"Ander\"])"),
            Value::List(vec![s("Salutations, Valentina!"), s("Salutations, Ander!")])
        );
        assert!(error("formatlist(\"%s %s\", [\"a\"], [\"b\", \"c\"])").contains("does not match"));
        assert_eq!(value("regex(\"[a-z]+\", \"53453453.345345aaabbbccc23454\")"), s("aaabbbccc"));
        assert_eq!(
            value("regex(\"(\\\\d\\\\d\\\\d\\\\d)-(\\\\d\\\\d)\", \"2019-02-01\")"),
            Value::Tuple(vec![s("2019"), s("02")])
        );
        assert_eq!(
            value(
                "regex(\"^(?:(?P<scheme>[^:/?#]+):)?(?://(?P<authority>[^/?#]*))?\", \"https://terraform.io/docs/\")"
            ),
            Value::object([("authority", s("terraform.io")), ("scheme", s("https"))])
        );
        assert_eq!(value("regexall(\"[a-z]+\", \"1234abcd5678efgh9\")"), Value::List(vec![s("abcd"), s("efgh")]));
        assert!(error("regex(\"z\", \"abc\")").contains("did not match"));
        assert!(error("regex(\"(\", \"abc\")").contains("invalid regular expression"));
    }
}
