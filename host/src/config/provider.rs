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
use super::{Attribute, Block, HttpHeaders, ProviderConfig, ProviderRequirement, error_at};
use crate::diag::Location;
use crate::runtime::sandbox::{self, HttpGrant, Sandbox};

const SANDBOX_ARGUMENTS: &[&str] = &[
    "read_write",
    "read_only",
    "env",
    "connect",
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

/// A provider configuration from its block; `name` is its checked label.
pub(super) fn provider(name: String, block: Block, dir: &Path, diags: &mut Vec<Diagnostic>) -> ProviderConfig {
    let Block { mut body, location, .. } = block;
    reject_dynamic_blocks(&mut body, diags);
    // `alias = "other"` names a second configuration, `local.other`.
    let name = match take_attribute(&mut body, "alias") {
        Some(alias) => match super::blocks::literal_string(&alias, dir, diags) {
            Some(a) if crate::addr::is_identifier(&a) => format!("{name}.{a}"),
            Some(a) => {
                diags.push(error_at(
                    "Invalid provider alias",
                    format!("{a:?} is not a valid alias: an alias is a name, like \"other\"."),
                    &alias.location,
                ));
                name
            }
            None => name,
        },
        None => name,
    };
    // Terraform's old place for a version constraint; versions are pinned
    // by the lock file's hashes instead, so it is accepted and ignored.
    take_attribute(&mut body, "version");
    let mut sandboxes = take_blocks(&mut body, "sandbox").into_iter();
    let (sandbox, http_headers) = sandboxes.next().map(|b| sandbox(&b, dir, diags)).unwrap_or_default();
    for extra in sandboxes {
        diags.push(error_at("Duplicate sandbox block", "A provider may have only one sandbox block.", &extra.location));
    }
    ProviderConfig { name, body, sandbox, http_headers, location }
}

/// The `sandbox { … }` grants (literal values only), checked as they are
/// read: directories resolved against the configuration directory `dir`
/// (read-only ones must exist), environment variables given cairn's values,
/// connect targets as `host:port` (names are resolved when a run starts),
/// budgets within their ceilings. Header expressions of `http` grants come
/// back apart, to be evaluated when the provider starts.
fn sandbox(block: &Block, dir: &Path, diags: &mut Vec<Diagnostic>) -> (Sandbox, Vec<HttpHeaders>) {
    expect_no_labels(block, diags);
    let mut policy = Sandbox::default();
    let config_dir = match sandbox::absolute_dir(dir) {
        Ok(config_dir) => config_dir,
        Err(e) => {
            diags.push(error_at("Invalid sandbox", e, &block.location));
            return (policy, Vec::new());
        }
    };
    // Each grant is checked where it is written.
    let grant = |result: Result<(), String>, location: &Location, diags: &mut Vec<Diagnostic>| {
        if let Err(e) = result {
            diags.push(error_at("Invalid sandbox grant", format!("{}.", capitalized(&e)), location));
        }
    };
    // The settings written so far, for those with two spellings.
    let mut written = Vec::new();
    for attr in &block.body.attributes {
        match attr.name.as_str() {
            "read_write" => {
                for (path, location) in literal_strings(attr, dir, diags) {
                    grant(policy.grant_read_write(&config_dir, &path), &location, diags);
                }
            }
            "read_only" => {
                for (path, location) in literal_strings(attr, dir, diags) {
                    grant(policy.grant_read_only(&config_dir, &path), &location, diags);
                }
            }
            "env" => {
                for (name, location) in literal_strings(attr, dir, diags) {
                    if let Err(e) = policy.grant_env(&name) {
                        diags.push(error_at("Invalid environment variable name", format!("{e}."), &location));
                    }
                }
            }
            "connect" => {
                for (target, location) in literal_strings(attr, dir, diags) {
                    grant(policy.grant_connect(&target), &location, diags);
                }
            }
            // Refused rather than ignored: an operator who grants a host
            // expects it to be reachable, and nothing would tell them why it
            // is not.
            "allowed_hosts" => diags.push(error_at(
                "Unsupported argument",
                "sandbox.allowed_hosts is not supported; grant outgoing HTTP with a block per origin instead: \
                 http { url = \"https://api.example.com\" }.",
                &attr.location,
            )),
            "memory" | "memory_mb" => {
                let bytes = if attr.name == "memory" {
                    literal_size(attr, dir, diags)
                } else {
                    literal_positive(attr, dir, diags).map(|mb| mb.saturating_mul(1 << 20))
                };
                set_once(&mut policy.memory_limit, bytes, &mut written, attr, "memory", diags);
            }
            "timeout" | "timeout_seconds" => {
                let timeout = if attr.name == "timeout" {
                    literal_duration(attr, dir, diags)
                } else {
                    literal_positive(attr, dir, diags).map(std::time::Duration::from_secs)
                };
                set_once(&mut policy.call_timeout, timeout, &mut written, attr, "timeout", diags);
            }
            "max_answer_size" => {
                if let Some(bytes) = literal_size(attr, dir, diags) {
                    policy.max_answer_bytes = bytes;
                }
            }
            "max_concurrency" => policy.max_concurrency = literal_count(attr, dir, diags).or(policy.max_concurrency),
            name => {
                let budget = match name {
                    "max_answer_depth" => &mut policy.max_answer_depth,
                    "max_descriptors" => &mut policy.max_descriptors,
                    "max_handles" => &mut policy.max_handles,
                    "max_table_elements" => &mut policy.max_table_elements,
                    "max_instances" => &mut policy.max_instances,
                    "max_log_lines" => &mut policy.max_log_lines,
                    _ => {
                        diags.push(unsupported_argument(attr, "sandbox", SANDBOX_ARGUMENTS));
                        continue;
                    }
                };
                if let Some(n) = literal_count(attr, dir, diags) {
                    *budget = n;
                }
            }
        }
    }
    let mut headers = Vec::new();
    for nested in &block.body.blocks {
        if nested.type_name == "http" {
            if let Some((origin, expr)) = http_grant(nested, dir, diags) {
                if let Some(expr) = expr {
                    headers.push(HttpHeaders { grant: policy.http.len(), expr });
                }
                policy.http.push(origin);
            }
        } else {
            diags.push(unsupported_block(nested, "sandbox", &["http"]));
        }
    }
    (policy, headers)
}

/// `text` with its first letter in upper case, to start a sentence.
fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map(|first| first.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// Sets a setting that has two spellings (`memory` and `memory_mb`), with an
/// error when both are written.
fn set_once<T>(
    slot: &mut T,
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
    if let Some(value) = value {
        *slot = value;
    }
}

/// A whole number from 1 to the budget's ceiling ([`sandbox::CEILINGS`]).
fn literal_count(attr: &Attribute, dir: &Path, diags: &mut Vec<Diagnostic>) -> Option<usize> {
    let n = literal_positive(attr, dir, diags)?;
    let ceiling = sandbox::CEILINGS.iter().find(|(name, _)| *name == attr.name).map_or(u64::MAX, |(_, most)| *most);
    if n > ceiling {
        diags.push(error_at(
            "Invalid value",
            format!("The \"{}\" argument must be at most {ceiling}, got {n}.", attr.name),
            &attr.location,
        ));
        return None;
    }
    Some(usize::try_from(n).unwrap_or(usize::MAX))
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
fn http_grant(
    block: &Block,
    dir: &Path,
    diags: &mut Vec<Diagnostic>,
) -> Option<(HttpGrant, Option<super::Expression>)> {
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
        Ok((scheme, host, port)) => Some((HttpGrant { scheme, host, port, headers: Vec::new() }, headers)),
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

/// The version of the Terraform language cairn implements: what
/// `terraform { required_version = … }` is checked against. cairn follows
/// Terraform 1.11's documented language, and its tests compare it with
/// `terraform` 1.11.4.
pub const TERRAFORM_VERSION: &str = "1.11.4";

/// cairn's own version: what `cairn { required_version = … }` is checked
/// against.
pub const CAIRN_VERSION: &str = env!("CARGO_PKG_VERSION");

/// A `terraform { … }` or `cairn { … }` block: `required_providers`
/// entries, `trusted_keys` and the `backend` go into `config`;
/// `required_version` is checked against [`TERRAFORM_VERSION`] or
/// [`CAIRN_VERSION`].
pub(super) fn settings(block: &Block, dir: &Path, config: &mut super::Config, diags: &mut Vec<Diagnostic>) {
    expect_no_labels(block, diags);
    let kind = block.type_name.as_str();
    for attr in &block.body.attributes {
        match attr.name.as_str() {
            "required_version" => required_version(attr, kind, dir, diags),
            "trusted_keys" => {
                for (key, location) in literal_strings(attr, dir, diags) {
                    config.trusted_keys.push(super::TrustedKey { key, location });
                }
            }
            _ => diags.push(unsupported_argument(attr, kind, &["required_version", "trusted_keys"])),
        }
    }
    for nested in &block.body.blocks {
        if nested.type_name == "backend" {
            backend_block(nested, dir, config, diags);
            continue;
        }
        if nested.type_name != "required_providers" {
            diags.push(unsupported_block(nested, kind, &["required_providers", "backend"]));
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

/// Checks `required_version` in a `terraform` block (`kind`) against the
/// language version cairn implements, or in a `cairn` block against
/// cairn's own, with Terraform's messages.
fn required_version(attr: &Attribute, kind: &str, dir: &Path, diags: &mut Vec<Diagnostic>) {
    let Some(text) = super::blocks::literal_string(attr, dir, diags) else { return };
    let Ok(constraint) = parse_constraint(&text) else {
        diags.push(error_at(
            "Invalid version constraint",
            "This string does not use correct version constraint syntax.",
            &attr.expr.location,
        ));
        return;
    };
    let (product, summary, version) = match kind {
        "cairn" => ("cairn", "Unsupported cairn version", CAIRN_VERSION),
        _ => ("Terraform", "Unsupported Terraform Core version", TERRAFORM_VERSION),
    };
    let current = semver::Version::parse(version).expect("the versions cairn states are valid");
    if !constraint.matches(&current) {
        diags.push(error_at(
            summary,
            format!(
                "This configuration does not support {product} version {version}. To proceed, either choose another \
                 supported {product} version or update this version constraint. Version constraints are normally set \
                 for good reason, so updating the constraint may lead to other errors or unexpected behavior."
            ),
            &attr.location,
        ));
    }
}

/// The `backend` block, of which a configuration has at most one.
fn backend_block(block: &Block, dir: &Path, config: &mut super::Config, diags: &mut Vec<Diagnostic>) {
    let Some(backend) = super::backend::backend(block, dir, diags) else { return };
    match &config.backend {
        Some(first) => diags.push(error_at(
            "Duplicate backend configuration",
            format!("A configuration may have only one backend; it was already configured at {}.", first.location),
            &block.location,
        )),
        None => config.backend = Some(backend),
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
    fn required_version_is_checked_against_the_language_and_cairn() {
        let errors = |text: &str| {
            let dir = write_dir(&[("main.tf", text)]);
            load(dir.path()).err().unwrap_or_default().iter().map(ToString::to_string).collect::<Vec<_>>()
        };
        let ok = [
            "terraform {\n  required_version = \">= 1.5, < 2.0\"\n}\n",
            "cairn {\n  required_version = \"~> 0.1\"\n}\n",
        ];
        for text in ok {
            assert_eq!(errors(text), Vec::<String>::new(), "{text}");
        }
        let old = errors("terraform {\n  required_version = \"< 1.0\"\n}\n");
        assert_eq!(old.len(), 1, "{old:?}");
        assert!(old[0].contains("main.tf:2") && old[0].contains("Unsupported Terraform Core version"), "{old:?}");
        assert!(old[0].contains("does not support Terraform version 1.11.4"), "{old:?}");
        let new = errors("cairn {\n  required_version = \">= 99\"\n}\n");
        assert!(new[0].contains("Unsupported cairn version") && new[0].contains(CAIRN_VERSION), "{new:?}");
        let dir = write_dir(&[("main.tf", "terraform {\n  required_version = \"not a constraint\"\n}\n")]);
        let bad = load(dir.path()).unwrap_err();
        assert_eq!(bad.len(), 1, "{bad:?}");
        assert_eq!(bad[0].summary, "Invalid version constraint");
        let at = bad[0].location.as_ref().unwrap();
        assert_eq!((at.file.to_str(), at.line, at.column), (Some("main.tf"), 2, 22));
    }

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
            "Error: main.tf:9: Unsupported backend type\n  There is no backend type named \"s3\"; cairn supports \"local\" and \"pg\".",
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
        let dir = write_dir(&[
            (
                "main.tf",
                r#"variable "root" {}
provider "local" {
  root    = var.root
  version = "~> 1.0"
  sandbox {
    read_write      = ["./out", "/tmp/cairn"]
    read_only       = ["./templates"]
    env             = ["PATH", "CAIRN_TEST_SURELY_UNSET"]
    memory_mb       = 256
    timeout_seconds = 30
  }
}
provider "random" {}
"#,
            ),
            ("templates/a.txt", "a"),
        ]);
        let config = load(dir.path()).unwrap();
        let local = config.provider("local").unwrap();
        assert_eq!(local.location.line, 2);
        assert_eq!(local.body.attributes.iter().map(|a| a.name.as_str()).collect::<Vec<_>>(), ["root"]);
        assert!(local.body.blocks.is_empty());
        let s = &local.sandbox;
        // Grants are resolved as they are read: absolute host paths, the
        // written path as the guest's name.
        let grants =
            |v: &[crate::runtime::Grant]| v.iter().map(|g| (g.host.clone(), g.guest.clone())).collect::<Vec<_>>();
        let root = std::path::absolute(dir.path()).unwrap();
        assert_eq!(
            grants(&s.read_write),
            [(root.join("./out"), "out".into()), ("/tmp/cairn".into(), "/tmp/cairn".into())]
        );
        assert_eq!(grants(&s.read_only), [(root.join("./templates"), "templates".into())]);
        assert!(!root.join("out").exists(), "reading a configuration creates nothing");
        // Environment variables carry cairn's values; unset ones are left out.
        assert_eq!(s.env, [("PATH".to_string(), std::env::var("PATH").unwrap())]);
        assert_eq!((s.memory_limit, s.call_timeout), (256 << 20, std::time::Duration::from_secs(30)));
        assert_eq!(config.provider("random").unwrap().sandbox, Sandbox::default());
    }

    #[test]
    fn grants_are_checked_where_they_are_written() {
        let errors = load_errors(
            r#"provider "local" {
  sandbox {
    read_only = [
      "./missing",
    ]
    read_write = [""]
    allowed_hosts = ["api.example.com"]
  }
}
"#,
        );
        let expected = [
            "Error: main.tf:4: Invalid sandbox grant\n  The read-only directory \"./missing\"",
            "Error: main.tf:6: Invalid sandbox grant\n  An empty directory grant.",
            "Error: main.tf:7: Unsupported argument\n  sandbox.allowed_hosts is not supported; grant outgoing HTTP with a block per origin",
        ];
        for e in expected {
            assert!(errors.iter().any(|shown| shown.starts_with(e)), "missing {e:?} in:\n{}", errors.join("\n"));
        }
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
        let local = config.provider("local").unwrap();
        let s = &local.sandbox;
        assert_eq!((s.memory_limit, s.call_timeout), (64 << 20, std::time::Duration::from_millis(500)));
        assert_eq!((s.max_concurrency, s.max_answer_bytes, s.max_answer_depth), (Some(2), 1 << 20, 32));
        let budgets = (s.max_descriptors, s.max_handles, s.max_table_elements, s.max_instances, s.max_log_lines);
        assert_eq!(budgets, (16, 500, 20000, 8, 50));
        let origins: Vec<_> = s.http.iter().map(|h| (h.scheme.as_str(), h.host.as_str(), h.port)).collect();
        assert_eq!(origins, [("https", "api.example.com", 443), ("http", "127.0.0.1", 8080)]);
        // Headers wait for the run's variables; only the first grant has any.
        assert_eq!(local.http_headers.iter().map(|h| h.grant).collect::<Vec<_>>(), [0]);
        assert!(s.http.iter().all(|h| h.headers.is_empty()));
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
    fn connect_grants() {
        let (_dir, config) = load_main(
            r#"provider "postgresql" {
  sandbox {
    connect = ["127.0.0.1:5432", "DB.internal:5432", "[::1]:5432"]
  }
}
"#,
        );
        let s = &config.provider("postgresql").unwrap().sandbox;
        let targets: Vec<String> = s.connect.iter().map(|g| g.target()).collect();
        assert_eq!(targets, ["127.0.0.1:5432", "db.internal:5432", "[::1]:5432"]);
        assert_eq!(s.connect[1].pinned, crate::runtime::sandbox::Pinned::Pending, "resolved when a run starts");
    }

    #[test]
    fn connect_grant_errors_point_at_the_entry() {
        let text = r#"provider "postgresql" {
  sandbox {
    connect = [
      "db.internal",
      "db.internal:0",
      "postgres://db.internal:5432",
      "127.0.0.1:5432",
        "127.0.0.1:5432",
    ]
  }
}
"#;
        let dir = crate::config::testutil::write_dir(&[("main.tf", text)]);
        let Err(diags) = load(dir.path()) else { panic!("the bad entries are errors") };
        let got: Vec<(usize, usize, &str, &str)> = diags
            .iter()
            .map(|d| {
                let at = d.location.as_ref().expect("each error has its place");
                (at.line, at.column, d.summary.as_str(), d.detail.as_str())
            })
            .collect();
        let invalid = "Invalid sandbox grant";
        assert_eq!(
            got,
            [
                (4, 7, invalid, "\"db.internal\" has no port; write host:port, such as \"db.internal:5432\"."),
                (
                    5,
                    7,
                    invalid,
                    "The port of \"db.internal:0\" is 0, which no server listens on; grant the server's port."
                ),
                (
                    6,
                    7,
                    invalid,
                    "\"postgres://db.internal:5432\" is a URL; a connect target is host:port, such as \"db.internal:5432\"."
                ),
                (8, 9, invalid, "The connect target 127.0.0.1:5432 is granted twice."),
            ]
        );
        assert!(diags[0].to_string().starts_with("Error: main.tf:4: Invalid sandbox grant"), "{}", diags[0]);
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
    fn aliased_configurations_are_named_after_their_alias() {
        let (_dir, config) = load_main(
            "provider \"local\" {}\nprovider \"local\" {\n  alias = \"other\"\n}\nresource \"local_file\" \"a\" {\n  provider = local.other\n}\nresource \"local_file\" \"b\" {}\n",
        );
        let names: Vec<&str> = config.providers.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["local", "local.other"]);
        let used: Vec<&str> = config.resources.iter().map(|r| r.provider.as_str()).collect();
        assert_eq!(used, ["local.other", "local"]);
        let errors =
            load_errors("provider \"local\" {\n  alias = \"x\"\n}\nprovider \"local\" {\n  alias = \"x\"\n}\n");
        assert!(errors[0].starts_with("Error: main.tf:4: Duplicate provider configuration"), "{errors:?}");
        let errors = load_errors("resource \"local_file\" \"a\" {\n  provider = local.y\n}\n");
        assert!(
            errors[0].starts_with("Error: main.tf:1: Reference to undeclared provider configuration"),
            "{errors:?}"
        );
    }

    #[test]
    fn sandbox_errors() {
        let errors = load_errors(
            r#"variable "dir" {}
provider "local" {
  alias = "not valid"
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
            "Error: main.tf:3: Invalid provider alias\n  \"not valid\" is not a valid alias",
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
