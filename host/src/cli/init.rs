//! `cairn init`: sets up the state's backend, then resolves every provider
//! of the configuration (downloading none that is already cached), checks
//! each one (identity, trusted keys), and writes `cairn.lock` with the
//! SHA-256 of each. A provider whose file differs from its lock entry is
//! refused unless `-upgrade` is given; `-lockfile=readonly` checks without
//! writing, and a provider missing from the lock is then an error.
//!
//! The backend is recorded (see `engine::BackendRecord`); when the
//! configuration names another backend than the one recorded and the old
//! one holds a state, `init` stops and says what to do: `-migrate-state`
//! copies the state over (lineage and serial kept), `-reconfigure` leaves
//! it behind.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, bail};

use super::Common;
use crate::config::Config;
use crate::diag::{Diagnostic, Diagnostics};
use crate::engine::{BackendChoice, BackendRecord};
use crate::registry::{self, LOCK_FILE, LockFile, Mode};
use crate::state::State;

/// What `init` does about a changed backend.
pub(super) struct BackendFlags {
    /// `-migrate-state`.
    pub migrate_state: bool,
    /// `-reconfigure`.
    pub reconfigure: bool,
    /// `-lock-timeout`.
    pub lock_timeout: Duration,
}

/// Runs `cairn init`.
pub(super) fn run(common: &Common, upgrade: bool, lockfile: Option<&str>, flags: &BackendFlags) -> Result<i32> {
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
    init_backend(&dir, &config, flags)?;
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
    let mut names: BTreeSet<String> = BTreeSet::new();
    add_provider_names(config, &mut names);
    names
}

/// The providers `config` and the modules it calls use or require, by
/// type (`local` for the aliased configuration `local.other`).
fn add_provider_names(config: &Config, names: &mut BTreeSet<String>) {
    let used = config.resources.iter().map(|r| &r.provider).chain(config.providers.iter().map(|p| &p.name));
    names.extend(used.map(|n| crate::engine::provider_type(n).to_string()));
    names.extend(config.required_providers.keys().cloned());
    for call in &config.modules {
        add_provider_names(&call.config, names);
    }
}

/// Sets up the backend the configuration names, migrating the state from
/// the one set up before when asked to, and records it.
fn init_backend(dir: &Path, config: &Config, flags: &BackendFlags) -> Result<()> {
    if flags.migrate_state && flags.reconfigure {
        bail!(
            "-migrate-state copies the state to the new backend, and -reconfigure leaves it behind: give one of them"
        );
    }
    let env = |name: &str| std::env::var(name).ok();
    let choice = BackendChoice::of(config, env)?;
    let wanted = choice.record();
    let recorded = BackendRecord::load(dir)?;
    let previous = recorded.clone().unwrap_or_else(BackendRecord::local);
    println!("Initializing the backend: {wanted}.");
    if previous != wanted && !flags.reconfigure {
        let old = previous.choice(dir, env)?;
        let mut source = old.open()?;
        source.lock_waiting(flags.lock_timeout)?;
        let state = source.read()?;
        if state.never_written() {
            println!("{previous} holds no state: nothing to migrate.");
        } else if flags.migrate_state {
            migrate(&state, &previous, &choice, flags.lock_timeout)?;
        } else {
            bail!(
                "the backend changed from {previous} to {wanted}, and {previous} holds a state (lineage {}, serial {}, {} resource instance(s)): \
                 run `cairn init -migrate-state` to copy it to the new backend, or `cairn init -reconfigure` to use the new backend as it is \
                 and leave that state behind",
                state.lineage,
                state.serial,
                state.resources.len()
            );
        }
    } else if matches!(choice, BackendChoice::Pg { .. }) {
        // Reach the database now (creating the schema and its tables), so
        // that a wrong connection string fails here, not in the first plan.
        choice.open()?.read()?;
    }
    // A configuration that never left the local file needs no record.
    if recorded.is_some() || wanted != BackendRecord::local() {
        wanted.save(dir)?;
    }
    Ok(())
}

/// Copies `state` (read, under its lock, from `previous`) into the backend
/// `to`, under its lock, with its lineage and serial; refused when `to`
/// already holds another state or a newer one.
fn migrate(state: &State, previous: &BackendRecord, to: &BackendChoice, lock_timeout: Duration) -> Result<()> {
    let mut target = to.open()?;
    target.lock_waiting(lock_timeout)?;
    let there = target.read()?;
    let wanted = to.record();
    if !there.never_written() {
        if there.lineage == state.lineage && there.serial == state.serial {
            println!("{wanted} already holds this state (serial {}): nothing to copy.", state.serial);
            return Ok(());
        }
        if there.lineage != state.lineage || there.serial > state.serial {
            bail!(
                "{wanted} already holds a state (lineage {}, serial {}), which migrating would replace with the state of {previous} \
                 (lineage {}, serial {}); cairn does not overwrite it: move it away first, or `cairn init -reconfigure` to use it",
                there.lineage,
                there.serial,
                state.lineage,
                state.serial
            );
        }
    }
    // A write adds one to the serial: written from one less, the copy
    // lands with the serial it had.
    let mut copy = state.clone();
    copy.serial = state.serial.saturating_sub(1);
    target.write(&mut copy)?;
    println!(
        "Copied the state (lineage {}, serial {}, {} resource instance(s)) from {previous} to {wanted}; the copy in {previous} was left as it was.",
        copy.lineage,
        copy.serial,
        copy.resources.len()
    );
    Ok(())
}
