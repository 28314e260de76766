//! The providers bundled into the `cairn` binary (`local`, `random`,
//! `null`, and `terraform` for Terraform's built-in `terraform_data`), so
//! that a fresh clone runs its examples with nothing else installed.
//! `build.rs` compiles their components and generates the table included
//! here.

include!(concat!(env!("OUT_DIR"), "/builtin_providers.rs"));

/// The component of the bundled provider `name`, if there is one.
pub fn builtin(name: &str) -> Option<&'static [u8]> {
    entry(name).map(|(_, wasm, _)| *wasm)
}

/// The SHA-256 (in hex) of the bundled provider `name`'s component,
/// computed when cairn was built.
pub fn builtin_sha256(name: &str) -> Option<&'static str> {
    entry(name).map(|(.., digest)| *digest)
}

/// The bundled provider `name`'s row of the table.
fn entry(name: &str) -> Option<&'static (&'static str, &'static [u8], &'static str)> {
    BUILTIN_COMPONENTS.iter().find(|(n, ..)| *n == name)
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

    #[test]
    fn the_digests_made_at_build_time_are_the_components_digests() {
        for name in BUILTIN_NAMES {
            let digest = crate::registry::sha256_hex(builtin(name).unwrap());
            assert_eq!(builtin_sha256(name), Some(digest.as_str()), "{name}");
        }
        assert!(builtin_sha256("nonexistent").is_none());
    }
}
