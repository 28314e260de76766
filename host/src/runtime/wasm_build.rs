//! Building a provider crate of this workspace into a WebAssembly component
//! with a nested `cargo rustc`. Shared by the host's build script (which
//! bundles the standard providers) and by the test support that builds test
//! components, so this file uses nothing but `std`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The cargo profile provider components are built with (see the workspace
/// `Cargo.toml`): small code, since the standard ones are embedded.
pub const PROFILE: &str = "wasm-provider";

/// The target of provider components.
pub const TARGET: &str = "wasm32-wasip2";

/// Variables an outer cargo build sets (for build scripts, or from the
/// user's environment for the host) that would change or break the nested
/// build of a WebAssembly component.
const LEAKY_VARS: &[&str] = &[
    "RUSTFLAGS",
    "RUSTDOCFLAGS",
    "CARGO_ENCODED_RUSTFLAGS",
    "CARGO_ENCODED_RUSTDOCFLAGS",
    "CARGO_BUILD_RUSTFLAGS",
    "CARGO_BUILD_TARGET",
    "CARGO_BUILD_TARGET_DIR",
    "CARGO_BUILD_BUILD_DIR",
    "CARGO_TARGET_DIR",
    // `cargo clippy` runs clippy-driver through this; the nested build
    // should compile, not lint.
    "RUSTC_WORKSPACE_WRAPPER",
    "RUSTC_LINKER",
    "CARGO_MANIFEST_DIR",
    "CARGO_MANIFEST_PATH",
    "CARGO_MANIFEST_LINKS",
    "CARGO_PRIMARY_PACKAGE",
    "CARGO_CRATE_NAME",
    "OUT_DIR",
];

/// Prefixes of variables cargo sets for the host's build script that the
/// nested build's own build scripts would mistake for theirs.
const LEAKY_PREFIXES: &[&str] = &["CARGO_CFG_", "CARGO_FEATURE_", "CARGO_PKG_", "DEP_"];

/// Builds package `package` of the workspace at `workspace` as a component,
/// with `cargo` (the path of the cargo binary) and its own target directory
/// `target_dir`, and returns the path of the `.wasm`. The error carries the
/// nested cargo's output.
///
/// `target_dir` must not be the outer build's target directory: a nested
/// cargo would wait forever for the lock the outer one holds.
pub fn build_component(cargo: &Path, workspace: &Path, target_dir: &Path, package: &str) -> Result<PathBuf, String> {
    check_target_installed(workspace)?;
    let mut command = Command::new(cargo);
    command.current_dir(workspace).arg("rustc").arg("--manifest-path").arg(workspace.join("Cargo.toml")).args([
        "-p",
        package,
        "--target",
        TARGET,
        "--profile",
        PROFILE,
        "--crate-type",
        "cdylib",
    ]);
    for name in LEAKY_VARS {
        command.env_remove(name);
    }
    for (name, _) in std::env::vars_os() {
        let leaky = name.to_str().is_some_and(|n| LEAKY_PREFIXES.iter().any(|p| n.starts_with(p)));
        if leaky {
            command.env_remove(&name);
        }
    }
    // After the removals, which include the outer CARGO_TARGET_DIR. The
    // build directory (intermediate artifacts, and the lock) defaults to the
    // target directory, but a user's `build.build-dir` would send the nested
    // build into the outer one's lock: pin it too.
    command.env("CARGO_TARGET_DIR", target_dir).env("CARGO_BUILD_BUILD_DIR", target_dir);
    let shown = format!("cargo rustc -p {package} --target {TARGET} --profile {PROFILE} --crate-type cdylib");
    let output = command.output().map_err(|e| format!("cannot run `{shown}` ({}): {e}", cargo.display()))?;
    if !output.status.success() {
        return Err(format!(
            "building the provider component {package} failed: `{shown}` exited with {}\n{}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let wasm = component_path(target_dir, package);
    if !wasm.is_file() {
        return Err(format!("`{shown}` succeeded but did not produce {}", wasm.display()));
    }
    Ok(wasm)
}

/// Fails with one line that says what to run when the toolchain has no
/// standard library for [`TARGET`] (rustup installs it from
/// `rust-toolchain.toml`, unless its auto-install is off or it is offline):
/// otherwise the nested build would fail with pages about a missing `core`.
fn check_target_installed(workspace: &Path) -> Result<(), String> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let output = Command::new(&rustc).current_dir(workspace).args(["--print", "sysroot"]).output();
    let Ok(output) = output.as_ref().map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string()) else {
        // No rustc to ask: let the build itself say what is wrong.
        return Ok(());
    };
    let libs = Path::new(&output).join("lib").join("rustlib").join(TARGET).join("lib");
    if output.is_empty() || libs.is_dir() {
        return Ok(());
    }
    Err(format!("the {TARGET} target is not installed for this toolchain; run: rustup target add {TARGET}"))
}

/// Where the component of `package` lands: the library's file name is the
/// package name with `-` as `_` (the provider crates keep that default).
pub fn component_path(target_dir: &Path, package: &str) -> PathBuf {
    target_dir.join(TARGET).join(PROFILE).join(format!("{}.wasm", package.replace('-', "_")))
}

/// The target directory of the build whose build script runs in `out_dir`:
/// the nearest ancestor that cargo marked with `CACHEDIR.TAG`.
pub fn outer_target_dir(out_dir: &Path) -> Option<PathBuf> {
    out_dir.ancestors().find(|dir| dir.join("CACHEDIR.TAG").is_file()).map(Path::to_path_buf)
}
