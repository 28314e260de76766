//! Human-readable plans as Terraform renders them: `+` create, `~` update,
//! `-/+` replace, `-` destroy, `<=` read, `(known after apply)`,
//! `(sensitive value)`; nested values over several lines with `=` aligned,
//! multi-line strings as heredocs with a line diff, the legend of actions,
//! coloured on a terminal. `tests/golden/plans/` holds Terraform's own text
//! for the same configurations.

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
        let _ = writeln!(
            out,
            "\n{} Your infrastructure matches the configuration.\n\ncairn has compared your real infrastructure \
             against your configuration\nand found no differences, so no changes are needed.",
            colors.green("No changes.")
        );
        return out;
    }
    let mut visible: Vec<&ResourceChange> = plan.changes.iter().filter(|c| is_shown(c)).collect();
    // In address order, as Terraform lists them (the order planned in
    // depends on the graph).
    visible.sort_by(|a, b| a.addr.cmp(&b.addr));
    if !visible.is_empty() {
        out.push_str(&legend(&visible, colors));
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
    if !visible.is_empty() {
        let _ = writeln!(out, "{} {}", colors.bold("Plan:"), summary_line(&plan.summary()));
    }
    out.push_str(&render_output_changes(plan, colors));
    if visible.is_empty() {
        out.push_str(
            "\nYou can apply this plan to save these new output values to the cairn\nstate, without changing any \
             real infrastructure.\n",
        );
    }
    out
}

/// Terraform's legend: what each symbol in the plan means, for the
/// actions the plan has, in Terraform's order.
fn legend(changes: &[&ResourceChange], colors: Colors) -> String {
    let has = |action: Action, cbd: bool| {
        changes.iter().any(|c| c.action == action && (action != Action::Replace || c.create_before_destroy == cbd))
    };
    let mut out = String::from(
        "\ncairn used the selected providers to generate the following execution\nplan. Resource actions are \
         indicated with the following symbols:\n",
    );
    let symbols = [
        (has(Action::Create, false), format!("  {} create", colors.green("+"))),
        (has(Action::Update, false), format!("  {} update in-place", colors.yellow("~"))),
        (has(Action::Delete, false), format!("  {} destroy", colors.red("-"))),
        (
            has(Action::Replace, false),
            format!("{}/{} destroy and then create replacement", colors.red("-"), colors.green("+")),
        ),
        (
            has(Action::Replace, true),
            format!("{}/{} create replacement and then destroy", colors.green("+"), colors.red("-")),
        ),
        (has(Action::Read, false), format!(" {} read (data resources)", colors.cyan("<="))),
        (has(Action::Forget, false), "  . forget".to_string()),
    ];
    for (_, line) in symbols.iter().filter(|(present, _)| *present) {
        let _ = writeln!(out, "{line}");
    }
    out.push('\n');
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
        "\n{}\n\ncairn detected the following changes made outside of cairn since the last \"cairn apply\"{}:\n\n",
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
        out.push_str(&ctx.object_lines(&drift.prior, &drift.current, &Path::root(), 1));
        out.push_str("    }\n\n");
    }
    out
}

fn schema_of<'a>(schemas: &'a Schemas, change: &ResourceChange) -> Option<&'a Schema> {
    schemas.get(&change.provider)?.of(&change.addr.resource)
}

/// `Changes to Outputs:` as Terraform shows them: one line (or nested
/// block) an output changed, the `=` of all of them aligned.
fn render_output_changes(plan: &Plan, colors: Colors) -> String {
    let names = plan.outputs.keys().chain(&plan.removed_outputs);
    let width = names.map(|n| quote_key(n).len()).max().unwrap_or(0);
    let empty = Block::default();
    let mut lines = Vec::new();
    for (name, o) in &plan.outputs {
        let before = o.prior.as_ref();
        if before == Some(&o.value) {
            continue;
        }
        // A sensitive output is sensitive as a whole.
        let marks = if o.sensitive { vec![Path::root()] } else { Vec::new() };
        let ctx = DiffContext { block: &empty, forcing: &[], marks: &marks, colors };
        let act = Act::of(Some(before.unwrap_or(&Value::Null)), Some(&o.value));
        let opts = Opts { dynamic: true, ..Opts::default() };
        let text = ctx.value(Some(before.unwrap_or(&Value::Null)), Some(&o.value), &Path::root(), 0, opts);
        lines.push(format!("  {}{:width$} = {text}", ctx.symbol(act), quote_key(name)));
    }
    for name in &plan.removed_outputs {
        let Some(o) = plan.removed_output_values.get(name) else {
            // A plan saved before the values were kept: only the name.
            lines.push(format!("  {} {name}", colors.red("-")));
            continue;
        };
        let marks = if o.sensitive { vec![Path::root()] } else { Vec::new() };
        let ctx = DiffContext { block: &empty, forcing: &[], marks: &marks, colors };
        let before = o.prior.as_ref().unwrap_or(&Value::Null);
        let opts = Opts { dynamic: true, ..Opts::default() };
        let text = ctx.value(Some(before), Some(&Value::Null), &Path::root(), 0, opts);
        lines.push(format!("  {}{:width$} = {text}", ctx.symbol(Act::Delete), quote_key(name)));
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
            None => {
                let mut lines = vec![format!("{addr} will be destroyed")];
                lines.extend(delete_because(change));
                (colors.red("  -"), lines)
            }
        },
        Action::Read => {
            let mut lines = vec![format!("{addr} will be read during apply")];
            match change.replace_reason {
                Some(ReplaceReason::ReadConfigUnknown) => lines.push("(config refers to values not yet known)".into()),
                Some(ReplaceReason::ReadDependencyPending) => {
                    lines.push("(depends on a resource or a module with changes pending)".into())
                }
                _ => {}
            }
            (colors.cyan(" <="), lines)
        }
        Action::Replace => {
            let why = match &change.replace_reason {
                Some(ReplaceReason::Tainted) => "is tainted, so must be replaced",
                Some(ReplaceReason::Destroying) => "is being destroyed (its delete failed), so must be replaced",
                Some(ReplaceReason::Requested) => "will be replaced, as requested",
                Some(ReplaceReason::Triggered(_)) => "will be replaced due to changes in replace_triggered_by",
                _ => "must be replaced",
            };
            // The symbol (`+/-`) says which goes first, as in Terraform.
            let mut lines = vec![format!("{addr} {why}")];
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

/// The `(because ...)` line Terraform writes under a destroyed object's
/// heading, saying why the configuration no longer has it.
fn delete_because(change: &ResourceChange) -> Option<String> {
    let addr = &change.addr;
    let key = || addr.key.as_ref().map(ToString::to_string).unwrap_or_default();
    Some(match change.replace_reason.as_ref()? {
        ReplaceReason::DeleteNoResourceConfig => {
            let r = &addr.resource;
            let data = if r.mode == crate::addr::Mode::Data { "data." } else { "" };
            format!("(because {data}{}.{} is not in configuration)", r.type_name, r.name)
        }
        ReplaceReason::DeleteNoModule(module) => format!("(because {module} is not in configuration)"),
        ReplaceReason::DeleteCountIndex => format!("(because index {} is out of range for count)", key()),
        ReplaceReason::DeleteEachKey => format!("(because key {} is not in for_each map)", key()),
        ReplaceReason::DeleteWrongRepetition => match addr.key {
            Some(crate::addr::InstanceKey::Int(_)) => "(because resource does not use count)".to_string(),
            Some(crate::addr::InstanceKey::String(_)) => "(because resource does not use for_each)".to_string(),
            None => "(because resource uses count or for_each)".to_string(),
        },
        _ => return None,
    })
}

/// `~ resource "local_file" "a" {`: the resource's name as written, without
/// an instance's key (the comment above it has the whole address).
fn resource_header(symbol: &str, addr: &crate::addr::InstanceAddr) -> String {
    let kind = if addr.resource.mode == crate::addr::Mode::Data { "data" } else { "resource" };
    format!("{symbol} {kind} \"{}\" \"{}\" {{\n", addr.resource.type_name, addr.resource.name)
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
    out.push_str(&ctx.object_lines(&before, &after, &Path::root(), 1));
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

/// What one part of a change does, as its symbol says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Act {
    Create,
    Delete,
    Update,
    NoOp,
}

impl Act {
    /// The action of a part whose parent may have been created (`before`
    /// absent) or destroyed (`after` absent) as a whole.
    fn of(before: Option<&Value>, after: Option<&Value>) -> Act {
        match (before, after) {
            (None, _) => Act::Create,
            (_, None) => Act::Delete,
            (Some(b), Some(a)) if b == a => Act::NoOp,
            (Some(Value::Null), Some(_)) => Act::Create,
            (Some(_), Some(Value::Null)) => Act::Delete,
            _ => Act::Update,
        }
    }
}

/// How a value is rendered, as Terraform's renderer options.
#[derive(Debug, Clone, Copy, Default)]
struct Opts {
    /// Unchanged parts shown in full rather than counted (an identifying
    /// attribute, or a list element shown as context around a change).
    show_unchanged: bool,
    /// No ` -> null` after a deleted value: its container says it.
    no_null_suffix: bool,
    /// Inside an attribute of dynamic type: Terraform sees such values
    /// through JSON, so a map shows as an object (keys unquoted).
    dynamic: bool,
    /// No ` # forces replacement`: the caller writes it.
    no_forces: bool,
}

/// Attributes Terraform shows even when unchanged, to say which object it is.
fn is_identifying(name: &str) -> bool {
    matches!(name, "id" | "name" | "tags")
}

/// The indentation of a line at `depth` levels of nesting inside a change
/// (the change's own two spaces, then four a level), before its symbol.
fn indent(depth: usize) -> String {
    format!("  {}", "    ".repeat(depth))
}

fn plural(n: usize, what: &str) -> String {
    if n == 1 { format!("{n} unchanged {what}") } else { format!("{n} unchanged {what}s") }
}

impl DiffContext<'_> {
    /// The two-character symbol of a line: `+ `, `- `, `~ ` or blank.
    fn symbol(&self, act: Act) -> String {
        let c = self.colors;
        match act {
            Act::Create => format!("{} ", c.green("+")),
            Act::Delete => format!("{} ", c.red("-")),
            Act::Update => format!("{} ", c.yellow("~")),
            Act::NoOp => "  ".to_string(),
        }
    }

    /// The lines of a resource's attributes at `depth`: those null before
    /// and after left out, `=` aligned, unchanged ones counted but the
    /// identifying ones shown.
    fn object_lines(&self, before: &Value, after: &Value, path: &Path, depth: usize) -> String {
        let mut names: Vec<&String> = attr_names(before).into_iter().chain(attr_names(after)).collect();
        names.sort();
        names.dedup();
        names.retain(|n| !before.get_attr(n).is_null() || !after.get_attr(n).is_null());
        let width = names.iter().map(|n| quote_key(n).len()).max().unwrap_or(0);
        let mut out = String::new();
        let mut unchanged = 0;
        for name in names {
            let (b, a) = (before.get_attr(name), after.get_attr(name));
            let act = Act::of(Some(b), Some(a));
            if act == Act::NoOp && !is_identifying(name) {
                unchanged += 1;
                continue;
            }
            let dynamic = self.block.attributes.get(name).is_some_and(|a| a.ty == crate::value::Type::Dynamic);
            let opts = Opts { show_unchanged: act == Act::NoOp, dynamic, ..Opts::default() };
            let text = self.value(Some(b), Some(a), &path.attr(name), depth, opts);
            let _ = writeln!(out, "{}{}{:width$} = {text}", indent(depth), self.symbol(act), quote_key(name));
        }
        if unchanged > 0 {
            let _ = writeln!(out, "{}  # ({} hidden)", indent(depth), plural(unchanged, "attribute"));
        }
        out
    }

    /// Whether the value at `path` is sensitive: by the schema or a mark.
    fn is_sensitive(&self, path: &Path) -> bool {
        self.block.is_sensitive(path) || self.marks.iter().any(|m| path.starts_with(m))
    }

    /// ` # forces replacement` when the change at `path` forces it.
    fn forces(&self, path: &Path, opts: Opts) -> &'static str {
        if !opts.no_forces && self.forcing.contains(path) { " # forces replacement" } else { "" }
    }

    /// The text after `name = ` of a value at `depth` going from `before`
    /// to `after` (absent when its container is created or destroyed as a
    /// whole): nested values over several lines, as Terraform shows them.
    fn value(&self, before: Option<&Value>, after: Option<&Value>, path: &Path, depth: usize, opts: Opts) -> String {
        let act = Act::of(before, after);
        let null_suffix = if act == Act::Delete && !opts.no_null_suffix { " -> null" } else { "" };
        let forces = self.forces(path, opts);
        let concrete = |v: Option<&Value>| v.is_some_and(|v| !v.is_null() && !v.is_unknown());
        if self.is_sensitive(path) && (concrete(before) || concrete(after)) {
            return format!("(sensitive value){null_suffix}{forces}");
        }
        let (b, a) = (before.filter(|v| !v.is_null()), after.filter(|v| !v.is_null()));
        if let Some(Value::Unknown(_)) = a {
            return match b {
                None => format!("(known after apply){forces}"),
                Some(b) => {
                    let opts = Opts { no_null_suffix: true, no_forces: true, ..opts };
                    format!("{} -> (known after apply){forces}", self.value(Some(b), None, path, depth, opts))
                }
            };
        }
        match (b, a) {
            (Some(Value::Object(_) | Value::Map(_)) | None, Some(Value::Object(_) | Value::Map(_)) | None)
            | (
                Some(Value::List(_) | Value::Tuple(_) | Value::Set(_)) | None,
                Some(Value::List(_) | Value::Tuple(_) | Value::Set(_)) | None,
            ) if b.is_some() || a.is_some() => self.collection(before, after, b, a, path, depth, opts, act),
            (Some(b), Some(a)) if !same_kind(b, a) => {
                // A change of kind: the old value gone, the new one whole.
                let old =
                    self.value(Some(b), None, path, depth, Opts { no_null_suffix: true, no_forces: true, ..opts });
                let new = self.value(None, Some(a), path, depth, Opts { no_forces: true, ..opts });
                format!("{old} -> {new}{forces}")
            }
            _ => self.primitive(before, after, act, depth, null_suffix, forces),
        }
    }

    /// An object, map, list, tuple or set.
    #[allow(clippy::too_many_arguments)]
    fn collection(
        &self,
        before: Option<&Value>,
        after: Option<&Value>,
        b: Option<&Value>,
        a: Option<&Value>,
        path: &Path,
        depth: usize,
        opts: Opts,
        act: Act,
    ) -> String {
        // A whole collection created or destroyed: its parts are too.
        let before = if before.is_none_or(Value::is_null) { None } else { b };
        let after = if after.is_none_or(Value::is_null) { None } else { a };
        match b.or(a) {
            Some(Value::Object(_) | Value::Map(_)) => self.object(before, after, path, depth, opts, act),
            _ => self.list(before, after, path, depth, opts, act),
        }
    }

    /// `{`, one line an attribute or element, `}`.
    fn object(
        &self,
        before: Option<&Value>,
        after: Option<&Value>,
        path: &Path,
        depth: usize,
        opts: Opts,
        act: Act,
    ) -> String {
        let is_map = !opts.dynamic && matches!(before.or(after), Some(Value::Map(_)));
        let null_suffix = if act == Act::Delete && !opts.no_null_suffix { " -> null" } else { "" };
        let forces = self.forces(path, opts);
        let mut keys: Vec<&String> = before
            .map(attr_names)
            .unwrap_or_default()
            .into_iter()
            .chain(after.map(attr_names).unwrap_or_default())
            .collect();
        keys.sort();
        keys.dedup();
        if keys.is_empty() {
            return format!("{{}}{null_suffix}{forces}");
        }
        let shown_key = |k: &str| if is_map { crate::value::quote(k) } else { quote_key(k) };
        let width = keys.iter().map(|k| shown_key(k).len()).max().unwrap_or(0);
        // A map's elements say ` -> null` unless the map itself goes; an
        // object's never do.
        let child_opts = Opts { no_null_suffix: !is_map || act == Act::Delete, no_forces: false, ..opts };
        let mut out = format!("{{{forces}\n");
        let mut unchanged = 0;
        for key in keys {
            let (b, a) = (before.map(|v| v.get_attr(key)), after.map(|v| v.get_attr(key)));
            let (b, a) = (present(before, key).and(b), present(after, key).and(a));
            let child_act = Act::of(b, a);
            let identifying = !is_map && is_identifying(key);
            if child_act == Act::NoOp && !opts.show_unchanged && !identifying {
                unchanged += 1;
                continue;
            }
            let child_path = if is_map { path.key(key) } else { path.attr(key) };
            let opts = Opts { show_unchanged: opts.show_unchanged || identifying, ..child_opts };
            let text = self.value(b, a, &child_path, depth + 1, opts);
            let comma = if is_map && matches!(a.or(b), Some(Value::Object(_))) { "," } else { "" };
            let _ = writeln!(
                out,
                "{}{}{:width$} = {text}{comma}",
                indent(depth + 1),
                self.symbol(child_act),
                shown_key(key)
            );
        }
        if unchanged > 0 {
            let what = if is_map { "element" } else { "attribute" };
            let _ = writeln!(out, "{}  # ({} hidden)", indent(depth + 1), plural(unchanged, what));
        }
        let _ = write!(out, "{}  }}{null_suffix}", indent(depth));
        out
    }

    /// `[`, one line an element, `]`: elements matched by their longest
    /// common run, unchanged ones counted, and beside each change of a list
    /// the elements just before and after it as context.
    fn list(
        &self,
        before: Option<&Value>,
        after: Option<&Value>,
        path: &Path,
        depth: usize,
        opts: Opts,
        act: Act,
    ) -> String {
        let null_suffix = if act == Act::Delete && !opts.no_null_suffix { " -> null" } else { "" };
        let forces = self.forces(path, opts);
        let (b, a) = (elements(before), elements(after));
        if b.is_empty() && a.is_empty() {
            return format!("[]{null_suffix}{forces}");
        }
        let context = !matches!(before.or(after), Some(Value::Set(_)));
        let child_opts = Opts { no_null_suffix: true, no_forces: false, ..opts };
        let unchanged_opts = Opts { show_unchanged: true, ..child_opts };
        let mut out = format!("[{forces}\n");
        let pad = indent(depth + 1);
        let line = |out: &mut String, pair: (Option<usize>, Option<usize>), opts: Opts| {
            let (bv, av) = (pair.0.map(|i| &b[i]), pair.1.map(|i| &a[i]));
            let p = path.index(pair.1.or(pair.0).unwrap_or(0));
            let _ = writeln!(out, "{pad}{}{},", self.symbol(Act::of(bv, av)), self.value(bv, av, &p, depth + 1, opts));
        };
        let mut hidden: Vec<(Option<usize>, Option<usize>)> = Vec::new();
        let mut next_too = false;
        for pair in match_elements(b, a) {
            let act = Act::of(pair.0.map(|i| &b[i]), pair.1.map(|i| &a[i]));
            if act == Act::NoOp && !next_too && !opts.show_unchanged {
                hidden.push(pair);
                continue;
            }
            next_too = false;
            let mut element_opts = child_opts;
            if context {
                if hidden.len() > 1 {
                    let _ = writeln!(out, "{pad}  # ({} hidden)", plural(hidden.len() - 1, "element"));
                }
                if let Some(last) = hidden.last() {
                    line(&mut out, *last, unchanged_opts);
                }
                hidden.clear();
                if act == Act::NoOp {
                    element_opts = unchanged_opts;
                } else {
                    next_too = true;
                }
            }
            line(&mut out, pair, element_opts);
        }
        if !hidden.is_empty() {
            let _ = writeln!(out, "{pad}  # ({} hidden)", plural(hidden.len(), "element"));
        }
        let _ = write!(out, "{}  ]{null_suffix}", indent(depth));
        out
    }

    /// A number, bool, string or null; a multi-line string as a heredoc,
    /// with a line diff when it changes.
    fn primitive(
        &self,
        before: Option<&Value>,
        after: Option<&Value>,
        act: Act,
        depth: usize,
        null_suffix: &str,
        forces: &str,
    ) -> String {
        let (json_before, json_after) = (json_of(before), json_of(after));
        if json_before.is_some() || json_after.is_some() {
            return self.json_string(before, after, json_before, json_after, act, depth, null_suffix, forces);
        }
        let multiline = |v: Option<&Value>| matches!(v, Some(Value::String(s)) if s.contains('\n'));
        if multiline(before) || multiline(after) {
            return self.heredoc(before, after, act, depth, null_suffix, forces);
        }
        let show = |v: Option<&Value>| v.map_or_else(|| "null".to_string(), Value::to_hcl);
        match act {
            Act::Create => format!("{}{forces}", show(after)),
            Act::Delete => format!("{}{null_suffix}{forces}", show(before)),
            Act::NoOp => format!("{}{forces}", show(before)),
            Act::Update => format!("{} -> {}{forces}", show(before), show(after)),
        }
    }

    /// A string holding JSON as Terraform shows one: `jsonencode(`, the
    /// decoded value's diff over several lines, `)`. A change that is only
    /// of whitespace says so; a string that becomes JSON, or stops being
    /// JSON, shows the old value, `->`, and the new one.
    #[allow(clippy::too_many_arguments)]
    fn json_string(
        &self,
        before: Option<&Value>,
        after: Option<&Value>,
        json_before: Option<Value>,
        json_after: Option<Value>,
        act: Act,
        depth: usize,
        null_suffix: &str,
        forces: &str,
    ) -> String {
        if act == Act::Update && (json_before.is_none() || json_after.is_none()) {
            // One side is JSON, the other not: the old value gone, the new whole.
            let old = self.primitive(before, None, Act::Delete, depth, "", "");
            let new = self.primitive(None, after, Act::Create, depth, "", "");
            return format!("{old} -> {new}{forces}");
        }
        let (b, a) = match act {
            Act::Create => (None, json_after.as_ref()),
            Act::Delete => (json_before.as_ref(), None),
            _ => (json_before.as_ref(), json_after.as_ref()),
        };
        let whitespace_only = act == Act::Update && b == a;
        // Inside the JSON nothing is sensitive or forces replacement by
        // itself, and no part says ` -> null`: the string as a whole does.
        let inner = DiffContext { block: &Block::default(), forcing: &[], marks: &[], colors: self.colors };
        let opts = Opts { no_null_suffix: true, no_forces: true, show_unchanged: whitespace_only, dynamic: true };
        let rendered = inner.value(b, a, &Path::root(), depth + 1, opts);
        let (note, forces) = match (whitespace_only, forces.is_empty()) {
            (true, true) => (" # whitespace changes", ""),
            (true, false) => (" # whitespace changes force replacement", ""),
            (false, _) => ("", forces),
        };
        // The `+` or `-` of a whole create or delete is the attribute's; an
        // update's `~` is the JSON's own.
        let inner_act = if act == Act::Update && !whitespace_only { Act::of(b, a) } else { Act::NoOp };
        if !rendered.contains('\n') {
            return format!("jsonencode({rendered}){note}{forces}");
        }
        format!(
            "jsonencode({note}\n{}{}{rendered}{forces}\n{}  ){null_suffix}",
            indent(depth + 1),
            self.symbol(inner_act),
            indent(depth)
        )
    }

    /// A multi-line string as Terraform shows one: `<<-EOT`, its lines, and
    /// in an update a `-` or `+` beside each line removed or added.
    fn heredoc(
        &self,
        before: Option<&Value>,
        after: Option<&Value>,
        act: Act,
        depth: usize,
        null_suffix: &str,
        forces: &str,
    ) -> String {
        let lines = |v: Option<&Value>| match v {
            Some(Value::String(s)) => text_lines(s),
            Some(Value::Null) | None => Vec::new(),
            Some(other) => vec![other.to_hcl()],
        };
        let (b, a) = (lines(before), lines(after));
        let pad = indent(depth + 1);
        let mut out = format!("<<-EOT{forces}\n");
        if act == Act::Update {
            for (i, j) in match_lines(&b, &a) {
                let (text, act) = match (i, j) {
                    (Some(i), Some(_)) => (&b[i], Act::NoOp),
                    (Some(i), None) => (&b[i], Act::Delete),
                    (None, Some(j)) => (&a[j], Act::Create),
                    (None, None) => continue,
                };
                let _ = writeln!(out, "{pad}{}{text}", self.symbol(act));
            }
        } else {
            for text in if act == Act::Delete { &b } else { &a } {
                let _ = writeln!(out, "{pad}  {text}");
            }
        }
        let _ = write!(out, "{}  EOT{null_suffix}", indent(depth));
        out
    }
}

/// The value a string holds when it is JSON of an object or an array, as
/// Terraform tells such strings (starting `{` or `[`) to show them
/// decoded.
fn json_of(v: Option<&Value>) -> Option<Value> {
    let Some(Value::String(s)) = v else { return None };
    if !s.starts_with('{') && !s.starts_with('[') {
        return None;
    }
    let json: serde_json::Value = serde_json::from_str(s).ok()?;
    Some(crate::value::from_json_untyped(&json))
}

/// The elements of a list, tuple or set; none of anything else.
fn elements(v: Option<&Value>) -> &[Value] {
    match v {
        Some(Value::List(e) | Value::Tuple(e) | Value::Set(e)) => e,
        _ => &[],
    }
}

/// Whether `key` is in the object or map `v`.
fn present<'v>(v: Option<&'v Value>, key: &str) -> Option<&'v Value> {
    match v {
        Some(Value::Object(m) | Value::Map(m)) if m.contains_key(key) => v,
        _ => None,
    }
}

/// Whether two values are of one kind: both collections of one shape, or
/// both primitives.
fn same_kind(b: &Value, a: &Value) -> bool {
    let kind = |v: &Value| match v {
        Value::Object(_) | Value::Map(_) => 1,
        Value::List(_) | Value::Tuple(_) | Value::Set(_) => 2,
        _ => 0,
    };
    kind(b) == kind(a)
}

/// The lines of a multi-line string, one final newline not making a line.
fn text_lines(s: &str) -> Vec<String> {
    s.strip_suffix('\n').unwrap_or(s).split('\n').map(str::to_string).collect()
}

/// The lines of two texts matched as a line diff: both indexes for a line
/// kept, one for a line removed or added.
fn match_lines(b: &[String], a: &[String]) -> Vec<(Option<usize>, Option<usize>)> {
    let common = longest_common(b, a);
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    for (ci, cj) in common {
        out.extend((i..ci).map(|i| (Some(i), None)));
        out.extend((j..cj).map(|j| (None, Some(j))));
        out.push((Some(ci), Some(cj)));
        (i, j) = (ci + 1, cj + 1);
    }
    out.extend((i..b.len()).map(|i| (Some(i), None)));
    out.extend((j..a.len()).map(|j| (None, Some(j))));
    out
}

/// The elements of two lists matched as Terraform matches them: along
/// their longest common run, and an element outside it paired with the
/// one at the same place on the other side (shown as `~`) while both
/// sides have such elements.
fn match_elements(b: &[Value], a: &[Value]) -> Vec<(Option<usize>, Option<usize>)> {
    let common = longest_common(b, a);
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    for next in common.into_iter().map(Some).chain([None]) {
        let (bi_end, aj_end) = next.unwrap_or((b.len(), a.len()));
        while i < bi_end {
            if j < aj_end {
                out.push((Some(i), Some(j)));
                j += 1;
            } else {
                out.push((Some(i), None));
            }
            i += 1;
        }
        out.extend((j..aj_end).map(|j| (None, Some(j))));
        j = aj_end;
        if next.is_some() {
            out.push((Some(i), Some(j)));
            (i, j) = (i + 1, j + 1);
        }
    }
    out
}

/// Beyond this many cells (lengths multiplied) the table of a longest
/// common subsequence would take too much memory for a plan (32 MiB here):
/// only a common start and end are matched then.
const MOST_CELLS: usize = 1 << 22;

/// The index pairs of a longest common subsequence of `b` and `a`; of their
/// common start and end only, for very long sequences.
fn longest_common<T: PartialEq>(b: &[T], a: &[T]) -> Vec<(usize, usize)> {
    let (n, m) = (b.len(), a.len());
    if n.saturating_mul(m) > MOST_CELLS {
        let start = b.iter().zip(a).take_while(|(x, y)| x == y).count();
        let end = b[start..].iter().rev().zip(a[start..].iter().rev()).take_while(|(x, y)| x == y).count();
        let head = (0..start).map(|i| (i, i));
        return head.chain((0..end).rev().map(|k| (n - 1 - k, m - 1 - k))).collect();
    }
    // lengths[i][j]: the longest common subsequence of b[i..] and a[j..].
    let mut lengths = vec![vec![0usize; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lengths[i][j] =
                if b[i] == a[j] { lengths[i + 1][j + 1] + 1 } else { lengths[i + 1][j].max(lengths[i][j + 1]) };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < n && j < m {
        if b[i] == a[j] {
            out.push((i, j));
            (i, j) = (i + 1, j + 1);
        } else if lengths[i + 1][j] >= lengths[i][j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

fn attr_names(v: &Value) -> Vec<&String> {
    match v {
        Value::Object(m) | Value::Map(m) => m.keys().collect(),
        _ => Vec::new(),
    }
}

/// The value of an output or state attribute for display.
pub fn show_value(v: &Value, sensitive: bool) -> String {
    if sensitive { "(sensitive value)".to_string() } else { v.to_hcl() }
}

/// An output after an apply, as Terraform prints it under `Outputs:`:
/// `<sensitive>`, or the value over several lines, collections one element
/// a line (lists with a comma after each), keys quoted, a multi-line
/// string as a heredoc.
pub fn output_value(v: &Value, sensitive: bool) -> String {
    if sensitive { "<sensitive>".to_string() } else { output_text(v, 0) }
}

/// [`output_value`]'s text of `v`, whose lines after the first are
/// indented by `depth` levels.
fn output_text(v: &Value, depth: usize) -> String {
    let pad = "  ".repeat(depth + 1);
    let close = "  ".repeat(depth);
    match v {
        Value::String(s) if s.contains('\n') => {
            let body = s.strip_suffix('\n').unwrap_or(s);
            format!("<<EOT\n{body}\nEOT")
        }
        Value::List(items) | Value::Set(items) | Value::Tuple(items) if !items.is_empty() => {
            let lines: String = items.iter().map(|i| format!("{pad}{},\n", output_text(i, depth + 1))).collect();
            format!("[\n{lines}{close}]")
        }
        Value::Map(m) | Value::Object(m) if !m.is_empty() => {
            let lines: String = m
                .iter()
                .map(|(k, i)| format!("{pad}{} = {}\n", crate::value::quote(k), output_text(i, depth + 1)))
                .collect();
            format!("{{\n{lines}{close}}}")
        }
        Value::List(_) | Value::Set(_) | Value::Tuple(_) => "[]".to_string(),
        Value::Map(_) | Value::Object(_) => "{}".to_string(),
        other => other.to_hcl(),
    }
}

/// The value at `path` of a stored object for display, every part that
/// `sensitive` says is sensitive (by the schema or a mark) redacted.
pub fn show_redacted(v: &Value, path: &Path, sensitive: &dyn Fn(&Path) -> bool) -> String {
    v.to_hcl_redacted(&|p: &Path| sensitive(&path.join(p)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_read_as_terraform_prints_them_after_an_apply() {
        let v = Value::object([
            ("k", Value::string("v")),
            ("longer", Value::List(vec![])),
            ("mid", Value::object([("x", Value::int(1)), ("yyyy", Value::List(vec![Value::int(1), Value::int(2)]))])),
        ]);
        assert_eq!(
            output_value(&v, false),
            "{\n  \"k\" = \"v\"\n  \"longer\" = []\n  \"mid\" = {\n    \"x\" = 1\n    \"yyyy\" = [\n      1,\n      2,\n    ]\n  }\n}"
        );
        assert_eq!(output_value(&Value::string("multi\nline"), false), "<<EOT\nmulti\nline\nEOT");
        assert_eq!(output_value(&Value::string("x"), true), "<sensitive>");
        assert_eq!(output_value(&Value::object::<&str>([]), false), "{}");
    }
    use crate::value::Number;

    fn n(i: i64) -> Value {
        Value::Number(Number::Int(i))
    }

    fn ctx<'a>(block: &'a Block) -> DiffContext<'a> {
        DiffContext { block, forcing: &[], marks: &[], colors: Colors::new(false) }
    }

    #[test]
    fn list_elements_pair_outside_the_common_run() {
        // [1, 2, 3] -> [1, 30, 3]: 2 becomes 30 in its place.
        let pairs = match_elements(&[n(1), n(2), n(3)], &[n(1), n(30), n(3)]);
        assert_eq!(pairs, vec![(Some(0), Some(0)), (Some(1), Some(1)), (Some(2), Some(2))]);
        // [1, 2, 3] -> [1, 3]: 2 is removed.
        let pairs = match_elements(&[n(1), n(2), n(3)], &[n(1), n(3)]);
        assert_eq!(pairs, vec![(Some(0), Some(0)), (Some(1), None), (Some(2), Some(1))]);
        // [1] -> [0, 1]: 0 is added.
        let pairs = match_elements(&[n(1)], &[n(0), n(1)]);
        assert_eq!(pairs, vec![(None, Some(0)), (Some(0), Some(1))]);
    }

    #[test]
    fn very_long_sequences_match_their_common_start_and_end() {
        let b: Vec<u32> = (0..3000).collect();
        let mut a = b.clone();
        a[1500] = 99_999;
        let common = longest_common(&b, &a);
        assert_eq!(common.len(), 2999);
        assert!(common.iter().all(|&(i, j)| i == j && i != 1500));
    }

    #[test]
    fn a_changed_list_shows_its_neighbours_and_counts_the_rest() {
        let block = Block::default();
        let before = Value::List((1..=6).map(n).collect());
        let after = Value::List([1, 2, 30, 4, 5, 6].into_iter().map(n).collect());
        let text = ctx(&block).value(Some(&before), Some(&after), &Path::root(), 1, Opts::default());
        let expected = "[\n            # (1 unchanged element hidden)\n            2,\n          ~ 3 -> 30,\n            \
                        4,\n            # (2 unchanged elements hidden)\n        ]";
        assert_eq!(text, expected);
    }

    #[test]
    fn a_deleted_object_says_null_once_after_its_brace() {
        let block = Block::default();
        let object = Value::Object([("a".to_string(), n(1)), ("key x".to_string(), n(2))].into_iter().collect());
        let text = ctx(&block).value(Some(&object), Some(&Value::Null), &Path::root(), 1, Opts::default());
        assert_eq!(text, "{\n          - a       = 1\n          - \"key x\" = 2\n        } -> null");
    }

    #[test]
    fn map_keys_are_quoted_and_removed_elements_say_null() {
        let block = Block::default();
        let before = Value::Map([("a".to_string(), n(1)), ("b".to_string(), n(2))].into_iter().collect());
        let after = Value::Map([("a".to_string(), n(1))].into_iter().collect());
        let text = ctx(&block).value(Some(&before), Some(&after), &Path::root(), 0, Opts::default());
        assert_eq!(text, "{\n      - \"b\" = 2 -> null\n        # (1 unchanged element hidden)\n    }");
    }

    #[test]
    fn a_changed_multi_line_string_is_a_line_diff() {
        let block = Block::default();
        let before = Value::String("one\ntwo\nthree\n".to_string());
        let after = Value::String("one\n2\nthree\n".to_string());
        let text = ctx(&block).value(Some(&before), Some(&after), &Path::root(), 1, Opts::default());
        let expected = "<<-EOT\n            one\n          - two\n          + 2\n            three\n        EOT";
        assert_eq!(text, expected);
    }

    #[test]
    fn a_sensitive_value_is_redacted_whole_however_it_nests() {
        let marks = [Path::root().attr("pw")];
        let block = Block::default();
        let c = DiffContext { block: &block, forcing: &[], marks: &marks, colors: Colors::new(false) };
        let secret = Value::Object([("k".to_string(), Value::String("hunter2".to_string()))].into_iter().collect());
        let text = c.value(None, Some(&secret), &Path::root().attr("pw"), 1, Opts::default());
        assert_eq!(text, "(sensitive value)");
    }
}
