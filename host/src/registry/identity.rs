//! A provider's identity: the name and version it declares for itself in
//! its `cairn-provider-identity` custom section (written by the Rust SDK's
//! `export_provider!(P, name = "…")`). Read from the file's bytes, so no
//! code of the provider runs to learn who it is.

/// The custom section holding the identity: `name=…` and `version=…`
/// lines.
pub const SECTION: &str = "cairn-provider-identity";

/// What a provider says it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// Its name (`local`): the one a configuration uses for it.
    pub name: String,
    /// Its version, a semantic version.
    pub version: semver::Version,
}

/// The identity a component declares; `Ok(None)` when it declares none.
/// A malformed section, or two of them, is an error: a provider either
/// says who it is or says nothing.
pub fn read(wasm: &[u8]) -> Result<Option<Identity>, String> {
    let mut found = None;
    // `parse_all` walks nested core modules too: the SDK's section lives in
    // the core module the component embeds.
    for payload in wasmparser::Parser::new(0).parse_all(wasm) {
        let payload = payload.map_err(|e| format!("not a WebAssembly file: {e}"))?;
        let wasmparser::Payload::CustomSection(section) = payload else { continue };
        if section.name() != SECTION {
            continue;
        }
        if found.is_some() {
            return Err(format!("it has two {SECTION} sections"));
        }
        found = Some(parse(section.data())?);
    }
    Ok(found)
}

/// `name=local\nversion=0.1.0\n` → the identity.
fn parse(data: &[u8]) -> Result<Identity, String> {
    let text = std::str::from_utf8(data).map_err(|_| format!("its {SECTION} section is not UTF-8"))?;
    let (mut name, mut version) = (None, None);
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match line.split_once('=') {
            Some(("name", v)) => name = Some(v.trim().to_string()),
            Some(("version", v)) => version = Some(v.trim().to_string()),
            // Later SDKs may say more; what this host needs is checked below.
            Some(_) => {}
            None => return Err(format!("its {SECTION} section has a line that is not key=value: {line:?}")),
        }
    }
    let name = name.filter(|n| is_name(n)).ok_or_else(|| format!("its {SECTION} section declares no valid name"))?;
    let version = version.ok_or_else(|| format!("its {SECTION} section declares no version"))?;
    let version = semver::Version::parse(&version)
        .map_err(|e| format!("its declared version {version:?} is not a semantic version: {e}"))?;
    Ok(Identity { name, version })
}

/// A provider name: lowercase letters, digits, `_` and `-`, starting with a
/// letter (the first word of its resource types).
pub fn is_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundled_providers_declare_themselves() {
        for name in crate::runtime::BUILTIN_NAMES {
            let wasm = crate::runtime::builtin(name).unwrap();
            let identity = read(wasm).unwrap().unwrap_or_else(|| panic!("{name} declares no identity"));
            assert_eq!(identity.name, *name);
            assert_eq!(identity.version, semver::Version::parse(env!("CARGO_PKG_VERSION")).unwrap());
        }
    }

    #[test]
    fn sections_are_parsed_strictly() {
        let ok = parse(b"name=local\nversion=1.2.3\nlanguage=rust\n").unwrap();
        assert_eq!(ok, Identity { name: "local".into(), version: semver::Version::new(1, 2, 3) });
        for (bad, why) in [
            (&b"version=1.0.0\n"[..], "no valid name"),
            (b"name=Local\nversion=1.0.0", "no valid name"),
            (b"name=local\n", "no version"),
            (b"name=local\nversion=one", "not a semantic version"),
            (b"name=local\nnonsense", "not key=value"),
            (b"\xff", "not UTF-8"),
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains(why), "{e}");
        }
        assert!(read(b"not wasm").unwrap_err().contains("not a WebAssembly file"));
    }
}
