//! Provider sources and the checks a provider's file passes before any of
//! its code runs.
//!
//! A provider comes from the `cairn` binary (bundled), a `.wasm` path, a
//! directory searched by name and version ([`search`]), or an OCI registry
//! ([`oci`], downloaded by `cairn init` into the cache by digest). Before
//! the runtime compiles it, its bytes are checked here, in this order:
//!
//! 1. its declared identity ([`identity`]): the name must be the one the
//!    configuration uses, the version must satisfy the constraint;
//! 2. with `trusted_keys`, a signature by one of them ([`signature`]);
//! 3. its SHA-256 against `cairn.lock` ([`lock`]): a different file is
//!    refused, naming both hashes and `cairn init -upgrade`.
//!
//! Bundled providers skip 2 and 3: they are part of the binary the operator
//! already runs. Starting providers is the engine's job (`engine::providers`).

pub mod identity;
pub mod lock;
pub mod oci;
pub mod search;
pub mod signature;

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::config::{Config, ProviderRequirement};
use crate::diag::{Diagnostic, Location};
use crate::runtime;

pub use identity::Identity;
pub use lock::{LOCK_FILE, LockEntry, LockFile};

/// What `source` a lock entry records for a provider found on the providers
/// path (no `source` in the configuration).
pub const PROVIDERS_PATH_SOURCE: &str = "providers path";

/// Where a provider's component comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// Embedded in the `cairn` binary.
    Builtin(&'static [u8]),
    /// A `.wasm` file: a path from `required_providers`, a file found in a
    /// directory, or a download in the cache.
    File(PathBuf),
}

/// How a provider is being resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A run (plan, apply, …): nothing is downloaded; registry providers
    /// come from the cache, by the lock's hash.
    Run,
    /// `cairn init`: registry providers are pulled; with `upgrade`, the
    /// newest allowed version is chosen even if another one is locked.
    Init {
        /// `-upgrade`.
        upgrade: bool,
    },
}

/// A provider file that passed every check, ready for the runtime.
#[derive(Debug, Clone)]
pub struct Verified {
    /// The component.
    pub bytes: Cow<'static, [u8]>,
    /// Whether it is bundled (and so not locked).
    pub bundled: bool,
    /// Where it came from, for messages (a path, `bundled`).
    pub origin: String,
    /// The name and version it declares.
    pub identity: Option<Identity>,
    /// What `cairn.lock` records for it.
    pub entry: LockEntry,
}

/// Finds, reads and checks provider `name` for a run: identity, trusted
/// keys, and the hash in `cairn.lock`. A provider missing from the lock is
/// used with a warning (`cairn init` pins it).
pub fn load(name: &str, config: &Config) -> Result<Verified, Diagnostic> {
    let lock = LockFile::load(&config.dir).map_err(Diagnostic::error)?;
    let verified = find(name, config, lock.as_ref(), Mode::Run, true)?;
    if !verified.bundled && lock.as_ref().and_then(|l| l.providers.get(name)).is_none() {
        tracing::warn!(
            provider = name,
            "provider {name:?} ({}) is not pinned in {LOCK_FILE}: run `cairn init` to pin it",
            verified.origin
        );
    }
    Ok(verified)
}

/// Finds, reads and checks provider `name`: with `enforce_lock`, its hash
/// and source against its entry in `lock` (if it has one) right after
/// reading it; then its identity and signature. Without `enforce_lock`,
/// `lock` only chooses what is already locked where there is a choice
/// (directory versions, registry tags).
pub fn find(
    name: &str,
    config: &Config,
    lock: Option<&LockFile>,
    mode: Mode,
    enforce_lock: bool,
) -> Result<Verified, Diagnostic> {
    let requirement = config.required_providers.get(name);
    let locked = lock.and_then(|l| l.providers.get(name));
    let at = |d: Diagnostic| match requirement {
        Some(r) => d.at(&r.location),
        None => d,
    };
    let Some(requirement) = requirement else {
        return bundled(name).ok_or_else(|| unknown_provider(name));
    };
    if let Some(source) = requirement.source.as_deref()
        && !config.dir.join(source).exists()
        && let Some(address) = registry_address(source)
    {
        return bundled_for_terraform(name, requirement, source, address).map_err(at);
    }
    let (path, lock_source, found_version) = locate(name, requirement, config, locked, mode).map_err(at)?;
    let bytes = std::fs::read(&path)
        .map_err(|e| at(Diagnostic::error(format!("Cannot read provider {name:?} from {}: {e}", path.display()))))?;
    let origin = path.display().to_string();
    let sha256 = sha256_hex(&bytes);
    if let Some(locked) = locked.filter(|_| enforce_lock) {
        check_locked(name, &origin, &lock_source, &sha256, locked, Some(requirement.location.clone()))?;
    }
    let refuse = |why: String| at(Diagnostic::error(format!("Provider {name:?} ({origin}) is refused: {why}")));
    let identity = identity::read(&bytes).map_err(|e| refuse(format!("its identity cannot be read: {e}")))?;
    check_identity(name, requirement, identity.as_ref(), found_version.as_ref()).map_err(refuse)?;
    check_trusted_keys(config)?;
    let signed_by = check_signature(config, &path, &bytes).map_err(refuse)?;
    let entry =
        LockEntry { source: lock_source, version: identity.as_ref().map(|i| i.version.to_string()), sha256, signed_by };
    Ok(Verified { bytes: bytes.into(), bundled: false, origin, identity, entry })
}

/// The bundled provider `name`, if there is one.
fn bundled(name: &str) -> Option<Verified> {
    let bytes = runtime::builtin(name)?;
    let identity = identity::read(bytes).ok().flatten();
    let entry = LockEntry {
        source: "bundled".into(),
        version: identity.as_ref().map(|i| i.version.to_string()),
        sha256: runtime::builtin_sha256(name)?.to_string(),
        signed_by: None,
    };
    Some(Verified { bytes: bytes.into(), bundled: true, origin: "bundled".into(), identity, entry })
}

/// The registries whose `hashicorp/…` addresses name the providers cairn
/// bundles.
const TERRAFORM_REGISTRIES: &[&str] = &["registry.terraform.io", "registry.opentofu.org"];

/// `(host, namespace, type)` of a Terraform registry address
/// `[HOST/]NAMESPACE/TYPE`; `None` for a path or an `oci://` reference.
pub(crate) fn registry_address(source: &str) -> Option<(&str, &str, &str)> {
    if source.starts_with(['.', '/']) || source.ends_with('/') || source.ends_with(".wasm") || source.contains("://") {
        return None;
    }
    let parts: Vec<&str> = source.split('/').collect();
    let (host, namespace, type_name) = match parts.as_slice() {
        [namespace, type_name] => (TERRAFORM_REGISTRIES[0], *namespace, *type_name),
        [host, namespace, type_name] if host.contains('.') => (*host, *namespace, *type_name),
        _ => return None,
    };
    let word = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    (word(namespace) && word(type_name)).then_some((host, namespace, type_name))
}

/// Community providers a bundled provider stands in for, with the same
/// resource and attribute names: `(namespace, type)` on a Terraform
/// registry.
const COMMUNITY_BUNDLED: &[(&str, &str)] = &[("cyrilgdn", "postgresql")];

/// A configuration written for Terraform (`source = "hashicorp/local"`,
/// or a community provider of [`COMMUNITY_BUNDLED`] such as
/// `cyrilgdn/postgresql`) runs on the bundled provider of that name. A
/// version constraint there counts the other project's releases, not
/// cairn's: it is said, not applied. Any other registry address is an error
/// naming what cairn can use instead: nothing is downloaded from a
/// Terraform registry.
fn bundled_for_terraform(
    name: &str,
    requirement: &ProviderRequirement,
    source: &str,
    (host, namespace, type_name): (&str, &str, &str),
) -> Result<Verified, Diagnostic> {
    // `terraform.io/builtin/terraform` is Terraform's own address for the
    // provider of `terraform_data`, which cairn bundles too.
    let builtin = (host, namespace, type_name) == ("terraform.io", "builtin", "terraform");
    let community = COMMUNITY_BUNDLED.iter().any(|(ns, t)| namespace.eq_ignore_ascii_case(ns) && type_name == *t);
    let hashicorp = namespace.eq_ignore_ascii_case("hashicorp");
    let stands_in = builtin || ((hashicorp || community) && TERRAFORM_REGISTRIES.contains(&host));
    let found = bundled(type_name).filter(|_| stands_in);
    let is_bundled = found.is_some();
    let Some(verified) = found.filter(|_| type_name == name) else {
        let renamed = if is_bundled { format!(" (under its own name, {type_name:?})") } else { String::new() };
        return Err(Diagnostic::error(format!(
            "Provider {name:?}: {source:?} is a Terraform registry address, and cairn does not download from a \
             Terraform registry{renamed}"
        ))
        .with_detail(format!(
            "hashicorp/{} and {} run as cairn's bundled providers of those names. Any other provider is a .wasm \
             component: source = \"./path/{name}.wasm\", a directory, or \"oci://HOST/REPOSITORY:TAG\".",
            runtime::BUILTIN_NAMES.join(", hashicorp/"),
            COMMUNITY_BUNDLED.iter().map(|(ns, t)| format!("{ns}/{t}")).collect::<Vec<_>>().join(", ")
        )));
    };
    if let Some(constraint) = &requirement.version_text {
        let version = verified.identity.as_ref().map_or("unversioned".to_string(), |i| i.version.to_string());
        tracing::warn!(
            provider = name,
            "version = {constraint:?} counts the releases of {source}; cairn runs its bundled {name} ({version}) in its place"
        );
    }
    Ok(verified)
}

/// Where the file of a required provider is: its path, what the lock
/// records as its source, and the version its file name gave (directory
/// search).
fn locate(
    name: &str,
    requirement: &ProviderRequirement,
    config: &Config,
    locked: Option<&LockEntry>,
    mode: Mode,
) -> Result<(PathBuf, String, Option<semver::Version>), Diagnostic> {
    let preferred = match mode {
        Mode::Init { upgrade: true } => None,
        _ => locked.and_then(|l| l.version.as_deref()).and_then(|v| semver::Version::parse(v).ok()),
    };
    let search = |dirs: &[PathBuf], source: String| {
        search::find(name, requirement.version.as_ref(), dirs, preferred.as_ref())
            .map(|found| (found.path, source, Some(found.version)))
            .map_err(|e| Diagnostic::error(format!("Provider {name:?} was not found: {e}")))
    };
    match requirement.source.as_deref() {
        None => search(&search::providers_path(), PROVIDERS_PATH_SOURCE.to_string()),
        Some(source) if source.starts_with(oci::SCHEME) => {
            let path = match mode {
                // Runs never contact the registry: the copy `cairn init`
                // downloaded, found by the locked hash.
                Mode::Run => oci::cached(name, source, locked)?,
                Mode::Init { .. } => oci::pull(name, source, requirement.version.as_ref(), preferred.as_ref())?,
            };
            Ok((path, source.to_string(), None))
        }
        Some(source) => {
            let path = config.dir.join(source);
            if source.ends_with('/') || path.is_dir() {
                search(&[path], source.to_string())
            } else {
                Ok((path, source.to_string(), None))
            }
        }
    }
}

/// The declared identity fits the configuration: the same name, and a
/// version that satisfies the constraint (and the one a file name gave).
fn check_identity(
    name: &str,
    requirement: &ProviderRequirement,
    identity: Option<&Identity>,
    found_version: Option<&semver::Version>,
) -> Result<(), String> {
    let Some(identity) = identity else {
        // A provider that says nothing (an older SDK, another language) is
        // identified by its hash alone; a version constraint needs a version.
        if let Some(text) = &requirement.version_text {
            return Err(format!("the configuration requires version {text:?}, and it declares no version"));
        }
        return Ok(());
    };
    if identity.name != name {
        return Err(format!(
            "it calls itself {:?}, not {name:?}: it is another provider (check the source, or name it {:?} in the configuration)",
            identity.name, identity.name
        ));
    }
    if let Some(version) = found_version.filter(|v| **v != identity.version) {
        return Err(format!("its file name says version {version}, and it declares {}", identity.version));
    }
    if let (Some(constraint), Some(text)) = (&requirement.version, &requirement.version_text)
        && !constraint.matches(&identity.version)
    {
        return Err(format!("it is version {}, and the configuration requires {text:?}", identity.version));
    }
    Ok(())
}

/// Every key of `trusted_keys` is a minisign public key.
fn check_trusted_keys(config: &Config) -> Result<(), Diagnostic> {
    for key in &config.trusted_keys {
        signature::parse_public_key(&key.key)
            .map_err(|e| Diagnostic::error(format!("Invalid trusted key: {e}")).at(&key.location))?;
    }
    Ok(())
}

/// With `trusted_keys` in the configuration: the key that signed the file
/// at `path` (its signature beside it, `PATH.minisig`), or why not.
fn check_signature(config: &Config, path: &Path, bytes: &[u8]) -> Result<Option<String>, String> {
    if config.trusted_keys.is_empty() {
        return Ok(None);
    }
    let signature_path = signature::signature_path(path);
    let text = std::fs::read_to_string(&signature_path).map_err(|e| {
        format!(
            "it is not signed, and the configuration requires a signature by a trusted key ({}: {e})",
            signature_path.display()
        )
    })?;
    let trusted: Vec<String> = config.trusted_keys.iter().map(|k| k.key.clone()).collect();
    signature::verify(bytes, &text, &trusted).map(Some)
}

/// The file a run uses (from `origin`, resolved from `source`, with hash
/// `sha256`) must be the one `cairn init` locked.
fn check_locked(
    name: &str,
    origin: &str,
    source: &str,
    sha256: &str,
    locked: &LockEntry,
    location: Option<Location>,
) -> Result<(), Diagnostic> {
    let at = |d: Diagnostic| match &location {
        Some(l) => d.at(l),
        None => d,
    };
    if locked.source != source {
        return Err(at(Diagnostic::error(format!(
            "Provider {name:?} comes from {source:?}, but {LOCK_FILE} locked it from {:?}",
            locked.source
        ))
        .with_detail("If the new source is intended, run `cairn init -upgrade` to lock it.")));
    }
    if locked.sha256 != sha256 {
        return Err(at(Diagnostic::error(format!(
            "Provider {name:?} ({origin}) does not match {LOCK_FILE}: its SHA-256 is {sha256}, the lock expects {}",
            locked.sha256
        ))
        .with_detail(
            "The file changed since `cairn init` locked it. If the new file is intended, run \
             `cairn init -upgrade` to lock it; otherwise restore the locked file.",
        )));
    }
    Ok(())
}

/// The SHA-256 of `bytes`, lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

fn unknown_provider(name: &str) -> Diagnostic {
    Diagnostic::error(format!("Unknown provider {name:?}")).with_detail(format!(
        "It is not built in (built in: {}) and no required_providers entry names its source, e.g.\n\
         terraform {{\n  required_providers {{\n    {name} = {{ source = \"./providers/{name}.wasm\" }}\n  }}\n}}",
        runtime::BUILTIN_NAMES.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_addresses_are_told_from_paths() {
        assert_eq!(registry_address("hashicorp/local"), Some(("registry.terraform.io", "hashicorp", "local")));
        assert_eq!(
            registry_address("registry.opentofu.org/hashicorp/null"),
            Some(("registry.opentofu.org", "hashicorp", "null"))
        );
        for path in ["./local.wasm", "providers/local.wasm", "providers/", "/abs/x", "oci://h/r:1", "a/b/c/d", "x"] {
            assert_eq!(registry_address(path), None, "{path}");
        }
    }
}
