//! Configuration: the `*.tf` files of one directory, read into resources,
//! data sources, providers, variables, locals and outputs, with expressions
//! kept as syntax trees that carry their file and line.
//!
//! This module owns everything between the text a user writes and the values
//! the planner works with:
//!
//! - [`load`] reads and parses every `*.tf` file (sorted by name) with
//!   `hcl-edit`, interprets the top-level blocks and checks that every
//!   reference names something declared. Each problem is a [`Diagnostic`]
//!   with `file:line`.
//! - [`eval`] evaluates an [`Expression`] in an [`EvalContext`] (variables,
//!   locals, resource values, `count.index`, `each`), with unknown values
//!   propagating through every operator and function.
//! - [`decode_body`] turns a resource or provider body into the object value
//!   its schema describes (the planner's "config" artifact).
//! - [`resolve_variables`] decides the value of every input variable from
//!   `-var`, `CAIRN_VAR_<name>` and defaults.
//!
//! Nothing here touches wasmtime. The file system is read only by [`load`] and
//! by the `file` family of functions, which never look outside the
//! configuration directory.

mod access;
mod backend;
mod blocks;
mod check;
mod checks;
mod conditions;
mod decode;
pub mod ephemeral;
mod eval;
mod expr;
mod functions;
mod instances;
mod load;
pub mod marks;
mod module;
mod ops;
mod parse;
mod provider;
mod refactor;
mod resource;
mod schema_refs;
mod source;
mod suggest;
mod test_file;
mod var_files;
mod variables;
mod workspace;

#[cfg(test)]
mod testutil;

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::addr::ResourceAddr;
use crate::diag::{Diagnostic, Location};
use crate::runtime::Sandbox;
use crate::value::{Path, PathStep, Type, Value};

pub use backend::{BACKEND_TYPES, BackendBlock, BackendKind};
pub use check::check_expression_references;
pub use checks::Check;
pub use conditions::{
    Condition, ConditionKind, Verdict, check_all as check_conditions, evaluate as evaluate_condition,
};
pub use decode::decode_body;
pub use ephemeral::Ephemerality;
pub use eval::{EvalContext, eval, eval_within};
pub use expr::{BinaryOp, ExprKind, Expression, ForExpr, Reference, Step, TemplatePart, UnaryOp};
pub use functions::Phase;
pub use instances::{Instance, instances};
pub use load::config_files;
pub use load::load;
pub use marks::{Sensitivity, body_marks, conform, is_marked, marks, object_marks};
pub use module::{
    DeferredCall, Expanded, ModuleCall, Pinned, ProviderPass, expand_modules, has_repeated_calls, module_files,
    override_call,
};
pub use parse::parse_expression;
pub use provider::{TERRAFORM_VERSION, parse_constraint};
pub use refactor::{Import, ImportForEach, MoveAddr, Moved, Removed, expand_imports};
pub use schema_refs::check_attribute_references;
pub use test_file::{
    MockProvider, MockType, ModuleOverride, Override, OverrideDuring, TestCommand, TestFile, TestPlanOptions, TestRun,
    address_text, load_test_file,
};
pub use var_files::automatic_files as automatic_var_files;
pub use variables::{
    ModuleValidation, ResolvedVariables, VariableInput, check_deferred_validation, check_module_validation,
    given_names, given_values, parse_type, resolve_variables, unset_required,
};
pub use workspace::{
    DEFAULT_WORKSPACE, SELECTION_FILE as WORKSPACE_SELECTION_FILE, WORKSPACE_VARIABLES, check_workspace_name,
    current_workspace,
};

/// A whole configuration: every block of every `*.tf` file in a directory.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// The configuration directory (absolute).
    pub dir: PathBuf,
    /// `resource` and `data` blocks, in file order.
    pub resources: Vec<Resource>,
    /// `provider "name" { … }` blocks.
    pub providers: Vec<ProviderConfig>,
    /// Where each provider comes from, by name, from
    /// `terraform { required_providers { … } }` (or the same in `cairn { … }`).
    pub required_providers: BTreeMap<String, ProviderRequirement>,
    /// `trusted_keys` of the `terraform`/`cairn` block: when any are given,
    /// every provider that is not bundled must be signed by one of them.
    pub trusted_keys: Vec<TrustedKey>,
    /// The `backend` block of the `terraform`/`cairn` block: where the
    /// state is kept; `None` for the local file beside the configuration.
    pub backend: Option<BackendBlock>,
    /// `variable` blocks by name.
    pub variables: BTreeMap<String, Variable>,
    /// Entries of `locals` blocks by name.
    pub locals: BTreeMap<String, Local>,
    /// `output` blocks by name.
    pub outputs: BTreeMap<String, Output>,
    /// `moved` blocks, in file order.
    pub moved: Vec<Moved>,
    /// `import` blocks, in file order.
    pub imports: Vec<Import>,
    /// `removed` blocks, in file order.
    pub removed: Vec<Removed>,
    /// `check` blocks, in file order.
    pub checks: Vec<Check>,
    /// `module` blocks, in file order: empty once [`expand_modules`] has
    /// put what they call into the configuration itself.
    pub modules: Vec<ModuleCall>,
    /// What is ephemeral, once modules are expanded (see [`ephemeral`]).
    pub ephemeral: std::sync::Arc<Ephemerality>,
    /// The validations of module variables that refer to other objects of
    /// their module, once modules are expanded ([`ModuleValidation`]).
    pub module_validations: Vec<ModuleValidation>,
}

impl Config {
    /// The resource or data block with this address.
    pub fn resource(&self, addr: &ResourceAddr) -> Option<&Resource> {
        self.resources.iter().find(|r| &r.addr == addr)
    }

    /// The `import` block adopting an object as `addr`, if there is one.
    pub fn import_of(&self, addr: &crate::addr::InstanceAddr) -> Option<&Import> {
        self.imports.iter().find(|i| &i.to == addr)
    }

    /// The `removed` block of a resource no longer declared, if any.
    pub fn removed_of(&self, addr: &ResourceAddr) -> Option<&Removed> {
        self.removed.iter().find(|r| &r.from == addr)
    }

    /// The `provider` block of this name, if the configuration has one.
    pub fn provider(&self, name: &str) -> Option<&ProviderConfig> {
        self.providers.iter().find(|p| p.name == name)
    }
}

/// How the local `name` is shown: `local.NAME`, or the name itself for
/// the locals that stand for a module instance's variables, locals,
/// outputs and calls (`module.a["x"].var.name`, see [`expand_modules`]).
pub fn local_address(name: &str) -> String {
    if module::is_scoped(name) { name.to_string() } else { format!("local.{name}") }
}

/// A `resource "type" "name"` or `data "type" "name"` block.
#[derive(Debug, Clone, PartialEq)]
pub struct Resource {
    /// Mode (managed for `resource`, data for `data`), type and name.
    pub addr: ResourceAddr,
    /// The provider that manages it: the meta-argument `provider = foo`, or
    /// else the type's prefix (`local_file` → `local`).
    pub provider: String,
    /// The block's contents without the meta-arguments below.
    pub body: Body,
    /// `depends_on = [random_id.x, data.local_file.t]`: always resources.
    pub depends_on: Vec<(Reference, Location)>,
    /// `count = …` (boxed, like `for_each` and `lifecycle`: most
    /// resources have none, and a configuration keeps every resource).
    pub count: Option<Box<Expression>>,
    /// `for_each = …`
    pub for_each: Option<Box<Expression>>,
    /// The `lifecycle { … }` block.
    pub lifecycle: Box<Lifecycle>,
    /// The block header.
    pub location: Location,
}

impl Resource {
    /// Every reference the resource makes, wherever it is written: its body,
    /// `count`, `for_each`, `depends_on`, `replace_triggered_by` and its
    /// conditions. These are the resource's dependencies in the graph.
    pub fn references(&self) -> Vec<(Reference, Location)> {
        let mut refs = self.body.references();
        let triggers = self.lifecycle.replace_triggered_by.iter().map(|t| &t.expr);
        for expr in self.count.as_deref().into_iter().chain(self.for_each.as_deref()).chain(triggers) {
            refs.extend(expr.references());
        }
        for c in &self.lifecycle.preconditions {
            refs.extend(c.references_within(&[]));
        }
        let bound = ConditionKind::ResourcePostcondition.bound_names();
        for c in &self.lifecycle.postconditions {
            refs.extend(c.references_within(&bound));
        }
        refs.extend(self.depends_on.iter().cloned());
        refs
    }
}

/// The `lifecycle { … }` block of a resource.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Lifecycle {
    /// Create the replacement before destroying the old object.
    pub create_before_destroy: bool,
    /// Refuse any plan that would destroy the object.
    pub prevent_destroy: bool,
    /// Attributes whose configuration changes are ignored, e.g.
    /// `[content, tags["a"]]`. `ignore_changes = all` is the root path
    /// ([`Path::root`]), which every attribute path starts with.
    pub ignore_changes: Vec<Path>,
    /// `replace_triggered_by = [random_id.x, local_file.y.content]`.
    pub replace_triggered_by: Vec<ReplaceTrigger>,
    /// `precondition { … }` blocks: checked before each instance is planned
    /// (and again before it is applied or read).
    pub preconditions: Vec<Condition>,
    /// `postcondition { … }` blocks: checked with `self` the planned object,
    /// and after apply (or a read) with `self` the new object.
    pub postconditions: Vec<Condition>,
    /// The `lifecycle` block, when there is one.
    pub location: Option<Location>,
}

/// One element of `replace_triggered_by`: a managed resource, or one of
/// its instances, and optionally an attribute of it. The object is
/// replaced when that resource (instance) is planned to be updated or
/// replaced or, for an attribute, when that attribute changes.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplaceTrigger {
    /// The resource referred to.
    pub resource: ResourceAddr,
    /// The instance key, when one is given: a literal, or an expression of
    /// `count.index`, `each.key` or `each.value`.
    pub key: Option<Expression>,
    /// The attribute after the resource (instance), if any; the root path
    /// when the reference is to the whole object.
    pub path: Path,
    /// The element as written.
    pub expr: Expression,
}

/// A `provider "name" { … }` block.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderConfig {
    /// The provider's local name.
    pub name: String,
    /// The provider's own configuration, without `sandbox` and meta-arguments.
    pub body: Body,
    /// What the `sandbox { … }` block grants, checked as it was read:
    /// directories resolved against the configuration directory (read-only
    /// ones exist), environment variables with cairn's values, budgets
    /// within their ceilings. Without the block, nothing is granted. The
    /// values are literals, so an operator can audit the grants by reading
    /// the file; only the headers of `http` grants are expressions
    /// ([`ProviderConfig::http_headers`]).
    pub sandbox: Sandbox,
    /// The `headers` of the sandbox's `http` grants: evaluated when the
    /// provider starts, since they usually come from (secret) variables.
    pub http_headers: Vec<HttpHeaders>,
    /// The block header.
    pub location: Location,
}

/// The `headers = { … }` of one `http { … }` grant of a sandbox.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpHeaders {
    /// Which of the sandbox's `http` grants they are for (an index).
    pub grant: usize,
    /// A map of header names to values the host adds to every request to
    /// the grant's origin.
    pub expr: Expression,
}

/// Where a provider comes from: an entry of `required_providers`,
/// `name = { source = "…", version = "~> 1.2" }`.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderRequirement {
    /// A path to a `.wasm` file, a directory of providers (ending in `/`),
    /// or `oci://HOST/REPOSITORY:TAG` (or `@sha256:…`); `None` searches the
    /// providers path (`CAIRN_PROVIDERS_PATH`, then the per-user directory).
    pub source: Option<String>,
    /// The version constraint, if any, as a semver requirement (Terraform's
    /// `~> 1.2` already translated).
    pub version: Option<semver::VersionReq>,
    /// The constraint as written, for messages.
    pub version_text: Option<String>,
    /// The entry in `required_providers`.
    pub location: Location,
}

/// A public key in `trusted_keys` (minisign's base64 form, `RW…`).
#[derive(Debug, Clone, PartialEq)]
pub struct TrustedKey {
    /// The key as written.
    pub key: String,
    /// Where it is written.
    pub location: Location,
}

/// A `variable "name" { … }` block.
#[derive(Debug, Clone, PartialEq)]
pub struct Variable {
    /// The variable's name.
    pub name: String,
    /// `type = list(string)`; `None` accepts any value.
    pub ty: Option<Type>,
    /// The defaults of the type's `optional(T, default)` attributes, put
    /// where a value leaves them null.
    pub defaults: variables::Defaults,
    /// `default = …`, already converted to the type. `Some(Value::Null)`
    /// (`default = null`) makes the variable optional with a null value.
    pub default: Option<Value>,
    /// `description = "…"`
    pub description: String,
    /// `sensitive = true`: never displayed.
    pub sensitive: bool,
    /// `nullable = false` refuses null values (default true).
    pub nullable: bool,
    /// `ephemeral = true`: the value is never stored, in the state or a
    /// plan file (see [`ephemeral`]).
    pub ephemeral: bool,
    /// `validation { condition = …, error_message = … }` blocks.
    pub validations: Vec<Validation>,
    /// The block header.
    pub location: Location,
}

/// A `validation` block of a variable.
#[derive(Debug, Clone, PartialEq)]
pub struct Validation {
    /// Must be true for the value to be accepted; refers only to the variable.
    pub condition: Expression,
    /// The message when it is not.
    pub error_message: Expression,
    /// The `validation` block.
    pub location: Location,
}

/// One entry of a `locals { … }` block.
#[derive(Debug, Clone, PartialEq)]
pub struct Local {
    /// The local value's name.
    pub name: String,
    /// Its expression.
    pub expr: Expression,
    /// The attribute.
    pub location: Location,
    /// For the local that stands for a module's input variable (see
    /// [`expand_modules`]): the variable, whose type, nullability and
    /// validations its value must meet.
    pub input: Option<Box<Variable>>,
    /// Resources it waits for besides those it refers to: a module
    /// output's `depends_on`.
    pub depends_on: Vec<(Reference, Location)>,
    /// For the local that stands for a module's output: the output's
    /// `precondition` blocks, checked whenever its value is.
    pub preconditions: Vec<Condition>,
    /// For the local that stands for a module's output: whether the
    /// output is declared `ephemeral = true`; `None` for other locals.
    pub output_ephemeral: Option<bool>,
}

impl Local {
    /// Every reference the local makes: its expression, `depends_on` and
    /// preconditions.
    pub fn references(&self) -> Vec<(Reference, Location)> {
        let mut refs = self.expr.references();
        refs.extend(self.depends_on.iter().cloned());
        refs.extend(self.preconditions.iter().flat_map(|c| c.references_within(&[])));
        refs
    }

    /// The local's value in `ctx`, once its preconditions hold (or cannot
    /// be decided yet).
    pub fn value(&self, ctx: &EvalContext) -> Result<Value, Vec<Diagnostic>> {
        check_output_preconditions(&self.preconditions, ctx)?;
        self.check(eval(&self.expr, ctx)?)
    }

    /// `value` as the local's value: for a module's input variable,
    /// converted to its type and checked by its validations.
    pub(crate) fn check(&self, value: Value) -> Result<Value, Vec<Diagnostic>> {
        match &self.input {
            Some(variable) => variables::check_input(variable, value),
            None => Ok(value),
        }
    }
}

/// An `output "name" { … }` block.
#[derive(Debug, Clone, PartialEq)]
pub struct Output {
    /// The output's name.
    pub name: String,
    /// `value = …`
    pub expr: Expression,
    /// `sensitive = true`: redacted in displays.
    pub sensitive: bool,
    /// `ephemeral = true`: only in a child module (see [`ephemeral`]).
    pub ephemeral: bool,
    /// `description = "…"`
    pub description: String,
    /// `depends_on = [...]`: always resources.
    pub depends_on: Vec<(Reference, Location)>,
    /// `precondition { … }` blocks, checked whenever the value is.
    pub preconditions: Vec<Condition>,
    /// The block header.
    pub location: Location,
}

impl Output {
    /// Every reference the output makes: its value, `depends_on` and
    /// preconditions.
    pub fn references(&self) -> Vec<(Reference, Location)> {
        let mut refs = self.expr.references();
        refs.extend(self.depends_on.iter().cloned());
        refs.extend(self.preconditions.iter().flat_map(|c| c.references_within(&[])));
        refs
    }

    /// The output's value in `ctx`, once its preconditions hold (or cannot
    /// be decided yet).
    pub fn value(&self, ctx: &EvalContext) -> Result<Value, Vec<Diagnostic>> {
        check_output_preconditions(&self.preconditions, ctx)?;
        eval(&self.expr, ctx)
    }
}

/// Checks an output's preconditions (see [`check_conditions`]).
fn check_output_preconditions(preconditions: &[Condition], ctx: &EvalContext) -> Result<(), Vec<Diagnostic>> {
    let errors = check_conditions(preconditions, ConditionKind::OutputPrecondition, ctx, &[]);
    if errors.is_empty() { Ok(()) } else { Err(errors) }
}

/// The contents of a block: attributes and nested blocks.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Body {
    /// `name = expression` lines, in file order.
    pub attributes: Vec<Attribute>,
    /// Nested blocks, in file order.
    pub blocks: Vec<Block>,
    /// The block this body belongs to (line 1 for a whole file).
    pub location: Location,
}

impl Body {
    /// Every reference made anywhere inside, nested blocks included.
    pub fn references(&self) -> Vec<(Reference, Location)> {
        self.checked_references(&[]).into_iter().filter_map(Result::ok).collect()
    }

    /// Every reference inside, or the diagnostic for a traversal that is
    /// not one; the names `bound` (iterators of enclosing `dynamic` blocks)
    /// are not references.
    pub(crate) fn checked_references(&self, bound: &[String]) -> Vec<Result<(Reference, Location), Diagnostic>> {
        let mut refs = Vec::new();
        for attr in &self.attributes {
            refs.extend(attr.expr.checked_references_within(bound));
        }
        for block in &self.blocks {
            refs.extend(block.body.checked_references(&block.bound_inside(bound)));
        }
        refs
    }

    /// [`Expression::visit_traversals`] for every expression inside,
    /// nested blocks included, with each `dynamic` block's iterator bound
    /// inside it.
    pub(crate) fn visit_traversals(&self, bound: &[String], f: &mut dyn FnMut(&str, &[Step], &Location)) {
        for attr in &self.attributes {
            attr.expr.visit_traversals(&mut bound.to_vec(), f);
        }
        for block in &self.blocks {
            block.body.visit_traversals(&block.bound_inside(bound), f);
        }
    }

    /// The attribute of this name.
    pub fn attribute(&self, name: &str) -> Option<&Attribute> {
        self.attributes.iter().find(|a| a.name == name)
    }

    /// Where in this body the value at `path` (of the block's object) is
    /// written, as Terraform points a provider's diagnostic about an
    /// attribute: an attribute's expression, or the header of the nested
    /// block it leads into (the `i`-th of its type for an index step),
    /// and inside that block the deepest step written there. `None` when
    /// the first step is not written here (a computed attribute, one left
    /// unset, or a `dynamic` block's).
    pub fn location_of(&self, path: &Path) -> Option<Location> {
        let (first, rest) = path.steps().split_first()?;
        let PathStep::Attr(name) = first else { return None };
        if let Some(attr) = self.attribute(name) {
            return Some(attr.expr.location.clone());
        }
        let mut blocks = self.blocks.iter().filter(|b| &b.type_name == name);
        let (block, inside) = match rest.split_first() {
            Some((PathStep::Index(i), inside)) => (blocks.nth(usize::try_from(*i).ok()?)?, inside),
            _ => (blocks.next()?, rest),
        };
        let inner = block.body.location_of(&Path::from_steps(inside.to_vec()));
        Some(inner.unwrap_or_else(|| block.location.clone()))
    }
}

/// `name = expression` in a body.
#[derive(Debug, Clone, PartialEq)]
pub struct Attribute {
    /// The name left of `=`.
    pub name: String,
    /// The expression right of `=`.
    pub expr: Expression,
    /// Where the name is.
    pub location: Location,
}

/// A nested block: `type "label" … { body }`.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    /// The block type (its first word).
    pub type_name: String,
    /// The labels after the type.
    pub labels: Vec<String>,
    /// What is inside the braces.
    pub body: Body,
    /// The block header.
    pub location: Location,
}

impl Block {
    /// The names bound inside this block's body: those bound around it,
    /// and for the `content` of a `dynamic` block its iterator.
    pub(crate) fn bound_inside(&self, around: &[String]) -> Vec<String> {
        let mut bound = around.to_vec();
        if let Some(iterator) = self.dynamic_iterator() {
            bound.push(iterator);
        }
        bound
    }

    /// The iterator name of a `dynamic "LABEL"` block: its `iterator`
    /// argument (a bare name), or else the label, as Terraform's.
    pub(crate) fn dynamic_iterator(&self) -> Option<String> {
        if self.type_name != "dynamic" {
            return None;
        }
        match self.body.attribute("iterator").map(|a| &a.expr.kind) {
            Some(ExprKind::Variable(name)) => Some(name.clone()),
            _ => self.labels.first().cloned(),
        }
    }
}

/// An error diagnostic at a place in the configuration: the shape of almost
/// every diagnostic this module makes.
fn error_at(summary: impl Into<String>, detail: impl Into<String>, location: &Location) -> Diagnostic {
    Diagnostic::error(summary).with_detail(detail).at(location)
}

#[cfg(test)]
mod location_tests {
    use super::testutil::load_main;
    use crate::value::Path;

    #[test]
    fn a_path_is_located_at_its_attribute_or_nested_block() {
        let (_dir, config) = load_main(
            "resource \"x_y\" \"a\" {\n  name = \"n\"\n  rule {\n    port = 80\n  }\n  rule {\n    port = 443\n  }\n  \
             rule {\n  }\n}\n",
        );
        let body = &config.resources[0].body;
        let line = |path: &Path| body.location_of(path).map(|l| (l.line, l.column));
        assert_eq!(line(&Path::root().attr("name")), Some((2, 10)), "the expression, as Terraform");
        assert_eq!(line(&Path::root().attr("rule").index(1).attr("port")), Some((7, 12)));
        assert_eq!(line(&Path::root().attr("rule").index(2).attr("port")), Some((9, 3)), "unset: the block");
        assert_eq!(line(&Path::root().attr("rule")), Some((3, 3)));
        assert_eq!(line(&Path::root().attr("id")), None, "not written: the caller keeps the block");
        assert_eq!(line(&Path::root()), None);
    }
}
