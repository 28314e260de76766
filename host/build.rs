//! Builds the bundled providers (`providers/local`, `random`, `null`,
//! `terraform`, `postgresql`) into WebAssembly components with a nested
//! cargo, and generates `$OUT_DIR/builtin_providers.rs`, which embeds them
//! in the `cairn` binary.
//!
//! The nested cargo uses its own target directory (`<target>/wasm-providers`)
//! so that it never waits for the lock the outer build holds. Set
//! `CAIRN_SKIP_BUILTIN_PROVIDERS=1` to build a host without bundled
//! providers (when working on the host while the providers do not build).

// A build script that cannot write its output should stop.
#![allow(clippy::unwrap_used)]

use std::env;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[path = "src/runtime/wasm_build.rs"]
mod wasm_build;

/// The bundled providers: local name and package.
const BUILTIN: &[(&str, &str)] = &[
    ("local", "cairn-provider-local"),
    ("random", "cairn-provider-random"),
    ("null", "cairn-provider-null"),
    // Terraform's built-in `terraform_data`.
    ("terraform", "cairn-provider-terraform"),
    // PostgreSQL roles, databases, schemas, grants and extensions over a
    // `connect` grant; about 1 MB of the binary.
    ("postgresql", "cairn-provider-postgresql"),
];

fn main() {
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let workspace = manifest_dir.parent().expect("the host crate is in a workspace").to_path_buf();
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let cargo = PathBuf::from(env::var_os("CARGO").expect("cargo sets CARGO"));
    let target_dir = wasm_build::outer_target_dir(&out_dir).unwrap_or_else(|| out_dir.clone()).join("wasm-providers");
    // The test support builds test components into the same directory.
    println!("cargo::rustc-env=CAIRN_WASM_TARGET_DIR={}", target_dir.display());

    for dir in [
        "wit",
        "providers/sdk",
        "providers/local",
        "providers/random",
        "providers/null",
        "providers/terraform",
        "providers/postgresql",
        "Cargo.toml",
        "Cargo.lock",
    ] {
        println!("cargo::rerun-if-changed={}", workspace.join(dir).display());
    }
    println!("cargo::rerun-if-env-changed=CAIRN_SKIP_BUILTIN_PROVIDERS");
    let skip = env::var("CAIRN_SKIP_BUILTIN_PROVIDERS").is_ok_and(|v| !v.is_empty() && v != "0");

    let mut built = Vec::new();
    if !skip {
        for (name, package) in BUILTIN {
            match wasm_build::build_component(&cargo, &workspace, &target_dir, package) {
                Ok(wasm) => built.push((*name, wasm)),
                Err(e) => {
                    eprintln!("{e}");
                    std::process::exit(1);
                }
            }
        }
    }
    let source = generate(&built);
    std::fs::write(out_dir.join("builtin_providers.rs"), source).expect("cannot write builtin_providers.rs");
}

/// The Rust source of the table of bundled components.
fn generate(built: &[(&str, PathBuf)]) -> String {
    use sha2::Digest;
    let mut names = String::new();
    let mut components = String::new();
    for (name, wasm) in built {
        // Hashed here, once, rather than by every run that names the
        // provider (the digest pins it in saved plans).
        let digest = hex::encode(sha2::Sha256::digest(std::fs::read(wasm).unwrap()));
        write!(names, "{name:?}, ").unwrap();
        writeln!(components, "    ({name:?}, include_bytes!({:?}), {digest:?}),", path_str(wasm)).unwrap();
    }
    format!(
        "/// The names of the providers bundled into the `cairn` binary.\n\
         pub const BUILTIN_NAMES: &[&str] = &[{names}];\n\n\
         /// Each bundled provider's component and its SHA-256 in hex.\n\
         static BUILTIN_COMPONENTS: &[(&str, &[u8], &str)] = &[\n{components}];\n"
    )
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("the target directory path is UTF-8")
}
