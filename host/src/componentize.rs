//! `cairn providers componentize`: turning a core WebAssembly module built
//! for WASI preview 1 (Go's `GOOS=wasip1 -buildmode=c-shared`, C's
//! `clang --target=wasm32-wasi -mexec-model=reactor`) into a provider
//! component, so that authors of Go and C providers need no tool beyond
//! their compiler and cairn.
//!
//! Two steps, as `wasm-tools component embed` and `component new` do them:
//! the module gets the WIT world it was built against (unless its linker
//! already put a `component-type` section in it, as wit-bindgen's C glue
//! does), then the `wasi_snapshot_preview1` imports are adapted to WASI 0.2
//! with the reactor adapter of the wasmtime release this cairn runs on.

use std::path::Path;

use anyhow::{Context, Result, bail};
use wit_component::{ComponentEncoder, StringEncoding};
use wit_parser::Resolve;

/// cairn's own provider WIT, the world a module is given by default.
pub const PROVIDER_WIT: &str = include_str!("../../wit/provider.wit");

/// The world of [`PROVIDER_WIT`] that a provider targets.
pub const PROVIDER_WORLD: &str = "provider-world";

/// Where the WIT world a module was built against comes from.
#[derive(Debug, Clone, Copy, Default)]
pub struct WorldSource<'a> {
    /// A WIT file or directory (with its `deps/`); cairn's own WIT when
    /// absent.
    pub wit: Option<&'a Path>,
    /// The world's name in that WIT; when absent, `provider-world` where
    /// the WIT has one (cairn's own, or a copy of it), else its only world.
    pub world: Option<&'a str>,
}

/// Makes a component of `module`: embeds the world of `source` unless the
/// module carries one, then adapts `wasi_snapshot_preview1`. The result is
/// validated.
pub fn componentize(module: &[u8], source: WorldSource<'_>) -> Result<Vec<u8>> {
    check_is_core_module(module)?;
    let mut module = module.to_vec();
    if !has_component_type_section(&module)? {
        embed_world(&mut module, source)?;
    }
    ComponentEncoder::default()
        .validate(true)
        .module(&module)
        .context("the module does not fit the WIT world it was built against")?
        .adapter(
            wasi_preview1_component_adapter_provider::WASI_SNAPSHOT_PREVIEW1_ADAPTER_NAME,
            wasi_preview1_component_adapter_provider::WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER,
        )
        .context("cannot load the WASI preview 1 adapter")?
        .encode()
        .context("cannot make a component of the module")
}

/// Refuses what is not a core module (a component already, or no
/// WebAssembly at all) with a message saying which.
fn check_is_core_module(bytes: &[u8]) -> Result<()> {
    let Some(Ok(wasmparser::Payload::Version { encoding, .. })) = wasmparser::Parser::new(0).parse_all(bytes).next()
    else {
        bail!("not a WebAssembly module (no WebAssembly header)");
    };
    if encoding == wasmparser::Encoding::Component {
        bail!("already a component: give the core module the compiler wrote");
    }
    Ok(())
}

/// Whether the linker already embedded a WIT world (wit-bindgen's C glue
/// links a `component-type` object into the module).
fn has_component_type_section(module: &[u8]) -> Result<bool> {
    for payload in wasmparser::Parser::new(0).parse_all(module) {
        let payload = payload.context("the module is not valid WebAssembly")?;
        if let wasmparser::Payload::CustomSection(section) = payload
            && section.name().starts_with("component-type")
        {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Appends the `component-type` section of the world `source` names.
fn embed_world(module: &mut Vec<u8>, source: WorldSource<'_>) -> Result<()> {
    let mut resolve = Resolve::default();
    let (package, world) = match source.wit {
        Some(path) => {
            let (package, _) =
                resolve.push_path(path).with_context(|| format!("cannot read the WIT at {}", path.display()))?;
            // A copy of cairn's own WIT has more worlds than the provider's
            // (the optional exports each have one): it means the provider's.
            let cairns = resolve.packages[package].worlds.contains_key(PROVIDER_WORLD);
            (package, source.world.or(cairns.then_some(PROVIDER_WORLD)))
        }
        None => {
            let package = resolve.push_str("provider.wit", PROVIDER_WIT).context("cairn's own WIT does not parse")?;
            (package, Some(source.world.unwrap_or(PROVIDER_WORLD)))
        }
    };
    let world = resolve.select_world(&[package], world)?;
    wit_component::embed_component_metadata(module, &resolve, world, StringEncoding::UTF8)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A core module from its text.
    fn core_module(wat: &str) -> Vec<u8> {
        wat::parse_str(wat).unwrap()
    }

    #[test]
    fn refuses_what_is_not_a_core_module() {
        let err = componentize(b"not wasm", WorldSource::default()).unwrap_err();
        assert!(err.to_string().contains("not a WebAssembly module"), "{err:#}");
        let component = core_module("(component)");
        let err = componentize(&component, WorldSource::default()).unwrap_err();
        assert!(err.to_string().contains("already a component"), "{err:#}");
    }

    #[test]
    fn a_module_that_lacks_the_worlds_exports_is_refused_with_the_missing_name() {
        let module = core_module("(module (memory (export \"memory\") 1))");
        let err = componentize(&module, WorldSource::default()).unwrap_err();
        let text = format!("{err:#}");
        assert!(text.contains("cairn:provider/provider"), "{text}");
    }

    #[test]
    fn a_copy_of_cairns_wit_without_a_world_means_the_providers_world() {
        // A project's own copy of cairn's WIT (the C template's `--wit
        // wit`) has the optional exports' worlds too: the provider's is
        // chosen, so the error names its missing exports rather than
        // asking which world.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("provider.wit"), PROVIDER_WIT).unwrap();
        let module = core_module("(module (memory (export \"memory\") 1))");
        let err = componentize(&module, WorldSource { wit: Some(dir.path()), world: None }).unwrap_err();
        let text = format!("{err:#}");
        assert!(!text.contains("multiple worlds"), "{text}");
        assert!(text.contains("cairn:provider/provider"), "{text}");
    }

    #[test]
    fn a_wit_file_of_the_authors_own_names_its_world() {
        let dir = tempfile::tempdir().unwrap();
        let wit = dir.path().join("tiny.wit");
        std::fs::write(&wit, "package my:tiny;\nworld tiny { export answer: func() -> u32; }\n").unwrap();
        let module = core_module(
            r#"(module
                 (import "wasi_snapshot_preview1" "random_get" (func (param i32 i32) (result i32)))
                 (memory (export "memory") 1)
                 (func (export "answer") (result i32) i32.const 42)
                 (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32) i32.const 0))"#,
        );
        let component = componentize(&module, WorldSource { wit: Some(&wit), world: Some("tiny") }).unwrap();
        let Some(Ok(wasmparser::Payload::Version { encoding, .. })) =
            wasmparser::Parser::new(0).parse_all(&component).next()
        else {
            panic!("no header");
        };
        assert_eq!(encoding, wasmparser::Encoding::Component);
        let err = componentize(&module, WorldSource { wit: Some(&wit), world: Some("other") }).unwrap_err();
        assert!(format!("{err:#}").contains("other"), "{err:#}");
    }
}
