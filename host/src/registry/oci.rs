//! Providers in OCI registries, as the WebAssembly ecosystem stores
//! components (the CNCF "Wasm OCI artifact" layout that wkg / wasm-pkg-tools
//! write): an image manifest whose config has media type
//! [`CONFIG_MEDIA_TYPE`] and whose one component layer has media type
//! [`LAYER_MEDIA_TYPE`] (the `.wasm` itself). A minisign signature travels
//! as one more layer ([`SIGNATURE_MEDIA_TYPE`]), which other tools ignore.
//!
//! `source = "oci://HOST[:PORT]/REPOSITORY:TAG"` (or `@sha256:…`, or no tag
//! with a `version` constraint: the highest matching semver tag). `cairn
//! init` pulls the artifact and keeps the component in the cache by its
//! SHA-256 (`$CAIRN_CACHE_DIR/providers/sha256-HEX.wasm`, its signature
//! beside it); every other command uses that copy, found by the hash in
//! `cairn.lock`, and never contacts the registry. Loopback registries
//! (`localhost`, `127.0.0.1`, `[::1]`) are reached over plain HTTP, every
//! other over HTTPS. The client is `oci-client` (anonymous access).

use std::path::{Path, PathBuf};

use oci_client::client::{ClientConfig, ClientProtocol, Config, ImageLayer};
use oci_client::manifest::OciImageManifest;
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};

use super::{LockEntry, sha256_hex, signature};
use crate::diag::Diagnostic;

/// How a source names a registry artifact.
pub const SCHEME: &str = "oci://";

/// The config media type of a Wasm OCI artifact.
pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.wasm.config.v0+json";

/// The media type of the layer that is the component.
pub const LAYER_MEDIA_TYPE: &str = "application/wasm";

/// The media type of the layer that is the component's minisign signature.
pub const SIGNATURE_MEDIA_TYPE: &str = "application/vnd.cairn.provider.signature.v1+minisign";

/// The largest component (or signature) cairn downloads.
const MAX_BLOB_BYTES: usize = 256 << 20;

/// The cached copy of a registry provider for a run: the file `cairn init`
/// downloaded, by the hash the lock records.
pub fn cached(name: &str, source: &str, locked: Option<&LockEntry>) -> Result<PathBuf, Diagnostic> {
    let init = || format!("Run `cairn init` to download provider {name:?} from {source}.");
    let Some(locked) = locked.filter(|l| l.source == source) else {
        return Err(Diagnostic::error(format!("Provider {name:?} ({source}) is not in cairn.lock")).with_detail(init()));
    };
    let path = cache_dir()?.join(file_name(&locked.sha256));
    if !path.is_file() {
        return Err(Diagnostic::error(format!(
            "Provider {name:?} ({source}) is not in the download cache ({})",
            path.display()
        ))
        .with_detail(init()));
    }
    Ok(path)
}

/// Pulls the provider named by `source` into the cache and returns its
/// path there. Without a tag or digest, the highest tag that is a semantic
/// version satisfying `constraint` is chosen (`preferred`, the locked
/// version, if it is still a tag and satisfies it). A blob already cached
/// is not downloaded again.
pub fn pull(
    name: &str,
    source: &str,
    constraint: Option<&semver::VersionReq>,
    preferred: Option<&semver::Version>,
) -> Result<PathBuf, Diagnostic> {
    let fail = |e: String| Diagnostic::error(format!("Provider {name:?}: cannot pull {source}: {e}"));
    let (mut reference, client, pinned) = parse(source).map_err(fail)?;
    let dir = cache_dir()?;
    let tokio = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| fail(e.to_string()))?;
    tokio
        .block_on(async {
            let auth = RegistryAuth::Anonymous;
            if !pinned {
                let tag = choose_tag(&client, &reference, constraint, preferred).await?;
                reference = Reference::with_tag(reference.registry().into(), reference.repository().into(), tag);
            }
            let (manifest, _digest) = client.pull_image_manifest(&reference, &auth).await.map_err(|e| e.to_string())?;
            let wasm_layer = one_layer(&manifest, LAYER_MEDIA_TYPE)?
                .ok_or_else(|| format!("the artifact has no {LAYER_MEDIA_TYPE} layer: it is not a Wasm component"))?;
            let hash = wasm_layer
                .digest
                .strip_prefix("sha256:")
                .filter(|h| h.len() == 64 && h.chars().all(|c| c.is_ascii_hexdigit()))
                .ok_or_else(|| format!("the component layer's digest {:?} is not a SHA-256", wasm_layer.digest))?
                .to_ascii_lowercase();
            let path = dir.join(file_name(&hash));
            if !path.is_file() {
                let bytes = pull_blob(&client, &reference, wasm_layer).await?;
                // The registry's digest is checked by the client; this makes
                // the cache's name a promise whoever wrote it.
                if sha256_hex(&bytes) != hash {
                    return Err("the component's bytes do not match their digest".to_string());
                }
                write_atomic(&path, &bytes)?;
            }
            let signature_path = signature::signature_path(&path);
            if let Some(layer) = one_layer(&manifest, SIGNATURE_MEDIA_TYPE)? {
                let bytes = pull_blob(&client, &reference, layer).await?;
                write_atomic(&signature_path, &bytes)?;
            }
            Ok(path)
        })
        .map_err(fail)
}

/// Publishes the component `wasm` (with its signature, if given) as
/// `target` (`oci://HOST/REPOSITORY:TAG`); returns the manifest's URL.
pub fn push(wasm: &[u8], signature: Option<&[u8]>, target: &str) -> Result<String, String> {
    let (reference, client, pinned) = parse(target)?;
    if !pinned || reference.tag().is_none() {
        return Err(format!("{target} needs a tag to push to, such as {target}:1.0.0"));
    }
    let mut layers = vec![ImageLayer::new(wasm.to_vec(), LAYER_MEDIA_TYPE.to_string(), None)];
    if let Some(signature) = signature {
        layers.push(ImageLayer::new(signature.to_vec(), SIGNATURE_MEDIA_TYPE.to_string(), None));
    }
    let config = serde_json::json!({
        "architecture": "wasm",
        "os": "wasip2",
        "layerDigests": [format!("sha256:{}", sha256_hex(wasm))],
    });
    let config = Config::new(config.to_string().into_bytes(), CONFIG_MEDIA_TYPE.to_string(), None);
    let manifest = OciImageManifest::build(&layers, &config, None);
    let tokio = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
    tokio.block_on(async {
        let pushed = client
            .push(&reference, &layers, config, &RegistryAuth::Anonymous, Some(manifest))
            .await
            .map_err(|e| format!("cannot push to {target}: {e}"))?;
        Ok(pushed.manifest_url)
    })
}

/// `oci://HOST/REPO:TAG` → the reference, a client that speaks plain HTTP
/// to it only when it is on the loopback interface, and whether a tag or
/// digest was written (`Reference` would otherwise fill in `latest`; cairn
/// chooses by version instead).
fn parse(source: &str) -> Result<(Reference, Client, bool), String> {
    let rest = source.strip_prefix(SCHEME).ok_or_else(|| format!("{source:?} does not start with {SCHEME}"))?;
    if !rest.contains('/') {
        return Err(format!("{source:?} names no repository: write {SCHEME}HOST/REPOSITORY:TAG"));
    }
    let reference: Reference = rest.parse().map_err(|e| format!("{source:?} is not an OCI reference: {e}"))?;
    let pinned = rest.split_once('/').is_some_and(|(_, path)| path.contains(':') || path.contains('@'));
    // reqwest is built without a TLS crypto provider of its own: use ring,
    // as the rest of cairn does. Installing twice is harmless.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let host = reference.registry().to_string();
    let hostname = host.rsplit_once(':').map_or(host.as_str(), |(h, _)| h);
    let loopback = matches!(hostname, "localhost" | "[::1]") || hostname.starts_with("127.");
    let protocol = if loopback { ClientProtocol::HttpsExcept(vec![host.clone()]) } else { ClientProtocol::Https };
    let client = Client::new(ClientConfig { protocol, ..ClientConfig::default() });
    Ok((reference, client, pinned))
}

/// The highest tag of `reference`'s repository that is a semantic version
/// allowed by `constraint` (the `preferred` one when it is there).
async fn choose_tag(
    client: &Client,
    reference: &Reference,
    constraint: Option<&semver::VersionReq>,
    preferred: Option<&semver::Version>,
) -> Result<String, String> {
    let tags = client
        .list_tags(reference, &RegistryAuth::Anonymous, None, None)
        .await
        .map_err(|e| format!("cannot list its tags: {e}"))?
        .tags;
    let versions: Vec<(semver::Version, &String)> = tags
        .iter()
        .filter_map(|t| semver::Version::parse(t.trim_start_matches('v')).ok().map(|v| (v, t)))
        .filter(|(v, _)| constraint.is_none_or(|c| c.matches(v)))
        .collect();
    let chosen = preferred
        .and_then(|p| versions.iter().find(|(v, _)| v == p))
        .or_else(|| versions.iter().max_by(|a, b| a.0.cmp(&b.0)));
    chosen.map(|(_, t)| (*t).clone()).ok_or_else(|| {
        let wanted = constraint.map(|c| format!(" matching {c}")).unwrap_or_default();
        format!("no tag is a version{wanted} (tags: {})", tags.join(", "))
    })
}

/// The layer of `media_type`, if the manifest has one; two is an error.
fn one_layer<'a>(
    manifest: &'a OciImageManifest,
    media_type: &str,
) -> Result<Option<&'a oci_client::manifest::OciDescriptor>, String> {
    let mut layers = manifest.layers.iter().filter(|l| l.media_type == media_type);
    let first = layers.next();
    if layers.next().is_some() {
        return Err(format!("the artifact has more than one {media_type} layer"));
    }
    Ok(first)
}

async fn pull_blob(
    client: &Client,
    reference: &Reference,
    layer: &oci_client::manifest::OciDescriptor,
) -> Result<Vec<u8>, String> {
    if usize::try_from(layer.size).map_or(true, |size| size > MAX_BLOB_BYTES) {
        return Err(format!("its layer {} is {} bytes, more than cairn downloads", layer.digest, layer.size));
    }
    let mut bytes = Vec::new();
    client
        .pull_blob(reference, layer, &mut bytes)
        .await
        .map_err(|e| format!("cannot download {}: {e}", layer.digest))?;
    Ok(bytes)
}

/// Where downloaded providers are kept: `providers/` in the cairn cache
/// directory.
fn cache_dir() -> Result<PathBuf, Diagnostic> {
    crate::runtime::default_cache_root()
        .map(|root| root.join("providers"))
        .ok_or_else(|| Diagnostic::error("No cache directory for downloaded providers: set CAIRN_CACHE_DIR"))
}

/// A downloaded component's file name in the cache.
fn file_name(sha256: &str) -> String {
    format!("sha256-{sha256}.wasm")
}

fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), String> {
    use std::io::Write as _;
    let dir = path.parent().unwrap_or(Path::new("."));
    let write = || -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let mut file = tempfile::NamedTempFile::new_in(dir)?;
        file.write_all(bytes)?;
        file.persist(path)?;
        Ok(())
    };
    write().map_err(|e| format!("cannot write {}: {e}", path.display()))
}
