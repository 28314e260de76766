//! `cairn workspace list | show | new | select | delete`: several states
//! for one configuration, as Terraform's workspaces are (see
//! `config::workspace` for which one a run uses, and `engine::backend`
//! for where each one's state is kept).

use std::path::Path;

use anyhow::{Result, bail};

use super::{StateFlags, WorkspaceCommand};
use crate::config::{DEFAULT_WORKSPACE, WORKSPACE_SELECTION_FILE, check_workspace_name, current_workspace};
use crate::engine::{BackendChoice, WORKSPACE_SCHEMA_SEPARATOR, WORKSPACES_DIR, backend_choice_at};
use crate::state::{Backend, LocalBackend, PgBackend, State};

/// Runs one `cairn workspace` subcommand.
pub(super) fn run(command: &WorkspaceCommand) -> Result<i32> {
    match command {
        WorkspaceCommand::List { flags } => list(flags),
        WorkspaceCommand::Show { flags } => {
            println!("{}", current(&flags.dir())?);
            Ok(0)
        }
        WorkspaceCommand::New { flags, name } => new(flags, name),
        WorkspaceCommand::Select { flags, name, or_create } => select(flags, name, *or_create),
        WorkspaceCommand::Delete { flags, name, force } => delete(flags, name, *force),
    }
}

/// The workspace in use in `dir`.
fn current(dir: &Path) -> Result<String> {
    current_workspace(&dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf())).map_err(anyhow::Error::msg)
}

/// `workspace list`: every workspace, the one in use marked `*`.
fn list(flags: &StateFlags) -> Result<i32> {
    let dir = flags.dir();
    let now = current(&dir)?;
    for name in workspaces(&dir)? {
        let mark = if name == now { "*" } else { " " };
        println!("{mark} {name}");
    }
    println!();
    Ok(0)
}

/// `workspace new NAME`: an empty state for it, and it selected.
fn new(flags: &StateFlags, name: &str) -> Result<i32> {
    let dir = flags.dir();
    check_workspace_name(name).map_err(anyhow::Error::msg)?;
    refuse_when_overridden()?;
    if workspaces(&dir)?.iter().any(|w| w == name) {
        bail!("Workspace \"{name}\" already exists");
    }
    let mut backend = workspace_backend(&dir, name)?;
    backend.lock_as(flags.locking())?;
    backend.write(&mut State::new())?;
    drop(backend);
    record_selection(&dir, name)?;
    println!("Created and switched to workspace \"{name}\"!\n");
    println!("You're now on a new, empty workspace. Workspaces isolate their state,");
    println!("so if you run \"cairn plan\" cairn will not see any existing state");
    println!("for this configuration.");
    Ok(0)
}

/// `workspace select NAME`: it recorded as the one in use
/// (`-or-create`: made first when it does not exist, as Terraform's).
fn select(flags: &StateFlags, name: &str, or_create: bool) -> Result<i32> {
    let dir = flags.dir();
    check_workspace_name(name).map_err(anyhow::Error::msg)?;
    refuse_when_overridden()?;
    if !workspaces(&dir)?.iter().any(|w| w == name) {
        if or_create {
            return new(flags, name);
        }
        bail!(
            "Workspace \"{name}\" doesn't exist.\n\nYou can create this workspace with the \"new\" subcommand or \
             include the \"-or-create\" flag with the \"select\" subcommand."
        );
    }
    record_selection(&dir, name)?;
    println!("Switched to workspace \"{name}\".");
    Ok(0)
}

/// `workspace delete NAME`: its state gone; refused for `default`, the
/// workspace in use, and one whose state holds objects (unless `-force`,
/// which forgets them without destroying them).
fn delete(flags: &StateFlags, name: &str, force: bool) -> Result<i32> {
    let dir = flags.dir();
    if name == DEFAULT_WORKSPACE {
        bail!("can't delete the \"default\" workspace");
    }
    if !workspaces(&dir)?.iter().any(|w| w == name) {
        bail!("Workspace \"{name}\" doesn't exist.");
    }
    if current(&dir)? == name {
        bail!(
            "Workspace \"{name}\" is your active workspace.\n\nYou cannot delete the currently active workspace. \
             Please switch to another workspace and try again."
        );
    }
    let mut backend = workspace_backend(&dir, name)?;
    backend.lock_as(flags.locking())?;
    let state = backend.read()?;
    if !state.resources.is_empty() && !force {
        bail!(
            "Workspace \"{name}\" is currently tracking the following resource instances:\n  {}\n\nDeleting this \
             workspace would cause cairn to lose track of any associated remote objects, which would then require \
             you to delete them manually outside of cairn. You should destroy these objects with cairn before \
             deleting the workspace.\n\nIf you want to delete this workspace anyway, and have cairn forget about \
             these managed objects, use the -force option to disable this safety check.",
            state.resources.iter().map(|i| i.addr.to_string()).collect::<Vec<_>>().join("\n  ")
        );
    }
    drop(backend);
    match backend_choice_at(&dir)? {
        BackendChoice::Local(_) => {
            let path = dir.join(WORKSPACES_DIR).join(name);
            std::fs::remove_dir_all(&path).map_err(|e| anyhow::anyhow!("cannot remove {}: {e}", path.display()))?;
        }
        BackendChoice::Pg { conn_str, schema, .. } => {
            crate::state::drop_pg_schema(&conn_str, &crate::engine::workspace_schema(&schema, name)?)?;
        }
    }
    println!("Deleted workspace \"{name}\"!");
    Ok(0)
}

/// Every workspace of the configuration in `dir`, `default` first, then
/// by name.
fn workspaces(dir: &Path) -> Result<Vec<String>> {
    let mut others: Vec<String> = match backend_choice_at(dir)? {
        BackendChoice::Local(_) => match std::fs::read_dir(dir.join(WORKSPACES_DIR)) {
            Ok(entries) => entries
                .filter_map(|e| e.ok())
                .filter(|e| e.path().is_dir())
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| check_workspace_name(n).is_ok())
                .collect(),
            Err(_) => Vec::new(),
        },
        BackendChoice::Pg { conn_str, schema, .. } => {
            let prefix = format!("{schema}{WORKSPACE_SCHEMA_SEPARATOR}");
            crate::state::pg_schemas_with_prefix(&conn_str, &prefix)?
                .into_iter()
                .map(|s| s[prefix.len()..].to_string())
                .collect()
        }
    };
    others.retain(|n| n != DEFAULT_WORKSPACE);
    others.sort();
    Ok(std::iter::once(DEFAULT_WORKSPACE.to_string()).chain(others).collect())
}

/// The backend of workspace `name` of the configuration in `dir`,
/// unlocked.
fn workspace_backend(dir: &Path, name: &str) -> Result<Box<dyn Backend>> {
    Ok(match backend_choice_at(dir)? {
        BackendChoice::Local(_) => {
            let config_dir = dir.canonicalize()?;
            let path = crate::engine::local_state_path(&config_dir, name);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            Box::new(LocalBackend::open_read_only(&path))
        }
        BackendChoice::Pg { conn_str, schema, .. } => {
            Box::new(PgBackend::new(&conn_str, &crate::engine::workspace_schema(&schema, name)?)?)
        }
    })
}

/// Records `name` as the workspace in use in `dir`.
fn record_selection(dir: &Path, name: &str) -> Result<()> {
    let path = dir.join(WORKSPACE_SELECTION_FILE);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(&path, format!("{name}\n")).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))
}

/// `new` and `select` change the recorded selection, which a workspace
/// variable set in the environment would override: refused, as
/// Terraform's are.
fn refuse_when_overridden() -> Result<()> {
    for variable in crate::config::WORKSPACE_VARIABLES {
        if std::env::var(variable).is_ok_and(|v| !v.is_empty()) {
            bail!(
                "The selected workspace is currently overridden using the {variable} environment variable.\n\nTo \
                 select a new workspace, either update this environment variable or unset it and then run this \
                 command again."
            );
        }
    }
    Ok(())
}
