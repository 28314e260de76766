//! Test support: components built from source on demand, once per process,
//! the same way `build.rs` builds the bundled providers. Used by the
//! runtime's own tests and by the end-to-end tests in `tests/`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock, PoisonError};

use super::wasm_build;

/// Builds the provider crate `package` of this workspace (e.g.
/// `cairn-provider-misbehave`) into a component and returns the `.wasm`'s
/// path. Builds once per process; later calls return the same path.
///
/// # Panics
///
/// When the build fails, with the nested cargo's output: this is for tests.
pub fn build_component(package: &str) -> PathBuf {
    static BUILT: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
    // Holding the lock during the build makes concurrent tests wait for
    // one build instead of racing several.
    let mut built = BUILT.get_or_init(Mutex::default).lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(path) = built.get(package) {
        return path.clone();
    }
    let cargo = std::env::var_os("CARGO").map_or_else(|| PathBuf::from(env!("CARGO")), PathBuf::from);
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the host crate is in a workspace");
    // Where build.rs builds the bundled providers: sharing it shares their
    // compiled dependencies.
    let target_dir = Path::new(env!("CAIRN_WASM_TARGET_DIR"));
    let path = wasm_build::build_component(&cargo, workspace, target_dir, package).unwrap_or_else(|e| panic!("{e}"));
    built.insert(package.to_string(), path.clone());
    path
}
