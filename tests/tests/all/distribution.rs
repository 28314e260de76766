//! Single-file distribution (issue 13): `cairn init` and `cairn.lock`,
//! provider identity, directory search with version constraints, and
//! signatures. The `witness` provider appends to `witness/ran` when its
//! `schema` runs (the first call to any provider), so each refusal below
//! also proves that none of the refused provider's code ran.

use cairn_e2e::{Run, Workdir, cairn_command, cairn_in, component};

/// A configuration of the witness provider from `source`, with its mark
/// directory granted and one resource; `extra` goes into the `cairn` block.
fn witness_config(source: &str, extra: &str) -> String {
    format!(
        r#"cairn {{
  required_providers {{
    witness = {source}
  }}
{extra}
}}

provider "witness" {{
  sandbox {{
    read_write = ["./witness"]
  }}
}}

resource "witness_mark" "m" {{
  name = "one"
}}
"#
    )
}

/// A workdir with the witness provider as `./witness.wasm`.
fn witness_workdir(extra: &str) -> Workdir {
    let w = Workdir::new();
    w.install_provider("witness", "cairn-provider-witness");
    w.write("main.tf", &witness_config(r#"{ source = "./witness.wasm" }"#, extra));
    w
}

/// Whether the witness provider's code ran in `w` (and forgets it).
fn witness_ran(w: &Workdir) -> bool {
    let ran = w.exists("witness/ran");
    let _ = std::fs::remove_file(w.path().join("witness/ran"));
    ran
}

/// The witness component's bytes with every copy of its declared identity
/// text `from` replaced by `to` (of the same length): another file, as a
/// rebuilt or tampered provider would be.
fn patched_witness(from: &str, to: &str) -> Vec<u8> {
    assert_eq!(from.len(), to.len());
    let mut bytes = std::fs::read(component("cairn-provider-witness")).unwrap();
    let at: Vec<usize> =
        bytes.windows(from.len()).enumerate().filter(|(_, w)| *w == from.as_bytes()).map(|(i, _)| i).collect();
    assert!(!at.is_empty(), "{from:?} is not in the witness");
    for i in at {
        bytes[i..i + to.len()].copy_from_slice(to.as_bytes());
    }
    bytes
}

fn sha256_of(path: &std::path::Path) -> String {
    cairn::registry::sha256_hex(&std::fs::read(path).unwrap())
}

#[test]
fn init_locks_and_a_tampered_provider_is_refused_before_it_runs() {
    let w = witness_workdir("");
    let init = w.cairn(&["init"]).success();
    let hash = sha256_of(&w.path().join("witness.wasm"));
    let lock = w.read("cairn.lock");
    assert!(lock.contains("provider \"witness\" {"), "{lock}");
    assert!(lock.contains(&format!("sha256    = \"{hash}\"")), "{lock}");
    assert!(lock.contains("version   = \"0.1.0\""), "{lock}");
    assert!(lock.contains("source    = \"./witness.wasm\""), "{lock}");
    assert!(init.stdout.contains("Wrote cairn.lock"), "{}", init.all());
    assert!(!witness_ran(&w), "init runs no provider code");
    // Bundled providers are part of cairn: not locked.
    assert!(!lock.contains("provider \"null\""), "{lock}");

    // The positive control: the locked provider runs (and leaves its mark).
    w.cairn(&["apply", "-auto-approve"]).success();
    assert!(witness_ran(&w));

    // One byte changed (in its declared version: still a valid component).
    let tampered = patched_witness("version=0.1.0", "version=0.1.1");
    std::fs::write(w.path().join("witness.wasm"), &tampered).unwrap();
    let new_hash = cairn::registry::sha256_hex(&tampered);
    for args in [&["plan"][..], &["apply", "-auto-approve"], &["init"]] {
        let run = w.cairn(args).failure();
        assert!(run.stderr.contains(&format!("its SHA-256 is {new_hash}, the lock expects {hash}")), "{}", run.all());
        assert!(run.stderr.contains("cairn init -upgrade"), "{}", run.all());
        assert!(run.stderr.contains("main.tf:3"), "{}", run.all());
        assert!(!witness_ran(&w), "the refused provider ran during {args:?}");
    }
    assert_eq!(w.read("cairn.lock"), lock, "a refused init leaves the lock alone");

    // Deliberately: -upgrade locks the new file.
    w.cairn(&["init", "-upgrade"]).success();
    assert!(w.read("cairn.lock").contains(&new_hash));
    w.cairn(&["plan"]).success();
}

#[test]
fn a_readonly_lockfile_refuses_a_missing_entry() {
    let w = witness_workdir("");
    let run = w.cairn(&["init", "-lockfile=readonly"]).failure();
    assert!(
        run.stderr.contains("Provider \"witness\" is not in cairn.lock, and -lockfile=readonly forbids adding it"),
        "{}",
        run.all()
    );
    assert!(!w.exists("cairn.lock"));
    w.cairn(&["init"]).success();
    let run = w.cairn(&["init", "-lockfile=readonly"]).success();
    assert!(run.stdout.contains("cairn.lock is up to date"), "{}", run.all());
    let run = w.cairn(&["init", "-lockfile=sometimes"]).failure();
    assert!(run.stderr.contains("-lockfile takes one mode, \"readonly\""), "{}", run.all());
}

#[test]
fn a_provider_that_calls_itself_something_else_is_refused() {
    let w = Workdir::new();
    std::fs::copy(cairn_e2e::bundled_component("random"), w.path().join("local.wasm")).unwrap();
    w.write(
        "main.tf",
        "terraform {\n  required_providers {\n    local = { source = \"./local.wasm\" }\n  }\n}\n\nresource \"local_file\" \"f\" {\n  filename = \"x\"\n  content = \"y\"\n}\n",
    );
    for args in [&["init"][..], &["plan"]] {
        let run = w.cairn(args).failure();
        assert!(run.stderr.contains("it calls itself \"random\", not \"local\""), "{}", run.all());
        assert!(run.stderr.contains("main.tf:3"), "{}", run.all());
    }
}

#[test]
fn inspect_shows_the_declared_name_and_version() {
    let run: Run =
        cairn_command(&["providers", "inspect"], &[]).arg(component("cairn-provider-witness")).output().unwrap().into();
    assert_eq!(run.code, 0, "{}", run.all());
    assert!(run.stdout.starts_with("provider \"witness\"\n"), "{}", run.stdout);
    assert!(run.stdout.contains("  version: 0.1.0\n"), "{}", run.stdout);
}

#[test]
fn a_directory_is_searched_by_name_and_version_constraint() {
    let w = Workdir::new();
    let shelf = tempfile::tempdir().unwrap();
    for version in ["0.1.0", "1.2.0", "1.3.0", "2.0.0"] {
        let bytes = patched_witness("version=0.1.0", &format!("version={version}"));
        std::fs::write(shelf.path().join(format!("witness-{version}.wasm")), bytes).unwrap();
    }
    w.write("main.tf", &witness_config(r#"{ version = "~> 1.2" }"#, ""));
    let path = shelf.path().to_str().unwrap();
    let env = [("CAIRN_PROVIDERS_PATH", path)];
    w.cairn_env(&["init"], &env).success();
    let lock = w.read("cairn.lock");
    assert!(lock.contains("version   = \"1.3.0\"") && lock.contains("source    = \"providers path\""), "{lock}");
    w.cairn_env(&["apply", "-auto-approve"], &env).success();

    // A newer allowed version appearing does not change what runs: the
    // locked one is kept until -upgrade.
    let bytes = patched_witness("version=0.1.0", "version=1.4.0");
    std::fs::write(shelf.path().join("witness-1.4.0.wasm"), bytes).unwrap();
    w.cairn_env(&["plan"], &env).success();
    w.cairn_env(&["init", "-upgrade"], &env).success();
    assert!(w.read("cairn.lock").contains("version   = \"1.4.0\""));

    // A file whose name and declared version disagree is refused.
    std::fs::rename(shelf.path().join("witness-1.4.0.wasm"), shelf.path().join("witness-1.5.0.wasm")).unwrap();
    let run = w.cairn_env(&["init", "-upgrade"], &env).failure();
    assert!(run.stderr.contains("its file name says version 1.5.0, and it declares 1.4.0"), "{}", run.all());

    w.write("main.tf", &witness_config(r#"{ version = "~> 3.0" }"#, ""));
    let run = w.cairn_env(&["init"], &env).failure();
    assert!(run.stderr.contains("no witness-VERSION.wasm matching >=3.0.0, <4.0.0"), "{}", run.all());
}

#[test]
fn signed_providers_are_required_when_keys_are_trusted() {
    let keys = tempfile::tempdir().unwrap();
    let run = cairn_in(keys.path(), &["providers", "keygen", "release"]);
    assert_eq!(run.code, 0, "{}", run.all());
    let public = std::fs::read_to_string(keys.path().join("release.pub")).unwrap();
    let public = public.lines().nth(1).unwrap().trim().to_string();
    assert!(run.stdout.contains(&format!("trusted_keys = [\"{public}\"]")), "{}", run.all());
    assert_eq!(cairn_in(keys.path(), &["providers", "keygen", "other"]).code, 0);
    let other =
        std::fs::read_to_string(keys.path().join("other.pub")).unwrap().lines().nth(1).unwrap().trim().to_string();

    let w = witness_workdir(&format!("  trusted_keys = [\"{public}\"]"));
    let wasm = w.path().join("witness.wasm");
    let wasm_arg = wasm.to_str().unwrap();

    // Unsigned while keys are required: refused, and nothing of it ran.
    for args in [&["init"][..], &["apply", "-auto-approve"]] {
        let run = w.cairn(args).failure();
        assert!(
            run.stderr.contains("it is not signed, and the configuration requires a signature by a trusted key"),
            "{}",
            run.all()
        );
        assert!(!witness_ran(&w), "the unsigned provider ran during {args:?}");
    }

    // Signed by a key that is not trusted: refused, and nothing ran.
    let key = keys.path().join("other.key");
    let run = cairn_in(keys.path(), &["providers", "sign", "--key", key.to_str().unwrap(), wasm_arg]);
    assert_eq!(run.code, 0, "{}", run.all());
    let verify = cairn_in(keys.path(), &["providers", "verify", "--key", &public, wasm_arg]);
    assert_eq!(verify.code, 1, "{}", verify.all());
    assert_eq!(cairn_in(keys.path(), &["providers", "verify", "--key", &other, wasm_arg]).code, 0);
    for args in [&["init"][..], &["apply", "-auto-approve"]] {
        let run = w.cairn(args).failure();
        assert!(run.stderr.contains("it is not signed by a trusted key"), "{}", run.all());
        assert!(!witness_ran(&w), "the wrongly signed provider ran during {args:?}");
    }

    // Signed by the trusted key: accepted, and the lock records the key.
    let key = keys.path().join("release.key");
    let run = cairn_in(keys.path(), &["providers", "sign", "--key", key.to_str().unwrap(), wasm_arg]);
    assert_eq!(run.code, 0, "{}", run.all());
    let verify = cairn_in(
        keys.path(),
        &["providers", "verify", "--key", keys.path().join("release.pub").to_str().unwrap(), wasm_arg],
    );
    assert_eq!(verify.code, 0, "{}", verify.all());
    assert!(verify.stdout.contains(&format!("is signed by {public}")), "{}", verify.all());
    w.cairn(&["init"]).success();
    assert!(w.read("cairn.lock").contains(&format!("signed_by = \"{public}\"")), "{}", w.read("cairn.lock"));
    w.cairn(&["apply", "-auto-approve"]).success();
    assert!(witness_ran(&w), "the trusted provider runs");

    // A malformed trusted key is an error where it is written.
    w.write("main.tf", &witness_config(r#"{ source = "./witness.wasm" }"#, "  trusted_keys = [\"RWnope\"]"));
    let run = w.cairn(&["plan"]).failure();
    assert!(run.stderr.contains("Invalid trusted key") && run.stderr.contains("main.tf:5"), "{}", run.all());
    assert!(!witness_ran(&w));
}

#[test]
fn cache_clean_removes_compiled_providers() {
    let cache = tempfile::tempdir().unwrap();
    let w = Workdir::new();
    w.write("main.tf", "resource \"null_resource\" \"n\" {}\n");
    let env = [("CAIRN_CACHE_DIR", cache.path().to_str().unwrap())];
    w.cairn_env(&["plan"], &env).success();
    assert!(std::fs::read_dir(cache.path().join("components")).unwrap().count() > 0);
    let run: Run =
        cairn_command(&["providers", "cache", "clean"], &[("CAIRN_CACHE_DIR", cache.path().to_str().unwrap())])
            .output()
            .unwrap()
            .into();
    assert_eq!(run.code, 0, "{}", run.all());
    assert!(run.stdout.starts_with("Removed 1 compiled provider(s)"), "{}", run.all());
    assert!(!cache.path().join("components").exists());
}

#[test]
fn terraform_registry_addresses_of_bundled_providers_run_on_them() {
    let w = Workdir::new();
    w.write(
        "main.tf",
        "terraform {\n  required_providers {\n    random = { source = \"hashicorp/random\", version = \"~> 3.6\" }\n    \
         null = { source = \"registry.terraform.io/hashicorp/null\" }\n  }\n}\n\
         resource \"random_id\" \"x\" {\n  byte_length = 4\n}\nresource \"null_resource\" \"y\" {}\n",
    );
    w.cairn(&["init"]).success();
    let run = w.cairn(&["apply", "-auto-approve"]).success();
    assert!(run.stdout.contains("2 added"), "{}", run.all());
    // The constraint counts hashicorp's releases: said, not applied.
    assert!(run.stderr.contains("version = \"~> 3.6\" counts the releases of hashicorp/random"), "{}", run.all());

    // Anything else on a Terraform registry is an error saying what to use.
    w.write(
        "main.tf",
        "terraform {\n  required_providers {\n    aws = { source = \"hashicorp/aws\" }\n  }\n}\n\
         resource \"aws_s3_bucket\" \"b\" {}\n",
    );
    let run = w.cairn(&["plan"]).failure();
    assert!(
        run.stderr.contains("main.tf:3:5: Provider \"aws\": \"hashicorp/aws\" is a Terraform registry address"),
        "{}",
        run.all()
    );
    assert!(run.stderr.contains("oci://HOST/REPOSITORY:TAG"), "{}", run.all());
}
