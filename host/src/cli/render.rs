//! Human-readable plans in Terraform's style: `+` create, `~` update,
//! `-/+` replace, `-` destroy, `<=` read, `(known after apply)`,
//! `(sensitive value)`, coloured on a terminal.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::plan::{Action, Plan, Providers, ReplaceReason, ResourceChange, Summary};
use crate::schema::{Block, ProviderSchema, Schema};
use crate::value::{Path, Value, quote_key};

/// ANSI colours, or none.
#[derive(Debug, Clone, Copy)]
pub struct Colors {
    enabled: bool,
}

impl Colors {
    /// Colours when `enabled`.
    pub fn new(enabled: bool) -> Colors {
        Colors { enabled }
    }

    fn paint(&self, code: &str, text: &str) -> String {
        if self.enabled { format!("\x1b[{code}m{text}\x1b[0m") } else { text.to_string() }
    }

    /// Green.
    pub fn green(&self, t: &str) -> String {
        self.paint("32", t)
    }
    /// Yellow.
    pub fn yellow(&self, t: &str) -> String {
        self.paint("33", t)
    }
    /// Red.
    pub fn red(&self, t: &str) -> String {
        self.paint("31", t)
    }
    /// Cyan.
    pub fn cyan(&self, t: &str) -> String {
        self.paint("36", t)
    }
    /// Bold.
    pub fn bold(&self, t: &str) -> String {
        self.paint("1", t)
    }
}

/// The schemas of a plan's providers, by local name: what rendering needs
/// of them (which attributes are sensitive, how they nest).
pub type Schemas = BTreeMap<String, ProviderSchema>;

/// The schemas of started providers.
pub fn schemas_of(providers: &Providers) -> Schemas {
    providers.iter().map(|(name, p)| (name.clone(), p.schema().clone())).collect()
}

/// The whole plan as text.
pub fn render_plan(plan: &Plan, schemas: &Schemas, colors: Colors) -> String {
    let mut out = render_drift(plan, schemas, colors);
    if plan.refresh_only {
        out.push_str(&if !plan.has_changes() {
            format!(
                "{} Your infrastructure still matches the configuration.\n\ncairn has checked that the real \
                 remote objects still match the result of your most recent changes, and found no differences.\n",
                colors.green("No changes.")
            )
        } else {
            "This is a refresh-only plan, so cairn will not take any actions to undo these. If you were expecting \
             these changes then you can apply this plan to record the updated values in the cairn state without \
             changing any remote objects.\n"
                .to_string()
        });
        if plan.has_changes() {
            out.push_str(&render_output_changes(plan, colors));
        }
        return out;
    }
    if !plan.drift.is_empty() {
        out.push_str(
            "Unless you have made equivalent changes to your configuration, or ignored the relevant attributes \
             using ignore_changes, the following plan may include actions to undo or respond to these changes.\n\n",
        );
    }
    if !plan.has_changes() {
        out.push_str(&colors.green("No changes."));
        out.push_str(" Your infrastructure matches the configuration.\n");
        return out;
    }
    let visible: Vec<&ResourceChange> = plan.changes.iter().filter(|c| is_shown(c)).collect();
    if !visible.is_empty() {
        out.push_str("cairn will perform the following actions:\n\n");
        // Shared out between the cores: a serial step between the plan and
        // the apply, about 4 µs a change.
        let runs = crate::parallel::map_runs(&visible, 256, |run| {
            let mut out = String::new();
            for change in run {
                out.push_str(&render_change(change, schema_of(schemas, change), colors));
                out.push('\n');
            }
            out
        });
        out.extend(runs);
    }
    let _ = writeln!(out, "{} {}", colors.bold("Plan:"), summary_line(&plan.summary()));
    out.push_str(&render_output_changes(plan, colors));
    out
}

/// Whether a change shows in the plan: anything but a no-op, and a no-op
/// that imports or moves an object.
fn is_shown(change: &ResourceChange) -> bool {
    change.action != Action::NoOp || change.importing.is_some() || change.moved_from.is_some()
}

/// `1 to import, 1 to add, 0 to change, 1 to destroy, 1 to forget.`, the
/// import and forget counts only when there are any, as Terraform shows it.
pub fn summary_line(s: &Summary) -> String {
    let import = if s.import > 0 { format!("{} to import, ", s.import) } else { String::new() };
    let forget = if s.forget > 0 { format!(", {} to forget", s.forget) } else { String::new() };
    format!("{import}{} to add, {} to change, {} to destroy{forget}.", s.add, s.change, s.destroy)
}

/// The note about objects changed outside cairn: each one's attributes as
/// a diff from the state to what refresh found.
fn render_drift(plan: &Plan, schemas: &Schemas, colors: Colors) -> String {
    if plan.drift.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "{}\n\ncairn detected the following changes made outside of cairn since the last \"cairn apply\"{}:\n\n",
        colors.bold("Note: Objects have changed outside of cairn"),
        if plan.refresh_only { "" } else { " which may have affected this plan" }
    );
    for drift in &plan.drift {
        let (symbol, what) = if drift.deleted() {
            (colors.red("  -"), "has been deleted outside of cairn")
        } else {
            (colors.yellow("  ~"), "has changed outside of cairn")
        };
        let _ = writeln!(out, "  {} {what}", colors.bold(&format!("# {}", drift.addr)));
        out.push_str(&resource_header(&symbol, &drift.addr));
        let block = schemas.get(&drift.provider).and_then(|s| s.of(&drift.addr.resource));
        let empty = Block::default();
        let ctx =
            DiffContext { block: block.map_or(&empty, |s| &s.block), forcing: &[], marks: &drift.sensitive, colors };
        out.push_str(&ctx.object_lines(&drift.prior, &drift.current, &Path::root(), 6));
        out.push_str("    }\n\n");
    }
    out
}

fn schema_of<'a>(schemas: &'a Schemas, change: &ResourceChange) -> Option<&'a Schema> {
    schemas.get(&change.provider)?.of(&change.addr.resource)
}

fn render_output_changes(plan: &Plan, colors: Colors) -> String {
    let mut lines = Vec::new();
    for (name, o) in &plan.outputs {
        let show = |v: &Value| if o.sensitive { "(sensitive value)".to_string() } else { v.to_hcl() };
        match &o.prior {
            None => lines.push(format!("  {} {name} = {}", colors.green("+"), show(&o.value))),
            Some(p) if p != &o.value => {
                lines.push(format!("  {} {name} = {} -> {}", colors.yellow("~"), show(p), show(&o.value)))
            }
            Some(_) => {}
        }
    }
    for name in &plan.removed_outputs {
        lines.push(format!("  {} {name}", colors.red("-")));
    }
    if lines.is_empty() { String::new() } else { format!("\nChanges to Outputs:\n{}\n", lines.join("\n")) }
}

/// The symbol and the comment lines that head one resource's block.
fn headline(change: &ResourceChange, colors: Colors) -> (String, Vec<String>) {
    let addr = &change.addr;
    let (symbol, mut lines) = match change.action {
        Action::Create => (colors.green("  +"), vec![format!("{addr} will be created")]),
        Action::Update => (colors.yellow("  ~"), vec![format!("{addr} will be updated in-place")]),
        Action::Delete => match &change.deposed {
            Some(key) => (colors.red("  -"), vec![format!("{addr} (deposed object {key}) will be destroyed")]),
            None if change.replace_reason == Some(ReplaceReason::Destroying) => {
                (colors.red("  -"), vec![format!("{addr} will be destroyed (again: its delete failed)")])
            }
            None => (colors.red("  -"), vec![format!("{addr} will be destroyed")]),
        },
        Action::Read => (colors.cyan(" <="), vec![format!("{addr} will be read during apply")]),
        Action::Replace => {
            let why = match &change.replace_reason {
                Some(ReplaceReason::Tainted) => "is tainted, so must be replaced",
                Some(ReplaceReason::Destroying) => "is being destroyed (its delete failed), so must be replaced",
                Some(ReplaceReason::Requested) => "will be replaced, as requested",
                Some(ReplaceReason::Triggered(_)) => "will be replaced due to changes in replace_triggered_by",
                _ => "must be replaced",
            };
            let mut lines = if change.create_before_destroy {
                vec![format!("{addr} {why} (create before destroy)")]
            } else {
                vec![format!("{addr} {why}")]
            };
            if let Some(ReplaceReason::Triggered(reference)) = &change.replace_reason {
                lines.push(format!("(triggered by {reference})"));
            }
            let symbol = if change.create_before_destroy {
                format!("{}/{}", colors.green("+"), colors.red("-"))
            } else {
                format!("{}/{}", colors.red("-"), colors.green("+"))
            };
            (symbol, lines)
        }
        Action::Forget => (
            "  .".to_string(),
            vec![
                format!("{addr} will no longer be managed by cairn, but will not be destroyed"),
                "(destroy = false is set in the configuration)".to_string(),
            ],
        ),
        Action::NoOp => match (&change.importing, &change.moved_from) {
            (Some(_), _) => ("   ".to_string(), vec![format!("{addr} will be imported")]),
            (None, Some(from)) => ("   ".to_string(), vec![format!("{from} has moved to {addr}")]),
            (None, None) => ("   ".to_string(), vec![format!("{addr} has no changes")]),
        },
    };
    if change.action != Action::NoOp {
        if let Some(id) = &change.importing {
            lines.push(format!("(imported from {})", crate::value::quote(id)));
        }
        if let Some(from) = &change.moved_from {
            lines.push(format!("(moved from {from})"));
        }
    } else if let (Some(_), Some(from)) = (&change.importing, &change.moved_from) {
        lines.push(format!("(moved from {from})"));
    }
    (symbol, lines)
}

/// `~ resource "local_file" "a" {`.
fn resource_header(symbol: &str, addr: &crate::addr::InstanceAddr) -> String {
    let kind = if addr.resource.mode == crate::addr::Mode::Data { "data" } else { "resource" };
    format!("{symbol} {kind} \"{}\" \"{}\" {{\n", addr.resource.type_name, addr.label())
}

/// One resource's block of the plan.
pub fn render_change(change: &ResourceChange, schema: Option<&Schema>, colors: Colors) -> String {
    let (symbol, lines) = headline(change, colors);
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        let line = if i == 0 { colors.bold(&format!("# {line}")) } else { format!("# {line}") };
        let _ = writeln!(out, "  {line}");
    }
    out.push_str(&resource_header(&symbol, &change.addr));
    let empty = Block::default();
    let block = schema.map_or(&empty, |s| &s.block);
    let forcing = match &change.replace_reason {
        Some(ReplaceReason::RequiresReplace(paths)) => paths.clone(),
        _ => Vec::new(),
    };
    let ctx = DiffContext { block, forcing: &forcing, marks: &change.sensitive, colors };
    let (before, after) = match change.action {
        Action::Create | Action::Read => (Value::Null, change.planned.clone()),
        Action::Delete => (change.prior.clone(), Value::Null),
        Action::Forget => (change.prior.clone(), change.prior.clone()),
        _ => (change.prior.clone(), change.planned.clone()),
    };
    out.push_str(&ctx.object_lines(&before, &after, &Path::root(), 6));
    out.push_str("    }\n");
    out
}

struct DiffContext<'a> {
    block: &'a Block,
    forcing: &'a [Path],
    /// Paths the provider marked sensitive.
    marks: &'a [Path],
    colors: Colors,
}

impl DiffContext<'_> {
    /// Lines for the attributes of an object, aligned, unchanged ones counted.
    fn object_lines(&self, before: &Value, after: &Value, path: &Path, indent: usize) -> String {
        let mut names: Vec<&String> = attr_names(before).into_iter().chain(attr_names(after)).collect();
        names.sort();
        names.dedup();
        let (shown, unchanged): (Vec<&String>, Vec<&String>) = names.into_iter().partition(|n| {
            let (b, a) = (before.get_attr(n), after.get_attr(n));
            b != a || (before.is_null() && !a.is_null()) || (after.is_null() && !b.is_null())
        });
        let width = shown.iter().map(|n| quote_key(n).len()).max().unwrap_or(0);
        let mut out = String::new();
        let is_map = matches!(before, Value::Map(_)) || matches!(after, Value::Map(_));
        for name in &shown {
            let p = if is_map { path.key(name) } else { path.attr(name) };
            out.push_str(&self.line(&quote_key(name), width, before.get_attr(name), after.get_attr(name), &p, indent));
        }
        let hidden = unchanged.iter().filter(|n| !before.get_attr(n).is_null()).count();
        if hidden > 0 && !before.is_null() && !after.is_null() {
            let s = if hidden == 1 { "" } else { "s" };
            let _ = writeln!(out, "{}# ({hidden} unchanged attribute{s} hidden)", " ".repeat(indent + 2));
        }
        out
    }

    /// One attribute (or map element) line, recursing into maps and objects.
    fn line(&self, name: &str, width: usize, before: &Value, after: &Value, path: &Path, indent: usize) -> String {
        let pad = " ".repeat(indent);
        let name = format!("{name:width$}");
        let forces = if self.forcing.contains(path) { " # forces replacement" } else { "" };
        let sensitive = self.is_sensitive(path);
        let show = |v: &Value| self.show(v, path, indent);
        let c = self.colors;
        if before.is_null() {
            return format!("{pad}{} {name} = {}{forces}\n", c.green("+"), show(after));
        }
        if after.is_null() {
            return format!("{pad}{} {name} = {} -> null{forces}\n", c.red("-"), show(before));
        }
        let nested = matches!((before, after), (Value::Map(_) | Value::Object(_), Value::Map(_) | Value::Object(_)));
        if nested && !sensitive {
            let inner = self.object_lines(before, after, path, indent + 4);
            return format!("{pad}{} {name} = {{{forces}\n{inner}{pad}  }}\n", c.yellow("~"));
        }
        format!("{pad}{} {name} = {} -> {}{forces}\n", c.yellow("~"), show(before), show(after))
    }

    /// Whether the value at `path` is sensitive: by the schema or a mark.
    fn is_sensitive(&self, path: &Path) -> bool {
        self.block.is_sensitive(path) || self.marks.iter().any(|m| path.starts_with(m))
    }

    /// The value at `path`, its sensitive parts (or all of it) redacted.
    fn show(&self, v: &Value, path: &Path, indent: usize) -> String {
        match v {
            Value::String(s) if s.contains('\n') && !self.is_sensitive(path) => heredoc(s, indent),
            _ => v.to_hcl_redacted(&|p: &Path| self.is_sensitive(&path.join(p))),
        }
    }
}

fn attr_names(v: &Value) -> Vec<&String> {
    match v {
        Value::Object(m) | Value::Map(m) => m.keys().collect(),
        _ => Vec::new(),
    }
}

/// A multi-line string the way Terraform shows one.
fn heredoc(s: &str, indent: usize) -> String {
    let pad = " ".repeat(indent + 4);
    let mut out = String::from("<<-EOT\n");
    for line in s.lines() {
        let _ = writeln!(out, "{pad}{line}");
    }
    let _ = write!(out, "{}EOT", " ".repeat(indent + 2));
    out
}

/// The value of an output or state attribute for display.
pub fn show_value(v: &Value, sensitive: bool) -> String {
    if sensitive { "(sensitive value)".to_string() } else { v.to_hcl() }
}

/// The value at `path` of a stored object for display, every part that
/// `sensitive` says is sensitive (by the schema or a mark) redacted.
pub fn show_redacted(v: &Value, path: &Path, sensitive: &dyn Fn(&Path) -> bool) -> String {
    v.to_hcl_redacted(&|p: &Path| sensitive(&path.join(p)))
}
