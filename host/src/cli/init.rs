//! `cairn init`: resolves every provider of the configuration (downloading
//! none that is already cached), checks each one (identity, trusted keys),
//! and writes `cairn.lock` with the SHA-256 of each. A provider whose file
//! differs from its lock entry is refused unless `-upgrade` is given;
//! `-lockfile=readonly` checks without writing, and a provider missing
//! from the lock is then an error.

use std::collections::BTreeSet;

use anyhow::{Context, Result, bail};

use super::Common;
use crate::config::Config;
use crate::diag::{Diagnostic, Diagnostics};
use crate::registry::{self, LOCK_FILE, LockFile, Mode};

/// Runs `cairn init`.
pub(super) fn run(common: &Common, upgrade: bool, lockfile: Option<&str>) -> Result<i32> {
    let readonly = match lockfile {
        None => false,
        Some("readonly") => true,
        Some(other) => bail!("-lockfile takes one mode, \"readonly\"; got {other:?}"),
    };
    if readonly && upgrade {
        bail!("-upgrade changes cairn.lock, and -lockfile=readonly forbids that: give one of them");
    }
    let dir = common.dir();
    let dir =
        dir.canonicalize().with_context(|| format!("the configuration directory {} does not exist", dir.display()))?;
    let config = crate::config::load(&dir).map_err(Diagnostics)?;
    let old = LockFile::load(&dir).map_err(|e| Diagnostics(vec![Diagnostic::error(e)]))?;
    let mut new = LockFile::default();
    let mut errors = Vec::new();
    for name in provider_names(&config) {
        // Without -upgrade, a provider that is locked must still be the locked file.
        let verified = match registry::find(&name, &config, old.as_ref(), Mode::Init { upgrade }, !upgrade) {
            Ok(v) => v,
            Err(d) => {
                errors.push(d);
                continue;
            }
        };
        let version = verified.identity.as_ref().map_or("version not declared".to_string(), |i| i.version.to_string());
        if verified.bundled {
            println!("- {name}: bundled with cairn ({version})");
            continue;
        }
        let location = config.required_providers.get(&name).map(|r| r.location.clone());
        if readonly && old.as_ref().and_then(|l| l.providers.get(&name)).is_none() {
            let d = Diagnostic::error(format!(
                "Provider {name:?} is not in {LOCK_FILE}, and -lockfile=readonly forbids adding it"
            ))
            .with_detail("Run `cairn init` without -lockfile=readonly to lock it.");
            errors.push(match &location {
                Some(l) => d.at(l),
                None => d,
            });
            continue;
        }
        let signed = verified.entry.signed_by.as_ref().map(|k| format!(", signed by {k}")).unwrap_or_default();
        println!("- {name}: {} ({version}, sha256 {}{signed})", verified.origin, verified.entry.sha256);
        new.providers.insert(name, verified.entry);
    }
    if !errors.is_empty() {
        return Err(Diagnostics(errors).into());
    }
    if old.as_ref() == Some(&new) {
        println!("\n{LOCK_FILE} is up to date.");
    } else if readonly {
        bail!(
            "{LOCK_FILE} would change (it locks providers the configuration no longer uses), and -lockfile=readonly forbids that"
        );
    } else {
        new.save(&dir).with_context(|| format!("cannot write {}", dir.join(LOCK_FILE).display()))?;
        println!("\nWrote {}: commit it.", LOCK_FILE);
    }
    Ok(0)
}

/// Every provider the configuration uses or requires.
fn provider_names(config: &Config) -> BTreeSet<String> {
    let mut names: BTreeSet<String> = config.resources.iter().map(|r| r.provider.clone()).collect();
    names.extend(config.providers.iter().map(|p| p.name.clone()));
    names.extend(config.required_providers.keys().cloned());
    names
}
