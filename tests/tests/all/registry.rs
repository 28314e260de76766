//! Providers from an OCI registry (issue 13): a real registry (Debian's
//! `docker-registry`) on a loopback port. `cairn providers push` publishes,
//! `cairn init` pulls by tag, by digest and by version constraint, the lock
//! pins what was pulled, a different artifact re-tagged under the same tag
//! is refused, runs use the downloaded copy without the registry, and a
//! signature travels with the artifact.

use cairn_e2e::{Registry, Run, Workdir, cairn_command, component};

/// `cairn ARGS` with no configuration directory.
fn cairn(args: &[&str]) -> Run {
    cairn_command(args, &[]).output().unwrap().into()
}

/// The witness component, or a copy whose declared version is `version`
/// (another file, as a new release would be).
fn witness(version: &str) -> Vec<u8> {
    let mut bytes = std::fs::read(component("cairn-provider-witness")).unwrap();
    let (from, to) = ("version=0.1.0".as_bytes(), format!("version={version}"));
    assert_eq!(from.len(), to.len());
    let at: Vec<usize> = bytes.windows(from.len()).enumerate().filter(|(_, w)| *w == from).map(|(i, _)| i).collect();
    assert!(!at.is_empty());
    for i in at {
        bytes[i..i + to.len()].copy_from_slice(to.as_bytes());
    }
    bytes
}

/// Pushes `bytes` (and a signature, if one is beside it under `name`) as
/// `target`.
fn push(dir: &std::path::Path, name: &str, bytes: &[u8], target: &str) {
    let file = dir.join(name);
    std::fs::write(&file, bytes).unwrap();
    let run = cairn(&["providers", "push", file.to_str().unwrap(), target]);
    assert_eq!(run.code, 0, "{}", run.all());
    assert!(run.stdout.starts_with(&format!("Pushed {}", file.display())), "{}", run.all());
}

fn config(source: &str, extra: &str) -> String {
    format!(
        "cairn {{\n  required_providers {{\n    witness = {source}\n  }}\n{extra}\n}}\n\nprovider \"witness\" {{\n  sandbox {{\n    read_write = [\"./witness\"]\n  }}\n}}\n\nresource \"witness_mark\" \"m\" {{\n  name = \"one\"\n}}\n"
    )
}

#[test]
fn providers_are_pulled_pinned_and_used_offline() {
    let registry = Registry::start();
    let files = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let env = [("CAIRN_CACHE_DIR", cache.path().to_str().unwrap())];
    let repo = format!("oci://{}/cairn/witness", registry.host);
    let first = witness("0.1.0");
    let first_hash = cairn::registry::sha256_hex(&first);
    push(files.path(), "witness.wasm", &first, &format!("{repo}:0.1.0"));

    // By tag.
    let w = Workdir::new();
    w.write("main.tf", &config(&format!("{{ source = \"{repo}:0.1.0\" }}"), ""));
    let run = w.cairn_env(&["plan"], &env).failure();
    assert!(run.stderr.contains("Run `cairn init` to download provider \"witness\""), "{}", run.all());
    w.cairn_env(&["init"], &env).success();
    let lock = w.read("cairn.lock");
    assert!(lock.contains(&format!("source    = \"{repo}:0.1.0\"")), "{lock}");
    assert!(lock.contains(&format!("sha256    = \"{first_hash}\"")), "{lock}");
    assert!(cache.path().join(format!("providers/sha256-{first_hash}.wasm")).is_file());
    w.cairn_env(&["apply", "-auto-approve"], &env).success();
    assert!(w.exists("witness/ran"));

    // By digest: the same file.
    let digest = registry.digest("cairn/witness", "0.1.0");
    w.write("main.tf", &config(&format!("{{ source = \"{repo}@{digest}\" }}"), ""));
    let run = w.cairn_env(&["init"], &env).failure();
    assert!(run.stderr.contains("but cairn.lock locked it from"), "{}", run.all());
    w.cairn_env(&["init", "-upgrade"], &env).success();
    assert!(w.read("cairn.lock").contains(&format!("sha256    = \"{first_hash}\"")));

    // Another artifact re-tagged 0.1.0: refused, naming both hashes.
    w.write("main.tf", &config(&format!("{{ source = \"{repo}:0.1.0\" }}"), ""));
    w.cairn_env(&["init", "-upgrade"], &env).success();
    let second = witness("0.1.1");
    let second_hash = cairn::registry::sha256_hex(&second);
    push(files.path(), "witness-second.wasm", &second, &format!("{repo}:0.1.0"));
    let run = w.cairn_env(&["init"], &env).failure();
    assert!(
        run.stderr.contains(&format!("its SHA-256 is {second_hash}, the lock expects {first_hash}")),
        "{}",
        run.all()
    );
    assert!(run.stderr.contains("cairn init -upgrade"), "{}", run.all());

    // Offline: with the registry gone, runs use the downloaded, locked copy.
    drop(registry);
    std::fs::remove_file(w.path().join("witness/ran")).unwrap();
    w.cairn_env(&["plan"], &env).success();
    w.write("main.tf", &w.read("main.tf").replace("\"one\"", "\"two\""));
    w.cairn_env(&["apply", "-auto-approve"], &env).success();
    assert!(w.exists("witness/ran"));
    let run = w.cairn_env(&["init", "-upgrade"], &env).failure();
    assert!(run.stderr.contains(&format!("cannot pull {repo}:0.1.0")), "{}", run.all());
}

#[test]
fn registry_tags_are_chosen_by_version_and_signatures_travel() {
    let registry = Registry::start();
    let files = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let env = [("CAIRN_CACHE_DIR", cache.path().to_str().unwrap())];
    let repo = format!("oci://{}/cairn/witness", registry.host);
    let keys = files.path().join("release");
    assert_eq!(cairn(&["providers", "keygen", keys.to_str().unwrap()]).code, 0);
    let public = std::fs::read_to_string(files.path().join("release.pub")).unwrap().lines().nth(1).unwrap().to_string();
    for version in ["1.2.0", "1.3.0", "2.0.0"] {
        let file = files.path().join(format!("witness-{version}.wasm"));
        std::fs::write(&file, witness(version)).unwrap();
        let sign = cairn(&[
            "providers",
            "sign",
            "--key",
            files.path().join("release.key").to_str().unwrap(),
            file.to_str().unwrap(),
        ]);
        assert_eq!(sign.code, 0, "{}", sign.all());
        let run = cairn(&["providers", "push", file.to_str().unwrap(), &format!("{repo}:{version}")]);
        assert_eq!(run.code, 0, "{}", run.all());
        assert!(run.stdout.contains("with its signature"), "{}", run.all());
    }
    let w = Workdir::new();
    let trust = format!("  trusted_keys = [\"{public}\"]");
    w.write("main.tf", &config(&format!("{{ source = \"{repo}\", version = \"~> 1.2\" }}"), &trust));
    w.cairn_env(&["init"], &env).success();
    let lock = w.read("cairn.lock");
    assert!(lock.contains("version   = \"1.3.0\""), "{lock}");
    assert!(lock.contains(&format!("signed_by = \"{public}\"")), "{lock}");
    w.cairn_env(&["apply", "-auto-approve"], &env).success();
    assert!(w.exists("witness/ran"));

    // An unsigned artifact is refused when keys are trusted, before it runs.
    let file = files.path().join("unsigned.wasm");
    std::fs::write(&file, witness("1.4.0")).unwrap();
    assert_eq!(cairn(&["providers", "push", file.to_str().unwrap(), &format!("{repo}:1.4.0")]).code, 0);
    std::fs::remove_file(w.path().join("witness/ran")).unwrap();
    let run = w.cairn_env(&["init", "-upgrade"], &env).failure();
    assert!(run.stderr.contains("it is not signed, and the configuration requires a signature"), "{}", run.all());
    assert!(!w.exists("witness/ran"));
}
