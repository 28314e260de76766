//! Provider signatures: minisign (Ed25519 over a BLAKE2b prehash of the
//! `.wasm`), made and checked with the `minisign` crate. A signature lives
//! beside its provider as `FILE.wasm.minisig` (and travels with an OCI
//! artifact as a layer of its own). With `trusted_keys` in the
//! configuration, a provider must carry a signature by one of them; this is
//! checked on the file's bytes before any of its code runs.

use std::io::Cursor;
use std::path::{Path, PathBuf};

use minisign::{KeyPair, PublicKey, PublicKeyBox, SecretKeyBox, SignatureBox};

/// The signature file of provider file `wasm`: `wasm` + `.minisig`.
pub fn signature_path(wasm: &Path) -> PathBuf {
    let mut name = wasm.as_os_str().to_owned();
    name.push(".minisig");
    PathBuf::from(name)
}

/// A new key pair written as `PREFIX.key` (the secret key, unencrypted,
/// readable by the owner only) and `PREFIX.pub`; returns the public key in
/// the one-line form `trusted_keys` takes. Refuses to overwrite a key.
pub fn keygen(prefix: &Path) -> Result<String, String> {
    let secret_path = with_extension(prefix, "key");
    let public_path = with_extension(prefix, "pub");
    for path in [&secret_path, &public_path] {
        if path.exists() {
            return Err(format!("{} exists; refusing to overwrite a key", path.display()));
        }
    }
    let pair = KeyPair::generate_unencrypted_keypair().map_err(|e| format!("cannot generate a key: {e}"))?;
    let secret = pair.sk.to_box(None).map_err(|e| format!("cannot encode the secret key: {e}"))?.to_string();
    let public = pair.pk.to_box().map_err(|e| format!("cannot encode the public key: {e}"))?.to_string();
    write_private(&secret_path, secret.as_bytes())?;
    std::fs::write(&public_path, public.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", public_path.display()))?;
    Ok(pair.pk.to_base64())
}

/// Signs `wasm` with the secret key in `key_file`; returns the signature
/// file's text.
pub fn sign(key_file: &Path, wasm: &[u8]) -> Result<String, String> {
    let text = std::fs::read_to_string(key_file).map_err(|e| format!("cannot read {}: {e}", key_file.display()))?;
    let secret = SecretKeyBox::from_string(&text)
        .and_then(|b| b.into_unencrypted_secret_key())
        .map_err(|e| format!("{} is not an unencrypted minisign secret key: {e}", key_file.display()))?;
    let public = PublicKey::from_secret_key(&secret).ok();
    let signature = minisign::sign(public.as_ref(), &secret, Cursor::new(wasm), None, Some("signed by cairn"))
        .map_err(|e| format!("cannot sign: {e}"))?;
    Ok(signature.to_string())
}

/// A public key as written in `trusted_keys` or a `.pub` file: the one-line
/// base64 form (`RW…`), or a whole minisign public key file.
pub fn parse_public_key(text: &str) -> Result<PublicKey, String> {
    let text = text.trim();
    let key = if text.contains('\n') {
        PublicKeyBox::from_string(text).and_then(|b| b.into_public_key())
    } else {
        PublicKey::from_base64(text)
    };
    key.map_err(|e| format!("{text:?} is not a minisign public key: {e}"))
}

/// Which of `trusted` (public keys as written) signed `wasm` with
/// `signature` (a `.minisig` file's text); an error that says why not.
pub fn verify(wasm: &[u8], signature: &str, trusted: &[String]) -> Result<String, String> {
    let signature = SignatureBox::from_string(signature).map_err(|e| format!("the signature is malformed: {e}"))?;
    let mut failures = Vec::new();
    for text in trusted {
        let key = parse_public_key(text)?;
        // `quiet`: the crate would otherwise print to stderr.
        match minisign::verify(&key, &signature, Cursor::new(wasm), true, false, false) {
            Ok(()) => return Ok(text.trim().to_string()),
            Err(e) => failures.push(e.to_string()),
        }
    }
    Err(format!("it is not signed by a trusted key ({})", failures.join("; ")))
}

/// `prefix` with `.ext` appended (a prefix such as `keys/release` has no
/// extension of its own to replace).
fn with_extension(prefix: &Path, ext: &str) -> PathBuf {
    let mut name = prefix.as_os_str().to_owned();
    name.push(".");
    name.push(ext);
    PathBuf::from(name)
}

/// Writes a new file only its owner can read.
fn write_private(path: &Path, bytes: &[u8]) -> Result<(), String> {
    use std::io::Write as _;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    file.write_all(bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sign_then_verify() {
        let dir = tempfile::tempdir().unwrap();
        let ours = keygen(&dir.path().join("ours")).unwrap();
        let theirs = keygen(&dir.path().join("theirs")).unwrap();
        assert!(keygen(&dir.path().join("ours")).unwrap_err().contains("refusing to overwrite"));
        let signature = sign(&dir.path().join("ours.key"), b"wasm").unwrap();
        assert_eq!(verify(b"wasm", &signature, &[theirs.clone(), ours.clone()]).unwrap(), ours);
        let e = verify(b"wasm", &signature, std::slice::from_ref(&theirs)).unwrap_err();
        assert!(e.starts_with("it is not signed by a trusted key"), "{e}");
        let e = verify(b"wasn", &signature, std::slice::from_ref(&ours)).unwrap_err();
        assert!(e.contains("not signed by a trusted key"), "{e}");
        assert!(verify(b"wasm", "garbage", std::slice::from_ref(&ours)).unwrap_err().contains("malformed"));
        // The `.pub` file works as well as the one-line form.
        let file = std::fs::read_to_string(dir.path().join("ours.pub")).unwrap();
        assert_eq!(parse_public_key(&file).unwrap().to_base64(), ours);
        assert!(parse_public_key("nope").is_err());
    }
}
