//! Saved plans: `cairn plan -out=FILE` writes a plan, `cairn apply FILE`
//! applies exactly that plan — no second plan, no question — or refuses it
//! when the world it was made for is gone.
//!
//! The file holds the [`Plan`] itself (its types are serde-serialisable,
//! so every kind of change the planner knows travels without code here),
//! the variable values it was made with (apply evaluates with them), and
//! its [`Basis`]: the lineage and serial of the state it was made from,
//! the SHA-256 of every file the configuration was loaded from, and the
//! SHA-256 of every provider component. Apply re-reads the state (under
//! its lock), hashes the configuration and starts the providers again, and
//! refuses with every difference it finds, each named.
//!
//! A plan file is JSON with a `format_version` ([`FORMAT_VERSION`]) and
//! the cairn version that wrote it. Only the same cairn applies it: the
//! meaning of a plan is this cairn's planner and executor.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use super::{Engine, Intent, Planned, RunOptions, Workspace};
use crate::plan::Plan;
use crate::registry::sha256_hex;
use crate::state::{CAIRN_VERSION, State};
use crate::value::Value;

/// The plan file format this cairn writes and reads.
///
/// - 1: the first format.
pub const FORMAT_VERSION: u32 = 1;

/// A plan as written to a plan file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SavedPlan {
    /// [`FORMAT_VERSION`] when written.
    pub format_version: u32,
    /// The cairn that made the plan; only the same one applies it.
    pub cairn_version: String,
    /// What the plan was made against.
    pub basis: Basis,
    /// The input variables the plan was made with.
    pub variables: BTreeMap<String, Value>,
    /// The ephemeral variables that had values when the plan was made:
    /// their values are not in `variables`, and applying needs them again.
    #[serde(default)]
    pub ephemeral_variables: BTreeSet<String>,
    /// The variable files named with `-var-file` (absolute): apply checks
    /// that they did not change either.
    pub var_files: Vec<PathBuf>,
    /// The plan.
    pub plan: Plan,
}

/// What a plan was made against: if any of it changed, the plan is stale.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Basis {
    /// The lineage of the state it was made from.
    pub lineage: String,
    /// The serial of that state.
    pub serial: u64,
    /// The SHA-256 of every file the configuration was loaded from
    /// (`*.tf` and variable files), by its path as the user sees it.
    pub configuration: BTreeMap<String, String>,
    /// The SHA-256 of each provider's component, by local name.
    pub providers: BTreeMap<String, String>,
}

impl Basis {
    /// Why a plan made against `self` cannot be applied over `now`: one
    /// sentence per difference, the state first, then the configuration,
    /// then the providers. Empty when nothing changed.
    pub fn differences(&self, now: &Basis) -> Vec<String> {
        let mut reasons = Vec::new();
        // Serial 0 is "no state was ever written": each read of it makes
        // up a new lineage, so only its serial says whether that changed.
        let had_state = self.serial > 0;
        if had_state && self.lineage != now.lineage {
            reasons.push(format!(
                "the state was replaced: the plan was made from a state of lineage {}, the state now has lineage {}",
                self.lineage, now.lineage
            ));
        } else if self.serial != now.serial {
            reasons.push(format!(
                "the state changed: the plan was made from serial {}, the state is now at serial {}",
                self.serial, now.serial
            ));
        }
        reasons.extend(
            changed_entries(&self.configuration, &now.configuration)
                .into_iter()
                .map(|(file, how)| format!("the configuration changed: {file} {how}")),
        );
        reasons.extend(
            changed_entries(&self.providers, &now.providers)
                .into_iter()
                .map(|(name, how)| format!("provider {name:?} changed: its component {how}")),
        );
        reasons
    }
}

/// The keys whose hash differs between `then` and `now`, with how.
fn changed_entries<'a>(
    then: &'a BTreeMap<String, String>,
    now: &'a BTreeMap<String, String>,
) -> Vec<(&'a str, String)> {
    let mut changed = Vec::new();
    for (key, hash) in then {
        match now.get(key) {
            None => changed.push((key.as_str(), "was removed".to_string())),
            Some(current) if current != hash => changed
                .push((key.as_str(), format!("was modified (SHA-256 {} then, {} now)", short(hash), short(current)))),
            Some(_) => {}
        }
    }
    for key in now.keys().filter(|k| !then.contains_key(*k)) {
        changed.push((key.as_str(), "was added".to_string()));
    }
    changed
}

/// The start of a hash, enough to tell two apart in a message.
fn short(hash: &str) -> &str {
    hash.get(..12).unwrap_or(hash)
}

/// The SHA-256 of each of `files` that exists, keyed by its path relative
/// to the configuration directory `dir` (or whole, outside it). A file
/// that is gone has no hash, which [`Basis::differences`] reports.
fn file_hashes(dir: &Path, files: &[PathBuf]) -> Result<BTreeMap<String, String>> {
    let mut hashes = BTreeMap::new();
    for file in files {
        let bytes = match std::fs::read(file) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", file.display())),
        };
        // Keyed by where the file is, not by how it was named: a plan made
        // in one directory may be applied from another.
        let file = file.canonicalize().unwrap_or_else(|_| file.clone());
        let name = file.strip_prefix(dir).unwrap_or(&file).display().to_string();
        hashes.insert(name, sha256_hex(&bytes));
    }
    Ok(hashes)
}

impl Engine {
    /// Writes `planned`'s plan to `path`, with the variables it was made
    /// with and what it was made against (see [`Basis`]).
    pub fn save_plan(&self, ws: &Workspace, planned: &Planned, path: &Path) -> Result<()> {
        let basis = Basis {
            configuration: file_hashes(ws.dir(), &ws.files)?,
            providers: planned.provider_hashes.clone(),
            ..Basis::default()
        };
        let automatic = crate::config::automatic_var_files(ws.dir());
        let tf_files = crate::config::config_files(ws.dir()).map_err(super::diagnostics)?;
        let var_files = ws
            .files
            .iter()
            .filter(|f| !automatic.contains(f) && !tf_files.contains(f) && !ws.module_files.contains(f))
            .map(|f| f.canonicalize().unwrap_or_else(|_| f.clone()))
            .collect();
        // An ephemeral variable's value is never written: applying asks for it again.
        let ephemeral = super::ephemeral::ephemeral_names(&ws.config, &ws.variables);
        let mut variables = ws.variables.clone();
        variables.retain(|name, _| !ephemeral.contains(name));
        let mut plan = planned.plan.clone();
        super::ephemeral::forget_write_only(&mut plan, &planned.providers);
        let mut saved = SavedPlan::new(plan, &planned.state, variables, basis);
        saved.ephemeral_variables = ephemeral;
        saved.var_files = var_files;
        saved.write(path)
    }

    /// The plan saved in `path` ready to apply over `ws` (loaded with the
    /// plan's variables, [`Workspace::with_variables`]), with at most
    /// `parallelism` operations at once: the state it was made from is
    /// locked (as `locking` says) and read again, the providers are started
    /// again. Refused as [`Stale`], naming every difference, when the state, the
    /// configuration or a provider's component is not what it was. Nothing
    /// is planned again.
    pub fn load_plan(
        &self,
        ws: &Workspace,
        saved: SavedPlan,
        path: &Path,
        parallelism: usize,
        locking: crate::state::Locking,
    ) -> Result<Planned> {
        let mut backend = ws.backend()?;
        backend.lock_as(locking)?;
        let state = backend.read()?;
        let mut files = ws.files.clone();
        files.extend(saved.var_files.iter().cloned());
        let mut now = Basis {
            lineage: state.lineage.clone(),
            serial: state.serial,
            configuration: file_hashes(ws.dir(), &files)?,
            providers: saved.basis.providers.clone(),
        };
        // The state and the configuration first: a plan stale by those
        // starts no provider.
        let stale = |reasons: Vec<String>| Stale { path: path.to_path_buf(), reasons };
        let reasons = saved.basis.differences(&now);
        if !reasons.is_empty() {
            return Err(stale(reasons).into());
        }
        let super::providers::Started { providers, late: late_providers, hashes: provider_hashes } =
            self.start_providers(ws, &state, Intent::Change)?;
        now.providers.clone_from(&provider_hashes);
        let reasons = saved.basis.differences(&now);
        if !reasons.is_empty() {
            return Err(stale(reasons).into());
        }
        // What was planned is in the plan; applying needs only these.
        let options = RunOptions { parallelism, intent: Intent::Change, ..RunOptions::default() };
        let (config, graph) = ws.planned_config(&saved.plan)?;
        Ok(Planned {
            plan: saved.plan,
            providers,
            state,
            recoveries: Vec::new(),
            backend,
            options,
            provider_hashes,
            config,
            graph,
            late_providers,
        })
    }
}

impl SavedPlan {
    /// A plan to save, made from `state` with `variables`.
    pub fn new(plan: Plan, state: &State, variables: BTreeMap<String, Value>, mut basis: Basis) -> SavedPlan {
        basis.lineage.clone_from(&state.lineage);
        basis.serial = state.serial;
        SavedPlan {
            format_version: FORMAT_VERSION,
            cairn_version: CAIRN_VERSION.to_string(),
            basis,
            variables,
            ephemeral_variables: BTreeSet::new(),
            var_files: Vec::new(),
            plan,
        }
    }

    /// Writes the plan to `path` (replacing it atomically, so that a
    /// reader sees the old file or the new one).
    pub fn write(&self, path: &Path) -> Result<()> {
        let bytes = serde_json::to_vec(self).context("cannot encode the plan")?;
        let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let mut temp = tempfile::NamedTempFile::new_in(dir)
            .with_context(|| format!("cannot write the plan file {}", path.display()))?;
        std::io::Write::write_all(&mut temp, &bytes)
            .and_then(|()| temp.as_file().sync_all())
            .with_context(|| format!("cannot write the plan file {}", path.display()))?;
        temp.persist(path).with_context(|| format!("cannot write the plan file {}", path.display()))?;
        Ok(())
    }

    /// Reads a plan file, refusing one of another format or cairn.
    pub fn read(path: &Path) -> Result<SavedPlan> {
        let bytes = std::fs::read(path).with_context(|| format!("cannot read the plan file {}", path.display()))?;
        SavedPlan::parse(path, &bytes)
    }

    /// Reads a plan file's content; `path` is for messages.
    fn parse(path: &Path, bytes: &[u8]) -> Result<SavedPlan> {
        /// The fields every plan file starts with, whatever its format.
        #[derive(Deserialize)]
        struct Header {
            format_version: u32,
            cairn_version: String,
        }
        let header: Header = serde_json::from_slice(bytes)
            .with_context(|| format!("{} is not a cairn plan file (written by `cairn plan -out`)", path.display()))?;
        if header.format_version != FORMAT_VERSION {
            bail!(
                "the plan file {} has format_version {}, but this cairn ({CAIRN_VERSION}) reads format_version {FORMAT_VERSION}",
                path.display(),
                header.format_version
            );
        }
        if header.cairn_version != CAIRN_VERSION {
            bail!(
                "the plan file {} was made by cairn {}; this is cairn {CAIRN_VERSION}: plan again with this cairn",
                path.display(),
                header.cairn_version
            );
        }
        serde_json::from_slice(bytes).with_context(|| format!("the plan file {} is damaged", path.display()))
    }
}

/// A saved plan that no longer fits the world, with every reason.
#[derive(Debug, thiserror::Error)]
#[error(
    "Saved plan is stale: the plan file {} can no longer be applied:\n{}\nRun `cairn plan` again.",
    .path.display(),
    .reasons.iter().map(|r| format!("  - {r}")).collect::<Vec<_>>().join("\n")
)]
pub struct Stale {
    /// The plan file.
    pub path: PathBuf,
    /// What changed.
    pub reasons: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn basis() -> Basis {
        Basis {
            lineage: "l1".into(),
            serial: 3,
            configuration: [("main.tf".to_string(), "a".repeat(64))].into(),
            providers: [("local".to_string(), "b".repeat(64))].into(),
        }
    }

    #[test]
    fn the_same_basis_has_no_differences() {
        assert!(basis().differences(&basis()).is_empty());
    }

    #[test]
    fn every_difference_is_named() {
        let mut now = basis();
        now.serial = 4;
        now.configuration.insert("main.tf".into(), "c".repeat(64));
        now.configuration.insert("extra.tf".into(), "d".repeat(64));
        now.providers.clear();
        let reasons = basis().differences(&now);
        assert_eq!(
            reasons,
            [
                "the state changed: the plan was made from serial 3, the state is now at serial 4",
                "the configuration changed: main.tf was modified (SHA-256 aaaaaaaaaaaa then, cccccccccccc now)",
                "the configuration changed: extra.tf was added",
                "provider \"local\" changed: its component was removed",
            ]
        );
        now = basis();
        now.lineage = "l2".into();
        assert!(basis().differences(&now)[0].contains("lineage l1, the state now has lineage l2"));
    }

    #[test]
    fn no_state_then_and_now_is_no_change_whatever_the_lineages() {
        let then = Basis { lineage: "made-up-1".into(), serial: 0, ..basis() };
        let mut now = Basis { lineage: "made-up-2".into(), serial: 0, ..basis() };
        assert!(then.differences(&now).is_empty());
        now.serial = 1;
        assert_eq!(
            then.differences(&now),
            ["the state changed: the plan was made from serial 0, the state is now at serial 1"]
        );
    }

    #[test]
    fn a_plan_round_trips_and_other_formats_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.plan");
        let saved = SavedPlan::new(Plan::default(), &State::new(), [("v".to_string(), Value::int(1))].into(), basis());
        saved.write(&path).unwrap();
        let read = SavedPlan::read(&path).unwrap();
        assert_eq!(read.variables, saved.variables);
        assert_eq!(read.basis, saved.basis);

        std::fs::write(&path, br#"{"format_version": 99, "cairn_version": "0"}"#).unwrap();
        assert!(SavedPlan::read(&path).unwrap_err().to_string().contains("has format_version 99"));
        std::fs::write(&path, format!(r#"{{"format_version": {FORMAT_VERSION}, "cairn_version": "0.0.0-old"}}"#))
            .unwrap();
        assert!(SavedPlan::read(&path).unwrap_err().to_string().contains("was made by cairn 0.0.0-old"));
        std::fs::write(&path, "resource x").unwrap();
        assert!(SavedPlan::read(&path).unwrap_err().to_string().contains("is not a cairn plan file"));
    }
}
