//! `cairn providers new NAME --lang rust|python|js|c|go`: writes a provider project (see
//! `scaffold`) into a new directory.

use std::path::Path;

use anyhow::{Context, Result, bail};

use crate::scaffold;

/// Runs `cairn providers new`: the project goes into `dir` (default
/// `./NAME`), which must not exist or be empty.
pub(super) fn run(name: &str, lang: &str, dir: Option<&Path>) -> Result<i32> {
    let files = scaffold::project(name, lang).map_err(anyhow::Error::msg)?;
    let dir = dir.map_or_else(|| Path::new(name).to_path_buf(), Path::to_path_buf);
    let occupied = dir.read_dir().map(|mut entries| entries.next().is_some()).unwrap_or(false);
    if occupied {
        bail!("{} is not empty: a new project needs a directory of its own", dir.display());
    }
    for file in &files {
        let path = dir.join(&file.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(&path, &file.text).with_context(|| format!("cannot write {}", path.display()))?;
        if file.executable {
            make_executable(&path)?;
        }
    }
    println!("Made the {lang} provider {name:?} in {}:", dir.display());
    for file in files.iter().filter(|f| !f.path.starts_with("sdk") && !f.path.starts_with("wit")) {
        println!("  {}", file.path.display());
    }
    println!("  sdk/ (the provider SDK this cairn speaks)\n");
    println!("Next: cd {} && ./build.sh && cairn providers check {name}.wasm", dir.display());
    println!("(see README.md there for the toolchain {lang} needs)");
    Ok(0)
}

#[cfg(unix)]
fn make_executable(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .with_context(|| format!("cannot make {} executable", path.display()))
}

#[cfg(not(unix))]
fn make_executable(_path: &Path) -> Result<()> {
    Ok(())
}
