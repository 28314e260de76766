//! `provider` blocks with their `sandbox` grants, and the
//! `terraform { required_providers { … } }` (or `cairn { … }`) settings that
//! say where each provider's `.wasm` comes from.

use std::collections::BTreeMap;
use std::path::Path;

use crate::diag::Diagnostic;
use crate::value::Value;

use super::blocks::{
    expect_no_labels, literal, literal_positive, literal_strings, reject_dynamic_blocks, take_attribute, take_blocks,
    unsupported_argument, unsupported_block,
};
use super::{Block, ProviderConfig, ProviderRequirement, SandboxConfig, error_at};

const SANDBOX_ARGUMENTS: &[&str] = &["read_write", "read_only", "env", "allowed_hosts", "memory_mb", "timeout_seconds"];

/// A provider configuration from its block; `name` is its checked label.
pub(super) fn provider(name: String, block: Block, dir: &Path, diags: &mut Vec<Diagnostic>) -> ProviderConfig {
    let Block { mut body, location, .. } = block;
    reject_dynamic_blocks(&mut body, diags);
    if let Some(alias) = take_attribute(&mut body, "alias") {
        diags.push(error_at(
            "Provider aliases are not supported",
            "Each provider can be configured once; remove \"alias\".",
            &alias.location,
        ));
    }
    // Terraform's old place for a version constraint; versions are pinned
    // by the lock file's hashes instead, so it is accepted and ignored.
    take_attribute(&mut body, "version");
    // Read by cairn, like the sandbox: the executor's limit for this provider.
    let max_concurrency =
        take_attribute(&mut body, "max_concurrency").and_then(|attr| literal_positive(&attr, dir, diags));
    let mut sandboxes = take_blocks(&mut body, "sandbox").into_iter();
    let sandbox = sandboxes.next().map(|b| sandbox(&b, dir, diags)).unwrap_or_default();
    for extra in sandboxes {
        diags.push(error_at("Duplicate sandbox block", "A provider may have only one sandbox block.", &extra.location));
    }
    ProviderConfig { name, body, sandbox, max_concurrency, location }
}

/// The `sandbox { … }` grants: literal values only.
fn sandbox(block: &Block, dir: &Path, diags: &mut Vec<Diagnostic>) -> SandboxConfig {
    expect_no_labels(block, diags);
    let mut sandbox = SandboxConfig { location: Some(block.location.clone()), ..SandboxConfig::default() };
    for attr in &block.body.attributes {
        match attr.name.as_str() {
            "read_write" => sandbox.read_write = literal_strings(attr, dir, diags),
            "read_only" => sandbox.read_only = literal_strings(attr, dir, diags),
            "env" => {
                sandbox.env = literal_strings(attr, dir, diags);
                for (name, location) in &sandbox.env {
                    if name.is_empty() || name.contains('=') {
                        diags.push(error_at(
                            "Invalid environment variable name",
                            format!("{name:?} is not an environment variable name."),
                            location,
                        ));
                    }
                }
            }
            "allowed_hosts" => sandbox.allowed_hosts = literal_strings(attr, dir, diags),
            "memory_mb" => sandbox.memory_mb = literal_positive(attr, dir, diags),
            "timeout_seconds" => sandbox.timeout_seconds = literal_positive(attr, dir, diags),
            _ => diags.push(unsupported_argument(attr, "sandbox", SANDBOX_ARGUMENTS)),
        }
    }
    for nested in &block.body.blocks {
        diags.push(unsupported_block(nested, "sandbox", &[]));
    }
    sandbox
}

/// A `terraform { … }` or `cairn { … }` block: `required_providers` entries
/// go into `requirements`; `required_version` is accepted and ignored.
pub(super) fn settings(
    block: &Block,
    dir: &Path,
    requirements: &mut BTreeMap<String, ProviderRequirement>,
    diags: &mut Vec<Diagnostic>,
) {
    expect_no_labels(block, diags);
    let kind = block.type_name.as_str();
    for attr in &block.body.attributes {
        if attr.name != "required_version" {
            diags.push(unsupported_argument(attr, kind, &["required_version"]));
        }
    }
    for nested in &block.body.blocks {
        if nested.type_name != "required_providers" {
            diags.push(unsupported_block(nested, kind, &["required_providers"]));
            continue;
        }
        expect_no_labels(nested, diags);
        for block in &nested.body.blocks {
            diags.push(unsupported_block(block, "required_providers", &[]));
        }
        for attr in &nested.body.attributes {
            let Some(source) = requirement_source(&attr.name, &attr.expr, &attr.location, dir, diags) else {
                continue;
            };
            if let Some(first) = requirements.get(&attr.name) {
                diags.push(error_at(
                    "Duplicate required provider",
                    format!("The provider \"{}\" was already required at {}.", attr.name, first.location),
                    &attr.location,
                ));
                continue;
            }
            requirements.insert(attr.name.clone(), ProviderRequirement { source, location: attr.location.clone() });
        }
    }
}

/// The `source` of `name = { source = "./name.wasm", version = "…" }`;
/// other keys are accepted and ignored.
fn requirement_source(
    name: &str,
    expr: &super::Expression,
    location: &crate::diag::Location,
    dir: &Path,
    diags: &mut Vec<Diagnostic>,
) -> Option<String> {
    let what = format!("requirement for provider \"{name}\"");
    let value = literal(expr, dir, &what).map_err(|d| diags.extend(d)).ok()?;
    let missing = || {
        error_at(
            "Missing provider source",
            format!("The provider \"{name}\" needs a source: {name} = {{ source = \"./{name}.wasm\" }}."),
            location,
        )
    };
    let source = match &value {
        Value::Object(entries) | Value::Map(entries) => entries.get("source").cloned().unwrap_or(Value::Null),
        _ => {
            diags.push(missing());
            return None;
        }
    };
    match source {
        Value::String(s) if !s.is_empty() => Some(s),
        Value::Null => {
            diags.push(missing());
            None
        }
        other => {
            diags.push(error_at(
                "Invalid provider source",
                format!("The source of provider \"{name}\" must be a non-empty string, got {}.", other.to_hcl()),
                location,
            ));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{load_errors, load_main, write_dir};
    use super::*;
    use crate::config::load;

    #[test]
    fn required_providers_in_terraform_and_cairn_blocks() {
        let dir = write_dir(&[
            (
                "a.tf",
                "terraform {\n  required_version = \">= 1.0\"\n  required_providers {\n    local = { source = \"./local.wasm\", version = \"1.0\" }\n  }\n}\n",
            ),
            ("b.tf", "cairn {\n  required_providers {\n    random = {\n      source = \"providers/\"\n    }\n  }\n}\n"),
        ]);
        let config = load(dir.path()).unwrap();
        let req = &config.required_providers;
        assert_eq!(req.len(), 2);
        assert_eq!(req["local"].source, "./local.wasm");
        assert_eq!(req["local"].location.to_string(), "a.tf:4");
        assert_eq!(req["random"].source, "providers/");
        assert_eq!(req["random"].location.to_string(), "b.tf:3");
    }

    #[test]
    fn required_provider_errors() {
        let errors = load_errors(
            "terraform {\n  required_providers {\n    a = \"1.0\"\n    b = { version = \"1\" }\n    c = { source = var.s }\n    d = { source = 1 }\n  }\n  backend \"s3\" {}\n}\ncairn {\n  required_providers {\n    d = { source = \"./d.wasm\" }\n  }\n}\nvariable \"s\" {}\n",
        );
        let expected = [
            "Error: main.tf:3: Missing provider source\n  The provider \"a\" needs a source: a = { source = \"./a.wasm\" }.",
            "Error: main.tf:4: Missing provider source",
            "Error: main.tf:5: Variables not allowed",
            "Error: main.tf:6: Invalid provider source\n  The source of provider \"d\" must be a non-empty string, got 1.",
            "Error: main.tf:8: Unsupported block type\n  Blocks of type \"backend\" are not expected in a terraform block.",
        ];
        for e in expected {
            assert!(errors.iter().any(|shown| shown.starts_with(e)), "missing {e:?} in:\n{}", errors.join("\n"));
        }
    }

    #[test]
    fn duplicate_requirements_across_blocks() {
        let errors = load_errors(
            "terraform {\n  required_providers {\n    a = { source = \"./a.wasm\" }\n  }\n}\ncairn {\n  required_providers {\n    a = { source = \"./b.wasm\" }\n  }\n}\n",
        );
        assert_eq!(
            errors,
            ["Error: main.tf:8: Duplicate required provider\n  The provider \"a\" was already required at main.tf:3."]
        );
    }

    #[test]
    fn provider_blocks_and_sandbox() {
        let (_dir, config) = load_main(
            r#"variable "root" {}
provider "local" {
  root    = var.root
  version = "~> 1.0"
  sandbox {
    read_write      = ["./out", "/tmp/cairn"]
    read_only       = ["./templates"]
    env             = ["HOME"]
    allowed_hosts   = ["api.example.com"]
    memory_mb       = 256
    timeout_seconds = 30
  }
}
provider "random" {}
"#,
        );
        let local = config.provider("local").unwrap();
        assert_eq!(local.location.line, 2);
        assert_eq!(local.body.attributes.iter().map(|a| a.name.as_str()).collect::<Vec<_>>(), ["root"]);
        assert!(local.body.blocks.is_empty());
        let s = &local.sandbox;
        let names =
            |v: &[(String, crate::diag::Location)]| v.iter().map(|(s, l)| (s.clone(), l.line)).collect::<Vec<_>>();
        assert_eq!(names(&s.read_write), [("./out".to_string(), 6), ("/tmp/cairn".to_string(), 6)]);
        assert_eq!(names(&s.read_only), [("./templates".to_string(), 7)]);
        assert_eq!(names(&s.env), [("HOME".to_string(), 8)]);
        assert_eq!(names(&s.allowed_hosts), [("api.example.com".to_string(), 9)]);
        assert_eq!((s.memory_mb, s.timeout_seconds), (Some(256), Some(30)));
        assert_eq!(s.location.as_ref().unwrap().line, 5);
        assert_eq!(config.provider("random").unwrap().sandbox, SandboxConfig::default());
    }

    #[test]
    fn max_concurrency_is_read_by_cairn_and_not_passed_to_the_provider() {
        let (_dir, config) = load_main("provider \"local\" {\n  max_concurrency = 3\n}\nprovider \"random\" {}\n");
        let local = config.provider("local").unwrap();
        assert_eq!(local.max_concurrency, Some(3));
        assert!(local.body.attributes.is_empty());
        assert_eq!(config.provider("random").unwrap().max_concurrency, None);
        let errors = load_errors("provider \"local\" {\n  max_concurrency = 0\n}\n");
        assert!(errors[0].starts_with("Error: main.tf:2: Invalid value"), "{errors:?}");
    }

    #[test]
    fn sandbox_errors() {
        let errors = load_errors(
            r#"variable "dir" {}
provider "local" {
  alias = "x"
  sandbox {
    read_write = [var.dir]
    read_only  = "./x"
    memory_mb  = 0
    timeout_seconds = 1.5
    env = ["A=B"]
    network = true
    mount {}
  }
  sandbox {}
}
"#,
        );
        let expected = [
            "Error: main.tf:3: Provider aliases are not supported",
            "Error: main.tf:5: Variables not allowed\n  The \"read_write\" argument must be a literal value; it cannot refer to var.dir.",
            "Error: main.tf:6: Invalid value\n  The \"read_only\" argument is not valid: a list(string) is required, got a string.",
            "Error: main.tf:7: Invalid value\n  The \"memory_mb\" argument must be a whole number of at least 1.",
            "Error: main.tf:8: Invalid value\n  The \"timeout_seconds\" argument must be a whole number of at least 1.",
            "Error: main.tf:9: Invalid environment variable name",
            "Error: main.tf:10: Unsupported argument\n  An argument named \"network\" is not expected in a sandbox block.",
            "Error: main.tf:11: Unsupported block type\n  Blocks of type \"mount\" are not expected in a sandbox block.",
            "Error: main.tf:13: Duplicate sandbox block",
        ];
        for e in expected {
            assert!(errors.iter().any(|shown| shown.starts_with(e)), "missing {e:?} in:\n{}", errors.join("\n"));
        }
    }
}
