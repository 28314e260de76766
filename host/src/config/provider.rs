//! `provider` blocks with their `sandbox` grants, and the
//! `terraform { required_providers { … } }` (or `cairn { … }`) settings that
//! say where each provider's `.wasm` comes from.

use std::path::Path;

use crate::diag::Diagnostic;
use crate::value::Value;

use super::blocks::{
    expect_no_labels, literal, literal_positive, literal_strings, reject_dynamic_blocks, take_attribute, take_blocks,
    unsupported_argument, unsupported_block,
};
use super::{Attribute, Block, HttpGrantConfig, ProviderConfig, ProviderRequirement, SandboxConfig, error_at};

const SANDBOX_ARGUMENTS: &[&str] = &[
    "read_write",
    "read_only",
    "env",
    "memory",
    "timeout",
    "max_concurrency",
    "max_answer_size",
    "max_answer_depth",
    "max_descriptors",
    "max_handles",
    "max_table_elements",
    "max_instances",
    "max_log_lines",
    "allowed_hosts",
    "memory_mb",
    "timeout_seconds",
];

/// The most instances (parallel calls) one provider may be given.
const MAX_CONCURRENCY: u64 = 64;

/// The deepest answer nesting an operator may allow (the host's own limit).
const MAX_ANSWER_DEPTH: u64 = 256;

/// The most open files an operator may allow one instance: cairn and every
/// provider share the process's descriptors (often 1024 or 4096).
const MAX_DESCRIPTORS: u64 = 1024;

/// The most handles an operator may allow one instance (wasmtime's own
/// default for a store).
const MAX_HANDLES: u64 = 100_000;

/// The most table elements an operator may allow (10 M, 80 MiB of host memory).
const MAX_TABLE_ELEMENTS: u64 = 10_000_000;

/// The most core instances an operator may allow one component.
const MAX_INSTANCES: u64 = 1000;

/// The most lines an operator may let one call log.
const MAX_LOG_LINES: u64 = 1_000_000;

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
    let mut sandboxes = take_blocks(&mut body, "sandbox").into_iter();
    let sandbox = sandboxes.next().map(|b| sandbox(&b, dir, diags)).unwrap_or_default();
    for extra in sandboxes {
        diags.push(error_at("Duplicate sandbox block", "A provider may have only one sandbox block.", &extra.location));
    }
    ProviderConfig { name, body, sandbox, location }
}

/// The `sandbox { … }` grants: literal values only.
fn sandbox(block: &Block, dir: &Path, diags: &mut Vec<Diagnostic>) -> SandboxConfig {
    expect_no_labels(block, diags);
    let mut sandbox = SandboxConfig { location: Some(block.location.clone()), ..SandboxConfig::default() };
    // The settings written so far, for those with two spellings.
    let mut written = Vec::new();
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
            "memory" | "memory_mb" => {
                let bytes = if attr.name == "memory" {
                    literal_size(attr, dir, diags)
                } else {
                    literal_positive(attr, dir, diags).map(|mb| mb.saturating_mul(1 << 20))
                };
                set_once(&mut sandbox.memory, bytes, &mut written, attr, "memory", diags);
            }
            "timeout" | "timeout_seconds" => {
                let timeout = if attr.name == "timeout" {
                    literal_duration(attr, dir, diags)
                } else {
                    literal_positive(attr, dir, diags).map(std::time::Duration::from_secs)
                };
                set_once(&mut sandbox.timeout, timeout, &mut written, attr, "timeout", diags);
            }
            "max_concurrency" => {
                sandbox.max_concurrency = literal_at_most(attr, dir, MAX_CONCURRENCY, diags);
            }
            "max_answer_size" => sandbox.max_answer_size = literal_size(attr, dir, diags),
            "max_answer_depth" => {
                sandbox.max_answer_depth = literal_at_most(attr, dir, MAX_ANSWER_DEPTH, diags);
            }
            "max_descriptors" => sandbox.max_descriptors = literal_at_most(attr, dir, MAX_DESCRIPTORS, diags),
            "max_handles" => sandbox.max_handles = literal_at_most(attr, dir, MAX_HANDLES, diags),
            "max_table_elements" => {
                sandbox.max_table_elements = literal_at_most(attr, dir, MAX_TABLE_ELEMENTS, diags);
            }
            "max_instances" => sandbox.max_instances = literal_at_most(attr, dir, MAX_INSTANCES, diags),
            "max_log_lines" => sandbox.max_log_lines = literal_at_most(attr, dir, MAX_LOG_LINES, diags),
            _ => diags.push(unsupported_argument(attr, "sandbox", SANDBOX_ARGUMENTS)),
        }
    }
    for nested in &block.body.blocks {
        if nested.type_name == "http" {
            if let Some(grant) = http_grant(nested, dir, diags) {
                sandbox.http.push(grant);
            }
        } else {
            diags.push(unsupported_block(nested, "sandbox", &["http"]));
        }
    }
    sandbox
}

/// Sets a setting that has two spellings (`memory` and `memory_mb`), with an
/// error when both are written.
fn set_once<T>(
    slot: &mut Option<T>,
    value: Option<T>,
    written: &mut Vec<&'static str>,
    attr: &Attribute,
    name: &'static str,
    diags: &mut Vec<Diagnostic>,
) {
    if written.contains(&name) {
        diags.push(error_at(
            "Duplicate sandbox setting",
            format!("The {name} is set twice; write it once, as \"{name}\"."),
            &attr.location,
        ));
    }
    written.push(name);
    if value.is_some() {
        *slot = value;
    }
}

/// A whole number from 1 to `max`.
fn literal_at_most(attr: &Attribute, dir: &Path, max: u64, diags: &mut Vec<Diagnostic>) -> Option<u64> {
    let n = literal_positive(attr, dir, diags)?;
    if n > max {
        diags.push(error_at(
            "Invalid value",
            format!("The \"{}\" argument must be at most {max}, got {n}.", attr.name),
            &attr.location,
        ));
        return None;
    }
    Some(n)
}

/// A size in bytes: a number of MiB (`64`), or a string with a unit
/// (`"64 MiB"`, `"1GiB"`, `"512 KiB"`, `"100 bytes"`).
fn literal_size(attr: &Attribute, dir: &Path, diags: &mut Vec<Diagnostic>) -> Option<u64> {
    let what = format!("\"{}\" argument", attr.name);
    let value = literal(&attr.expr, dir, &what).map_err(|d| diags.extend(d)).ok()?;
    let parsed = match &value {
        Value::Number(n) => n.as_i64().filter(|i| *i > 0).map(|mb| (mb as u64).saturating_mul(1 << 20)),
        Value::String(s) => parse_size(s),
        _ => None,
    };
    if parsed.is_none() {
        diags.push(error_at(
            "Invalid value",
            format!(
                "The {what} must be a size: a whole number of MiB, or a string such as \"64 MiB\" or \"1 GiB\"; got {}.",
                value.to_hcl()
            ),
            &attr.location,
        ));
    }
    parsed
}

/// `"64 MiB"` → 64 << 20. Units: bytes, KiB, MiB, GiB (case-insensitive).
fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: u64 = number.parse().ok().filter(|n| *n > 0)?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" | "byte" | "bytes" => 0,
        "kib" => 10,
        "mib" => 20,
        "gib" => 30,
        _ => return None,
    };
    number.checked_mul(1 << shift)
}

/// A duration: a number of seconds (`30`), or a string with a unit
/// (`"30s"`, `"2m"`, `"500ms"`).
fn literal_duration(attr: &Attribute, dir: &Path, diags: &mut Vec<Diagnostic>) -> Option<std::time::Duration> {
    let what = format!("\"{}\" argument", attr.name);
    let value = literal(&attr.expr, dir, &what).map_err(|d| diags.extend(d)).ok()?;
    let parsed = match &value {
        Value::Number(n) => n.as_i64().filter(|i| *i > 0).map(|s| std::time::Duration::from_secs(s as u64)),
        Value::String(s) => parse_duration(s),
        _ => None,
    };
    if parsed.is_none() {
        diags.push(error_at(
            "Invalid value",
            format!(
                "The {what} must be a duration: a whole number of seconds, or a string such as \"30s\", \"2m\" or \"500ms\"; got {}.",
                value.to_hcl()
            ),
            &attr.location,
        ));
    }
    parsed
}

/// `"30s"` → 30 seconds. Units: ms, s, m.
fn parse_duration(text: &str) -> Option<std::time::Duration> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: u64 = number.parse().ok().filter(|n| *n > 0)?;
    match unit.trim() {
        "ms" => Some(std::time::Duration::from_millis(number)),
        "s" => Some(std::time::Duration::from_secs(number)),
        "m" => Some(std::time::Duration::from_secs(number.checked_mul(60)?)),
        _ => None,
    }
}

/// An `http { url = "https://api.example.com" headers = { … } }` block.
fn http_grant(block: &Block, dir: &Path, diags: &mut Vec<Diagnostic>) -> Option<HttpGrantConfig> {
    expect_no_labels(block, diags);
    for nested in &block.body.blocks {
        diags.push(unsupported_block(nested, "http", &[]));
    }
    let mut url = None;
    let mut headers = None;
    for attr in &block.body.attributes {
        match attr.name.as_str() {
            "url" => url = Some(attr),
            // Evaluated when the provider starts: header values are usually
            // secrets, so they come from variables.
            "headers" => headers = Some(attr.expr.clone()),
            _ => diags.push(unsupported_argument(attr, "http", &["url", "headers"])),
        }
    }
    let Some(url_attr) = url else {
        diags.push(error_at(
            "Missing required argument",
            "An http block needs a url, such as url = \"https://api.example.com\".",
            &block.location,
        ));
        return None;
    };
    let what = "\"url\" argument";
    let value = literal(&url_attr.expr, dir, what).map_err(|d| diags.extend(d)).ok()?;
    let parsed = match &value {
        Value::String(s) => parse_origin(s),
        other => Err(format!("a string is required, got {}", other.to_hcl())),
    };
    match parsed {
        Ok((scheme, host, port)) => {
            Some(HttpGrantConfig { scheme, host, port, headers, location: block.location.clone() })
        }
        Err(e) => {
            diags.push(error_at("Invalid value", format!("The {what} is not valid: {e}."), &url_attr.location));
            None
        }
    }
}

/// `https://API.example.com` → ("https", "api.example.com", 443). Only an
/// origin: a scheme (http or https), a host (`*.` allowed first) and an
/// optional port; no user, path, query or fragment.
pub(crate) fn parse_origin(url: &str) -> Result<(String, String, u16), String> {
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err(format!("{url:?} is not a URL such as \"https://api.example.com\""));
    };
    let scheme = scheme.to_ascii_lowercase();
    let default_port = match scheme.as_str() {
        "https" => 443,
        "http" => 80,
        _ => return Err(format!("the scheme {scheme:?} is not http or https")),
    };
    let authority = rest.strip_suffix('/').unwrap_or(rest);
    if authority.contains(['/', '?', '#', '@']) {
        return Err(format!("{url:?} must be only an origin (scheme://host:port), without user, path or query"));
    }
    // `[::1]:8080` keeps the brackets of its IPv6 address in the host.
    let port_at = match authority.rfind(']') {
        Some(end) => authority[end..].find(':').map(|i| end + i),
        None => authority.rfind(':'),
    };
    let (host, port) = match port_at {
        Some(at) => {
            let port = &authority[at + 1..];
            let port: u16 = port.parse().map_err(|_| format!("the port {port:?} is not a number from 1 to 65535"))?;
            if port == 0 {
                return Err("the port 0 is not a port".to_string());
            }
            (&authority[..at], port)
        }
        None => (authority, default_port),
    };
    let host = host.to_ascii_lowercase();
    let name = host.strip_prefix("*.").unwrap_or(&host);
    let valid = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '[' | ']' | ':'))
        && !name.contains('*');
    if !valid {
        return Err(format!("{host:?} is not a host name"));
    }
    Ok((scheme, host, port))
}

/// A `terraform { … }` or `cairn { … }` block: `required_providers`
/// entries and `trusted_keys` go into `config`; `required_version` is
/// accepted and ignored.
pub(super) fn settings(block: &Block, dir: &Path, config: &mut super::Config, diags: &mut Vec<Diagnostic>) {
    expect_no_labels(block, diags);
    let kind = block.type_name.as_str();
    for attr in &block.body.attributes {
        match attr.name.as_str() {
            "required_version" => {}
            "trusted_keys" => {
                for (key, location) in literal_strings(attr, dir, diags) {
                    config.trusted_keys.push(super::TrustedKey { key, location });
                }
            }
            _ => diags.push(unsupported_argument(attr, kind, &["required_version", "trusted_keys"])),
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
            let Some(requirement) = requirement(&attr.name, &attr.expr, &attr.location, dir, diags) else {
                continue;
            };
            if let Some(first) = config.required_providers.get(&attr.name) {
                diags.push(error_at(
                    "Duplicate required provider",
                    format!("The provider \"{}\" was already required at {}.", attr.name, first.location),
                    &attr.location,
                ));
                continue;
            }
            config.required_providers.insert(attr.name.clone(), requirement);
        }
    }
}

/// The keys a `required_providers` entry may have.
const REQUIREMENT_KEYS: &[&str] = &["source", "version"];

/// `name = { source = "./name.wasm", version = "~> 1.2" }`: a source, a
/// version constraint, or both; any other key is an error (a hash belongs
/// in `cairn.lock`, which `cairn init` writes).
fn requirement(
    name: &str,
    expr: &super::Expression,
    location: &crate::diag::Location,
    dir: &Path,
    diags: &mut Vec<Diagnostic>,
) -> Option<ProviderRequirement> {
    let what = format!("requirement for provider \"{name}\"");
    let value = literal(expr, dir, &what).map_err(|d| diags.extend(d)).ok()?;
    let missing = || {
        error_at(
            "Missing provider source",
            format!(
                "The provider \"{name}\" needs a source or a version: {name} = {{ source = \"./{name}.wasm\" }}, \
                 or {name} = {{ version = \"~> 1.0\" }} to search the providers path."
            ),
            location,
        )
    };
    let (Value::Object(entries) | Value::Map(entries)) = &value else {
        diags.push(missing());
        return None;
    };
    let mut valid = true;
    for key in entries.keys() {
        if !REQUIREMENT_KEYS.contains(&key.as_str()) {
            let hint = super::suggest::did_you_mean(key, REQUIREMENT_KEYS.iter().copied());
            let lock = if key == "sha256" || key == "hash" {
                " Hashes are kept in cairn.lock, which `cairn init` writes."
            } else {
                ""
            };
            diags.push(error_at(
                "Unsupported argument",
                format!("The requirement for provider \"{name}\" has an unknown key \"{key}\"; only \"source\" and \"version\" are expected.{hint}{lock}"),
                location,
            ));
            valid = false;
        }
    }
    let mut string = |key: &str| match entries.get(key) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(other) => {
            diags.push(error_at(
                format!("Invalid provider {key}"),
                format!("The {key} of provider \"{name}\" must be a non-empty string, got {}.", other.to_hcl()),
                location,
            ));
            valid = false;
            None
        }
    };
    let source = string("source");
    let version_text = string("version");
    if source.is_none() && version_text.is_none() && valid {
        diags.push(missing());
        return None;
    }
    let version = match version_text.as_deref().map(parse_constraint).transpose() {
        Ok(v) => v,
        Err(e) => {
            diags.push(error_at("Invalid version constraint", format!("Provider \"{name}\": {e}."), location));
            return None;
        }
    };
    valid.then(|| ProviderRequirement { source, version, version_text, location: location.clone() })
}

/// A version constraint as Terraform writes it, as a semver requirement:
/// comma-separated terms, each `=`, `!=`… or `~>` ("this or a later
/// release of the last written part": `~> 1.2` is `>= 1.2.0, < 2.0.0`,
/// `~> 1.2.3` is `>= 1.2.3, < 1.3.0`); a bare version means exactly it.
pub fn parse_constraint(text: &str) -> Result<semver::VersionReq, String> {
    let mut terms = Vec::new();
    for term in text.split(',') {
        let term = term.trim();
        let invalid = || format!("{text:?} is not a version constraint such as \"~> 1.2\" or \">= 1.0, < 2.0\"");
        if let Some(version) = term.strip_prefix("~>") {
            let parts: Vec<u64> =
                version.trim().split('.').map(|p| p.parse().map_err(|_| invalid())).collect::<Result<_, _>>()?;
            match parts[..] {
                [major] => terms.push(format!(">={major}.0.0, <{}.0.0", major + 1)),
                [major, minor] => terms.push(format!(">={major}.{minor}.0, <{}.0.0", major + 1)),
                [major, minor, patch] => terms.push(format!(">={major}.{minor}.{patch}, <{major}.{}.0", minor + 1)),
                _ => return Err(invalid()),
            }
        } else if term.starts_with(|c: char| c.is_ascii_digit()) {
            terms.push(format!("={term}"));
        } else if term.starts_with("!=") {
            // semver requirements have no "not equal".
            return Err(format!("{text:?}: \"!=\" is not supported; write a range that leaves the version out"));
        } else {
            terms.push(term.to_string());
        }
    }
    semver::VersionReq::parse(&terms.join(", ")).map_err(|e| format!("{text:?} is not a version constraint: {e}"))
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
        assert_eq!(req["local"].source.as_deref(), Some("./local.wasm"));
        assert_eq!(req["local"].version, Some(semver::VersionReq::parse("=1.0").unwrap()));
        assert_eq!(req["local"].location.to_string(), "a.tf:4");
        assert_eq!(req["random"].source.as_deref(), Some("providers/"));
        assert_eq!(req["random"].location.to_string(), "b.tf:3");
    }

    #[test]
    fn version_constraints_are_terraforms() {
        let matches = |constraint: &str, version: &str| {
            parse_constraint(constraint).unwrap().matches(&semver::Version::parse(version).unwrap())
        };
        assert!(matches("~> 1.2", "1.2.0") && matches("~> 1.2", "1.9.3") && !matches("~> 1.2", "2.0.0"));
        assert!(!matches("~> 1.2", "1.1.9"));
        assert!(matches("~> 1.2.3", "1.2.9") && !matches("~> 1.2.3", "1.3.0") && !matches("~> 1.2.3", "1.2.2"));
        assert!(matches("1.2.3", "1.2.3") && !matches("1.2.3", "1.2.4"));
        assert!(matches(">= 1.0, < 2.0", "1.5.0") && !matches(">= 1.0, < 2.0", "2.0.0"));
        for bad in ["~> x", "~> 1.2.3.4", "!= 1.0.0", "banana"] {
            assert!(parse_constraint(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn trusted_keys_are_read() {
        let (_dir, config) = load_main("cairn {\n  trusted_keys = [\"RWQkey\"]\n}\n");
        assert_eq!(config.trusted_keys.len(), 1);
        assert_eq!(config.trusted_keys[0].key, "RWQkey");
        assert_eq!(config.trusted_keys[0].location.to_string(), "main.tf:2");
    }

    #[test]
    fn required_provider_errors() {
        let errors = load_errors(
            "terraform {\n  required_providers {\n    a = \"1.0\"\n    b = { sha256 = \"abc\", bogus = 1 }\n    c = { source = var.s }\n    d = { source = 1 }\n    e = { version = \"~> x\" }\n  }\n  backend \"s3\" {}\n}\ncairn {\n  required_providers {\n    d = { source = \"./d.wasm\" }\n  }\n}\nvariable \"s\" {}\n",
        );
        let expected = [
            "Error: main.tf:3: Missing provider source\n  The provider \"a\" needs a source or a version: a = { source = \"./a.wasm\" }",
            "Error: main.tf:4: Unsupported argument\n  The requirement for provider \"b\" has an unknown key \"bogus\"",
            "Error: main.tf:4: Unsupported argument\n  The requirement for provider \"b\" has an unknown key \"sha256\"",
            "Error: main.tf:7: Invalid version constraint\n  Provider \"e\": \"~> x\" is not a version constraint",
            "Error: main.tf:5: Variables not allowed",
            "Error: main.tf:6: Invalid provider source\n  The source of provider \"d\" must be a non-empty string, got 1.",
            "Error: main.tf:9: Unsupported block type\n  Blocks of type \"backend\" are not expected in a terraform block.",
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
        assert_eq!((s.memory, s.timeout), (Some(256 << 20), Some(std::time::Duration::from_secs(30))));
        assert_eq!(s.location.as_ref().unwrap().line, 5);
        assert_eq!(config.provider("random").unwrap().sandbox, SandboxConfig::default());
    }

    #[test]
    fn sandbox_limits_and_http_grants() {
        let (_dir, config) = load_main(
            r#"variable "token" {}
provider "local" {
  sandbox {
    memory           = "64 MiB"
    timeout          = "500ms"
    max_concurrency  = 2
    max_answer_size  = 1
    max_answer_depth = 32
    max_descriptors  = 16
    max_handles      = 500
    max_table_elements = 20000
    max_instances    = 8
    max_log_lines    = 50
    http {
      url     = "https://API.example.com/"
      headers = { Authorization = var.token }
    }
    http {
      url = "http://127.0.0.1:8080"
    }
  }
}
"#,
        );
        let s = &config.provider("local").unwrap().sandbox;
        assert_eq!((s.memory, s.timeout), (Some(64 << 20), Some(std::time::Duration::from_millis(500))));
        assert_eq!((s.max_concurrency, s.max_answer_size, s.max_answer_depth), (Some(2), Some(1 << 20), Some(32)));
        let budgets = (s.max_descriptors, s.max_handles, s.max_table_elements, s.max_instances, s.max_log_lines);
        assert_eq!(budgets, (Some(16), Some(500), Some(20000), Some(8), Some(50)));
        let origins: Vec<_> = s.http.iter().map(|h| (h.scheme.as_str(), h.host.as_str(), h.port)).collect();
        assert_eq!(origins, [("https", "api.example.com", 443), ("http", "127.0.0.1", 8080)]);
        assert!(s.http[0].headers.is_some() && s.http[1].headers.is_none());
    }

    #[test]
    fn sizes_durations_and_origins() {
        assert_eq!(parse_size("1GiB"), Some(1 << 30));
        assert_eq!(parse_size("512 kib"), Some(512 << 10));
        assert_eq!(parse_size("100 bytes"), Some(100));
        assert_eq!(parse_size("0 MiB"), None);
        assert_eq!(parse_size("1 MB"), None);
        assert_eq!(parse_duration("2m"), Some(std::time::Duration::from_secs(120)));
        assert_eq!(parse_duration("1.5s"), None);
        assert_eq!(parse_origin("http://[::1]:81"), Ok(("http".into(), "[::1]".into(), 81)));
        assert_eq!(parse_origin("https://*.example.com"), Ok(("https".into(), "*.example.com".into(), 443)));
        for bad in
            ["ftp://x", "example.com", "https://x/path", "https://u@x", "https://x:0", "https://x:http", "https://"]
        {
            assert!(parse_origin(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn sandbox_limit_errors() {
        let errors = load_errors(
            r#"provider "local" {
  sandbox {
    memory          = "lots"
    memory_mb       = 64
    timeout         = "1h"
    max_concurrency = 1000
    max_answer_depth = 10000
    http {
      url = "https://example.com/v1"
    }
    http {
      headers = {}
    }
  }
}
"#,
        );
        let expected = [
            "Error: main.tf:3: Invalid value\n  The \"memory\" argument must be a size",
            "Error: main.tf:4: Duplicate sandbox setting",
            "Error: main.tf:5: Invalid value\n  The \"timeout\" argument must be a duration",
            "Error: main.tf:6: Invalid value\n  The \"max_concurrency\" argument must be at most 64, got 1000.",
            "Error: main.tf:7: Invalid value\n  The \"max_answer_depth\" argument must be at most 256",
            "Error: main.tf:9: Invalid value\n  The \"url\" argument is not valid: \"https://example.com/v1\" must be only an origin",
            "Error: main.tf:11: Missing required argument",
        ];
        for e in expected {
            assert!(errors.iter().any(|shown| shown.starts_with(e)), "missing {e:?} in:\n{}", errors.join("\n"));
        }
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
