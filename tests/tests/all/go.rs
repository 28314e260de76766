//! The Go SDK and the providers written with it (`providers/sdk-go`,
//! `providers/httpkv`, `providers/testing/gomisbehave`), built from source
//! with Go and `cairn providers componentize` and driven through the real
//! binary: the host checks their answers exactly as it checks a Rust
//! provider's.
//!
//! `httpkv` manages entries of a key-value store over HTTP (net/http through
//! the SDK's transport over the host's wasi:http); the tests start the
//! store on loopback: a small HTTP server holding the entries in memory.

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::process::Command;
use std::sync::{Arc, Mutex};

use cairn_e2e::Workdir;
use cairn_e2e::languages::{Lang, lang_component, toolchain};
use cairn_e2e::loopback_http::{Request, serve_json};
use cairn_e2e::repo_root;
use serde_json::{Value, json};

/// One request as the store saw it.
#[derive(Clone, Debug)]
struct Seen {
    /// `METHOD /path`.
    line: String,
    /// The Authorization header, if any.
    authorization: Option<String>,
    body: String,
}

/// The key-value store `httpkv` manages: entries by key, each with an id
/// given when it is made and a revision counted up by every write.
#[derive(Default)]
struct Store {
    entries: BTreeMap<String, Value>,
    made: u64,
    seen: Vec<Seen>,
}

/// The store on a loopback port.
struct KvServer {
    port: u16,
    store: Arc<Mutex<Store>>,
}

impl KvServer {
    fn start() -> KvServer {
        let store = Arc::new(Mutex::new(Store::default()));
        let shared = Arc::clone(&store);
        let port = serve_json(move |request| answer(request, &shared));
        KvServer { port, store }
    }

    fn entry(&self, key: &str) -> Option<Value> {
        self.store.lock().unwrap().entries.get(key).cloned()
    }

    /// Changes an entry out of band.
    fn set_value(&self, key: &str, value: &str) {
        let mut store = self.store.lock().unwrap();
        let entry = store.entries.get_mut(key).expect("the entry exists");
        entry["value"] = json!(value);
        entry["revision"] = json!(entry["revision"].as_i64().unwrap() + 1);
    }

    /// Makes an entry out of band, as another tool would.
    fn put(&self, key: &str, value: &str) {
        let mut store = self.store.lock().unwrap();
        store.made += 1;
        let id = format!("e{}", store.made);
        store.entries.insert(key.into(), json!({"key": key, "value": value, "labels": {}, "id": id, "revision": 1}));
    }

    fn remove(&self, key: &str) {
        self.store.lock().unwrap().entries.remove(key);
    }

    fn seen(&self) -> Vec<Seen> {
        self.store.lock().unwrap().seen.clone()
    }
}

/// The store's answer to one request.
fn answer(request: Request, store: &Mutex<Store>) -> (&'static str, String) {
    let Request { method, path, body, .. } = &request;
    let mut store = store.lock().unwrap();
    let authorization = request.header("authorization").map(str::to_string);
    store.seen.push(Seen { line: format!("{method} {path}"), authorization, body: body.clone() });
    let key = path.strip_prefix("/kv/").unwrap_or("").to_string();
    match method.as_str() {
        "GET" => match store.entries.get(&key) {
            Some(e) => ("200 OK", e.to_string()),
            None => ("404 Not Found", r#"{"error":"no such key"}"#.to_string()),
        },
        "PUT" => {
            let written: Value = serde_json::from_str(body).unwrap_or(Value::Null);
            if !store.entries.contains_key(&key) {
                store.made += 1;
                let id = format!("e{}", store.made);
                store.entries.insert(key.clone(), json!({"key": key, "id": id, "revision": 0}));
            }
            let entry = store.entries.get_mut(&key).unwrap();
            entry["value"] = written["value"].clone();
            entry["labels"] = if written["labels"].is_object() { written["labels"].clone() } else { json!({}) };
            entry["revision"] = json!(entry["revision"].as_i64().unwrap() + 1);
            ("200 OK", entry.to_string())
        }
        "DELETE" => match store.entries.remove(&key) {
            Some(_) => ("204 No Content", String::new()),
            None => ("404 Not Found", r#"{"error":"no such key"}"#.to_string()),
        },
        _ => ("405 Method Not Allowed", String::new()),
    }
}

fn config(port: u16) -> String {
    format!(
        r#"
terraform {{
  required_providers {{
    httpkv = {{ source = "./httpkv.wasm" }}
  }}
}}

provider "httpkv" {{
  endpoint = "http://127.0.0.1:{port}"
  sandbox {{
    http {{
      url     = "http://127.0.0.1:{port}"
      headers = {{ Authorization = "Bearer kv-token" }}
    }}
  }}
}}

variable "key" {{
  default = "greeting"
}}

variable "value" {{
  default = "hello"
}}

resource "httpkv_entry" "greeting" {{
  key    = var.key
  value  = var.value
  labels = {{ team = "web" }}
  secret = "write-only-secret"
}}

output "id" {{
  value = httpkv_entry.greeting.id
}}
"#
    )
}

fn workdir(port: u16) -> Workdir {
    let w = Workdir::new();
    std::fs::copy(lang_component(Lang::Go, "httpkv"), w.path().join("httpkv.wasm")).unwrap();
    w.write("main.tf", &config(port));
    w
}

#[test]
fn go_provider_lives_through_plan_apply_update_replace_drift_import_and_destroy() {
    let server = KvServer::start();
    let w = workdir(server.port);

    let run = w.cairn_here(&["providers", "inspect", "httpkv.wasm"]).success();
    assert!(run.stdout.contains("provider \"httpkv\"\n") && run.stdout.contains("  version: 0.1.0\n"), "{}", run.all());

    w.cairn(&["validate"]).success();
    let plan = w.cairn(&["plan"]).success();
    assert!(plan.stdout.contains("Plan: 1 to add, 0 to change, 0 to destroy."), "{}", plan.all());
    assert!(plan.stdout.contains("id       = (known after apply)"), "{}", plan.all());

    let run = w.cairn_env(&["apply", "-auto-approve"], &[("CAIRN_LOG", "info")]).success();
    assert!(run.stdout.contains("Apply complete! Resources: 1 added, 0 changed, 0 destroyed."), "{}", run.all());
    // The provider's log line (cairn.Infof) reached the host's log.
    assert!(run.stderr.contains("httpkv: wrote greeting (revision 1)"), "{}", run.all());
    let attrs = w.attributes("httpkv_entry.greeting");
    assert_eq!((attrs["id"].as_str(), attrs["revision"].as_i64()), (Some("e1"), Some(1)), "{attrs:#}");
    assert_eq!(attrs["labels"], json!({"team": "web"}), "{attrs:#}");
    // Write-only: sent to the store, never kept.
    assert!(attrs["secret"].is_null(), "{attrs:#}");
    assert!(!w.state_text().contains("write-only-secret"), "the write-only value reached the state");
    let put = server.seen().into_iter().find(|s| s.line == "PUT /kv/greeting").expect("the entry was written");
    assert!(put.body.contains("write-only-secret"), "{put:?}");
    // The grant's header reached the store; the provider never held it.
    assert_eq!(put.authorization.as_deref(), Some("Bearer kv-token"), "{put:?}");
    assert_eq!(server.entry("greeting").unwrap()["value"], "hello");

    let again = w.cairn(&["plan", "-detailed-exitcode"]);
    assert_eq!(again.code, 0, "a second plan must find nothing to do:\n{}", again.all());

    // In place: the value changes, the id stays, the revision is unknown
    // until the store counts the write.
    let plan = w.cairn(&["plan", "-var", "value=hello again"]).success();
    assert!(plan.stdout.contains("# httpkv_entry.greeting will be updated in-place"), "{}", plan.all());
    assert!(plan.stdout.contains("revision = 1 -> (known after apply)"), "{}", plan.all());
    assert!(!plan.stdout.contains("id       = \"e1\" -> (known after apply)"), "{}", plan.all());
    w.cairn(&["apply", "-auto-approve", "-var", "value=hello again"]).success();
    let attrs = w.attributes("httpkv_entry.greeting");
    assert_eq!((attrs["id"].as_str(), attrs["revision"].as_i64()), (Some("e1"), Some(2)), "{attrs:#}");
    assert_eq!(server.entry("greeting").unwrap()["value"], "hello again");

    // Replacement: a new key is a new entry, so the old entry's id and
    // revision must not be planned for it.
    let vars = ["-var", "value=hello again", "-var", "key=salutation"];
    let plan = w.cairn(&[&["plan"][..], &vars].concat()).success();
    assert!(plan.stdout.contains("# httpkv_entry.greeting must be replaced"), "{}", plan.all());
    assert!(plan.stdout.contains("# forces replacement"), "{}", plan.all());
    assert!(plan.stdout.contains("id       = \"e1\" -> (known after apply)"), "{}", plan.all());
    assert!(plan.stdout.contains("revision = 2 -> (known after apply)"), "{}", plan.all());
    w.cairn(&[&["apply", "-auto-approve"][..], &vars].concat()).success();
    let attrs = w.attributes("httpkv_entry.greeting");
    assert_eq!((attrs["id"].as_str(), attrs["revision"].as_i64()), (Some("e2"), Some(1)), "{attrs:#}");
    assert!(server.entry("greeting").is_none(), "the replaced entry was not deleted");
    assert_eq!(w.cairn(&[&["plan", "-detailed-exitcode"][..], &vars].concat()).code, 0);

    // Drift: an entry changed out of band is planned back; one deleted out
    // of band is made again.
    server.set_value("salutation", "changed elsewhere");
    let plan = w.cairn(&[&["plan", "-detailed-exitcode"][..], &vars].concat());
    assert_eq!(plan.code, 2, "{}", plan.all());
    assert!(plan.stdout.contains("~ value    = \"changed elsewhere\" -> \"hello again\""), "{}", plan.all());
    w.cairn(&[&["apply", "-auto-approve"][..], &vars].concat()).success();
    assert_eq!(server.entry("salutation").unwrap()["value"], "hello again");
    server.remove("salutation");
    let plan = w.cairn(&[&["plan", "-detailed-exitcode"][..], &vars].concat());
    assert_eq!(plan.code, 2, "{}", plan.all());
    assert!(plan.stdout.contains("# httpkv_entry.greeting will be created"), "{}", plan.all());
    w.cairn(&[&["apply", "-auto-approve"][..], &vars].concat()).success();
    assert!(server.entry("salutation").is_some());

    // Import: an entry made by someone else is adopted by its key.
    server.put("adopted", "from elsewhere");
    w.write(
        "adopted.tf",
        "resource \"httpkv_entry\" \"adopted\" {\n  key   = \"adopted\"\n  value = \"from elsewhere\"\n}\n",
    );
    let run = w.cairn(&[&["import"][..], &vars, &["httpkv_entry.adopted", "adopted"]].concat()).success();
    assert!(run.stdout.contains("Import successful!"), "{}", run.all());
    let attrs = w.attributes("httpkv_entry.adopted");
    assert_eq!(attrs["value"], "from elsewhere", "{attrs:#}");
    assert!(attrs["labels"].is_null(), "{attrs:#}");
    assert_eq!(w.cairn(&[&["plan", "-detailed-exitcode"][..], &vars].concat()).code, 0);
    // A key the store does not have: an error, and nothing is adopted.
    w.write("missing.tf", "resource \"httpkv_entry\" \"missing\" {\n  key   = \"nowhere\"\n  value = \"x\"\n}\n");
    let run = w.cairn(&[&["import"][..], &vars, &["httpkv_entry.missing", "nowhere"]].concat()).failure();
    assert!(run.stderr.contains("No entry with the key \"nowhere\""), "{}", run.all());
    std::fs::remove_file(w.path().join("missing.tf")).unwrap();

    let run = w.cairn(&[&["destroy", "-auto-approve"][..], &vars].concat()).success();
    assert!(run.stdout.contains("Destroy complete! Resources: 2 destroyed."), "{}", run.all());
    assert!(server.entry("salutation").is_none() && server.entry("adopted").is_none());
    assert!(w.addresses().is_empty());
}

#[test]
fn go_provider_errors_name_the_attribute_and_the_missing_grant() {
    let server = KvServer::start();
    let w = workdir(server.port);
    // The provider's own validation, on an attribute path.
    w.write("main.tf", &config(server.port).replace("key    = var.key", "key    = \"a/b\""));
    let run = w.cairn(&["plan"]).failure();
    assert!(run.stderr.contains("httpkv_entry.greeting: Invalid key \"a/b\""), "{}", run.all());

    // The store outside the grant: the request fails in the sandbox, and
    // the state is left alone.
    let ungranted = TcpListener::bind("127.0.0.1:0").unwrap();
    let other = ungranted.local_addr().unwrap().port();
    w.write(
        "main.tf",
        &config(server.port).replace(
            &format!("endpoint = \"http://127.0.0.1:{}\"", server.port),
            &format!("endpoint = \"http://127.0.0.1:{other}\""),
        ),
    );
    let run = w.cairn(&["apply", "-auto-approve"]).failure();
    assert!(run.stderr.contains(&format!("Cannot reach the store at http://127.0.0.1:{other}")), "{}", run.all());
    assert!(run.stderr.contains("the sandbox denied"), "{}", run.all());
    assert!(w.addresses().is_empty(), "a failed create records nothing");
    ungranted.set_nonblocking(true).unwrap();
    assert!(ungranted.accept().is_err(), "the ungranted listener saw a connection");
}

const MISBEHAVE: &str = r#"
terraform {
  required_providers {
    gomisbehave = { source = "./gomisbehave.wasm" }
  }
}

provider "gomisbehave" {
  sandbox {
    memory_mb = 64
  }
}

resource "gomisbehave_ok" "before" {}

resource "gomisbehave_ok" "after" {
  depends_on = [gomisbehave_ok.before]
}
"#;

fn misbehave_workdir(hostile: &str) -> Workdir {
    let w = Workdir::new();
    let wasm = lang_component(Lang::Go, "testing/gomisbehave");
    std::fs::copy(wasm, w.path().join("gomisbehave.wasm")).unwrap();
    w.write("main.tf", &format!("{MISBEHAVE}\nresource \"{hostile}\" \"x\" {{}}\n"));
    w
}

#[test]
fn a_go_panic_in_plan_fails_that_resource_with_the_panic_and_its_frame() {
    let w = misbehave_workdir("gomisbehave_panic");
    let run = w.cairn(&["apply", "-auto-approve"]).failure();
    let expected = "gomisbehave_panic.x: Provider bug: panic: assignment to entry in nil map";
    assert!(run.stderr.contains(expected), "{}", run.all());
    // The detail starts at the frame that panicked.
    assert!(run.stderr.contains("main.(*misbehave).Plan"), "{}", run.all());
    // Only that resource failed: the others were planned (nothing is
    // applied after a failed plan), and the host went on to report.
    assert_eq!(run.stderr.matches("Error: ").count(), 1, "{}", run.all());
    assert!(w.addresses().is_empty());
    // Without the hostile resource the provider serves as before.
    w.write("main.tf", MISBEHAVE);
    w.cairn(&["apply", "-auto-approve"]).success();
    assert_eq!(w.addresses(), ["gomisbehave_ok.after", "gomisbehave_ok.before"]);
}

#[test]
fn a_go_provider_past_its_memory_limit_fails_that_resource_and_never_the_host() {
    let w = misbehave_workdir("gomisbehave_oom");
    let run = w.cairn(&["apply", "-auto-approve"]).failure();
    let expected = "provider \"gomisbehave\" exceeded its memory limit of 64 MiB while planning gomisbehave_oom.x";
    assert!(run.stderr.contains(expected), "{}", run.all());
    assert_eq!(run.stderr.matches("Error: ").count(), 1, "{}", run.all());
    assert!(w.addresses().is_empty());
}

/// The SDK's own tests (`go test ./...` in providers/sdk-go: values,
/// schemas, plan helpers, the glue, and that the committed bindings match
/// the WIT) and httpkv's (against an httptest store), run natively.
#[test]
fn go_sdk_unit_tests_pass() {
    let go = toolchain(Lang::Go);
    for dir in ["providers/sdk-go", "providers/httpkv"] {
        let out = Command::new(&go)
            .current_dir(repo_root().join(dir))
            .args(["test", "./..."])
            .env("GOTOOLCHAIN", "local")
            .env("GOPROXY", "off")
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", go.display()));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "`go test ./...` in {dir} failed:\n{stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Every Go component exports `state-moves`; a provider without the SDK's
/// StateMover hook answers that it takes no moves, and the user gets the
/// host's error for a provider that does not support moves across types.
#[test]
fn a_move_across_types_to_a_go_provider_without_the_hook_is_unsupported() {
    let w = misbehave_workdir("gomisbehave_ok");
    w.write("main.tf", &format!("{MISBEHAVE}\nresource \"terraform_data\" \"a\" {{}}\n"));
    w.cairn(&["apply", "-auto-approve"]).success();
    let moved =
        "resource \"gomisbehave_ok\" \"a\" {}\n\nmoved {\n  from = terraform_data.a\n  to   = gomisbehave_ok.a\n}\n";
    w.write("main.tf", &format!("{MISBEHAVE}\n{moved}"));
    let plan = w.cairn(&["plan"]).failure();
    assert!(plan.stderr.contains("Unsupported `moved` across resource types"), "{}", plan.all());
    assert!(
        plan.stderr.contains("does not support moved operations across resource types and providers."),
        "{}",
        plan.all()
    );
    assert!(!plan.stderr.contains("state-moves not implemented"), "the SDK's answer reached the user: {}", plan.all());
}
