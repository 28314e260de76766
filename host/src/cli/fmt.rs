//! `cairn fmt [-check] [-diff] [-recursive] [-list=false] [-write=false]
//! [DIR|FILE]`: rewrites configuration files (`.tf`, `.tfvars`,
//! `.tftest.hcl`) in the canonical style, as `terraform fmt` does: it lists
//! each file it changed, `-check` changes nothing and exits 3 when a file
//! needs formatting, `-diff` shows the changes (with the system's `diff -u`,
//! as Terraform does), and a syntax error exits 2.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::fmt::format_source;

/// The file names `terraform fmt` formats.
const EXTENSIONS: &[&str] = &[".tf", ".tfvars", ".tftest.hcl"];

/// Exit status when `-check` finds a file that needs formatting.
const NEEDS_FORMATTING: i32 = 3;
/// Exit status for a file that cannot be read or parsed.
const FAILED: i32 = 2;

/// What `cairn fmt` was asked to do.
pub(super) struct FmtFlags {
    pub check: bool,
    pub diff: bool,
    pub recursive: bool,
    pub list: bool,
    pub write: bool,
}

/// Runs `cairn fmt`.
pub(super) fn run(target: Option<&Path>, flags: &FmtFlags) -> Result<i32> {
    let target = target.unwrap_or(Path::new("."));
    let files = if target.is_dir() {
        let mut files = Vec::new();
        collect(target, flags.recursive, &mut files)?;
        files
    } else if target.is_file() {
        vec![target.to_path_buf()]
    } else {
        eprintln!("Error: No file or directory at {}", target.display());
        return Ok(FAILED);
    };
    let mut status = 0;
    for file in files {
        status = status.max(format_file(&file, flags)?);
    }
    Ok(status)
}

/// The files to format in `dir` (and below it, with `recursive`), in name
/// order; hidden and editor backup files are skipped, as Terraform does.
fn collect(dir: &Path, recursive: bool, out: &mut Vec<PathBuf>) -> Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .with_context(|| format!("Cannot read directory {}", dir.display()))?
        .collect::<std::io::Result<_>>()?;
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || name.ends_with('~') || (name.starts_with('#') && name.ends_with('#')) {
            continue;
        }
        let path = dir.join(&name);
        if entry.file_type()?.is_dir() {
            if recursive {
                collect(&path, true, out)?;
            }
        } else if EXTENSIONS.iter().any(|ext| name.ends_with(ext)) {
            out.push(path);
        }
    }
    Ok(())
}

/// Formats one file; the exit status it asks for.
fn format_file(path: &Path, flags: &FmtFlags) -> Result<i32> {
    let shown = display_path(path);
    let src = std::fs::read_to_string(path).with_context(|| format!("Failed to read file {shown}"))?;
    let formatted = match format_source(&src, &shown) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("Error: Invalid syntax\n  {e}");
            return Ok(FAILED);
        }
    };
    if formatted == src {
        return Ok(0);
    }
    if flags.list {
        println!("{shown}");
    }
    if flags.diff {
        print!("{}", unified_diff(&src, &formatted, &shown)?);
    }
    if flags.check {
        return Ok(NEEDS_FORMATTING);
    }
    if flags.write {
        std::fs::write(path, formatted).with_context(|| format!("Failed to write {shown}"))?;
    }
    Ok(0)
}

/// The path as Terraform lists it: without a leading `./`.
fn display_path(path: &Path) -> String {
    let text = path.to_string_lossy();
    text.strip_prefix("./").unwrap_or(&text).to_string()
}

/// `diff -u` of the two texts, labelled `old/PATH` and `new/PATH`.
fn unified_diff(old: &str, new: &str, shown: &str) -> Result<String> {
    let dir = tempfile::tempdir()?;
    let (a, b) = (dir.path().join("old"), dir.path().join("new"));
    std::fs::write(&a, old)?;
    std::fs::write(&b, new)?;
    let output = std::process::Command::new("diff")
        .arg(format!("--label=old/{shown}"))
        .arg(format!("--label=new/{shown}"))
        .arg("-u")
        .arg(&a)
        .arg(&b)
        .output()
        .context("-diff runs the system's diff, which could not be started")?;
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}
