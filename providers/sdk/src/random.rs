//! Randomness from the host's WASI `random` source (the host links it for
//! every provider), for providers that make ids or secrets.

use crate::Diagnostic;

/// `n` random bytes.
pub fn bytes(n: usize) -> Result<Vec<u8>, Diagnostic> {
    let mut bytes = vec![0u8; n];
    getrandom::fill(&mut bytes).map_err(unavailable)?;
    Ok(bytes)
}

/// A random 32-bit number.
pub fn u32() -> Result<u32, Diagnostic> {
    getrandom::u32().map_err(unavailable)
}

/// A random 64-bit number.
pub fn u64() -> Result<u64, Diagnostic> {
    getrandom::u64().map_err(unavailable)
}

/// The error for a host that gave no randomness.
fn unavailable(e: getrandom::Error) -> Diagnostic {
    Diagnostic::error("No randomness available").detail(e.to_string())
}

/// A random (version 4) UUID, lowercase and hyphenated:
/// `xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx`.
pub fn uuid_v4() -> Result<String, Diagnostic> {
    Ok(format_uuid(bytes(16)?.try_into().expect("16 bytes were asked for")))
}

/// 16 random bytes as a version-4 UUID.
fn format_uuid(bytes: [u8; 16]) -> String {
    uuid::Builder::from_random_bytes(bytes).into_uuid().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_uuid_has_its_version_and_variant() {
        assert_eq!(format_uuid([0xff; 16]), "ffffffff-ffff-4fff-bfff-ffffffffffff");
        assert_ne!(uuid_v4().unwrap(), uuid_v4().unwrap());
        assert_eq!(bytes(5).unwrap().len(), 5);
    }
}
