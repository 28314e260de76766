//! The reference checks `load` makes once every file is read: every
//! reference names something declared, `count.index` and `each` appear only
//! where they mean something, and nothing refers to itself. Whether an
//! attribute exists in a provider's schema needs the schemas: see
//! `schema_refs`, which `validate` runs once the providers are started.

use std::collections::BTreeSet;

use crate::addr::{AddrSet, Mode, ResourceAddr};
use crate::diag::{Diagnostic, Location};

use super::expr::Reference;
use super::{Body, Check, Condition, ConditionKind, Config, Expression, error_at, suggest};

/// Where an expression is written, which decides what it may refer to.
#[derive(Default)]
struct Scope<'a> {
    /// Inside a resource with `count`: `count.index` is allowed.
    counted: bool,
    /// Inside a resource with `for_each`: `each` is allowed.
    for_each: bool,
    /// The resource being configured, which must not refer to itself.
    resource: Option<&'a ResourceAddr>,
    /// The local value being defined, which must not refer to itself.
    local: Option<&'a str>,
    /// Inside a `check` block: its own data sources, which only it may
    /// refer to.
    check: Option<&'a Check>,
}

/// Adds a diagnostic for every bad reference in the configuration.
pub(super) fn check_references(config: &Config, diags: &mut Vec<Diagnostic>) {
    let checker = Checker::new(config);
    for r in &config.resources {
        let inside = Scope {
            counted: r.count.is_some(),
            for_each: r.for_each.is_some(),
            resource: Some(&r.addr),
            ..Scope::default()
        };
        checker.body(&r.body, &inside, diags);
        for trigger in &r.lifecycle.replace_triggered_by {
            checker.expr(&trigger.expr, &inside, diags);
        }
        checker.conditions(&r.lifecycle.preconditions, ConditionKind::ResourcePrecondition, &inside, diags);
        checker.conditions(&r.lifecycle.postconditions, ConditionKind::ResourcePostcondition, &inside, diags);
        // count and for_each are decided before there are instances.
        let outside = Scope { resource: Some(&r.addr), ..Scope::default() };
        for expr in r.count.iter().chain(&r.for_each) {
            checker.expr(expr, &outside, diags);
        }
        for (reference, location) in &r.depends_on {
            checker.reference(reference, location, &outside, diags);
        }
    }
    for local in config.locals.values() {
        checker.expr(&local.expr, &Scope { local: Some(&local.name), ..Scope::default() }, diags);
    }
    for rule in config.variables.values().flat_map(|v| &v.validations) {
        for expr in [&rule.condition, &rule.error_message] {
            checker.expr(expr, &Scope::default(), diags);
        }
    }
    for output in config.outputs.values() {
        checker.expr(&output.expr, &Scope::default(), diags);
        checker.conditions(&output.preconditions, ConditionKind::OutputPrecondition, &Scope::default(), diags);
        for (reference, location) in &output.depends_on {
            checker.reference(reference, location, &Scope::default(), diags);
        }
    }
    for c in &config.checks {
        let inside = Scope { check: Some(c), ..Scope::default() };
        for data in &c.data {
            checker.body(&data.body, &Scope { resource: Some(&data.addr), ..Scope::default() }, diags);
        }
        checker.conditions(&c.asserts, ConditionKind::CheckAssertion, &inside, diags);
    }
    for provider in &config.providers {
        // A provider block may refer to resources, data sources, ephemeral
        // resources, locals and module outputs: it is then configured as a
        // node of the graph, after them (`graph::configured_in_graph`). It
        // has no instances: `count.index` and `each` mean nothing there.
        checker.body(&provider.body, &Scope::default(), diags);
        for headers in &provider.http_headers {
            checker.expr(&headers.expr, &Scope::default(), diags);
        }
    }
    for call in &config.modules {
        let inside = Scope { counted: call.count.is_some(), for_each: call.for_each.is_some(), ..Scope::default() };
        for input in call.inputs.values() {
            checker.expr(&input.expr, &inside, diags);
        }
        for expr in call.count.iter().chain(&call.for_each) {
            checker.expr(expr, &Scope::default(), diags);
        }
        for (reference, location) in &call.depends_on {
            checker.reference(reference, location, &Scope::default(), diags);
        }
    }
}

/// The bad references of an expression written outside any block of the
/// root module (`cairn console`'s input), as [`check_references`] finds
/// them in the configuration's own expressions.
pub fn check_expression_references(config: &Config, expr: &Expression) -> Result<(), Vec<Diagnostic>> {
    let mut diags = Vec::new();
    Checker::new(config).expr(expr, &Scope::default(), &mut diags);
    if diags.is_empty() { Ok(()) } else { Err(diags) }
}

/// What is declared, for lookups and suggestions.
struct Checker<'a> {
    variables: BTreeSet<&'a str>,
    locals: BTreeSet<&'a str>,
    /// By hash: an interned address hashes its pointer, so a lookup reads
    /// no strings (in an ordered set each compares a dozen).
    resources: AddrSet<&'a ResourceAddr>,
    modules: BTreeSet<&'a str>,
    /// The data sources of `check` blocks.
    scoped: AddrSet<&'a ResourceAddr>,
}

impl<'a> Checker<'a> {
    fn new(config: &'a Config) -> Checker<'a> {
        Checker {
            variables: config.variables.keys().map(String::as_str).collect(),
            locals: config.locals.keys().map(String::as_str).collect(),
            resources: config.resources.iter().map(|r| &r.addr).collect(),
            modules: config.modules.iter().map(|m| m.name.as_str()).collect(),
            scoped: config.checks.iter().flat_map(|c| &c.data).map(|d| &d.addr).collect(),
        }
    }

    fn body(&self, body: &Body, scope: &Scope, diags: &mut Vec<Diagnostic>) {
        for found in body.checked_references(&[]) {
            match found {
                Ok((reference, location)) => self.reference(&reference, &location, scope, diags),
                Err(d) => diags.push(d),
            }
        }
    }

    /// Checks the references of condition blocks of `kind` (in a
    /// postcondition, `self` is the object).
    fn conditions(&self, conditions: &[Condition], kind: ConditionKind, scope: &Scope, diags: &mut Vec<Diagnostic>) {
        let bound = kind.bound_names();
        for c in conditions {
            for expr in [&c.condition, &c.error_message] {
                self.expr_within(expr, &bound, scope, diags);
            }
        }
    }

    fn expr(&self, expr: &Expression, scope: &Scope, diags: &mut Vec<Diagnostic>) {
        self.expr_within(expr, &[], scope, diags);
    }

    /// Checks the references of `expr`, where the names `bound` are none.
    fn expr_within(&self, expr: &Expression, bound: &[String], scope: &Scope, diags: &mut Vec<Diagnostic>) {
        for found in expr.checked_references_within(bound) {
            match found {
                Ok((reference, location)) => self.reference(&reference, &location, scope, diags),
                Err(d) => diags.push(d),
            }
        }
    }

    fn reference(&self, reference: &Reference, location: &Location, scope: &Scope, diags: &mut Vec<Diagnostic>) {
        let error = |summary: &str, detail: String| error_at(summary, detail, location);
        match reference {
            Reference::Variable(name) if !self.variables.contains(name.as_str()) => {
                let hint = suggest::did_you_mean(name, self.variables.iter().copied());
                let hint =
                    if hint.is_empty() { format!(" Declare it with a variable \"{name}\" {{}} block.") } else { hint };
                diags.push(error(
                    "Reference to undeclared input variable",
                    format!("An input variable with the name \"{name}\" has not been declared.{hint}"),
                ));
            }
            Reference::Local(name) if !self.locals.contains(name.as_str()) => diags.push(error(
                "Reference to undeclared local value",
                format!(
                    "A local value with the name \"{name}\" has not been declared.{}",
                    suggest::did_you_mean(name, self.locals.iter().copied())
                ),
            )),
            Reference::Local(name) if scope.local == Some(name.as_str()) => {
                diags.push(error("Self-referencing local value", format!("local.{name} cannot refer to itself.")));
            }
            Reference::Resource(addr) if scope.check.is_some_and(|c| c.scoped(addr)) => {}
            Reference::Resource(addr) if self.scoped.contains(addr) => diags.push(error(
                "Reference to scoped resource",
                format!(
                    "The referenced data resource \"{}\" \"{}\" is not available from this context.",
                    addr.type_name, addr.name
                ),
            )),
            Reference::Resource(addr) if !self.resources.contains(addr) => {
                let kind = match addr.mode {
                    Mode::Data => "data",
                    Mode::Ephemeral => "ephemeral",
                    Mode::Managed => "managed",
                };
                let mut same_mode: Vec<String> =
                    self.resources.iter().filter(|r| r.mode == addr.mode).map(|r| r.to_string()).collect();
                same_mode.sort();
                let hint = suggest::did_you_mean(&addr.to_string(), same_mode.iter().map(String::as_str));
                diags.push(error(
                    "Reference to undeclared resource",
                    format!("A {kind} resource \"{}\" \"{}\" has not been declared.{hint}", addr.type_name, addr.name),
                ));
            }
            Reference::Resource(addr) if scope.resource == Some(addr) => {
                diags.push(error(
                    "Self-referential block",
                    format!("Configuration for {addr} may not refer to itself."),
                ));
            }
            Reference::Module(name) if !self.modules.contains(name.as_str()) => diags.push(error(
                "Reference to undeclared module",
                format!(
                    "No module call named \"{name}\" is declared in this module.{}",
                    suggest::did_you_mean(name, self.modules.iter().copied())
                ),
            )),
            Reference::CountIndex if !scope.counted => diags.push(error(
                "Reference to \"count\" in non-counted context",
                "count.index can only be used in a resource or data block that sets \"count\".".to_string(),
            )),
            Reference::EachKey | Reference::EachValue if !scope.for_each => diags.push(error(
                "Reference to \"each\" in context without for_each",
                format!("{reference} can only be used in a resource or data block that sets \"for_each\"."),
            )),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{load_errors, load_main};

    #[test]
    fn a_provider_block_may_refer_to_what_is_planned_but_not_to_count_or_each() {
        // Resources, ephemeral resources and locals made of them are what
        // the graph configures the provider after: no error.
        let (_dir, config) = load_main(
            r#"variable "pw" {}
locals {
  pw   = terraform_data.a.output
  both = "${local.pw}-${var.pw}"
}
resource "terraform_data" "a" {}
ephemeral "random_password" "p" {
  length = 8
}
provider "postgresql" {
  username = var.pw
  password = local.both
  database = ephemeral.random_password.p.result
}
"#,
        );
        assert_eq!(config.providers.len(), 1);
        // A provider block has no instances, as Terraform says.
        let errors = load_errors(
            r#"provider "postgresql" {
  host     = count.index
  database = each.key
  username = terraform_data.nope.output
}
"#,
        );
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert!(errors[0].starts_with("Error: main.tf:2: "), "{errors:?}");
        assert!(errors[0].contains("Reference to \"count\" in non-counted context"), "{errors:?}");
        assert!(errors[1].contains("main.tf:3: ") && errors[1].contains("each.key can only be used"), "{errors:?}");
        assert!(errors[2].contains("main.tf:4: Reference to undeclared resource"), "{errors:?}");
    }

    #[test]
    fn undeclared_references_name_file_and_line() {
        let errors = load_errors(
            r#"variable "name" {}
locals {
  a = var.nme
  b = local.c
}
resource "random_id" "x" {
  byte_length = 4
}
resource "local_file" "f" {
  content  = random_id.nope.hex
  filename = data.local_file.t.content
  other    = random_id.y.hex
}
output "o" {
  value = var.zzz
}
"#,
        );
        assert_eq!(
            errors,
            [
                "Error: main.tf:3: Reference to undeclared input variable\n  An input variable with the name \"nme\" has not been declared. Did you mean \"name\"?",
                "Error: main.tf:4: Reference to undeclared local value\n  A local value with the name \"c\" has not been declared.",
                "Error: main.tf:10: Reference to undeclared resource\n  A managed resource \"random_id\" \"nope\" has not been declared.",
                "Error: main.tf:11: Reference to undeclared resource\n  A data resource \"local_file\" \"t\" has not been declared.",
                "Error: main.tf:12: Reference to undeclared resource\n  A managed resource \"random_id\" \"y\" has not been declared. Did you mean \"random_id.x\"?",
                "Error: main.tf:15: Reference to undeclared input variable\n  An input variable with the name \"zzz\" has not been declared. Declare it with a variable \"zzz\" {} block.",
            ]
        );
    }

    #[test]
    fn count_and_each_only_where_set() {
        let errors = load_errors(
            r#"resource "random_id" "counted" {
  count       = 2
  byte_length = count.index
  keepers     = { k = each.key }
}
resource "random_id" "each" {
  for_each    = toset(["a"])
  byte_length = each.value
  keepers     = { i = count.index }
}
resource "random_id" "neither" {
  count = count.index
}
locals {
  l = each.key
}
"#,
        );
        assert_eq!(
            errors,
            [
                "Error: main.tf:4: Reference to \"each\" in context without for_each\n  each.key can only be used in a resource or data block that sets \"for_each\".",
                "Error: main.tf:9: Reference to \"count\" in non-counted context\n  count.index can only be used in a resource or data block that sets \"count\".",
                "Error: main.tf:12: Reference to \"count\" in non-counted context\n  count.index can only be used in a resource or data block that sets \"count\".",
                "Error: main.tf:15: Reference to \"each\" in context without for_each\n  each.key can only be used in a resource or data block that sets \"for_each\".",
            ]
        );
    }

    #[test]
    fn self_references_and_invalid_references() {
        let errors = load_errors(
            r#"resource "random_id" "x" {
  keepers    = { a = random_id.x.hex }
  depends_on = [random_id.x]
}
locals {
  me = local.me
  v  = var
}
provider "local" {
  root = local.nope
}
output "o" {
  value      = 1
  depends_on = [random_id.z]
}
"#,
        );
        assert_eq!(
            errors,
            [
                "Error: main.tf:2: Self-referential block\n  Configuration for random_id.x may not refer to itself.",
                "Error: main.tf:3: Self-referential block\n  Configuration for random_id.x may not refer to itself.",
                "Error: main.tf:6: Self-referencing local value\n  local.me cannot refer to itself.",
                "Error: main.tf:7: Invalid reference\n  A reference to an input variable must be followed by a name, like var.name.",
                "Error: main.tf:10: Reference to undeclared local value\n  A local value with the name \"nope\" has not been declared.",
                "Error: main.tf:14: Reference to undeclared resource\n  A managed resource \"random_id\" \"z\" has not been declared. Did you mean \"random_id.x\"?",
            ]
        );
    }
}
