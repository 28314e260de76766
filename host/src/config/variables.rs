//! Input variables: `variable` blocks, type constraints, and deciding each
//! variable's value from `-var` and `-var-file` (in the order given),
//! `*.auto.tfvars`, `terraform.tfvars`, `CAIRN_VAR_<name>`, `TF_VAR_<name>`
//! and defaults (in that order of precedence), then checking it against its
//! type and validations. Reading variable files is `var_files`' business.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::diag::{Diagnostic, Location};
use crate::value::{Type, Value};

use super::blocks::{literal, literal_bool, literal_string, take_attribute, unsupported_argument, unsupported_block};
use super::expr::{ExprKind, Expression, Reference};
use super::{Block, Config, EvalContext, Validation, Variable, error_at, eval, parse_expression, suggest, var_files};

const VARIABLE_ARGUMENTS: &[&str] = &["type", "default", "description", "sensitive", "nullable", "ephemeral"];

/// The prefix of environment variables that set input variables.
const ENV_PREFIX: &str = "CAIRN_VAR_";

/// Terraform's prefix for the same, read too so that a Terraform user's
/// scripts work unchanged; `CAIRN_VAR_name` wins over `TF_VAR_name`.
const TF_ENV_PREFIX: &str = "TF_VAR_";

/// A variable from its block; `name` is its checked label.
pub(super) fn variable(name: String, block: Block, dir: &Path, diags: &mut Vec<Diagnostic>) -> Variable {
    let Block { mut body, location, .. } = block;
    // The type first, wherever it is written: the default is converted to it.
    let (ty, defaults) = match take_attribute(&mut body, "type").map(|a| parse_type_with_defaults(&a.expr)) {
        Some(Ok((ty, defaults))) => (Some(ty), defaults),
        Some(Err(d)) => {
            diags.push(d);
            (None, Defaults::None)
        }
        None => (None, Defaults::None),
    };
    let mut variable = Variable {
        name,
        ty,
        defaults,
        default: None,
        description: String::new(),
        sensitive: false,
        nullable: true,
        ephemeral: false,
        validations: Vec::new(),
        location,
    };
    let mut default_location = None;
    for attr in &body.attributes {
        match attr.name.as_str() {
            "default" => {
                default_location = Some(attr.location.clone());
                variable.default = default_value(&variable, &attr.expr, dir, diags);
            }
            "description" => variable.description = literal_string(attr, dir, diags).unwrap_or_default(),
            "sensitive" => variable.sensitive = literal_bool(attr, dir, diags),
            "nullable" => variable.nullable = literal_bool(attr, dir, diags),
            "ephemeral" => variable.ephemeral = literal_bool(attr, dir, diags),
            _ => diags.push(unsupported_argument(attr, "variable", VARIABLE_ARGUMENTS)),
        }
    }
    if let (Some(Value::Null), false, Some(at)) = (&variable.default, variable.nullable, &default_location) {
        diags.push(error_at(
            "Invalid default value for variable",
            "A null default value is not valid when nullable = false.",
            at,
        ));
    }
    for nested in &body.blocks {
        match nested.type_name.as_str() {
            "validation" => {
                if let Some(v) = validation(&variable.name, nested, diags) {
                    variable.validations.push(v);
                }
            }
            _ => diags.push(unsupported_block(nested, "variable", &["validation"])),
        }
    }
    variable
}

/// The default, literal and converted to the variable's type.
fn default_value(variable: &Variable, expr: &Expression, dir: &Path, diags: &mut Vec<Diagnostic>) -> Option<Value> {
    let value = literal(expr, dir, "default value").map_err(|d| diags.extend(d)).ok()?;
    let Some(ty) = &variable.ty else {
        return Some(value);
    };
    match ty.convert(&value) {
        Ok(v) => Some(variable.defaults.apply(v)),
        Err(e) => {
            diags.push(error_at(
                "Invalid default value for variable",
                format!(
                    "This default value is not compatible with the variable's type constraint {ty}: {}.",
                    e.message
                ),
                &expr.location,
            ));
            None
        }
    }
}

/// A `validation { condition = …, error_message = … }` block, whose
/// condition may refer to input variables: its own and others.
fn validation(name: &str, block: &Block, diags: &mut Vec<Diagnostic>) -> Option<Validation> {
    let mut required = |key: &str| {
        let found = block.body.attribute(key).map(|a| a.expr.clone());
        if found.is_none() {
            diags.push(error_at(
                "Missing required argument",
                format!("A validation block needs \"{key}\"."),
                &block.location,
            ));
        }
        found
    };
    let (condition, error_message) = (required("condition"), required("error_message"));
    for attr in &block.body.attributes {
        if !["condition", "error_message"].contains(&attr.name.as_str()) {
            diags.push(unsupported_argument(attr, "validation", &["condition", "error_message"]));
        }
    }
    let (condition, error_message) = (condition?, error_message?);
    for expr in [&condition, &error_message] {
        for (reference, location) in expr.references() {
            if !matches!(reference, Reference::Variable(_) | Reference::Local(_) | Reference::Resource(_)) {
                diags.push(error_at(
                    "Invalid reference in variable validation",
                    format!(
                        "The validation of variable \"{name}\" may refer to input variables, local values, \
                         resources and data sources, not to {reference}."
                    ),
                    &location,
                ));
            }
        }
    }
    Some(Validation { condition, error_message, location: block.location.clone() })
}

impl Validation {
    /// Whether the rule refers to a local value, a resource or a data
    /// source (Terraform 1.9): it is then checked once the plan has their
    /// values ([`check_deferred_validation`]), not when the variables are
    /// decided.
    pub fn refers_beyond_variables(&self) -> bool {
        [&self.condition, &self.error_message]
            .iter()
            .flat_map(|e| e.references())
            .any(|(r, _)| !matches!(r, Reference::Variable(_)))
    }
}

/// A validation rule of a module's input variable that refers to other
/// objects of its module (Terraform 1.9): another variable, a local value,
/// a resource or a data source. Once modules are expanded, the rule's
/// references name that module instance's objects in the flat
/// configuration (`var.min` is the local `module.m.var.min`), and the rule
/// is checked as the root module's deferred ones are: once the plan has
/// the values, and again after the apply when the plan could not decide.
#[derive(Debug, Clone, PartialEq)]
pub struct ModuleValidation {
    /// The variable as its module declares it, for the message.
    pub variable: Variable,
    /// The rule, its references rewritten for the flat configuration.
    pub rule: Validation,
    /// Whether its message would show a sensitive variable of the module:
    /// it is then hidden, as Terraform hides it.
    pub hides_message: bool,
    /// Where a failure is reported: the module call's argument giving the
    /// variable, as Terraform reports it (the rule, when the variable
    /// keeps its default).
    pub reported_at: Location,
}

impl Validation {
    /// Whether the rule refers to nothing but the variable `name` itself:
    /// a module checks such a rule when it takes its input; the others
    /// become [`ModuleValidation`]s.
    pub fn refers_only_to(&self, name: &str) -> bool {
        [&self.condition, &self.error_message]
            .iter()
            .flat_map(|e| e.references())
            .all(|(r, _)| r == Reference::Variable(name.to_string()))
    }
}

/// Checks a module variable's rule that refers to other objects of its
/// module, in `ctx` holding the values of the flat configuration's locals
/// and resources it refers to: its failure, or `None` when it holds or
/// cannot be decided yet (an unknown value).
pub fn check_module_validation(validation: &ModuleValidation, ctx: &EvalContext) -> Option<Diagnostic> {
    let mut diags = Vec::new();
    check_rule(&validation.variable, &validation.rule, ctx, &mut diags);
    let mut failure = diags.into_iter().next()?;
    if failure.summary == "Invalid value for variable" {
        if validation.hides_message {
            failure.detail = format!(
                "The error message included a sensitive value, so it will not be displayed.\n\nThis was checked by \
                 the validation rule of variable \"{}\" declared at {}.",
                validation.variable.name, validation.variable.location
            );
        }
        failure = failure.at(&validation.reported_at);
    }
    Some(failure)
}

/// Checks a rule that [refers beyond variables](Validation::refers_beyond_variables)
/// in `ctx`, which holds the values it refers to: its failure, as when the
/// variables are decided, or `None` when it holds or cannot be decided yet
/// (an unknown value: Terraform checks it again during apply).
pub fn check_deferred_validation(variable: &Variable, rule: &Validation, ctx: &EvalContext) -> Option<Diagnostic> {
    let mut diags = Vec::new();
    check_rule(variable, rule, ctx, &mut diags);
    diags.into_iter().next()
}

/// A type constraint: `string`, `number`, `bool`, `any`, `list(T)`,
/// `set(T)`, `map(T)`, `object({a = T, b = optional(T)})`, `tuple([T, …])`.
pub fn parse_type(expr: &Expression) -> Result<Type, Diagnostic> {
    parse_type_with_defaults(expr).map(|(ty, _)| ty)
}

/// The default values of a type's `optional(T, default)` object
/// attributes, shaped like the type: what [`Defaults::apply`] fills in.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Defaults {
    /// Nothing to fill in here.
    #[default]
    None,
    /// An object's attributes: each one's default (if it has one) and
    /// the defaults inside it.
    Object(BTreeMap<String, (Option<Value>, Defaults)>),
    /// The same defaults in every element of a list, set or map.
    Elements(Box<Defaults>),
    /// A tuple's elements, by position.
    Tuple(Vec<Defaults>),
}

impl Defaults {
    fn is_none(&self) -> bool {
        *self == Defaults::None
    }

    /// `value` (already of the type) with every null optional attribute
    /// that has a default set to it, at any depth, as Terraform does.
    pub fn apply(&self, value: Value) -> Value {
        match (self, value) {
            (Defaults::None, value) => value,
            (Defaults::Object(attrs), Value::Object(mut object)) => {
                for (name, (default, inner)) in attrs {
                    let mut v = object.remove(name).unwrap_or(Value::Null);
                    if let (true, Some(default)) = (v.is_null(), default) {
                        v = default.clone();
                    }
                    object.insert(name.clone(), inner.apply(v));
                }
                Value::Object(object)
            }
            (Defaults::Elements(inner), Value::List(items)) => {
                Value::List(items.into_iter().map(|v| inner.apply(v)).collect())
            }
            (Defaults::Elements(inner), Value::Set(items)) => {
                Value::set(items.into_iter().map(|v| inner.apply(v)).collect())
            }
            (Defaults::Elements(inner), Value::Map(m)) => {
                Value::Map(m.into_iter().map(|(k, v)| (k, inner.apply(v))).collect())
            }
            (Defaults::Tuple(each), Value::Tuple(items)) => Value::Tuple(
                items.into_iter().enumerate().map(|(i, v)| each.get(i).map_or(v.clone(), |d| d.apply(v))).collect(),
            ),
            // Null and unknown values have no attributes to fill in.
            (_, value) => value,
        }
    }
}

/// [`parse_type`], with the defaults of its `optional(T, default)`
/// attributes.
pub fn parse_type_with_defaults(expr: &Expression) -> Result<(Type, Defaults), Diagnostic> {
    let invalid = |detail: String| error_at("Invalid type specification", detail, &expr.location);
    let plain = |ty: Type| Ok((ty, Defaults::None));
    match &expr.kind {
        ExprKind::Variable(keyword) => match keyword.as_str() {
            "string" => plain(Type::String),
            "number" => plain(Type::Number),
            "bool" => plain(Type::Bool),
            "any" => plain(Type::Dynamic),
            other => Err(invalid(format!(
                "\"{other}\" is not a type. The primitive types are string, number and bool; any accepts every value.{}",
                suggest::did_you_mean(other, ["string", "number", "bool", "any"])
            ))),
        },
        ExprKind::Call { name, args, expand_final: false } => match (name.as_str(), args.as_slice()) {
            ("list" | "set" | "map", [element]) => {
                let (element, defaults) = parse_type_with_defaults(element)?;
                let defaults = if defaults.is_none() { Defaults::None } else { Defaults::Elements(Box::new(defaults)) };
                let ty = match name.as_str() {
                    "list" => Type::List(Box::new(element)),
                    "set" => Type::Set(Box::new(element)),
                    _ => Type::Map(Box::new(element)),
                };
                Ok((ty, defaults))
            }
            ("object", [Expression { kind: ExprKind::Object(items), .. }]) => {
                let mut attributes = BTreeMap::new();
                let mut defaults = BTreeMap::new();
                for (key, value) in items {
                    let ExprKind::Literal(Value::String(key)) = &key.kind else {
                        return Err(invalid(
                            "Object type attribute names must be written as names, like object({ name = string })."
                                .into(),
                        ));
                    };
                    let (ty, default, inner) = object_attribute_type(value)?;
                    attributes.insert(key.clone(), ty);
                    if default.is_some() || !inner.is_none() {
                        defaults.insert(key.clone(), (default, inner));
                    }
                }
                let defaults = if defaults.is_empty() { Defaults::None } else { Defaults::Object(defaults) };
                Ok((Type::Object(attributes), defaults))
            }
            ("tuple", [Expression { kind: ExprKind::Tuple(items), .. }]) => {
                let parsed = items.iter().map(parse_type_with_defaults).collect::<Result<Vec<_>, _>>()?;
                let defaults = if parsed.iter().all(|(_, d)| d.is_none()) {
                    Defaults::None
                } else {
                    Defaults::Tuple(parsed.iter().map(|(_, d)| d.clone()).collect())
                };
                Ok((Type::Tuple(parsed.into_iter().map(|(t, _)| t).collect()), defaults))
            }
            ("list" | "set" | "map", _) => {
                Err(invalid(format!("{name}() takes one argument, the element type, like {name}(string).")))
            }
            ("object", _) => {
                Err(invalid("object() takes an object of attribute types, like object({ name = string }).".into()))
            }
            ("tuple", _) => Err(invalid("tuple() takes a list of element types, like tuple([string, number]).".into())),
            ("optional", _) => Err(invalid("optional() may be used only for the attributes of an object type.".into())),
            (other, _) => Err(invalid(format!(
                "{other}() is not a type constructor; those are list, set, map, object and tuple."
            ))),
        },
        ExprKind::Literal(Value::String(s)) => {
            Err(invalid(format!("Type names are written without quotes: {s}, not \"{s}\".")))
        }
        _ => Err(invalid(
            "A type is a keyword (string, number, bool, any) or a constructor call like list(string).".into(),
        )),
    }
}

/// An object attribute's type, its default (`optional(T, default)`,
/// converted to T) and the defaults inside it. `optional(T)` alone is T,
/// since a missing attribute converts to null anyway.
fn object_attribute_type(expr: &Expression) -> Result<(Type, Option<Value>, Defaults), Diagnostic> {
    let ExprKind::Call { name, args, .. } = &expr.kind else {
        let (ty, inner) = parse_type_with_defaults(expr)?;
        return Ok((ty, None, inner));
    };
    if name != "optional" {
        let (ty, inner) = parse_type_with_defaults(expr)?;
        return Ok((ty, None, inner));
    }
    let invalid = |detail: String| error_at("Invalid type specification", detail, &expr.location);
    match args.as_slice() {
        [ty] => {
            let (ty, inner) = parse_type_with_defaults(ty)?;
            Ok((ty, None, inner))
        }
        [ty, default] => {
            let (ty, inner) = parse_type_with_defaults(ty)?;
            // A constant: it is part of the type, known before anything else.
            let value = literal(default, Path::new("."), "default value of an optional attribute")
                .map_err(|mut d| d.remove(0))?;
            let value = ty.convert(&value).map_err(|e| {
                invalid(format!("The default value of this optional attribute is not a {ty}: {}.", e.message))
            })?;
            let value = inner.apply(value);
            Ok((ty, Some(value), inner))
        }
        _ => Err(invalid("optional() takes the attribute's type and, optionally, its default value.".into())),
    }
}

/// A value for input variables given on the command line. They apply in
/// the order given, a later one winning over an earlier one.
#[derive(Debug, Clone, PartialEq)]
pub enum VariableInput {
    /// `-var 'name=value'`.
    Var(String),
    /// `-var-file=FILE`: a `.tfvars` (or `.tfvars.json`) file.
    File(PathBuf),
    /// A value already evaluated for the variable `name`: a `cairn test`
    /// run's `variables`; `source` says where it was written, for
    /// messages. A name the configuration does not declare is passed over,
    /// as Terraform's test runner does: a test file's variables may be
    /// meant for other runs.
    Value {
        /// The variable's name.
        name: String,
        /// Its value.
        value: Value,
        /// Where it was given (`main.tftest.hcl:3:3`).
        source: String,
    },
}

impl From<&str> for VariableInput {
    /// A `-var` option.
    fn from(option: &str) -> VariableInput {
        VariableInput::Var(option.to_string())
    }
}

/// The value of every input variable, and what was read to decide them.
#[derive(Debug, Clone, Default)]
pub struct ResolvedVariables {
    /// The values, by name.
    pub values: BTreeMap<String, Value>,
    /// The variable files read: the automatic ones, then each
    /// `-var-file`, in the order they apply.
    pub files: Vec<PathBuf>,
    /// Values files gave for variables the configuration does not declare
    /// (a warning, as in Terraform: a shared file may serve several
    /// configurations).
    pub warnings: Vec<Diagnostic>,
}

/// Decides every variable's value, from lowest to highest precedence as
/// in Terraform: the default, the environment variable `TF_VAR_name`, then
/// `CAIRN_VAR_name`, `terraform.tfvars`, each `*.auto.tfvars` in name order, then `-var` and
/// `-var-file` in the order given (`inputs`). A value given as text
/// (`-var`, environment) is taken literally for a string variable (or one
/// without a type) and parsed as an HCL expression otherwise, so
/// `-var 'tags={a="b"}'` works; a file holds HCL values. Values are
/// converted to the declared type, and validations are checked. All
/// errors are returned.
pub fn resolve_variables(
    config: &Config,
    inputs: &[VariableInput],
    env: &[(String, String)],
) -> Result<ResolvedVariables, Vec<Diagnostic>> {
    let mut diags = Vec::new();
    let mut resolved = ResolvedVariables::default();
    let given = gather(config, inputs, env, &mut resolved, &mut diags);
    for (name, variable) in &config.variables {
        match resolve_one(variable, given.get(name.as_str())) {
            Ok(value) => {
                resolved.values.insert(name.clone(), value);
            }
            Err(d) => diags.push(d),
        }
    }
    // Every variable's value is there for the validations: one may compare
    // its variable with another (Terraform 1.9).
    let mut ctx = EvalContext::new(&config.dir);
    ctx.variables = resolved.values.clone();
    ctx.sensitivity.variables = config.variables.values().filter(|v| v.sensitive).map(|v| v.name.clone()).collect();
    for variable in config.variables.values() {
        // One whose variables have no value is not checked: why is reported.
        let all_known = validation_variables(variable).iter().all(|name| ctx.variables.contains_key(name));
        if all_known {
            validate(variable, &ctx, &mut diags);
        }
    }
    if diags.is_empty() { Ok(resolved) } else { Err(diags) }
}

/// The required variables (declared without a default) that nothing
/// gives a value: neither `inputs`, nor a variable file beside the
/// configuration, nor the environment. These are the ones a run on a
/// terminal asks for, in name order, before [`resolve_variables`] (which
/// reports any error in what is given).
pub fn unset_required<'a>(config: &'a Config, inputs: &[VariableInput], env: &[(String, String)]) -> Vec<&'a Variable> {
    let given = gather(config, inputs, env, &mut ResolvedVariables::default(), &mut Vec::new());
    config.variables.values().filter(|v| v.default.is_none() && !given.contains_key(v.name.as_str())).collect()
}

/// What every source gives, later sources replacing earlier ones; the
/// files read go into `resolved`, with their warnings.
fn gather<'a>(
    config: &'a Config,
    inputs: &[VariableInput],
    env: &[(String, String)],
    resolved: &mut ResolvedVariables,
    diags: &mut Vec<Diagnostic>,
) -> BTreeMap<&'a str, Given> {
    let mut given: BTreeMap<&str, Given> = BTreeMap::new();
    given_by_env(config, env, &mut given);
    for path in var_files::automatic_files(&config.dir) {
        let shown = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
        given_by_file(config, &path, &shown, &mut given, &mut resolved.warnings, diags);
        resolved.files.push(path);
    }
    given_by_inputs(config, inputs, &mut given, resolved, diags);
    given
}

/// The values that something other than a default gives the variables
/// of `config` (the environment, the variable files beside it, `inputs`),
/// each converted to its variable's type; one that does not convert is
/// left out (the run's own resolution reports it). Terraform's test runner
/// calls these the global variables: besides a test file's own, the only
/// ones its provider blocks may read.
pub fn given_values(config: &Config, inputs: &[VariableInput], env: &[(String, String)]) -> BTreeMap<String, Value> {
    let given = gather(config, inputs, env, &mut ResolvedVariables::default(), &mut Vec::new());
    given
        .into_iter()
        .filter_map(|(name, given)| {
            let value = resolve_one(config.variables.get(name)?, Some(&given)).ok()?;
            Some((name.to_string(), value))
        })
        .collect()
}

/// The names of the variables that `inputs` or `env` give a value (the
/// variable files beside the configuration aside): for a saved plan,
/// which may be given only its ephemeral variables again.
pub fn given_names(config: &Config, inputs: &[VariableInput], env: &[(String, String)]) -> BTreeSet<String> {
    let mut given: BTreeMap<&str, Given> = BTreeMap::new();
    given_by_env(config, env, &mut given);
    given_by_inputs(config, inputs, &mut given, &mut ResolvedVariables::default(), &mut Vec::new());
    given.keys().map(|name| name.to_string()).collect()
}

/// Records what the environment gives.
fn given_by_env<'a>(config: &'a Config, env: &[(String, String)], given: &mut BTreeMap<&'a str, Given>) {
    // Terraform's prefix first, so that cairn's own wins for the same name.
    for prefix in [TF_ENV_PREFIX, ENV_PREFIX] {
        for (key, text) in env {
            if let Some((name, _)) = key.strip_prefix(prefix).and_then(|n| config.variables.get_key_value(n)) {
                given.insert(name, Given::text(text, format!("the environment variable {key}")));
            }
        }
    }
}

/// Records what `-var`, `-var-file` and given values give, in order.
fn given_by_inputs<'a>(
    config: &'a Config,
    inputs: &[VariableInput],
    given: &mut BTreeMap<&'a str, Given>,
    resolved: &mut ResolvedVariables,
    diags: &mut Vec<Diagnostic>,
) {
    for input in inputs {
        match input {
            VariableInput::Var(option) => given_by_option(config, option, given, diags),
            VariableInput::File(path) => {
                given_by_file(config, path, &path.display().to_string(), given, &mut resolved.warnings, diags);
                resolved.files.push(path.clone());
            }
            VariableInput::Value { name, value, source } => {
                if let Some((declared, _)) = config.variables.get_key_value(name) {
                    given.insert(declared, Given { value: GivenValue::Value(value.clone()), source: source.clone() });
                }
            }
        }
    }
}

/// Records what one `-var name=value` option gives.
fn given_by_option<'a>(
    config: &'a Config,
    option: &str,
    given: &mut BTreeMap<&'a str, Given>,
    diags: &mut Vec<Diagnostic>,
) {
    let Some((name, text)) = option.split_once('=') else {
        diags.push(Diagnostic::error("Invalid -var option").with_detail(format!(
            "The option -var {option:?} must be a variable name and a value separated by an equals sign, \
             like -var \"name=value\"."
        )));
        return;
    };
    let name = name.trim();
    match config.variables.get_key_value(name) {
        Some((declared, _)) => {
            given.insert(declared, Given::text(text, "-var".to_string()));
        }
        None => diags.push(Diagnostic::error("Value for undeclared variable").with_detail(format!(
            "A value was given for the variable \"{name}\" with -var, but no variable \"{name}\" is declared.{}",
            suggest::did_you_mean(name, config.variables.keys().map(String::as_str))
        ))),
    }
}

/// Records what one variable file gives; `shown` is its name in messages.
fn given_by_file<'a>(
    config: &'a Config,
    path: &Path,
    shown: &str,
    given: &mut BTreeMap<&'a str, Given>,
    warnings: &mut Vec<Diagnostic>,
    diags: &mut Vec<Diagnostic>,
) {
    let assignments = match var_files::read(path, shown) {
        Ok(a) => a,
        Err(d) => return diags.extend(d),
    };
    for a in assignments {
        match config.variables.get_key_value(a.name.as_str()) {
            Some((declared, _)) => {
                let source = format!("{}:{}:{}", a.location.file.display(), a.location.line, a.location.column);
                given.insert(declared, Given { value: GivenValue::Value(a.value), source });
            }
            None => warnings.push(
                Diagnostic::warning("Value for undeclared variable")
                    .with_detail(format!(
                        "The configuration does not declare a variable named \"{}\" but a value was found in file \
                         \"{shown}\". If you meant to use this value, add a \"variable\" block to the configuration.{}",
                        a.name,
                        suggest::did_you_mean(&a.name, config.variables.keys().map(String::as_str))
                    ))
                    .at(&a.location),
            ),
        }
    }
}

/// A value given for a variable, and where it came from.
struct Given {
    value: GivenValue,
    source: String,
}

/// A value as given: text from the command line or the environment, or a
/// value read from a file.
enum GivenValue {
    Text(String),
    Value(Value),
}

impl Given {
    fn text(text: &str, source: String) -> Given {
        Given { value: GivenValue::Text(text.to_string()), source }
    }
}

fn resolve_one(variable: &Variable, given: Option<&Given>) -> Result<Value, Diagnostic> {
    let name = &variable.name;
    let invalid = |detail: String| error_at("Invalid value for variable", detail, &variable.location);
    let (value, source) = match given {
        Some(given) => (given_value(variable, given)?, given.source.as_str()),
        None => match &variable.default {
            Some(default) => (default.clone(), "the default"),
            None => {
                return Err(error_at(
                    "No value for required variable",
                    format!(
                        "The variable \"{name}\" is required but has no value: give one with -var \"{name}=…\", \
                         the environment variable {ENV_PREFIX}{name}, or a default."
                    ),
                    &variable.location,
                ));
            }
        },
    };
    if value.is_null() && !variable.nullable {
        // As in Terraform: a non-nullable variable given null takes its default.
        return match &variable.default {
            Some(default) if !default.is_null() => Ok(default.clone()),
            _ => Err(invalid(format!("The variable \"{name}\" does not accept null (nullable = false)."))),
        };
    }
    match &variable.ty {
        Some(ty) => ty.convert(&value).map(|v| variable.defaults.apply(v)).map_err(|e| {
            let at = if e.path.is_root() { String::new() } else { format!(" at {}", e.path) };
            invalid(format!(
                "The value of variable \"{name}\" from {source} does not fit the type {ty}{at}: {}.",
                e.message
            ))
        }),
        None => Ok(value),
    }
}

/// A module input variable's value as the module sees it: null replaced by
/// the default for a non-nullable variable, converted to its type (with its
/// optional attributes' defaults), and checked by its validations once
/// known.
pub(crate) fn check_input(variable: &Variable, value: Value) -> Result<Value, Vec<Diagnostic>> {
    let given = Given { value: GivenValue::Value(value), source: "the module block".to_string() };
    let value = resolve_one(variable, Some(&given)).map_err(|d| vec![d])?;
    let mut diags = Vec::new();
    if value.is_wholly_known() {
        let mut ctx = EvalContext::new(".");
        ctx.variables.insert(variable.name.clone(), value.clone());
        if variable.sensitive {
            ctx.sensitivity.variables.insert(variable.name.clone());
        }
        validate(variable, &ctx, &mut diags);
    }
    if diags.is_empty() { Ok(value) } else { Err(diags) }
}

/// The value of text given on the command line or in the environment.
fn given_value(variable: &Variable, given: &Given) -> Result<Value, Diagnostic> {
    let text = match &given.value {
        GivenValue::Value(value) => return Ok(value.clone()),
        GivenValue::Text(text) => text,
    };
    if matches!(variable.ty, None | Some(Type::String)) {
        return Ok(Value::String(text.clone()));
    }
    let name = &variable.name;
    let problem = |diags: Vec<Diagnostic>| {
        let reasons: Vec<String> = diags.iter().map(|d| format!("{}: {}", d.summary, d.detail)).collect();
        error_at(
            "Invalid value for variable",
            format!(
                "The value given for variable \"{name}\" by {} is not a valid expression: {}",
                given.source,
                reasons.join("; ")
            ),
            &variable.location,
        )
    };
    let expr = parse_expression(text, &format!("<value for var.{name}>")).map_err(problem)?;
    literal(&expr, Path::new("."), "value").map_err(problem)
}

/// The variables a variable's validations refer to, itself included.
fn validation_variables(variable: &Variable) -> Vec<String> {
    let rules = variable.validations.iter().flat_map(|r| [&r.condition, &r.error_message]);
    let references = rules.flat_map(|e| e.references());
    references
        .filter_map(|(r, _)| match r {
            Reference::Variable(name) => Some(name),
            _ => None,
        })
        .collect()
}

/// Checks a variable's validation rules in `ctx`, which holds the value of
/// every variable they refer to.
/// Rules that refer to local values, resources or data sources wait for
/// the plan (`plan::validations`).
fn validate(variable: &Variable, ctx: &EvalContext, diags: &mut Vec<Diagnostic>) {
    for rule in variable.validations.iter().filter(|r| !r.refers_beyond_variables()) {
        check_rule(variable, rule, ctx, diags);
    }
}

/// Checks one rule in `ctx`; an unknown result passes for now.
fn check_rule(variable: &Variable, rule: &Validation, ctx: &EvalContext, diags: &mut Vec<Diagnostic>) {
    match eval(&rule.condition, ctx) {
        Ok(Value::Bool(true) | Value::Unknown(_)) => {}
        Ok(Value::Bool(false)) => diags.push(validation_failure(variable, rule, ctx)),
        Ok(other) => diags.push(error_at(
            "Invalid validation condition",
            format!("The condition must be true or false, got {}.", other.to_hcl()),
            &rule.condition.location,
        )),
        Err(errors) => diags.extend(errors),
    }
}

fn validation_failure(variable: &Variable, rule: &Validation, ctx: &EvalContext) -> Diagnostic {
    // Terraform hides a message that refers to a sensitive variable: it
    // would show the value.
    let reads_secret = rule.error_message.references().iter().any(|(r, _)| match r {
        Reference::Variable(name) => ctx.sensitivity.variables.contains(name),
        _ => false,
    });
    let message = match eval(&rule.error_message, ctx) {
        _ if reads_secret => "The error message included a sensitive value, so it will not be displayed.".to_string(),
        Ok(Value::String(s)) => s,
        Ok(other) => other.to_hcl(),
        Err(errors) => errors.iter().map(|d| d.detail.clone()).collect::<Vec<_>>().join(" "),
    };
    let location: &Location = &rule.location;
    error_at(
        "Invalid value for variable",
        format!(
            "{message}\n\nThis was checked by the validation rule of variable \"{}\" declared at {}.",
            variable.name, variable.location
        ),
        location,
    )
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{expr, load_errors, load_main, shown};
    use super::*;

    fn ty(text: &str) -> Type {
        parse_type(&expr(text)).unwrap_or_else(|d| panic!("{d}"))
    }

    #[test]
    fn type_constraints() {
        assert_eq!(ty("string"), Type::String);
        assert_eq!(ty("any"), Type::Dynamic);
        assert_eq!(ty("list(number)"), Type::List(Box::new(Type::Number)));
        assert_eq!(ty("set(bool)"), Type::Set(Box::new(Type::Bool)));
        assert_eq!(ty("map(list(string))").to_string(), "map(list(string))");
        assert_eq!(ty("object({a = string, b = optional(number)})").to_string(), "object({a=string, b=number})");
        assert_eq!(ty("tuple([string, number])").to_string(), "tuple([string, number])");
    }

    #[test]
    fn bad_type_constraints() {
        let err = |text: &str| parse_type(&expr(text)).unwrap_err().to_string();
        assert_eq!(
            err("strng"),
            "Error: test.tf:1: Invalid type specification\n  \"strng\" is not a type. The primitive types are string, number and bool; any accepts every value. Did you mean \"string\"?"
        );
        assert!(err("\"string\"").contains("without quotes"));
        assert!(err("list(string, number)").contains("list() takes one argument"));
        assert!(err("object({a = optional(bool, \"maybe\")})").contains("default value of this optional attribute"));
        assert!(err("object({a = optional(bool, true, 1)})").contains("optional() takes the attribute's type"));
        assert!(err("object({a = optional(string, var.x)})").contains("cannot refer to var.x"));
        assert!(err("optional(string)").contains("only for the attributes of an object type"));
        assert!(err("lst(string)").contains("is not a type constructor"));
    }

    const VARIABLES: &str = r#"variable "name" {
  type    = string
  default = "web"
}
variable "count_of" {
  type    = number
  default = "3"
}
variable "tags" {
  type    = map(string)
  default = {}
}
variable "untyped" {
  default = null
}
variable "required" {
  type = list(number)
}
"#;

    fn resolve(cli: &[&str], env: &[(&str, &str)]) -> Result<BTreeMap<String, Value>, Vec<Diagnostic>> {
        let (_dir, config) = load_main(VARIABLES);
        let cli: Vec<VariableInput> = cli.iter().map(|s| VariableInput::from(*s)).collect();
        let env: Vec<(String, String)> = env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        resolve_variables(&config, &cli, &env).map(|r| r.values)
    }

    #[test]
    fn variable_blocks() {
        let (_dir, config) = load_main(
            "variable \"a\" {\n  type        = list(string)\n  default     = [1, \"b\"]\n  description = \"An A\"\n  sensitive   = true\n  nullable    = false\n}\n",
        );
        let a = &config.variables["a"];
        assert_eq!(a.ty, Some(Type::List(Box::new(Type::String))));
        assert_eq!(a.default, Some(Value::List(vec![Value::string("1"), Value::string("b")])));
        assert_eq!((a.description.as_str(), a.sensitive, a.nullable), ("An A", true, false));
        assert_eq!(a.location.to_string(), "main.tf:1");
    }

    #[test]
    fn variable_block_errors() {
        let errors = load_errors(
            "variable \"a\" {\n  type    = number\n  default = \"x\"\n}\nvariable \"b\" {\n  default = var.a\n  typo    = 1\n}\nvariable \"c\" {\n  nullable = false\n  default  = null\n}\n",
        );
        assert_eq!(
            errors,
            [
                "Error: main.tf:3: Invalid default value for variable\n  This default value is not compatible with the variable's type constraint number: a number is required, got the string \"x\".",
                "Error: main.tf:6: Variables not allowed\n  The default value must be a literal value; it cannot refer to var.a.",
                "Error: main.tf:7: Unsupported argument\n  An argument named \"typo\" is not expected in a variable block. Did you mean \"type\"?",
                "Error: main.tf:11: Invalid default value for variable\n  A null default value is not valid when nullable = false.",
            ]
        );
    }

    #[test]
    fn terraform_environment_variables_are_read_and_cairn_ones_win() {
        let tf = [("TF_VAR_name", "from-tf"), ("TF_VAR_required", "[]")];
        let values = resolve(&[], &tf).unwrap();
        assert_eq!(values["name"], Value::string("from-tf"));
        // Either order in the environment: CAIRN_VAR_ wins.
        for env in [
            [("TF_VAR_name", "from-tf"), ("CAIRN_VAR_name", "from-cairn"), ("TF_VAR_required", "[]")],
            [("CAIRN_VAR_name", "from-cairn"), ("TF_VAR_name", "from-tf"), ("TF_VAR_required", "[]")],
        ] {
            assert_eq!(resolve(&[], &env).unwrap()["name"], Value::string("from-cairn"));
            assert_eq!(resolve(&["name=flag"], &env).unwrap()["name"], Value::string("flag"));
        }
    }

    #[test]
    fn unset_required_variables_are_those_nothing_gives() {
        let (_dir, config) = load_main(VARIABLES);
        let names = |cli: &[&str], env: &[(&str, &str)]| {
            let cli: Vec<VariableInput> = cli.iter().map(|s| VariableInput::from(*s)).collect();
            let env: Vec<(String, String)> = env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
            unset_required(&config, &cli, &env).iter().map(|v| v.name.clone()).collect::<Vec<_>>()
        };
        assert_eq!(names(&[], &[]), ["required"]);
        assert_eq!(names(&["required=[]"], &[]), Vec::<String>::new());
        assert_eq!(names(&[], &[("TF_VAR_required", "[]")]), Vec::<String>::new());
    }

    #[test]
    fn defaults_and_conversion() {
        let values = resolve(&["required=[1, \"2\"]"], &[]).unwrap();
        assert_eq!(values["name"], Value::string("web"));
        assert_eq!(values["count_of"], Value::int(3));
        assert_eq!(values["tags"], Value::Map(crate::value::Map::new()));
        assert_eq!(values["untyped"], Value::Null);
        assert_eq!(values["required"], Value::List(vec![Value::int(1), Value::int(2)]));
    }

    #[test]
    fn precedence_is_cli_then_environment_then_default() {
        let env = [("CAIRN_VAR_name", "from-env"), ("CAIRN_VAR_required", "[]"), ("CAIRN_VAR_other", "ignored")];
        let values = resolve(&[], &env).unwrap();
        assert_eq!(values["name"], Value::string("from-env"));
        let values = resolve(&["name=first", "name=from-cli"], &env).unwrap();
        assert_eq!(values["name"], Value::string("from-cli"));
        // Text for a string variable is taken literally, even if it looks like HCL.
        let values = resolve(&["name=[1]", "untyped=x y"], &env).unwrap();
        assert_eq!(values["name"], Value::string("[1]"));
        assert_eq!(values["untyped"], Value::string("x y"));
        // Other types parse it as an expression.
        let values = resolve(&["tags={a = \"b\", c = 1}", "count_of=2 * 3"], &env).unwrap();
        assert_eq!(
            values["tags"],
            Value::Map([("a".into(), Value::string("b")), ("c".into(), Value::string("1"))].into_iter().collect())
        );
        assert_eq!(values["count_of"], Value::int(6));
    }

    #[test]
    fn resolution_errors() {
        let errors = shown(&resolve(&["nmae=x", "bad", "count_of=abc", "tags=[1"], &[]).unwrap_err());
        assert!(errors.contains("Error: Value for undeclared variable\n  A value was given for the variable \"nmae\" with -var, but no variable \"nmae\" is declared. Did you mean \"name\"?"), "{errors}");
        assert!(errors.contains("Error: Invalid -var option"), "{errors}");
        assert!(errors.contains("Error: main.tf:5: Invalid value for variable\n  The value given for variable \"count_of\" by -var is not a valid expression: Variables not allowed"), "{errors}");
        assert!(errors.contains("Error: main.tf:9: Invalid value for variable\n  The value given for variable \"tags\" by -var is not a valid expression: Syntax error"), "{errors}");
        assert!(errors.contains("Error: main.tf:16: No value for required variable\n  The variable \"required\" is required but has no value"), "{errors}");
        let errors = shown(&resolve(&["required=[\"x\"]"], &[]).unwrap_err());
        assert_eq!(
            errors,
            "Error: main.tf:16: Invalid value for variable\n  The value of variable \"required\" from -var does not fit the type list(number) at [0]: a number is required, got the string \"x\"."
        );
        let errors = shown(&resolve(&["required=[]"], &[("CAIRN_VAR_tags", "5")]).unwrap_err());
        assert!(
            errors.contains("from the environment variable CAIRN_VAR_tags does not fit the type map(string)"),
            "{errors}"
        );
    }

    #[test]
    fn non_nullable_variables() {
        let (_dir, config) = load_main(
            "variable \"a\" {\n  type     = string\n  nullable = false\n  default  = \"d\"\n}\nvariable \"b\" {\n  type     = number\n  nullable = false\n}\n",
        );
        let values = resolve_variables(&config, &["a=x".into(), "b=1".into()], &[]).unwrap().values;
        assert_eq!(values["a"], Value::string("x"));
        let values = resolve_variables(&config, &["b=1".into()], &[]).unwrap().values;
        assert_eq!(values["a"], Value::string("d"));
        let errors = shown(&resolve_variables(&config, &["b=null".into()], &[]).unwrap_err());
        assert_eq!(
            errors,
            "Error: main.tf:6: Invalid value for variable\n  The variable \"b\" does not accept null (nullable = false)."
        );
    }

    #[test]
    fn validations() {
        let text = r#"variable "port" {
  type = number
  validation {
    condition     = var.port > 1024
    error_message = "The port must be above 1024, got ${var.port}."
  }
}
"#;
        let (_dir, config) = load_main(text);
        assert_eq!(resolve_variables(&config, &["port=8080".into()], &[]).unwrap().values["port"], Value::int(8080));
        let errors = shown(&resolve_variables(&config, &["port=80".into()], &[]).unwrap_err());
        assert_eq!(
            errors,
            "Error: main.tf:3: Invalid value for variable\n  The port must be above 1024, got 80.\n  \n  This was checked by the validation rule of variable \"port\" declared at main.tf:1."
        );
        // A sensitive variable's message that reads it is not shown.
        let (_dir, config) = load_main(&text.replace("type = number", "type      = number\n  sensitive = true"));
        let errors = shown(&resolve_variables(&config, &["port=80".into()], &[]).unwrap_err());
        assert!(!errors.contains("got 80"), "{errors}");
        assert!(
            errors.contains("The error message included a sensitive value, so it will not be displayed."),
            "{errors}"
        );
        let errors =
            load_errors("variable \"a\" {\n  validation {\n    condition = var.b != \"\"\n  }\n}\nvariable \"b\" {}\n");
        assert_eq!(
            errors,
            ["Error: main.tf:2: Missing required argument\n  A validation block needs \"error_message\".",]
        );
        // Local values, resources and data sources may be referred to
        // (Terraform 1.9; checked once the plan has them), nothing else.
        load_main(
            "locals {\n  l = 1\n}\nvariable \"a\" {\n  validation {\n    condition = var.a > local.l\n    error_message = \"no\"\n  }\n}\n",
        );
        let errors = load_errors(
            "variable \"a\" {\n  validation {\n    condition = var.a != path.module\n    error_message = \"no\"\n  }\n}\n",
        );
        assert_eq!(
            errors,
            [
                "Error: main.tf:3: Invalid reference in variable validation\n  The validation of variable \"a\" may refer to input variables, local values, resources and data sources, not to path.module."
            ]
        );
    }

    #[test]
    fn a_validation_may_compare_its_variable_with_others() {
        let text = r#"variable "min" {
  type = number
  validation {
    condition     = var.min < var.max
    error_message = "min ${var.min} must be below max ${var.max}."
  }
}
variable "max" {
  type = number
}
"#;
        let (_dir, config) = load_main(text);
        let ok = resolve_variables(&config, &["min=1".into(), "max=3".into()], &[]).unwrap();
        assert_eq!(ok.values["min"], Value::int(1));
        let errors = shown(&resolve_variables(&config, &["min=5".into(), "max=3".into()], &[]).unwrap_err());
        assert_eq!(
            errors,
            "Error: main.tf:3: Invalid value for variable\n  min 5 must be below max 3.\n  \n  This was checked by the validation rule of variable \"min\" declared at main.tf:1."
        );
        // Without max, only its own error: the validation waits for a value.
        let errors = shown(&resolve_variables(&config, &["min=5".into()], &[]).unwrap_err());
        assert!(errors.starts_with("Error: main.tf:8: No value for required variable"), "{errors}");
        assert!(!errors.contains("validation rule"), "{errors}");
        // A message reading another variable that is sensitive is hidden.
        let (_dir, config) = load_main(&text.replace("type = number\n}", "type      = number\n  sensitive = true\n}"));
        let errors = shown(&resolve_variables(&config, &["min=5".into(), "max=3".into()], &[]).unwrap_err());
        assert!(errors.contains("sensitive value, so it will not be displayed"), "{errors}");
    }

    #[test]
    fn files_override_the_environment_and_apply_in_order_with_var_options() {
        let (dir, config) = load_main(
            "variable \"a\" {\n  default = \"d\"\n}\nvariable \"n\" {\n  type    = number\n  default = 0\n}\n",
        );
        std::fs::write(dir.path().join("terraform.tfvars"), "a = \"tfvars\"\nn = 1\nunknown = 1\n").unwrap();
        std::fs::write(dir.path().join("x.auto.tfvars"), "n = 2\n").unwrap();
        std::fs::write(dir.path().join("given.tfvars"), "a = \"given\"\n").unwrap();
        let env = [("CAIRN_VAR_a".to_string(), "env".to_string())];
        let resolved = resolve_variables(&config, &[], &env).unwrap();
        assert_eq!(resolved.values["a"], Value::string("tfvars"));
        assert_eq!(resolved.values["n"], Value::int(2));
        assert_eq!(resolved.files.len(), 2);
        assert_eq!(resolved.warnings.len(), 1);
        assert!(resolved.warnings[0].detail.contains("\"unknown\""), "{}", resolved.warnings[0]);
        let given = VariableInput::File(dir.path().join("given.tfvars"));
        let resolved = resolve_variables(&config, &["a=flag".into(), given.clone()], &env).unwrap();
        assert_eq!(resolved.values["a"], Value::string("given"));
        let resolved = resolve_variables(&config, &[given, "a=flag".into()], &env).unwrap();
        assert_eq!(resolved.values["a"], Value::string("flag"));
        assert_eq!(resolved.files.len(), 3);
    }

    #[test]
    fn optional_attributes_take_their_defaults_at_any_depth() {
        // As Terraform 1.11.4 fills them in (checked with terraform apply).
        let (ty, defaults) = parse_type_with_defaults(&expr(
            "object({a = string, b = optional(bool, true), c = optional(number), d = optional(list(object({e = optional(string, \"x\")})), [{}])})",
        ))
        .unwrap();
        let given = Value::object([("a", Value::string("given"))]);
        let filled = defaults.apply(ty.convert(&given).unwrap());
        assert_eq!(filled.get_attr("b"), &Value::Bool(true));
        assert_eq!(filled.get_attr("c"), &Value::Null);
        assert_eq!(filled.get_attr("d"), &Value::List(vec![Value::object([("e", Value::string("x"))])]));
        // A value that is given is kept.
        let given = Value::object([("a", Value::string("g")), ("b", Value::Bool(false)), ("d", Value::Tuple(vec![]))]);
        let filled = defaults.apply(ty.convert(&given).unwrap());
        assert_eq!((filled.get_attr("b"), filled.get_attr("d")), (&Value::Bool(false), &Value::List(vec![])));
    }
}
