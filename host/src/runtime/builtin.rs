//! The providers bundled into the `cairn` binary (`local`, `random`,
//! `null`, and `terraform` for Terraform's built-in `terraform_data`), so
//! that a fresh clone runs its examples with nothing else installed.
//! `build.rs` compiles their components and generates the table included
//! here.

include!(concat!(env!("OUT_DIR"), "/builtin_providers.rs"));

/// The component of the bundled provider `name`, if there is one.
pub fn builtin(name: &str) -> Option<&'static [u8]> {
    BUILTIN_COMPONENTS.iter().find(|(n, _)| *n == name).map(|(_, wasm)| *wasm)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_has_a_component() {
        for name in BUILTIN_NAMES {
            assert!(builtin(name).is_some_and(|wasm| wasm.starts_with(b"\0asm")), "{name}");
        }
        assert!(builtin("nonexistent").is_none());
    }
}
