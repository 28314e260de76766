//! `cairn console`: evaluates expressions against the configuration and
//! the current state, as `terraform console` does (scripts pipe an
//! expression in: `echo 'var.x' | cairn console`).
//!
//! An expression sees what a configuration's expression would in the
//! root module: `var.NAME`, `local.NAME`, `module.NAME.OUTPUT`, resources
//! as the state holds them (one the state does not hold is `(known after
//! apply)`, as Terraform shows it), data sources (cairn's state keeps
//! none, so they are read as a plan reads them), `path.*`,
//! `terraform.workspace` and every function, plus `type(EXPR)`, which only
//! the console has. With `-plan` the values are those a plan would make
//! (unknown ones `(known after apply)`), planned as `cairn plan` plans,
//! but nothing is saved.
//!
//! Each expression is evaluated as a local value of the configuration,
//! through the same walk that evaluates a deferred module call's argument
//! from a plan's values (`engine::staged::argument_values`): its
//! references, the locals and module outputs between, and the sensitivity
//! of what it reads follow the configuration's graph. The state is only
//! read: never locked, never written; providers give their schemas, and
//! plan (with read-only grants) only for `-plan` or to read data sources.
//!
//! From a terminal: a `> ` prompt (`: ` while brackets are open), errors
//! shown and the session going on, until `exit` or end of input. From a
//! pipe, as Terraform 1.11 does: every line is evaluated, the first error
//! ends the run with status 1, `exit` ends it quietly, and only the last
//! line's result is printed.

use std::collections::BTreeSet;
use std::io::{BufRead, IsTerminal, Write};

use anyhow::Result;

use super::Common;
use crate::addr::{InstanceKey, Mode, ResourceAddr};
use crate::apply::events::{Event, EventSink};
use crate::config::{self, ExprKind, Expression, Local, TemplatePart, VariableInput};
use crate::diag::{Diagnostic, Diagnostics};
use crate::engine::{Engine, Intent, RunOptions, Workspace};
use crate::plan::{Expansion, Plan};
use crate::value::{Path, PathStep, Type, Value};

/// The name diagnostics give the console's input, as Terraform's do.
const INPUT_NAME: &str = "<console-input>";

/// The local value each expression is evaluated as: a name no
/// configuration can declare or refer to.
const INPUT_LOCAL: &str = "<console-input>";

/// What `help` prints, as Terraform's console words it.
const HELP: &str = "The cairn console allows you to experiment with expressions.
You may access resources in the state (if you have one) just as you would
from a configuration. For example: \"local_file.site.filename\" would evaluate
to the filename of \"local_file.site\" if it exists in your state.

Type in the expression to test and hit <enter> to see the result.

To exit the console, type \"exit\" and hit <enter>, or use Control-C or
Control-D.";

/// Runs `cairn console`; with `plan`, against a new plan's values.
pub(super) fn run(common: &Common, plan: bool) -> Result<i32> {
    let dir = common.dir();
    let inputs = console_inputs(&dir, common.variables.inputs(common.chdir.as_deref()))?;
    let ws = Workspace::load(&dir, &inputs)?;
    let engine = Engine::new()?;
    let values = if plan { planned_values(&engine, &ws)? } else { stored_values(&engine, &ws)? };
    let console = Console { dir, inputs, values };
    let (stdin, mut stdout) = (std::io::stdin(), std::io::stdout());
    if stdin.is_terminal() {
        console.interactive(stdin.lock(), &mut stdout)
    } else {
        console.piped(stdin.lock(), &mut stdout)
    }
}

/// The variables' values as `given`, and each required variable nothing
/// gives as unknown: Terraform's console shows it as `(known after
/// apply)` rather than refusing to start.
fn console_inputs(dir: &std::path::Path, given: Vec<VariableInput>) -> Result<Vec<VariableInput>> {
    let config = config::load(dir).map_err(|d| anyhow::Error::new(Diagnostics(d)))?;
    let env: Vec<(String, String)> = std::env::vars().collect();
    let unset: Vec<VariableInput> = config::unset_required(&config, &given, &env)
        .into_iter()
        .map(|v| VariableInput::Value {
            name: v.name.clone(),
            value: Value::unknown(),
            source: "cairn console".to_string(),
        })
        .collect();
    Ok(given.into_iter().chain(unset).collect())
}

/// The configuration and the values expressions see, in the shape of a
/// plan: the instances' values, how each resource expands, and the
/// sensitive parts of each.
struct Console {
    /// The configuration directory.
    dir: std::path::PathBuf,
    /// The variables' values.
    inputs: Vec<VariableInput>,
    values: Plan,
}

/// What one line of input asks for.
enum Outcome {
    /// Print this (nothing, for an empty line).
    Print(String),
    /// End the session.
    Exit,
}

impl Console {
    /// From a pipe, as Terraform 1.11: each line in turn, the first error
    /// ends the run (status 1), `exit` ends it, and the last line's result
    /// is printed at the end.
    fn piped(&self, input: impl BufRead, out: &mut impl Write) -> Result<i32> {
        let mut last = String::new();
        for line in input.lines() {
            let line = line?;
            match self.handle(&line) {
                Ok(Outcome::Print(text)) => last = text,
                Ok(Outcome::Exit) => return Ok(0),
                Err(diags) => {
                    print_diagnostics(&line, &diags);
                    return Ok(1);
                }
            }
        }
        writeln!(out, "{last}")?;
        Ok(0)
    }

    /// From a terminal: a prompt, each result (or error) at once, until
    /// `exit` or the end of input. An expression whose brackets are still
    /// open at the end of a line goes on on the next, at a `: ` prompt, as
    /// in Terraform's console.
    fn interactive(&self, mut input: impl BufRead, out: &mut impl Write) -> Result<i32> {
        let mut entry = String::new();
        let mut line = String::new();
        loop {
            write!(out, "{}", if entry.is_empty() { "> " } else { ": " })?;
            out.flush()?;
            line.clear();
            if input.read_line(&mut line)? == 0 {
                writeln!(out)?;
                return Ok(0);
            }
            entry.push_str(&line);
            if open_brackets(&entry) > 0 {
                continue;
            }
            let text = std::mem::take(&mut entry);
            match self.handle(&text) {
                Ok(Outcome::Print(result)) => writeln!(out, "{result}")?,
                Ok(Outcome::Exit) => return Ok(0),
                Err(diags) => print_diagnostics(&text, &diags),
            }
        }
    }

    /// One line: a command (`exit`, `help`), nothing, or an expression.
    fn handle(&self, line: &str) -> Result<Outcome, Vec<Diagnostic>> {
        match line.trim() {
            "" => Ok(Outcome::Print(String::new())),
            "exit" => Ok(Outcome::Exit),
            "help" => Ok(Outcome::Print(HELP.to_string())),
            text => self.evaluate(text).map(Outcome::Print),
        }
    }

    /// The text of an expression's value, or of its type for `type(…)`.
    fn evaluate(&self, text: &str) -> Result<String, Vec<Diagnostic>> {
        let expr = config::parse_expression(text, INPUT_NAME)?;
        if let ExprKind::Call { name, args, expand_final: false } = &expr.kind
            && name == TYPE_FUNCTION
        {
            let [arg] = args.as_slice() else {
                return Err(vec![Diagnostic::error("Invalid number of arguments").with_detail(
                    "The console-only \"type\" function takes exactly one argument: the expression whose type to show.",
                )]);
            };
            refuse_nested_type(arg)?;
            let (value, _) = self.value_of(arg)?;
            return Ok(type_text(&Type::of(&value), 0));
        }
        refuse_nested_type(&expr)?;
        let (value, marks) = self.value_of(&expr)?;
        Ok(format_value(&value, &Path::root(), &marks, 0))
    }

    /// The value of `expr` in the root module, with its sensitive paths:
    /// evaluated as a local added to the configuration, from the values
    /// this console holds.
    fn value_of(&self, expr: &Expression) -> Result<(Value, Vec<Path>), Vec<Diagnostic>> {
        let local = Local {
            name: INPUT_LOCAL.to_string(),
            expr: expr.clone(),
            location: expr.location.clone(),
            input: None,
            depends_on: Vec::new(),
            preconditions: Vec::new(),
            output_ephemeral: None,
        };
        let ws = Workspace::load_overridden(&self.dir, &self.inputs, &mut |config| {
            config::check_expression_references(config, expr).map_err(|d| anyhow::Error::new(Diagnostics(d)))?;
            config.locals.insert(INPUT_LOCAL.to_string(), local.clone());
            Ok(())
        })
        .map_err(Diagnostics::of_error)?;
        let (config, graph) = ws.planned_config(&self.values).map_err(Diagnostics::of_error)?;
        let mut found = crate::engine::argument_values(&config, &graph, &self.values, &ws.variables, &[INPUT_LOCAL]);
        found.remove(INPUT_LOCAL).unwrap_or_else(|| Ok((Value::unknown(), Vec::new())))
    }
}

/// The values of the objects the state holds, as a plan would hold them:
/// each resource of the configuration the state has no object of is
/// declared without one, so that a reference sees `(known after apply)`,
/// as in Terraform.
fn stored_values(engine: &Engine, ws: &Workspace) -> Result<Plan> {
    let mut values = Plan::default();
    for resource in &ws.config.resources {
        values.expansions.insert(resource.addr.clone(), Expansion::Single);
    }
    read_data_sources(engine, ws, &mut values);
    let Some(state) = engine.read_state(ws)? else { return Ok(values) };
    let names: BTreeSet<String> = state.resources.iter().map(|r| r.provider.clone()).collect();
    let schemas = engine.schemas(ws, &names)?;
    let mut keys: std::collections::BTreeMap<ResourceAddr, Vec<Option<InstanceKey>>> = Default::default();
    for inst in state.resources.iter().filter(|i| !i.attributes.is_null()) {
        let Some(schema) = schemas.get(&inst.provider).and_then(|s| s.of(&inst.addr.resource)) else { continue };
        keys.entry(inst.addr.resource.clone()).or_default().push(inst.addr.key.clone());
        if schema.version != inst.schema_version {
            // Only the provider can upgrade it, which a plan asks for:
            // until then its value is not known here.
            eprintln!(
                "{}\n",
                crate::diag::source::render(&Diagnostic::warning("Object stored with an older schema").with_detail(
                    format!(
                        "{} is stored at schema version {} of its provider, which is at version {} now: it reads \
                         as (known after apply) until a plan or apply upgrades it (or use -plan).",
                        inst.addr, inst.schema_version, schema.version
                    )
                ))
            );
            continue;
        }
        let value = inst
            .attributes
            .decode(&schema.block.implied_type())
            .map_err(|e| anyhow::anyhow!("the state's object {} does not fit its provider's schema: {e}", inst.addr))?;
        // Stored where a plan keeps the values it read: both are what a
        // reference to the instance sees.
        let marks = config::object_marks(&value, &schema.block, &inst.sensitive_attributes);
        if !marks.is_empty() {
            values.reference_marks.insert(inst.addr.clone(), marks);
        }
        values.data_values.insert(inst.addr.clone(), value);
    }
    for (addr, keys) in keys {
        values.expansions.insert(addr, crate::plan::late::expansion_of(&keys));
    }
    Ok(values)
}

/// Adds the values of the configuration's data sources to `values`: cairn
/// keeps none in the state (Terraform's console shows those its last run
/// stored), so they are read as a plan reads them, without refreshing
/// anything else. One that cannot be read stays `(known after apply)`,
/// after a warning saying why.
fn read_data_sources(engine: &Engine, ws: &Workspace, values: &mut Plan) {
    if !ws.config.resources.iter().any(|r| r.addr.mode == Mode::Data) {
        return;
    }
    let options = RunOptions { intent: Intent::Inspect, refresh: false, ..RunOptions::default() };
    let planned = match engine.plan(ws, options, false, &Diagnosed) {
        Ok(planned) => planned,
        Err(e) => {
            let detail = format!("They read as (known after apply): planning to read them failed: {e:#}");
            let warning = Diagnostic::warning("Data sources not read").with_detail(detail);
            eprintln!("{}\n", crate::diag::source::render(&warning));
            return;
        }
    };
    let plan = &planned.plan;
    let is_data = |addr: &ResourceAddr| addr.mode == Mode::Data;
    for (addr, expansion) in plan.expansions.iter().filter(|(a, _)| is_data(a)) {
        values.expansions.insert(addr.clone(), expansion.clone());
    }
    for (addr, value) in plan.data_values.iter().filter(|(a, _)| is_data(&a.resource)) {
        values.data_values.insert(addr.clone(), value.clone());
    }
    for (addr, marks) in plan.reference_marks.iter().filter(|(a, _)| is_data(&a.resource)) {
        values.reference_marks.insert(addr.clone(), marks.clone());
    }
    planned.release();
}

/// The values of a new plan, made as `cairn plan` makes it with read-only
/// grants and without the state's lock; nothing is saved.
fn planned_values(engine: &Engine, ws: &Workspace) -> Result<Plan> {
    let options = RunOptions { intent: Intent::Inspect, ..RunOptions::default() };
    let planned = engine.plan(ws, options, false, &Diagnosed)?;
    let values = planned.plan.clone();
    planned.release();
    Ok(values)
}

/// Shows only a plan's diagnostics (its warnings), on standard error: the
/// console prints values, not progress.
struct Diagnosed;

impl EventSink for Diagnosed {
    fn emit(&self, _event: Event) {}

    fn diagnostic(&self, d: &Diagnostic) {
        eprintln!("{}\n", crate::diag::source::render(d));
    }
}

/// Prints diagnostics on standard error; those about the `input` with the
/// line they point into.
fn print_diagnostics(input: &str, diags: &[Diagnostic]) {
    for d in diags {
        let about_input = d.location.as_ref().filter(|l| &*l.file == std::path::Path::new(INPUT_NAME));
        let text = match about_input {
            Some(location) => crate::diag::source::render_with(d, Some((location, input.trim_end_matches('\n')))),
            None => crate::diag::source::render(d),
        };
        eprintln!("{text}\n");
    }
}

/// How many brackets (`(`, `[`, `{`) `text` leaves open, outside its
/// quoted strings.
fn open_brackets(text: &str) -> i64 {
    let (mut open, mut quoted, mut escaped) = (0i64, false, false);
    for c in text.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            '(' | '[' | '{' if !quoted => open += 1,
            ')' | ']' | '}' if !quoted => open -= 1,
            _ => {}
        }
    }
    open
}

/// The console-only function that shows a value's type.
const TYPE_FUNCTION: &str = "type";

/// Terraform's error for `type(…)` anywhere but around the whole input:
/// the type is shown, not computed with.
fn refuse_nested_type(expr: &Expression) -> Result<(), Vec<Diagnostic>> {
    if !calls_type(expr) {
        return Ok(());
    }
    Err(vec![
        Diagnostic::error("Invalid use of type function")
            .with_detail("The console-only \"type\" function cannot be used as part of an expression."),
    ])
}

/// Whether `expr` calls `type` anywhere in it.
fn calls_type(expr: &Expression) -> bool {
    match &expr.kind {
        ExprKind::Literal(_) | ExprKind::Variable(_) => false,
        ExprKind::Call { name, args, .. } => name == TYPE_FUNCTION || args.iter().any(calls_type),
        ExprKind::Traversal { source, steps } => {
            calls_type(source) || steps.iter().any(|s| matches!(s, config::Step::Index(index) if calls_type(index)))
        }
        ExprKind::Template(parts) => template_calls_type(parts),
        ExprKind::Tuple(items) => items.iter().any(calls_type),
        ExprKind::Object(items) => items.iter().any(|(k, v)| calls_type(k) || calls_type(v)),
        ExprKind::Unary { operand, .. } => calls_type(operand),
        ExprKind::Binary { lhs, rhs, .. } => calls_type(lhs) || calls_type(rhs),
        ExprKind::Conditional { condition, then, otherwise } => {
            calls_type(condition) || calls_type(then) || calls_type(otherwise)
        }
        ExprKind::For(f) => {
            let parts = [Some(&f.collection), f.key.as_ref(), Some(&f.value), f.condition.as_ref()];
            parts.into_iter().flatten().any(calls_type)
        }
    }
}

/// Whether a template's interpolations and directives call `type`.
fn template_calls_type(parts: &[TemplatePart]) -> bool {
    parts.iter().any(|part| match part {
        TemplatePart::Literal(_) => false,
        TemplatePart::Interpolation(e) => calls_type(e),
        TemplatePart::If { condition, then, otherwise } => {
            calls_type(condition) || template_calls_type(then) || template_calls_type(otherwise)
        }
        TemplatePart::For { collection, body, .. } => calls_type(collection) || template_calls_type(body),
    })
}

/// A value as `terraform console` prints it: strings quoted (several lines
/// as a heredoc), lists, sets and maps with the conversion that makes
/// them (`tolist([…])`), objects and tuples as written, one element a
/// line (a comma after each of a sequence), `(sensitive value)` where
/// `marks` cover `path`, `(known after apply)` for an unknown. Lines after
/// the first are indented by `indent` spaces.
pub(super) fn format_value(value: &Value, path: &Path, marks: &[Path], indent: usize) -> String {
    if value.is_unknown() {
        return "(known after apply)".to_string();
    }
    if config::is_marked(marks, path) {
        return "(sensitive value)".to_string();
    }
    let sequence = |items: &[Value]| {
        let inner = " ".repeat(indent + 2);
        let mut out = String::from("[");
        for (i, item) in items.iter().enumerate() {
            let text = format_value(item, &path.push(PathStep::Index(i as u64)), marks, indent + 2);
            out.push_str(&format!("\n{inner}{text},"));
        }
        close(out, items.is_empty(), indent, ']')
    };
    let mapping = |entries: &crate::value::Map, key: fn(String) -> PathStep| {
        let inner = " ".repeat(indent + 2);
        let mut out = String::from("{");
        for (k, item) in entries.iter() {
            let text = format_value(item, &path.push(key(k.clone())), marks, indent + 2);
            out.push_str(&format!("\n{inner}{} = {text}", string_text(k, indent + 2)));
        }
        close(out, entries.is_empty(), indent, '}')
    };
    match value {
        Value::Null => "null".to_string(),
        Value::Unknown(_) => "(known after apply)".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => string_text(s, indent),
        Value::Tuple(items) => sequence(items),
        Value::List(items) => format!("tolist({})", sequence(items)),
        Value::Set(items) => format!("toset({})", sequence(items)),
        Value::Object(entries) => mapping(entries, PathStep::Attr),
        Value::Map(entries) => format!("tomap({})", mapping(entries, PathStep::Key)),
    }
}

/// Ends a sequence or mapping: its closing bracket on a line of its own
/// unless it is empty.
fn close(mut out: String, empty: bool, indent: usize, bracket: char) -> String {
    if !empty {
        out.push('\n');
        out.push_str(&" ".repeat(indent));
    }
    out.push(bracket);
    out
}

/// A string as the console prints it: quoted, or with several lines a
/// heredoc (`<<-` and indented inside a collection) whose delimiter no
/// line is.
fn string_text(s: &str, indent: usize) -> String {
    let lines: Vec<&str> = s.split('\n').collect();
    if lines.len() < 2 {
        return quoted(s);
    }
    let mut delimiter = String::from("EOT");
    while lines.iter().any(|l| l.trim() == delimiter) {
        delimiter.push('_');
    }
    let pad = " ".repeat(indent);
    let operator = if indent > 0 { "<<-" } else { "<<" };
    let body: String = lines.iter().map(|l| format!("\n{pad}{l}")).collect();
    format!("{operator}{delimiter}{body}\n{pad}{delimiter}")
}

/// A string in double quotes as Terraform's console writes it (Go's
/// `strconv.Quote`): `\"`, `\\`, the C escapes of control characters
/// that have one, `\xNN` for the other ASCII ones, `\uNNNN` for the C1
/// controls.
fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if c < ' ' || c == '\u{7f}' => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if ('\u{80}'..='\u{9f}').contains(&c) => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A type as the console's `type()` shows it, Terraform's way: objects
/// and tuples one attribute or element a line, a collection of them with
/// its element on a line of its own, `depth` levels of four spaces in.
pub(super) fn type_text(ty: &Type, depth: usize) -> String {
    let pad = |d: usize| "    ".repeat(d);
    match ty {
        Type::Bool => "bool".to_string(),
        Type::Number => "number".to_string(),
        Type::String => "string".to_string(),
        Type::Dynamic => "dynamic".to_string(),
        Type::Object(attrs) if attrs.is_empty() => "object({})".to_string(),
        Type::Object(attrs) => {
            let lines: String =
                attrs.iter().map(|(n, t)| format!("{}{n}: {},\n", pad(depth + 1), type_text(t, depth + 1))).collect();
            format!("object({{\n{lines}{}}})", pad(depth))
        }
        Type::Tuple(types) if types.is_empty() => "tuple([])".to_string(),
        Type::Tuple(types) => {
            let lines: String =
                types.iter().map(|t| format!("{}{},\n", pad(depth + 1), type_text(t, depth + 1))).collect();
            format!("tuple([\n{lines}{}])", pad(depth))
        }
        Type::List(element) | Type::Set(element) | Type::Map(element) => {
            let kind = match ty {
                Type::List(_) => "list",
                Type::Set(_) => "set",
                _ => "map",
            };
            if matches!(**element, Type::Object(_) | Type::Tuple(_)) {
                let inner = type_text(element, depth + 1);
                format!("{kind}(\n{}{inner},\n{})", pad(depth + 1), pad(depth))
            } else {
                format!("{kind}({})", type_text(element, depth))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A console over the configuration `hcl`, with no state.
    fn console(hcl: &str) -> (tempfile::TempDir, Console) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("main.tf"), hcl).unwrap();
        let console = Console { dir: dir.path().to_path_buf(), inputs: Vec::new(), values: Plan::default() };
        (dir, console)
    }

    const LOCALS: &str = "locals {\n  a = \"x\"\n  n = [1, 2]\n}\n";

    #[test]
    fn a_terminal_session_prompts_shows_each_result_and_ends_at_exit() {
        let (_dir, console) = console(LOCALS);
        let mut out = Vec::new();
        let input = "local.a\nlocal.nope\n\ntype(local.n)\nexit\nlocal.a\n";
        assert_eq!(console.interactive(input.as_bytes(), &mut out).unwrap(), 0);
        // The error goes to standard error, and the session goes on.
        assert_eq!(String::from_utf8(out).unwrap(), "> \"x\"\n> > \n> tuple([\n    number,\n    number,\n])\n> ");
        // Open brackets go on on the next line.
        let mut out = Vec::new();
        assert_eq!(console.interactive("{\na = \"{\"\n}\n".as_bytes(), &mut out).unwrap(), 0);
        assert_eq!(String::from_utf8(out).unwrap(), "> : : {\n  \"a\" = \"{\"\n}\n> \n");
        let mut out = Vec::new();
        assert_eq!(console.interactive("local.a\n".as_bytes(), &mut out).unwrap(), 0);
        assert_eq!(String::from_utf8(out).unwrap(), "> \"x\"\n> \n", "the end of input ends it");
    }

    #[test]
    fn a_pipe_prints_the_last_result_and_stops_at_the_first_error_or_exit() {
        let (_dir, console) = console(LOCALS);
        let piped = |input: &str| {
            let mut out = Vec::new();
            let code = console.piped(input.as_bytes(), &mut out).unwrap();
            (code, String::from_utf8(out).unwrap())
        };
        assert_eq!(piped("local.a\nlocal.n\n"), (0, "[\n  1,\n  2,\n]\n".to_string()));
        assert_eq!(piped("local.nope\nlocal.a\n"), (1, String::new()));
        assert_eq!(piped("local.a\nlocal.nope\n"), (1, String::new()));
        assert_eq!(piped("exit\nlocal.a\n"), (0, String::new()));
        assert_eq!(piped("local.a\n\n"), (0, "\n".to_string()));
        assert_eq!(piped(""), (0, "\n".to_string()));
    }

    #[test]
    fn type_is_shown_only_around_the_whole_input() {
        let (_dir, console) = console(LOCALS);
        assert_eq!(console.evaluate("type(local.a)").unwrap(), "string");
        for nested in ["type(local.a) == \"string\"", "[type(1)]", "\"${type(1)}\""] {
            let errors = console.evaluate(nested).unwrap_err();
            assert_eq!(errors[0].summary, "Invalid use of type function", "{nested}");
        }
    }

    fn shown(v: &Value) -> String {
        format_value(v, &Path::root(), &[], 0)
    }

    #[test]
    fn values_print_as_terraform_console_prints_them() {
        let nested = Value::object([
            ("empty", Value::Tuple(vec![])),
            ("list", Value::List(vec![Value::int(1), Value::int(2)])),
            ("map", Value::Map([("k".to_string(), Value::string("v"))].into_iter().collect())),
            ("s", Value::set(vec![Value::string("b"), Value::string("a")])),
        ]);
        assert_eq!(
            shown(&nested),
            "{\n  \"empty\" = []\n  \"list\" = tolist([\n    1,\n    2,\n  ])\n  \"map\" = tomap({\n    \"k\" = \"v\"\n  \
             })\n  \"s\" = toset([\n    \"a\",\n    \"b\",\n  ])\n}"
        );
        assert_eq!(shown(&Value::string("q\"\\\t\u{1}\u{7f}\u{85}é")), "\"q\\\"\\\\\\t\\x01\\x7f\\u0085é\"");
        assert_eq!(shown(&Value::Null), "null");
        assert_eq!(shown(&Value::unknown()), "(known after apply)");
        assert_eq!(shown(&Value::Map(Default::default())), "tomap({})");
        assert_eq!(shown(&Value::List(vec![])), "tolist([])");
        assert_eq!(shown(&Value::string("a\nb\n")), "<<EOT\na\nb\n\nEOT");
        assert_eq!(shown(&Value::object([("x", Value::string("a\nb"))])), "{\n  \"x\" = <<-EOT\n  a\n  b\n  EOT\n}");
        assert_eq!(shown(&Value::Tuple(vec![Value::string("EOT\nx")])), "[\n  <<-EOT_\n  EOT\n  x\n  EOT_,\n]");
    }

    #[test]
    fn sensitive_parts_are_hidden_and_unknowns_shown_before_them() {
        let v = Value::Tuple(vec![Value::int(1), Value::int(2), Value::unknown()]);
        let marks = [Path::root().push(PathStep::Index(0)), Path::root().push(PathStep::Index(2))];
        assert_eq!(
            format_value(&v, &Path::root(), &marks, 0),
            "[\n  (sensitive value),\n  2,\n  (known after apply),\n]"
        );
        assert_eq!(format_value(&Value::Null, &Path::root(), &[Path::root()], 0), "(sensitive value)");
    }

    #[test]
    fn types_print_as_terraform_console_prints_them() {
        let object = Type::Object([("a".to_string(), Type::Number)].into_iter().collect());
        assert_eq!(type_text(&Type::Number, 0), "number");
        assert_eq!(type_text(&Type::List(Box::new(Type::Number)), 0), "list(number)");
        assert_eq!(
            type_text(&Type::List(Box::new(object.clone())), 0),
            "list(\n    object({\n        a: number,\n    }),\n)"
        );
        assert_eq!(
            type_text(&Type::Tuple(vec![Type::Number, Type::String]), 0),
            "tuple([\n    number,\n    string,\n])"
        );
        let outer = Type::Object(
            [("b".to_string(), Type::List(Box::new(Type::Number))), ("o".to_string(), object)].into_iter().collect(),
        );
        assert_eq!(
            type_text(&outer, 0),
            "object({\n    b: list(number),\n    o: object({\n        a: number,\n    }),\n})"
        );
        assert_eq!(type_text(&Type::Object(Default::default()), 0), "object({})");
        assert_eq!(type_text(&Type::Tuple(vec![]), 0), "tuple([])");
    }
}
