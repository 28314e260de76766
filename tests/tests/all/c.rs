//! The C SDK and the `kv` provider written with it (`providers/sdk-c`,
//! `providers/kv`), built from source with clang and `cairn providers
//! componentize`, and driven through the real binary: validate, plan,
//! apply, a no-change plan, an in-place update, a replacement (whose stale
//! computed values become unknown), drift, import and destroy. Also a C
//! provider that traps (`providers/testing/ctrap`): each trap fails that
//! resource with a clear diagnostic, never the host.

use cairn_e2e::Workdir;
use cairn_e2e::languages::{Lang, lang_component};
use cairn_e2e::repo_root;

const CONFIG: &str = r#"
terraform {
  required_providers {
    kv = { source = "./kv.wasm" }
  }
}

provider "kv" {
  sandbox {
    read_write = ["./store"]
  }
}

variable "path" {
  default = "store/greeting"
}

variable "value" {
  default = "hello"
}

resource "kv_entry" "greeting" {
  path   = var.path
  value  = var.value
  labels = { team = "web" }
  secret = "hunter2"
}

output "revision" {
  value = kv_entry.greeting.revision
}
"#;

/// A directory with the kv provider and its configuration.
fn workdir() -> Workdir {
    let w = Workdir::new();
    std::fs::copy(lang_component(Lang::C, "kv"), w.path().join("kv.wasm")).unwrap();
    w.write("store/.keep", "");
    w.write("main.tf", CONFIG);
    w
}

#[test]
fn kv_provider_lives_through_the_whole_lifecycle() {
    let w = workdir();
    let run = w.cairn_here(&["providers", "inspect", "kv.wasm"]).success();
    assert!(run.stdout.contains("provider \"kv\"\n") && run.stdout.contains("  version: 0.1.0\n"), "{}", run.all());

    w.cairn(&["validate"]).success();
    let plan = w.cairn(&["plan"]).success();
    assert!(plan.stdout.contains("Plan: 1 to add, 0 to change, 0 to destroy."), "{}", plan.all());
    assert!(plan.stdout.contains("id       = (known after apply)"), "{}", plan.all());
    assert!(plan.stdout.contains("size     = 5"), "the size is known at plan:\n{}", plan.all());
    assert!(!plan.stdout.contains("hunter2"), "{}", plan.all());

    let run = w.cairn(&["apply", "-auto-approve"]).success();
    assert!(run.stdout.contains("Apply complete! Resources: 1 added, 0 changed, 0 destroyed."), "{}", run.all());
    assert!(run.stdout.contains("revision = 1"), "{}", run.all());
    let file = w.read("store/greeting");
    assert!(file.starts_with("# cairn kv entry\n") && file.contains("\nvalue=hello\n"), "{file}");
    assert!(file.contains("\nlabel.team=web\n") && file.contains("\nsecret=hunter2\n"), "{file}");
    let attrs = w.attributes("kv_entry.greeting");
    let id = attrs["id"].as_str().expect("an id").to_string();
    assert_eq!(id.len(), 32, "{attrs:#}");
    assert_eq!(attrs["size"], 5, "{attrs:#}");

    let again = w.cairn(&["plan", "-detailed-exitcode"]);
    assert_eq!(again.code, 0, "a second plan must find nothing to do:\n{}", again.all());

    // In place: the same entry (same id), one revision more.
    let plan = w.cairn(&["plan", "-var", "value=hello\nworld"]).success();
    assert!(plan.stdout.contains("# kv_entry.greeting will be updated in-place"), "{}", plan.all());
    assert!(plan.stdout.contains("revision = 1 -> (known after apply)"), "{}", plan.all());
    let run = w.cairn(&["apply", "-auto-approve", "-var", "value=hello\nworld"]).success();
    assert!(run.stdout.contains("0 added, 1 changed, 0 destroyed"), "{}", run.all());
    let attrs = w.attributes("kv_entry.greeting");
    assert_eq!((attrs["id"].as_str(), attrs["revision"].as_i64()), (Some(id.as_str()), Some(2)), "{attrs:#}");
    assert!(w.read("store/greeting").contains("\nvalue=hello\\nworld\n"));
    w.cairn(&["apply", "-auto-approve"]).success();

    // A new path replaces the entry: the old id and revision describe the
    // old file, so they are unknown until the new one is made.
    let plan = w.cairn(&["plan", "-var", "path=store/moved"]).success();
    assert!(plan.stdout.contains("# kv_entry.greeting must be replaced"), "{}", plan.all());
    assert!(plan.stdout.contains("# forces replacement"), "{}", plan.all());
    assert!(plan.stdout.contains(&format!("\"{id}\" -> (known after apply)")), "{}", plan.all());
    assert!(plan.stdout.contains("revision = 3 -> (known after apply)"), "{}", plan.all());
    w.cairn(&["apply", "-auto-approve", "-var", "path=store/moved"]).success();
    assert!(!w.exists("store/greeting") && w.exists("store/moved"));
    let attrs = w.attributes("kv_entry.greeting");
    assert_ne!(attrs["id"].as_str(), Some(id.as_str()), "a replacement is a new entry: {attrs:#}");
    assert_eq!(attrs["revision"], 1, "{attrs:#}");
    w.cairn(&["apply", "-auto-approve"]).success();
    let id = w.attributes("kv_entry.greeting")["id"].as_str().unwrap().to_string();

    // Drift: a value edited out of band is planned back in place; a
    // deleted entry is made again.
    w.write("store/greeting", &w.read("store/greeting").replace("value=hello", "value=edited"));
    let plan = w.cairn(&["plan", "-detailed-exitcode"]);
    assert_eq!(plan.code, 2, "{}", plan.all());
    assert!(plan.stdout.contains("~ value    = \"edited\" -> \"hello\""), "{}", plan.all());
    w.cairn(&["apply", "-auto-approve"]).success();
    assert!(w.read("store/greeting").contains("\nvalue=hello\n"));
    std::fs::remove_file(w.path().join("store/greeting")).unwrap();
    let plan = w.cairn(&["plan", "-detailed-exitcode"]);
    assert_eq!(plan.code, 2, "{}", plan.all());
    assert!(plan.stdout.contains("# kv_entry.greeting will be created"), "{}", plan.all());
    w.cairn(&["apply", "-auto-approve"]).success();
    assert_eq!(w.cairn(&["plan", "-detailed-exitcode"]).code, 0);
    assert_ne!(w.attributes("kv_entry.greeting")["id"].as_str(), Some(id.as_str()));

    // Import: forgotten, then adopted again by its path, with nothing to do.
    w.cairn_here(&["state", "rm", "kv_entry.greeting"]).success();
    assert!(w.addresses().is_empty());
    let run = w.cairn(&["import", "kv_entry.greeting", "store/greeting"]).success();
    assert!(run.stdout.contains("Import successful!"), "{}", run.all());
    let plan = w.cairn(&["plan", "-detailed-exitcode"]);
    assert_eq!(plan.code, 0, "an imported entry matches its configuration:\n{}", plan.all());
    let missing = w.cairn(&["import", "kv_entry.other", "store/nothing"]);
    assert_ne!(missing.code, 0, "{}", missing.all());

    let run = w.cairn(&["destroy", "-auto-approve"]).success();
    assert!(run.stdout.contains("Destroy complete! Resources: 1 destroyed."), "{}", run.all());
    assert!(!w.exists("store/greeting"));
    assert!(w.addresses().is_empty());
}

#[test]
fn kv_provider_errors_name_the_attribute() {
    let w = workdir();
    w.write("main.tf", &CONFIG.replace("{ team = \"web\" }", "{ \"a=b\" = \"web\" }"));
    let run = w.cairn(&["plan"]).failure();
    assert!(run.stderr.contains("kv_entry.greeting: A label's name cannot be empty"), "{}", run.all());

    w.write("main.tf", &CONFIG.replace("store/greeting", "/etc/greeting"));
    let run = w.cairn(&["plan"]).failure();
    assert!(run.stderr.contains("The path /etc/greeting is not relative"), "{}", run.all());

    // Outside every grant: the apply fails saying what to grant, and the
    // state records nothing.
    w.write("main.tf", &CONFIG.replace("store/greeting", "elsewhere/greeting"));
    let run = w.cairn(&["apply", "-auto-approve"]).failure();
    assert!(run.stderr.contains("Cannot write elsewhere/greeting"), "{}", run.all());
    assert!(run.stderr.contains("read_write = [\"./<directory>\"]"), "{}", run.all());
    assert!(w.addresses().is_empty(), "a failed create records nothing");
}

/// Each way the `ctrap` provider traps in plan, and what cairn says (in the
/// error's first line, and for `cairn_fatal` the provider's stderr quoted
/// under it).
const TRAPS: &[(&str, &str)] = &[
    ("ctrap_abort", "provider \"ctrap\" crashed: wasm trap: wasm `unreachable` instruction executed while planning"),
    ("ctrap_out_of_bounds", "provider \"ctrap\" crashed: wasm trap: out of bounds memory access while planning"),
    ("ctrap_fatal", "provider stderr:\n    ctrap: deliberate fatal error in plan of ctrap_fatal"),
    ("ctrap_oom", "provider \"ctrap\" exceeded its memory limit of 32 MiB while planning"),
];

#[test]
fn a_trapping_c_provider_fails_that_resource_and_never_the_host() {
    let w = Workdir::new();
    std::fs::copy(lang_component(Lang::C, "testing/ctrap"), w.path().join("ctrap.wasm")).unwrap();
    for (hostile, what) in TRAPS {
        let config = format!(
            "terraform {{\n  required_providers {{\n    ctrap = {{ source = \"./ctrap.wasm\" }}\n  }}\n}}\n\
             provider \"ctrap\" {{\n  sandbox {{\n    memory_mb = 32\n  }}\n}}\n\
             resource \"ctrap_ok\" \"ok\" {{}}\n\
             resource \"{hostile}\" \"x\" {{}}\n"
        );
        w.write("main.tf", &config);
        let run = w.cairn(&["plan"]).failure();
        assert!(!run.stderr.lines().any(|l| l.starts_with("thread ")), "cairn panicked:\n{}", run.all());
        let errors: Vec<&str> = run.stderr.lines().filter(|l| l.starts_with("Error: ")).collect();
        assert_eq!(errors.len(), 1, "{hostile}: only the trapping resource fails:\n{}", run.all());
        assert!(errors[0].contains(&format!("while planning {hostile}.x")), "{hostile}:\n{}", run.all());
        assert!(run.stderr.contains(what), "{hostile}: expected {what:?} in:\n{}", run.all());
    }
}

/// The glue in `providers/sdk-c/glue` is generated from `wit/provider.wit`
/// by `scripts/regen-c-bindings.sh`, which records the WIT's hash: a changed
/// WIT without regenerated glue fails here.
#[test]
fn the_c_glue_matches_the_wit() {
    use sha2::{Digest, Sha256};
    let root = repo_root();
    let wit = std::fs::read(root.join("wit/provider.wit")).unwrap();
    let hash: String = Sha256::digest(&wit).iter().map(|b| format!("{b:02x}")).collect();
    let recorded = std::fs::read_to_string(root.join("providers/sdk-c/glue/WIT_SHA256")).unwrap();
    assert_eq!(
        recorded.trim(),
        hash,
        "wit/provider.wit changed since providers/sdk-c/glue was generated: run scripts/regen-c-bindings.sh and commit \
         its output"
    );
}

/// `ctrap_ok` declares every kind of schema item the C SDK has: object,
/// tuple and set types, a write-only sensitive attribute, a list of nested
/// attributes and a nested block. Each travels to the host and back, and a
/// diagnostic's path into a nested block reaches the user.
#[test]
fn c_sdk_schemas_values_and_paths_travel_whole() {
    let w = Workdir::new();
    std::fs::copy(lang_component(Lang::C, "testing/ctrap"), w.path().join("ctrap.wasm")).unwrap();
    let config = r#"
terraform {
  required_providers {
    ctrap = { source = "./ctrap.wasm" }
  }
}

resource "ctrap_ok" "all" {
  password = "hunter2"
  point    = { x = 1, y = 2.5 }
  pair     = ["a", true]
  tags     = ["b", "a"]
  owners   = [{ name = "ann" }]
  rule {
    port = 80
  }
  rule {
    port = 443
  }
}
"#;
    w.write("main.tf", config);
    let run = w.cairn(&["apply", "-auto-approve"]).success();
    assert!(!run.stdout.contains("hunter2"), "{}", run.all());
    let attrs = w.attributes("ctrap_ok.all");
    assert_eq!(attrs["password"], serde_json::Value::Null, "write-only values are never stored: {attrs:#}");
    assert_eq!(attrs["password_length"], 7, "apply saw the write-only value: {attrs:#}");
    assert_eq!(attrs["point"], serde_json::json!({"x": 1, "y": 2.5}), "{attrs:#}");
    assert_eq!(attrs["pair"], serde_json::json!(["a", true]), "{attrs:#}");
    assert_eq!(attrs["owners"], serde_json::json!([{"name": "ann"}]), "{attrs:#}");
    assert_eq!(attrs["rule"], serde_json::json!([{"port": 80}, {"port": 443}]), "{attrs:#}");
    let mut tags: Vec<_> = attrs["tags"].as_array().unwrap().iter().filter_map(|t| t.as_str()).collect();
    tags.sort();
    assert_eq!(tags, ["a", "b"], "{attrs:#}");
    assert_eq!(w.cairn(&["plan", "-detailed-exitcode"]).code, 0, "nothing changed");

    w.write("main.tf", &config.replace("port = 443", "port = 0"));
    let run = w.cairn(&["plan"]).failure();
    assert!(run.stderr.contains("ctrap_ok.all: Port 0 is not a port"), "{}", run.all());
    assert!(run.stderr.contains("at attribute .rule[1].port"), "{}", run.all());
}

/// The C SDK's own unit tests (`providers/sdk-c/test/sdk_test.c`), built
/// natively with the machine's C compiler (the SDK leaves its glue out
/// there) and run.
#[test]
fn c_sdk_unit_tests_pass() {
    let sdk = repo_root().join("providers/sdk-c");
    let bin = tempfile::tempdir().unwrap();
    let test = bin.path().join("sdk_test");
    let built = std::process::Command::new("cc")
        .args(["-std=c11", "-Wall", "-Werror", "-g", "-I"])
        .arg(&sdk)
        .arg("-o")
        .arg(&test)
        .arg(sdk.join("test/sdk_test.c"))
        .arg(sdk.join("cairn.c"))
        .arg("-lm")
        .output()
        .unwrap_or_else(|e| panic!("cannot run cc (the C compiler Rust links with): {e}"));
    assert!(built.status.success(), "building the C SDK's tests failed:\n{}", String::from_utf8_lossy(&built.stderr));
    let ran = std::process::Command::new(&test).output().unwrap();
    let stdout = String::from_utf8_lossy(&ran.stdout);
    assert!(
        ran.status.success() && stdout.starts_with("ok: "),
        "the C SDK's unit tests failed:\n{stdout}{}",
        String::from_utf8_lossy(&ran.stderr)
    );
}
