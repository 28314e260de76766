//! The Python SDK and the `archive` provider written with it
//! (`providers/sdk-python`, `providers/archive`), built from source with
//! componentize-py and driven through the real binary: the host checks its
//! answers exactly as it checks a Rust provider's.
//!
//! `archive_file` has no in-place update to test: every argument says what
//! the archive is made of or where it goes, so every change replaces it (as
//! in Terraform's archive provider).

use std::process::Command;

use cairn_e2e::languages::{Lang, lang_component, toolchain};
use cairn_e2e::repo_root;
use cairn_e2e::{Run, Workdir};
use sha2::{Digest, Sha256};

const CONFIG: &str = r#"
terraform {
  required_providers {
    archive = { source = "./archive.wasm" }
  }
}

provider "archive" {
  sandbox {
    read_only  = ["./src"]
    read_write = ["./out"]
  }
}

variable "site_path" {
  default = "out/site.zip"
}

resource "archive_file" "site" {
  type        = "zip"
  source_dir  = "src"
  output_path = var.site_path
}

resource "archive_file" "page" {
  type        = "zip"
  source_file = "src/index.html"
  output_path = "out/page.zip"
}

output "site_sha256" {
  value = archive_file.site.output_sha256
}
"#;

/// A directory with the archive provider, its configuration and sources.
fn workdir() -> Workdir {
    let w = Workdir::new();
    std::fs::copy(lang_component(Lang::Python, "archive"), w.path().join("archive.wasm")).unwrap();
    w.write("src/index.html", "<h1>hello</h1>\n");
    w.write("src/css/site.css", "h1 { color: teal }\n");
    w.write("out/.keep", "");
    w.write("main.tf", CONFIG);
    w
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// Asserts that the state's computed attributes describe the file on disk.
fn assert_describes_file(w: &Workdir, addr: &str, file: &str) -> String {
    let bytes = std::fs::read(w.path().join(file)).unwrap_or_else(|e| panic!("reading {file}: {e}"));
    let attrs = w.attributes(addr);
    let sha = sha256_hex(&bytes);
    assert_eq!(attrs["output_sha256"], sha.as_str(), "{addr}: {attrs:#}");
    assert_eq!(attrs["output_size"], bytes.len(), "{addr}: {attrs:#}");
    assert_eq!(attrs["id"].as_str().map(str::len), Some(40), "{addr}: the id is a SHA-1 in hex: {attrs:#}");
    assert!(bytes.starts_with(b"PK\x03\x04"), "{file} is not a zip archive");
    sha
}

#[test]
fn archive_provider_lives_through_plan_apply_replace_drift_and_destroy() {
    let w = workdir();

    w.cairn(&["validate"]).success();
    let plan = w.cairn(&["plan"]).success();
    assert!(plan.stdout.contains("Plan: 2 to add, 0 to change, 0 to destroy."), "{}", plan.all());
    assert!(plan.stdout.contains("output_sha256 = (known after apply)"), "{}", plan.all());

    let run = w.cairn(&["apply", "-auto-approve"]).success();
    assert!(run.stdout.contains("Apply complete! Resources: 2 added, 0 changed, 0 destroyed."), "{}", run.all());
    let site = assert_describes_file(&w, "archive_file.site", "out/site.zip");
    let page = assert_describes_file(&w, "archive_file.page", "out/page.zip");
    let zip = std::fs::read(w.path().join("out/site.zip")).unwrap();
    for name in ["index.html", "css/site.css"] {
        assert!(zip.windows(name.len()).any(|win| win == name.as_bytes()), "{name} is not in the archive");
    }
    assert!(run.stdout.contains(&format!("site_sha256 = \"{site}\"")), "{}", run.all());

    let again = w.cairn(&["plan", "-detailed-exitcode"]);
    assert_eq!(again.code, 0, "a second plan must find nothing to do:\n{}", again.all());
    assert!(again.stdout.contains("No changes."), "{}", again.all());

    // A changed source: the archive would differ, so its hash is unknown
    // until apply and the archive is made anew.
    w.write("src/index.html", "<h1>hello again</h1>\n");
    let plan = w.cairn(&["plan", "-detailed-exitcode"]);
    assert_eq!(plan.code, 2, "{}", plan.all());
    assert!(plan.stdout.contains("# archive_file.site must be replaced"), "{}", plan.all());
    assert!(plan.stdout.contains("# archive_file.page must be replaced"), "{}", plan.all());
    assert!(plan.stdout.contains("(known after apply)"), "{}", plan.all());
    w.cairn(&["apply", "-auto-approve"]).success();
    let site2 = assert_describes_file(&w, "archive_file.site", "out/site.zip");
    assert_ne!(site2, site);
    assert_ne!(assert_describes_file(&w, "archive_file.page", "out/page.zip"), page);

    // A changed argument (requires-replace): the old archive is deleted.
    let plan = w.cairn(&["plan", "-var", "site_path=out/moved.zip"]).success();
    assert!(plan.stdout.contains("# archive_file.site must be replaced"), "{}", plan.all());
    assert!(plan.stdout.contains("# forces replacement"), "{}", plan.all());
    assert!(plan.stdout.contains("Plan: 1 to add, 0 to change, 1 to destroy."), "{}", plan.all());
    w.cairn(&["apply", "-auto-approve", "-var", "site_path=out/moved.zip"]).success();
    assert!(!w.exists("out/site.zip") && w.exists("out/moved.zip"));
    assert_eq!(assert_describes_file(&w, "archive_file.site", "out/moved.zip"), site2);
    w.cairn(&["apply", "-auto-approve"]).success();

    // Drift: an edited output is rebuilt, a deleted one is created again.
    w.write("out/site.zip", "not a zip any more");
    std::fs::remove_file(w.path().join("out/page.zip")).unwrap();
    let plan = w.cairn(&["plan", "-detailed-exitcode"]);
    assert_eq!(plan.code, 2, "{}", plan.all());
    assert!(plan.stdout.contains("# archive_file.site must be replaced"), "{}", plan.all());
    assert!(plan.stdout.contains("# archive_file.page will be created"), "{}", plan.all());
    w.cairn(&["apply", "-auto-approve"]).success();
    assert_eq!(
        assert_describes_file(&w, "archive_file.site", "out/site.zip"),
        site2,
        "the same sources, the same bytes"
    );
    assert_describes_file(&w, "archive_file.page", "out/page.zip");
    assert_eq!(w.cairn(&["plan", "-detailed-exitcode"]).code, 0);

    let run = w.cairn(&["destroy", "-auto-approve"]).success();
    assert!(run.stdout.contains("Destroy complete! Resources: 2 destroyed."), "{}", run.all());
    assert!(!w.exists("out/site.zip") && !w.exists("out/page.zip"));
    assert!(w.addresses().is_empty());
}

#[test]
fn archive_provider_errors_name_the_attribute() {
    let w = workdir();
    w.write("main.tf", &CONFIG.replace("type        = \"zip\"\n  source_dir", "type        = \"tar\"\n  source_dir"));
    // The provider's own validation runs when cairn plans.
    let run = w.cairn(&["plan"]).failure();
    assert!(run.stderr.contains("archive_file.site: Unsupported archive type \"tar\""), "{}", run.all());
    assert!(run.stderr.contains("The only type is \"zip\"."), "{}", run.all());

    // Outside every grant: apply fails with a diagnostic saying what to grant.
    w.write("main.tf", &CONFIG.replace("\"out/page.zip\"", "\"elsewhere/page.zip\""));
    let run = w.cairn(&["apply", "-auto-approve"]).failure();
    assert!(run.stderr.contains("Cannot write elsewhere/page.zip"), "{}", run.all());
    assert!(run.stderr.contains("read_write = [\"./elsewhere\"]"), "{}", run.all());
    assert!(!w.addresses().contains(&"archive_file.page".to_string()), "a failed create records nothing");
    // Issue 32, item 6: cairn says what its sandbox refused the provider,
    // whatever the provider made of it; nothing else the interpreter did
    // reads as a refusal.
    let denied = "archive_file.page: the sandbox denied: create the directory elsewhere \
                  (granted read-write: ./out; read-only: ./src)";
    assert!(run.stderr.contains(denied), "{}", run.all());
    assert_eq!(run.stderr.matches("the sandbox denied").count(), 1, "{}", run.all());
}

#[test]
fn archive_provider_declares_its_name_and_version() {
    let w = workdir();
    let run = w.cairn_here(&["providers", "inspect", "archive.wasm"]).success();
    assert!(
        run.stdout.contains("provider \"archive\"\n") && run.stdout.contains("  version: 0.1.0\n"),
        "{}",
        run.all()
    );
    // Under another name it is another provider, refused before it runs.
    std::fs::rename(w.path().join("archive.wasm"), w.path().join("zip.wasm")).unwrap();
    w.write(
        "main.tf",
        "terraform {\n  required_providers {\n    zip = { source = \"./zip.wasm\" }\n  }\n}\nprovider \"zip\" {}\n",
    );
    let run = w.cairn(&["plan"]).failure();
    assert!(run.stderr.contains("it calls itself \"archive\", not \"zip\""), "{}", run.all());
    w.write(
        "main.tf",
        "terraform {\n  required_providers {\n    archive = { source = \"./zip.wasm\", version = \"~> 0.2\" }\n  }\n}\nprovider \"archive\" {}\n",
    );
    let run = w.cairn(&["plan"]).failure();
    assert!(run.stderr.contains("it is version 0.1.0, and the configuration requires \"~> 0.2\""), "{}", run.all());
}

/// The SDK's own unit tests (`providers/sdk-python/tests`), run by the
/// toolchain's Python against freshly generated bindings of the SDK's world
/// (`provider-world` plus the `ephemeral-resources` export).
#[test]
fn python_sdk_unit_tests_pass() {
    let tool = toolchain(Lang::Python);
    let bindings = tempfile::tempdir().unwrap();
    let root = repo_root();
    let status = Command::new(&tool)
        .current_dir(&root)
        .args(["-d", "providers/sdk-python/wit", "-w", "python-provider", "bindings"])
        .arg(bindings.path())
        .status()
        .unwrap();
    assert!(status.success(), "componentize-py bindings failed");
    // The venv's interpreter when the tool lives in one (as scripts/test.sh
    // installs it); componentize-py itself needs a Python 3.
    let venv_python = tool.parent().unwrap().join("python");
    let python = if venv_python.exists() { venv_python } else { "python3".into() };
    let sdk = root.join("providers/sdk-python");
    let path = std::env::join_paths([bindings.path(), sdk.as_path()]).unwrap();
    let out = Command::new(&python)
        .current_dir(&sdk)
        .env("PYTHONPATH", path)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .args(["-m", "unittest", "discover", "-s", "tests", "-v"])
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", python.display()));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the Python SDK's unit tests failed:\n{stderr}");
    assert!(stderr.contains("OK") && !stderr.contains("Ran 0 tests"), "{stderr}");
}

/// `pytoken` (`providers/testing/pytoken`): an ephemeral token whose value
/// reaches a write-only attribute of `pytoken_sink.app`. (Not a provider
/// block: cairn does not take ephemeral resources there yet.)
const TOKEN_CONFIG: &str = r#"
terraform {
  required_providers {
    pytoken = { source = "./pytoken.wasm" }
  }
}

provider "pytoken" {
  log_dir = "log"
  sandbox {
    read_write = ["./log"]
  }
}

ephemeral "pytoken_token" "db" {
  audience = var.audience
}

variable "audience" {
  default = "db"
}

resource "pytoken_sink" "app" {
  name   = "app"
  secret = ephemeral.pytoken_token.db.value
}
"#;

/// A directory with the `pytoken` provider, its configuration and the
/// directory it writes into.
fn token_workdir() -> Workdir {
    let w = Workdir::new();
    std::fs::copy(lang_component(Lang::Python, "testing/pytoken"), w.path().join("pytoken.wasm")).unwrap();
    w.write("log/.keep", "");
    w.write("main.tf", TOKEN_CONFIG);
    w
}

/// What `pytoken` logged (`pytoken event: open db sha256=…`), in order,
/// without the log line's time and fields.
fn token_events(run: &Run) -> Vec<String> {
    let events = run.stderr.lines().filter_map(|line| line.split_once("pytoken event: "));
    events.map(|(_, event)| event.split(" provider=").next().unwrap_or(event).to_string()).collect()
}

/// The events about the token (open, renew, close), and the SHA-256 of the
/// value it opened last.
fn token_lifecycle(run: &Run) -> (Vec<String>, String) {
    let mut opened = String::new();
    let mut lifecycle = Vec::new();
    for event in token_events(run) {
        match event.split_once(" sha256=") {
            Some((open, sha)) => {
                opened = sha.to_string();
                lifecycle.push(open.to_string());
            }
            None => lifecycle.push(event),
        }
    }
    (lifecycle, opened)
}

#[test]
fn python_ephemeral_token_is_opened_renewed_closed_and_stored_nowhere() {
    let w = token_workdir();
    let info = [("CAIRN_LOG", "info")];
    let plan = w.cairn_here_env(&["plan", "-json", "-out=p.bin"], &info).success();
    // Opened for the plan (and renewed at once, as it asked), closed after.
    let (lifecycle, planned) = token_lifecycle(&plan);
    assert_eq!(lifecycle, ["open db", "renew db 1", "close db 1"], "{}", plan.all());

    let apply = w.cairn_here_env(&["apply", "-json", "p.bin"], &info).success();
    let (lifecycle, applied) = token_lifecycle(&apply);
    assert_eq!(lifecycle, ["open db", "renew db 1", "close db 1"], "{}", apply.all());
    assert_ne!(planned, applied, "each run opens a token of its own");
    // The apply's token reached the write-only attribute.
    let token = w.read("log/sink-app.txt");
    assert!(token.starts_with("pytok-"), "{token}");
    assert_eq!(sha256_hex(token.as_bytes()), applied, "the write-only attribute got the apply's token");
    let app = w.attributes("pytoken_sink.app");
    assert_eq!(app["secret_length"], token.len(), "{app:#}");
    assert!(app["secret"].is_null(), "a write-only attribute is stored null: {app:#}");

    // No token, of the plan or the apply, is anywhere: every one starts
    // with `pytok-`.
    w.assert_stored_nowhere("pytok-", &plan, &apply, "p.bin");
    let destroy = w.cairn_env(&["destroy", "-auto-approve"], &info).success();
    assert!(w.addresses().is_empty());
    let (lifecycle, _) = token_lifecycle(&destroy);
    let count = |what: &str| lifecycle.iter().filter(|e| e.starts_with(what)).count();
    assert_eq!(count("open"), count("close"), "every token opened is closed: {}", destroy.all());
}

#[test]
fn python_ephemeral_errors_are_diagnostics_at_the_block() {
    let w = token_workdir();
    // The provider's validate_ephemeral, on the attribute.
    let run = w.cairn(&["plan", "-var", "audience="]).failure();
    assert!(run.stderr.contains("`audience` must not be empty"), "{}", run.all());
    assert!(run.stderr.contains("ephemeral.pytoken_token.db"), "{}", run.all());
    // An exception in open: an error naming it (and no sandbox refusal of
    // the traceback's sources), nothing opened to close, nothing applied.
    let run = w.cairn_env(&["apply", "-auto-approve", "-var", "audience=unreachable"], &[("CAIRN_LOG", "info")]);
    let run = run.failure();
    let message = "Provider bug: ConnectionError: the token service is unreachable";
    assert!(run.stderr.contains(message), "{}", run.all());
    assert!(!run.stderr.contains("the sandbox denied"), "{}", run.all());
    assert!(token_lifecycle(&run).0.is_empty(), "{}", run.all());
    assert!(!w.exists("log/sink-app.txt"), "{}", run.all());
}
