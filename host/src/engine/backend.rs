//! Which backend holds a configuration's state: the one place that turns
//! the configuration's `backend` block (and `PG_CONN_STR`) into a
//! [`Backend`], and that remembers which backend `cairn init` set up.
//!
//! `cairn init` records the backend it initialised in
//! `.cairn/backend.json` (its kind and where it is, never a password).
//! Every other command compares the configuration with that record, and
//! refuses to run on a backend `init` has not set up: a changed backend
//! would otherwise start from an empty state and create everything again.
//! The local file needs no `init` (it is what a configuration without a
//! `backend` block has always used), so no record means "local".

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use crate::config::{BackendKind, Config};
use crate::state::{Backend, CONN_STR_VARIABLE, DEFAULT_SCHEMA, LocalBackend, PgBackend};

/// The name of the state file beside the configuration.
pub const STATE_FILE: &str = "cairn.state.json";

/// Where `cairn init` records the backend it set up, in the configuration
/// directory.
pub const BACKEND_RECORD: &str = ".cairn/backend.json";

/// A backend, chosen but not opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BackendChoice {
    /// The state file at this path.
    Local(PathBuf),
    /// PostgreSQL.
    Pg {
        /// The connection string (may hold a password: never shown).
        conn_str: String,
        /// The schema of the `default` workspace's state.
        schema: String,
        /// The workspace whose state to use (see [`workspace_schema`]).
        workspace: String,
        /// Whether the connection string is written in the configuration
        /// (rather than taken from `PG_CONN_STR`): only then is it
        /// recorded, so that a later `init -migrate-state` can read this
        /// state after the block changed.
        conn_str_in_config: bool,
    },
}

impl BackendChoice {
    /// The backend `config` asks for. `conn_str` of a `pg` backend comes
    /// from the block or else from `PG_CONN_STR` (`env`), as Terraform's does.
    pub fn of(config: &Config, env: impl Fn(&str) -> Option<String>) -> Result<BackendChoice> {
        let workspace = crate::config::current_workspace(&config.dir).map_err(anyhow::Error::msg)?;
        let Some(block) = &config.backend else {
            return Ok(BackendChoice::Local(local_state_path(&config.dir, &workspace)));
        };
        Ok(match &block.kind {
            BackendKind::Local => BackendChoice::Local(local_state_path(&config.dir, &workspace)),
            BackendKind::Pg { conn_str, schema_name } => {
                let conn_str_in_config = conn_str.is_some();
                let Some(conn_str) = conn_str.clone().or_else(|| env(CONN_STR_VARIABLE)) else {
                    bail!(
                        "{}: the \"pg\" backend needs a connection string: set conn_str in the block, or the {CONN_STR_VARIABLE} environment variable",
                        block.location
                    );
                };
                let schema = schema_name.clone().unwrap_or_else(|| DEFAULT_SCHEMA.to_string());
                BackendChoice::Pg { conn_str, schema, workspace, conn_str_in_config }
            }
        })
    }

    /// Opens the backend, unlocked (a database is reached on first use).
    pub fn open(&self) -> Result<Box<dyn Backend>> {
        Ok(match self {
            BackendChoice::Local(path) => Box::new(LocalBackend::open_read_only(path)),
            BackendChoice::Pg { conn_str, schema, workspace, .. } => {
                Box::new(PgBackend::new(conn_str, &workspace_schema(schema, workspace)?)?)
            }
        })
    }

    /// What identifies the backend across runs, without secrets: the
    /// local file's name, or PostgreSQL's user, hosts, database and schema.
    pub fn record(&self) -> BackendRecord {
        match self {
            BackendChoice::Local(_) => BackendRecord {
                kind: "local".to_string(),
                location: STATE_FILE.to_string(),
                schema: None,
                conn_str: None,
            },
            BackendChoice::Pg { conn_str, schema, conn_str_in_config, .. } => BackendRecord {
                kind: "pg".to_string(),
                location: crate::state::pg_location(conn_str, schema),
                schema: Some(schema.clone()),
                conn_str: conn_str_in_config.then(|| conn_str.clone()),
            },
        }
    }
}

/// The backend `cairn init` set up, as `.cairn/backend.json` records it.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct BackendRecord {
    /// `local` or `pg`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Where the state is, without secrets: what tells two backends apart.
    pub location: String,
    /// The schema of a `pg` backend.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// The connection string of a `pg` backend, when the configuration
    /// has it written out (the file is then no more secret than the
    /// configuration); else `PG_CONN_STR` is read again when needed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conn_str: Option<String>,
}

impl PartialEq for BackendRecord {
    /// The same backend: the same kind at the same place.
    fn eq(&self, other: &BackendRecord) -> bool {
        (&self.kind, &self.location) == (&other.kind, &other.location)
    }
}

impl Eq for BackendRecord {}

impl std::fmt::Display for BackendRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.kind.as_str() {
            "local" => write!(f, "the local file {}", self.location),
            _ => write!(f, "the {} backend ({})", self.kind, self.location),
        }
    }
}

impl BackendRecord {
    /// The record in `dir`, or `None` when `init` never recorded one.
    pub fn load(dir: &Path) -> Result<Option<BackendRecord>> {
        let path = dir.join(BACKEND_RECORD);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .with_context(|| format!("{} is not valid: run `cairn init` again", path.display()))
                .map(Some),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
        }
    }

    /// Records this backend in `dir` as the one `init` set up. The file
    /// may hold a connection string, so only its owner may read it.
    pub fn save(&self, dir: &Path) -> Result<()> {
        let path = dir.join(BACKEND_RECORD);
        let write = || -> std::io::Result<()> {
            std::fs::create_dir_all(path.parent().unwrap_or(dir))?;
            let mut text = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
            text.push(b'\n');
            let mut options = std::fs::OpenOptions::new();
            options.write(true).create(true).truncate(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
            std::io::Write::write_all(&mut options.open(&path)?, &text)
        };
        write().with_context(|| format!("cannot write {}", path.display()))
    }

    /// The backend this record names, to read the state it holds:
    /// a `pg` connection string comes from the record or else from
    /// `PG_CONN_STR` (`env`), which must then name the same database.
    pub fn choice(&self, dir: &Path, env: impl Fn(&str) -> Option<String>) -> Result<BackendChoice> {
        let workspace = crate::config::current_workspace(dir).map_err(anyhow::Error::msg)?;
        if self.kind == "local" {
            return Ok(BackendChoice::Local(local_state_path(dir, &workspace)));
        }
        let schema = self.schema.clone().unwrap_or_else(|| DEFAULT_SCHEMA.to_string());
        let conn_str_in_config = self.conn_str.is_some();
        let Some(conn_str) = self.conn_str.clone().or_else(|| env(CONN_STR_VARIABLE)) else {
            bail!("the state is in {self}: set {CONN_STR_VARIABLE} to its connection string to read it");
        };
        let choice = BackendChoice::Pg { conn_str, schema, workspace, conn_str_in_config };
        if choice.record() != *self {
            bail!(
                "the state is in {self}, but {CONN_STR_VARIABLE} names {}: set it to the connection string of the database holding the state",
                choice.record()
            );
        }
        Ok(choice)
    }

    /// What a configuration without a record uses: the local file.
    pub fn local() -> BackendRecord {
        BackendChoice::Local(PathBuf::from(STATE_FILE)).record()
    }
}

/// Where the local backend keeps the state of `workspace` of the
/// configuration in `dir`: `cairn.state.json` for `default`, and
/// `cairn.state.d/NAME/cairn.state.json` for the others, as Terraform keeps
/// `terraform.tfstate.d/NAME/terraform.tfstate`.
pub fn local_state_path(dir: &Path, workspace: &str) -> PathBuf {
    match workspace {
        crate::config::DEFAULT_WORKSPACE => dir.join(STATE_FILE),
        other => dir.join(WORKSPACES_DIR).join(other).join(STATE_FILE),
    }
}

/// The directory of the local backend's workspaces other than `default`.
pub const WORKSPACES_DIR: &str = "cairn.state.d";

/// The PostgreSQL schema of `workspace`'s state, for a backend whose
/// `default` state is in `schema`: `schema` itself, or `schema` and the
/// workspace's name joined by `__` (`cairn__staging`). Refused when that
/// is longer than the 63 bytes PostgreSQL keeps of a name.
pub fn workspace_schema(schema: &str, workspace: &str) -> Result<String> {
    if workspace == crate::config::DEFAULT_WORKSPACE {
        return Ok(schema.to_string());
    }
    let name = format!("{schema}{WORKSPACE_SCHEMA_SEPARATOR}{workspace}");
    if name.len() > 63 {
        bail!(
            "the workspace \"{workspace}\" of the pg backend's schema \"{schema}\" would be the schema \"{name}\", longer \
             than the 63 characters PostgreSQL keeps: use a shorter workspace or schema name"
        );
    }
    Ok(name)
}

/// What joins a schema's name and a workspace's in [`workspace_schema`].
pub const WORKSPACE_SCHEMA_SEPARATOR: &str = "__";

/// Refuses to run on `choice` unless `cairn init` set it up (or it is the
/// local file, which needs no `init`).
pub fn check_initialised(dir: &Path, choice: &BackendChoice) -> Result<()> {
    let wanted = choice.record();
    let recorded = BackendRecord::load(dir)?.unwrap_or_else(BackendRecord::local);
    if recorded != wanted {
        bail!(
            "the configuration's backend is {wanted}, but `cairn init` set up {recorded}: run `cairn init` \
             (with -migrate-state to move the state there, or -reconfigure to start from what is there)"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{BackendBlock, BackendKind};
    use crate::diag::Location;

    fn config_with(kind: Option<BackendKind>) -> Config {
        let location = Location::new("main.tf", 2, 3);
        Config {
            dir: PathBuf::from("/cfg"),
            backend: kind.map(|kind| BackendBlock { kind, location }),
            ..Config::default()
        }
    }

    #[test]
    fn pg_takes_its_connection_string_from_the_block_or_the_environment() {
        let no_env = |_: &str| None;
        let env = |name: &str| (name == "PG_CONN_STR").then(|| "postgres://env/db".to_string());
        let written =
            config_with(Some(BackendKind::Pg { conn_str: Some("postgres://w/db".into()), schema_name: None }));
        assert_eq!(
            BackendChoice::of(&written, env).unwrap(),
            BackendChoice::Pg {
                conn_str: "postgres://w/db".into(),
                schema: "terraform_remote_state".into(),
                workspace: "default".into(),
                conn_str_in_config: true
            }
        );
        let from_env = config_with(Some(BackendKind::Pg { conn_str: None, schema_name: Some("s".into()) }));
        assert_eq!(
            BackendChoice::of(&from_env, env).unwrap(),
            BackendChoice::Pg {
                conn_str: "postgres://env/db".into(),
                schema: "s".into(),
                workspace: "default".into(),
                conn_str_in_config: false
            }
        );
        let e = BackendChoice::of(&from_env, no_env).unwrap_err().to_string();
        assert!(e.contains("main.tf:2") && e.contains("PG_CONN_STR"), "{e}");
        assert_eq!(
            BackendChoice::of(&config_with(None), no_env).unwrap(),
            BackendChoice::Local("/cfg/cairn.state.json".into())
        );
        assert_eq!(
            BackendChoice::of(&config_with(Some(BackendKind::Local)), no_env).unwrap(),
            BackendChoice::Local("/cfg/cairn.state.json".into())
        );
    }

    #[test]
    fn each_workspace_has_a_state_of_its_own() {
        let dir = Path::new("/cfg");
        assert_eq!(local_state_path(dir, "default"), dir.join("cairn.state.json"));
        assert_eq!(local_state_path(dir, "staging"), dir.join("cairn.state.d/staging/cairn.state.json"));
        assert_eq!(workspace_schema("cairn", "default").unwrap(), "cairn");
        assert_eq!(workspace_schema("cairn", "staging").unwrap(), "cairn__staging");
        let e = workspace_schema(&"s".repeat(40), &"w".repeat(30)).unwrap_err().to_string();
        assert!(e.contains("longer than the 63 characters"), "{e}");
    }

    #[test]
    fn a_backend_init_did_not_set_up_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let local = BackendChoice::Local(dir.path().join(STATE_FILE));
        let pg = BackendChoice::Pg {
            conn_str: "postgres://u:secret@h/db".into(),
            schema: "s".into(),
            workspace: "default".into(),
            conn_str_in_config: false,
        };
        check_initialised(dir.path(), &local).unwrap();
        let e = check_initialised(dir.path(), &pg).unwrap_err().to_string();
        assert!(e.contains("run `cairn init`") && e.contains("-migrate-state") && !e.contains("secret"), "{e}");
        pg.record().save(dir.path()).unwrap();
        check_initialised(dir.path(), &pg).unwrap();
        assert!(check_initialised(dir.path(), &local).is_err());
        assert!(!std::fs::read_to_string(dir.path().join(BACKEND_RECORD)).unwrap().contains("secret"));
        // The record names the state's backend again, given the password.
        let recorded = BackendRecord::load(dir.path()).unwrap().unwrap();
        let env = |_: &str| Some("postgres://u:secret@h/db".to_string());
        assert_eq!(recorded.choice(dir.path(), env).unwrap(), pg);
        let elsewhere = |_: &str| Some("postgres://u:secret@other/db".to_string());
        assert!(recorded.choice(dir.path(), elsewhere).unwrap_err().to_string().contains("other"));
    }
}
