//! Workspaces: several states for one configuration, as Terraform's
//! workspaces are (`cairn workspace new staging`), and which one a run
//! uses.
//!
//! The workspace of a run is `CAIRN_WORKSPACE`, else `TF_WORKSPACE` (what
//! Terraform's CI scripts set), else the one `cairn workspace select`
//! recorded in `.cairn/environment` (Terraform's `.terraform/environment`),
//! else `default`. Expressions read it as `terraform.workspace`; the
//! backends keep each workspace's state apart (`engine::backend`).

use std::path::Path;
use std::sync::Mutex;

/// The workspace every configuration has, which cannot be deleted.
pub const DEFAULT_WORKSPACE: &str = "default";

/// Where `cairn workspace select` records the selected workspace, in the
/// configuration directory.
pub const SELECTION_FILE: &str = ".cairn/environment";

/// The variables that choose the workspace, the first set winning.
pub const WORKSPACE_VARIABLES: [&str; 2] = ["CAIRN_WORKSPACE", "TF_WORKSPACE"];

/// The workspace a run in `dir` uses: see the module documentation. An
/// invalid name, from the environment or the file, is an error that says
/// where it came from.
pub fn current_workspace(dir: &Path) -> Result<String, String> {
    selected_workspace(dir, |variable| std::env::var(variable).ok())
}

/// [`current_workspace`] with the environment read through `env`.
fn selected_workspace(dir: &Path, env: impl Fn(&str) -> Option<String>) -> Result<String, String> {
    for variable in WORKSPACE_VARIABLES {
        if let Some(name) = env(variable)
            && !name.is_empty()
        {
            return check_workspace_name(&name).map(|()| name).map_err(|e| format!("{variable}: {e}"));
        }
    }
    match std::fs::read_to_string(dir.join(SELECTION_FILE)) {
        Ok(text) => {
            let name = text.trim().to_string();
            check_workspace_name(&name)
                .map(|()| name)
                .map_err(|e| format!("{}: {e}", dir.join(SELECTION_FILE).display()))
        }
        Err(_) => Ok(DEFAULT_WORKSPACE.to_string()),
    }
}

/// [`current_workspace`], read once per directory in a process: what
/// `terraform.workspace` evaluates to (an invalid name is `default` here;
/// the backend's choice, made first, has already refused it).
pub(crate) fn workspace_of(dir: &Path) -> String {
    static SEEN: Mutex<Vec<(std::path::PathBuf, String)>> = Mutex::new(Vec::new());
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, name)) = seen.iter().find(|(d, _)| d == dir) {
        return name.clone();
    }
    let name = current_workspace(dir).unwrap_or_else(|_| DEFAULT_WORKSPACE.to_string());
    seen.push((dir.to_path_buf(), name.clone()));
    name
}

/// Whether `name` can be a workspace's: what Terraform accepts, a name
/// that is also a directory name and a PostgreSQL schema suffix (letters,
/// digits, `-` and `_`, at most 63 bytes).
pub fn check_workspace_name(name: &str) -> Result<(), String> {
    let valid =
        !name.is_empty() && name.len() <= 63 && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if valid {
        Ok(())
    } else {
        Err(format!(
            "{name:?} is not a valid workspace name: use letters, digits, \"-\" and \"_\" (at most 63 characters)"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_what_a_directory_and_a_schema_can_hold() {
        for ok in ["default", "staging", "pr-42", "eu_west_1"] {
            assert_eq!(check_workspace_name(ok), Ok(()), "{ok}");
        }
        for bad in ["", "a/b", "..", "with space", "é", &"x".repeat(64)] {
            assert!(check_workspace_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_environment_then_the_selection_file_name_the_workspace_and_else_it_is_default() {
        let dir = tempfile::tempdir().unwrap();
        let none = |_: &str| None;
        assert_eq!(selected_workspace(dir.path(), none).unwrap(), "default");
        std::fs::create_dir_all(dir.path().join(".cairn")).unwrap();
        std::fs::write(dir.path().join(SELECTION_FILE), "staging\n").unwrap();
        assert_eq!(selected_workspace(dir.path(), none).unwrap(), "staging");
        let tf = |v: &str| (v == "TF_WORKSPACE").then(|| "ci".to_string());
        assert_eq!(selected_workspace(dir.path(), tf).unwrap(), "ci");
        let both = |v: &str| Some(if v == "CAIRN_WORKSPACE" { "mine" } else { "ci" }.to_string());
        assert_eq!(selected_workspace(dir.path(), both).unwrap(), "mine");
        std::fs::write(dir.path().join(SELECTION_FILE), "../x").unwrap();
        assert!(selected_workspace(dir.path(), none).unwrap_err().contains("not a valid workspace name"));
    }
}
