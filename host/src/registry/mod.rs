//! Provider sources: where each provider's component comes from (built into
//! the `cairn` binary, or a `.wasm` file named in `required_providers`).
//! Starting providers is the engine's job (`engine::providers`).

use crate::config::Config;
use crate::diag::{Diagnostic, Location};
use crate::runtime;

/// Where a provider's component comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// Embedded in the `cairn` binary.
    Builtin(&'static [u8]),
    /// A `.wasm` file, from `required_providers`.
    File(std::path::PathBuf, Location),
}

/// Finds the source of provider `name`: `required_providers` first, then the
/// built-in providers.
pub fn resolve(name: &str, config: &Config) -> Result<Source, Diagnostic> {
    if let Some(req) = config.required_providers.get(name) {
        let path = config.dir.join(&req.source);
        return Ok(Source::File(path, req.location.clone()));
    }
    runtime::builtin(name).map(Source::Builtin).ok_or_else(|| {
        Diagnostic::error(format!("Unknown provider {name:?}")).with_detail(format!(
            "It is not built in (built in: {}) and no required_providers entry names its source, e.g.\n\
             terraform {{\n  required_providers {{\n    {name} = {{ source = \"./providers/{name}.wasm\" }}\n  }}\n}}",
            runtime::BUILTIN_NAMES.join(", ")
        ))
    })
}

impl Source {
    /// The component's bytes.
    pub fn bytes(&self, name: &str) -> Result<std::borrow::Cow<'static, [u8]>, Diagnostic> {
        match self {
            Source::Builtin(bytes) => Ok((*bytes).into()),
            Source::File(path, location) => std::fs::read(path).map(Into::into).map_err(|e| {
                Diagnostic::error(format!("Cannot read provider {name:?} from {}: {e}", path.display())).at(location)
            }),
        }
    }
}
