//! `check` blocks (Terraform 1.5): assertions about the infrastructure as
//! a whole, checked after plan and after apply, whose failures are
//! warnings, never errors. A check may read data sources of its own
//! ("scoped"), which only its assertions may refer to.

use std::path::Path;

use crate::addr::{Mode, ModuleInstance, ResourceAddr, is_identifier};
use crate::diag::{Diagnostic, Location};

use super::blocks::{unsupported_argument, unsupported_block};
use super::conditions::condition_block;
use super::expr::Reference;
use super::{Block, Condition, ConditionKind, Resource, error_at, resource};

/// A `check "NAME" { data … { … }  assert { … } }` block.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// The check's name.
    pub name: String,
    /// The module instance it is in: the root, or for a check of a module
    /// (once modules are expanded) its instance, `module.m[1]`: Terraform's
    /// `module.m[1].check.NAME`.
    pub module: ModuleInstance,
    /// Its scoped data sources, read each time the check is.
    pub data: Vec<Resource>,
    /// Its `assert` blocks.
    pub asserts: Vec<Condition>,
    /// The block header.
    pub location: Location,
}

impl Check {
    /// Every reference the check makes outside itself: its data sources'
    /// bodies and its assertions, without the references to its own data
    /// sources.
    pub fn references(&self) -> Vec<(Reference, Location)> {
        let mut refs: Vec<(Reference, Location)> = self.data.iter().flat_map(|d| d.references()).collect();
        refs.extend(self.asserts.iter().flat_map(|a| a.references_within(&[])));
        refs.retain(|(r, _)| !matches!(r, Reference::Resource(addr) if self.scoped(addr)));
        refs
    }

    /// Whether `addr` is one of the check's own data sources.
    pub fn scoped(&self, addr: &ResourceAddr) -> bool {
        self.data.iter().any(|d| &d.addr == addr)
    }
}

/// A check from its block; `name` is its checked label.
pub(super) fn check(name: String, block: Block, dir: &Path, diags: &mut Vec<Diagnostic>) -> Check {
    let mut check = Check {
        name,
        module: ModuleInstance::root(),
        data: Vec::new(),
        asserts: Vec::new(),
        location: block.location.clone(),
    };
    for attr in &block.body.attributes {
        diags.push(unsupported_argument(attr, "check", &[]));
    }
    for nested in block.body.blocks {
        match nested.type_name.as_str() {
            "assert" => check.asserts.extend(condition_block(&nested, ConditionKind::CheckAssertion, diags)),
            "data" => check.data.extend(scoped_data(nested, dir, diags)),
            _ => diags.push(unsupported_block(&nested, "check", &["data", "assert"])),
        }
    }
    check
}

/// A data source of a check block. One instance only: cairn reads it once
/// per check, so `count`, `for_each` and its own conditions are refused.
fn scoped_data(block: Block, dir: &Path, diags: &mut Vec<Diagnostic>) -> Option<Resource> {
    let [type_name, name] = block.labels.as_slice() else {
        diags.push(error_at(
            "Wrong number of labels for a data block",
            "A data block takes two labels, the type and the name: data \"TYPE\" \"NAME\" { … }.",
            &block.location,
        ));
        return None;
    };
    if !is_identifier(type_name) || !is_identifier(name) {
        diags.push(error_at(
            "Invalid name",
            "A name must start with a letter or underscore and may contain only letters, digits, underscores and dashes.",
            &block.location,
        ));
        return None;
    }
    let addr = ResourceAddr::new(ModuleInstance::root(), Mode::Data, type_name, name);
    let data = resource::resource(addr, block, dir, diags);
    if data.count.is_some() || data.for_each.is_some() || data.lifecycle.location.is_some() {
        diags.push(error_at(
            "Unsupported argument in a scoped data source",
            "cairn does not yet support count, for_each or a lifecycle block on a data source inside a check block; \
             declare it outside the check instead.",
            &data.location,
        ));
        return None;
    }
    Some(data)
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{load_errors, load_main};

    const CHECK: &str = r#"resource "terraform_data" "a" {
  input = "x"
}
check "health" {
  data "local_file" "status" {
    filename = "status.txt"
  }
  assert {
    condition     = data.local_file.status.content == terraform_data.a.output
    error_message = "The status is not the output."
  }
}
"#;

    #[test]
    fn a_check_has_its_data_sources_and_assertions() {
        let (_, config) = load_main(CHECK);
        let check = &config.checks[0];
        assert_eq!((check.name.as_str(), check.data.len(), check.asserts.len()), ("health", 1, 1));
        assert_eq!(check.data[0].addr.to_string(), "data.local_file.status");
        let refs: Vec<String> = check.references().iter().map(|(r, _)| r.to_string()).collect();
        assert_eq!(refs, ["terraform_data.a"], "its own data source is no reference outside it");
        assert!(config.resources.iter().all(|r| r.addr != check.data[0].addr), "a scoped data source is the check's");
    }

    #[test]
    fn a_scoped_data_source_is_only_for_its_check() {
        let errors = load_errors(&format!("{CHECK}output \"o\" {{\n  value = data.local_file.status.content\n}}\n"));
        assert_eq!(
            errors,
            [
                "Error: main.tf:14: Reference to scoped resource\n  The referenced data resource \"local_file\" \"status\" is not available from this context."
            ]
        );
        let errors = load_errors(&format!("{CHECK}data \"local_file\" \"status\" {{\n  filename = \"x\"\n}}\n"));
        assert!(errors[0].contains("Duplicate data resource"), "{errors:?}");
        let errors = load_errors("check \"c\" {\n  oops = 1\n  assert {\n    condition = true\n  }\n}\n");
        assert!(errors.iter().any(|e| e.contains("Unsupported argument")), "{errors:?}");
        assert!(errors.iter().any(|e| e.contains("\"error_message\" is required")), "{errors:?}");
    }
}
