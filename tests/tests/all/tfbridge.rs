//! Terraform providers in the sandbox: `providers/testing/tfhttp`, written
//! with HashiCorp's terraform-plugin-framework as any Terraform provider is,
//! built with the bridge (`providers/tfbridge`) into a component and driven
//! through the real binary. The host checks its answers exactly as it
//! checks any provider's.
//!
//! `tfhttp` manages items of an HTTP store through the `http` grant
//! (net/http over the SDK's wasi:http transport); the tests start the store
//! on loopback: a small HTTP server holding the items in memory, which
//! records what it was sent.

use std::collections::BTreeMap;
use std::process::Command;
use std::sync::{Arc, Mutex};

use cairn_e2e::languages::{Lang, lang_component, toolchain};
use cairn_e2e::loopback_http::{Request, serve_json};
use cairn_e2e::{Run, Workdir, cairn_command, repo_root};
use serde_json::{Value, json};

/// One write as the store saw it.
#[derive(Clone, Debug)]
struct Put {
    name: String,
    /// The If-Match header: the revision the provider kept in private state.
    if_match: Option<String>,
    body: Value,
}

/// The store `tfhttp` manages: items by name, each with an id given when
/// it is made and a revision counted up by every write.
#[derive(Default)]
struct Store {
    items: BTreeMap<String, Value>,
    made: u64,
    puts: Vec<Put>,
    /// Every lease call (`tfhttp_lease`), in order: "open l1 deploy",
    /// "renew l1", "close l1".
    lease_calls: Vec<String>,
    /// The leases handed out, by id: true while not revoked.
    leases: BTreeMap<String, bool>,
}

/// The store on a loopback port (the side-by-side tests run it too).
pub(crate) struct ItemServer {
    pub(crate) port: u16,
    store: Arc<Mutex<Store>>,
}

impl ItemServer {
    pub(crate) fn start() -> ItemServer {
        let store = Arc::new(Mutex::new(Store::default()));
        let shared = Arc::clone(&store);
        let port = serve_json(move |request| answer(&request, &shared));
        ItemServer { port, store }
    }

    fn item(&self, name: &str) -> Option<Value> {
        self.store.lock().unwrap().items.get(name).cloned()
    }

    /// Changes an item out of band, as another tool would.
    fn set(&self, name: &str, attribute: &str, value: Value) {
        let mut store = self.store.lock().unwrap();
        let item = store.items.get_mut(name).expect("the item exists");
        item[attribute] = value;
        item["revision"] = json!(item["revision"].as_i64().unwrap() + 1);
    }

    fn puts(&self) -> Vec<Put> {
        self.store.lock().unwrap().puts.clone()
    }

    /// Every lease call the store answered, in order.
    pub(crate) fn lease_calls(&self) -> Vec<String> {
        self.store.lock().unwrap().lease_calls.clone()
    }

    /// The bodies of the items' writes, in order.
    pub(crate) fn put_bodies(&self) -> Vec<Value> {
        self.puts().into_iter().map(|put| put.body).collect()
    }
}

/// The store's answer to a lease call: POST /leases (open, with the
/// scope; `forbidden` is refused), POST /leases/ID/renew, DELETE
/// /leases/ID (close). A lease's token is `token-ID`.
fn answer_lease(request: &Request, store: &mut Store) -> (&'static str, String) {
    let (method, path) = (request.method.as_str(), request.path.as_str());
    if method == "POST" && path == "/leases" {
        let asked: Value = serde_json::from_str(&request.body).unwrap_or(Value::Null);
        let scope = asked["scope"].as_str().unwrap_or_default().to_string();
        if scope == "forbidden" {
            return ("403 Forbidden", r#"{"error":"no leases for that scope"}"#.to_string());
        }
        let id = format!("l{}", store.leases.len() + 1);
        store.leases.insert(id.clone(), true);
        store.lease_calls.push(format!("open {id} {scope}"));
        return ("200 OK", json!({"id": id, "scope": scope, "token": format!("token-{id}")}).to_string());
    }
    let rest = path.strip_prefix("/leases/").unwrap_or("");
    let (id, renew) = match rest.strip_suffix("/renew") {
        Some(id) => (id, true),
        None => (rest, false),
    };
    if store.leases.get(id) != Some(&true) {
        return ("404 Not Found", r#"{"error":"no such lease"}"#.to_string());
    }
    match (method, renew) {
        ("POST", true) => {
            store.lease_calls.push(format!("renew {id}"));
            ("200 OK", json!({"id": id}).to_string())
        }
        ("DELETE", false) => {
            store.lease_calls.push(format!("close {id}"));
            store.leases.insert(id.to_string(), false);
            ("204 No Content", String::new())
        }
        _ => ("405 Method Not Allowed", String::new()),
    }
}

/// The store's answer to one request.
fn answer(request: &Request, store: &Mutex<Store>) -> (&'static str, String) {
    let (method, path) = (request.method.as_str(), request.path.as_str());
    let if_match = request.header("if-match").map(str::to_string);
    let name = path.strip_prefix("/items/").unwrap_or("").to_string();
    let mut store = store.lock().unwrap();
    if path.starts_with("/leases") {
        return answer_lease(request, &mut store);
    }
    match method {
        "GET" => match store.items.get(&name) {
            Some(item) => ("200 OK", item.to_string()),
            None => ("404 Not Found", r#"{"error":"no such item"}"#.to_string()),
        },
        "PUT" => {
            let mut written: Value = serde_json::from_str(&request.body).unwrap_or(Value::Null);
            store.puts.push(Put { name: name.clone(), if_match, body: written.clone() });
            // The secret is taken, never given back.
            written.as_object_mut().map(|o| o.remove("secret"));
            let (id, revision) = match store.items.get(&name) {
                Some(prior) => (prior["id"].clone(), prior["revision"].as_i64().unwrap() + 1),
                None => {
                    store.made += 1;
                    (json!(format!("i{}", store.made)), 1)
                }
            };
            written["id"] = id;
            written["revision"] = json!(revision);
            store.items.insert(name, written.clone());
            ("200 OK", written.to_string())
        }
        "DELETE" => match store.items.remove(&name) {
            Some(_) => ("204 No Content", String::new()),
            None => ("404 Not Found", r#"{"error":"no such item"}"#.to_string()),
        },
        _ => ("405 Method Not Allowed", String::new()),
    }
}

fn config(port: u16) -> String {
    tfhttp_config(
        port,
        r#"
variable "name" {
  default = "alpha"
}

variable "value" {
  default = "hello"
}

resource "tfhttp_item" "a" {
  name     = var.name
  value    = var.value
  labels   = { team = "web" }
  settings = { mode = "safe" }
  rules    = [{ port = 80 }, { port = 443, protocol = "udp" }]
  password = "hunter2"
  secret   = "write-only-secret"

  note {
    text = "first"
  }
}

data "tfhttp_item" "a" {
  name = tfhttp_item.a.name
}

output "read_back" {
  value = data.tfhttp_item.a.value
}
"#,
    )
}

fn workdir(config: &str) -> Workdir {
    let w = Workdir::new();
    std::fs::copy(lang_component(Lang::Go, "testing/tfhttp"), w.path().join("tfhttp.wasm")).unwrap();
    w.write("main.tf", config);
    w
}

fn with_vars<'a>(command: &[&'a str], vars: &[&'a str]) -> Vec<&'a str> {
    [command, vars].concat()
}

#[test]
fn framework_provider_lives_through_plan_apply_update_replace_drift_import_and_destroy() {
    let server = ItemServer::start();
    let w = workdir(&config(server.port));

    w.cairn(&["validate"]).success();
    let plan = w.cairn(&["plan"]).success();
    assert!(plan.stdout.contains("Plan: 1 to add, 0 to change, 0 to destroy."), "{}", plan.all());
    // Defaults (the framework's, in its plan) and sensitivity (the schema's).
    assert!(plan.stdout.contains("+ size     = 1\n"), "{}", plan.all());
    assert!(plan.stdout.contains("+ protocol = \"tcp\""), "{}", plan.all());
    assert!(plan.stdout.contains("+ password = (sensitive value)"), "{}", plan.all());
    assert!(!plan.stdout.contains("hunter2"), "{}", plan.all());

    let run = w.cairn(&["apply", "-auto-approve"]).success();
    assert!(run.stdout.contains("Apply complete! Resources: 1 added, 0 changed, 0 destroyed."), "{}", run.all());
    assert!(run.stdout.contains("read_back = \"hello\""), "the data source read the item: {}", run.all());
    let attrs = w.attributes("tfhttp_item.a");
    assert_eq!((attrs["id"].as_str(), attrs["revision"].as_i64()), (Some("i1"), Some(1)), "{attrs:#}");
    assert_eq!(attrs["settings"], json!({"mode": "safe", "retries": null}), "{attrs:#}");
    assert_eq!(attrs["rules"], json!([{"port": 80, "protocol": "tcp"}, {"port": 443, "protocol": "udp"}]));
    assert_eq!(attrs["note"], json!([{"text": "first"}]), "{attrs:#}");
    // Write-only: sent to the store, never kept.
    assert!(attrs["secret"].is_null(), "{attrs:#}");
    assert!(!w.state_text().contains("write-only-secret"), "the write-only value reached the state");
    let made = &server.puts()[0];
    assert_eq!((made.name.as_str(), made.body["secret"].as_str()), ("alpha", Some("write-only-secret")));
    assert_eq!(made.if_match, None, "{made:?}");

    let again = w.cairn(&["plan", "-detailed-exitcode"]);
    assert_eq!(again.code, 0, "a second plan must find nothing to do:\n{}", again.all());

    // In place: the id stays (UseStateForUnknown), the revision is unknown
    // until the store counts the write, and the update carries the revision
    // the provider kept in private state.
    let vars = ["-var", "value=hello again"];
    let plan = w.cairn(&with_vars(&["plan"], &vars)).success();
    assert!(plan.stdout.contains("# tfhttp_item.a will be updated in-place"), "{}", plan.all());
    assert!(plan.stdout.contains("~ revision = 1 -> (known after apply)"), "{}", plan.all());
    assert!(plan.stdout.contains("id       = \"i1\"\n"), "{}", plan.all());
    w.cairn(&with_vars(&["apply", "-auto-approve"], &vars)).success();
    let update = server.puts().pop().unwrap();
    assert_eq!((update.body["value"].as_str(), update.if_match.as_deref()), (Some("hello again"), Some("1")));
    assert!(update.body.get("secret").is_none(), "the write-only value is sent when the item is made only");
    let attrs = w.attributes("tfhttp_item.a");
    assert_eq!((attrs["id"].as_str(), attrs["revision"].as_i64()), (Some("i1"), Some(2)), "{attrs:#}");

    // Replacement: RequiresReplace on the name.
    let vars = ["-var", "value=hello again", "-var", "name=beta"];
    let plan = w.cairn(&with_vars(&["plan"], &vars)).success();
    assert!(plan.stdout.contains("# tfhttp_item.a must be replaced"), "{}", plan.all());
    assert!(plan.stdout.contains("~ name     = \"alpha\" -> \"beta\" # forces replacement"), "{}", plan.all());
    assert!(plan.stdout.contains("~ id       = \"i1\" -> (known after apply)"), "{}", plan.all());
    w.cairn(&with_vars(&["apply", "-auto-approve"], &vars)).success();
    assert!(server.item("alpha").is_none(), "the replaced item was not deleted");
    assert_eq!(w.attributes("tfhttp_item.a")["id"], "i2");
    assert_eq!(w.cairn(&with_vars(&["plan", "-detailed-exitcode"], &vars)).code, 0);

    // Drift: a change made out of band is read, shown and planned back.
    server.set("beta", "value", json!("changed elsewhere"));
    let plan = w.cairn(&with_vars(&["plan", "-detailed-exitcode"], &vars));
    assert_eq!(plan.code, 2, "{}", plan.all());
    assert!(plan.stdout.contains("# tfhttp_item.a has changed outside of cairn"), "{}", plan.all());
    assert!(plan.stdout.contains("~ value    = \"changed elsewhere\" -> \"hello again\""), "{}", plan.all());
    w.cairn(&with_vars(&["apply", "-auto-approve"], &vars)).success();
    assert_eq!(server.item("beta").unwrap()["value"], "hello again");
    // The refresh kept the drifted revision (2; the create made 1) in
    // private state, and the update sent it.
    assert_eq!(server.puts().pop().unwrap().if_match.as_deref(), Some("2"));

    // Import: forgotten, then adopted again by name; what is read back is
    // what was applied, so nothing is planned.
    w.cairn_here(&["state", "rm", "tfhttp_item.a"]).success();
    w.write("import.tf", "import {\n  to = tfhttp_item.a\n  id = \"beta\"\n}\n");
    let run = w.cairn(&with_vars(&["apply", "-auto-approve"], &vars)).success();
    assert!(run.stdout.contains("Resources: 1 imported, 0 added, 0 changed, 0 destroyed."), "{}", run.all());
    let attrs = w.attributes("tfhttp_item.a");
    assert_eq!((attrs["id"].as_str(), attrs["password"].as_str()), (Some("i2"), Some("hunter2")), "{attrs:#}");
    assert_eq!(w.cairn(&with_vars(&["plan", "-detailed-exitcode"], &vars)).code, 0);
    std::fs::remove_file(w.path().join("import.tf")).unwrap();

    let run = w.cairn(&with_vars(&["destroy", "-auto-approve"], &vars)).success();
    assert!(run.stdout.contains("Destroy complete! Resources: 1 destroyed."), "{}", run.all());
    assert!(server.item("beta").is_none() && w.addresses().is_empty());
}

#[test]
fn framework_validators_and_the_store_errors_name_the_attribute_and_the_resource() {
    let server = ItemServer::start();
    let config = config(server.port);
    let w = workdir(&config.replace("rules    = [{ port = 80 }", "rules    = [{ port = 70000 }"));
    // stringvalidator.RegexMatches on the name; int64validator.Between in
    // a nested attribute, at its path.
    let run = w.cairn(&["plan", "-var", "name=Not_Valid"]).failure();
    assert!(run.stderr.contains("tfhttp_item.a: Invalid Attribute Value Match"), "{}", run.all());
    assert!(run.stderr.contains("must be lowercase letters, digits and dashes"), "{}", run.all());
    assert!(run.stderr.contains("Attribute rules[0].port value must be between 1 and 65535"), "{}", run.all());

    // An item the import names does not exist: the framework's read
    // removes it, and cairn says so.
    w.write("main.tf", &config);
    w.write("import.tf", "import {\n  to = tfhttp_item.a\n  id = \"nowhere\"\n}\n");
    let run = w.cairn(&["plan", "-var", "name=nowhere"]).failure();
    assert!(run.stderr.contains("Cannot import non-existent remote object"), "{}", run.all());
    assert!(w.addresses().is_empty());
}

#[test]
fn providers_check_takes_a_framework_resource_through_every_step() {
    let wasm = lang_component(Lang::Go, "testing/tfhttp");
    let run: Run = cairn_command(&["providers", "check"], &[]).arg(&wasm).output().unwrap().into();
    assert_eq!(run.code, 0, "{}", run.all());
    assert!(!run.stdout.contains("FAIL"), "{}", run.all());
    assert!(run.stdout.contains("schema\n  ok    is well formed\n"), "{}", run.all());
    // `tfhttp_misbehave` with a generated action behaves and needs no
    // network: every step of the lifecycle passes through the bridge.
    let steps = [
        "plan a create with unknown optional attributes",
        "apply the create",
        "read what apply made",
        "plan again: no changes",
        "plan a change that forces replacement",
        "plan the replacement's create: no stale computed values",
        "apply the replacement's create",
        "delete",
    ];
    let section: String = run
        .stdout
        .lines()
        .skip_while(|l| *l != "resource \"tfhttp_misbehave\"")
        .skip(1)
        .take_while(|l| l.starts_with(' '))
        .collect::<Vec<_>>()
        .join("\n");
    for step in steps {
        assert!(section.contains(&format!("  ok    {step}\n")), "{step}:\n{}", run.all());
    }
    // Its objects live only in the state, which the check says.
    assert!(section.contains("  warn  read after delete\n"), "{}", run.all());
    // `tfhttp_item`'s plans pass; its apply needs the store, which the check
    // has no grant for, and is skipped with the provider's own message.
    assert!(run.stdout.contains("ok    plan a create twice, with required attributes only"), "{}", run.all());
    assert!(run.stdout.contains("the provider rejected the generated values: Cannot create the item"), "{}", run.all());
}

const MISBEHAVE: &str = r#"
terraform {
  required_providers {
    tfhttp = { source = "./tfhttp.wasm" }
  }
}

provider "tfhttp" {
  endpoint = "http://127.0.0.1:9"
  sandbox {
    memory_mb       = 128
    # Long enough that a loaded machine's configure and plans of the
    # well-behaved resources never run into it.
    timeout_seconds = 5
  }
}

resource "tfhttp_misbehave" "before" {
  action = "none"
}

resource "tfhttp_misbehave" "after" {
  action     = "none"
  depends_on = [tfhttp_misbehave.before]
}
"#;

#[test]
fn a_framework_provider_that_panics_hangs_or_floods_fails_only_that_resource() {
    let cases = [
        ("panic", "tfhttp_misbehave.x: Provider bug: panic: assignment to entry in nil map"),
        ("hang", "provider \"tfhttp\" exceeded its time limit of 5s while planning tfhttp_misbehave.x"),
        ("flood", "provider \"tfhttp\" exceeded its memory limit of 128 MiB while planning tfhttp_misbehave.x"),
    ];
    let w = workdir(MISBEHAVE);
    for (action, expected) in cases {
        w.write(
            "main.tf",
            &format!("{MISBEHAVE}\nresource \"tfhttp_misbehave\" \"x\" {{\n  action = \"{action}\"\n}}\n"),
        );
        let run = w.cairn(&["apply", "-auto-approve"]).failure();
        assert!(run.stderr.contains(expected), "{action}: expected {expected:?} in:\n{}", run.all());
        // Only that resource failed; the host went on and reported it.
        assert_eq!(run.stderr.matches("Error: ").count(), 1, "{action}:\n{}", run.all());
        assert!(!run.stderr.lines().any(|l| l.starts_with("thread ")), "cairn panicked:\n{}", run.all());
        assert!(w.addresses().is_empty(), "{action}: nothing is applied after a failed plan");
    }
    // The panic's detail starts at the framework resource's frame.
    w.write("main.tf", &format!("{MISBEHAVE}\nresource \"tfhttp_misbehave\" \"x\" {{\n  action = \"panic\"\n}}\n"));
    let run = w.cairn(&["plan"]).failure();
    assert!(run.stderr.contains("main.(*misbehaveResource).ModifyPlan"), "{}", run.all());
    // Without the hostile resource the provider serves as before.
    w.write("main.tf", MISBEHAVE);
    w.cairn(&["apply", "-auto-approve"]).success();
    assert_eq!(w.addresses(), ["tfhttp_misbehave.after", "tfhttp_misbehave.before"]);
}

/// The bridge's own tests and tfhttp's (the bridge serving the framework
/// provider natively, against an httptest store: values, schemas, private
/// state, import, state upgrade), run with `go test`.
#[test]
fn tfbridge_go_tests_pass() {
    let go = toolchain(Lang::Go);
    // The modules the component build fetched (target/lang-toolchains/go-mod),
    // so that CI fetches them once.
    let exe = std::env::current_exe().unwrap();
    let target = exe.ancestors().nth(3).expect("tests run from target/<profile>/deps");
    for dir in ["providers/tfbridge", "providers/testing/tfhttp"] {
        let out = Command::new(&go)
            .current_dir(repo_root().join(dir))
            .args(["test", "./..."])
            .env("GOTOOLCHAIN", "local")
            .env("GOFLAGS", "-buildvcs=false")
            .env("GOMODCACHE", target.join("lang-toolchains/go-mod"))
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", go.display()));
        assert!(
            out.status.success(),
            "`go test ./...` in {dir} failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// The `tfhttp` component with the store on `port` (endpoint and sandbox
/// grant), then `body`.
fn tfhttp_config(port: u16, body: &str) -> String {
    format!(
        r#"
terraform {{
  required_providers {{
    tfhttp = {{ source = "./tfhttp.wasm" }}
  }}
}}

provider "tfhttp" {{
  endpoint = "http://127.0.0.1:{port}"
  sandbox {{
    http {{
      url = "http://127.0.0.1:{port}"
    }}
  }}
}}
{body}
"#
    )
}

/// `moved` across resource types through the bridge: the framework
/// resource's MoveState (resource.ResourceWithMoveState) converts a
/// `tfhttp_legacy_item` into a `tfhttp_item`, with no replacement, and the
/// revision kept in private state carries over.
#[test]
fn moved_across_types_converts_through_the_framework_move_state() {
    let server = ItemServer::start();
    let legacy = "resource \"tfhttp_legacy_item\" \"a\" {\n  name    = \"alpha\"\n  content = \"hello\"\n}\n";
    let w = workdir(&tfhttp_config(server.port, legacy));
    w.cairn(&["apply", "-auto-approve"]).success();
    assert_eq!(w.attributes("tfhttp_legacy_item.a")["id"], "i1");

    let moved = "resource \"tfhttp_item\" \"a\" {\n  name  = \"alpha\"\n  value = \"hello\"\n}\n\n\
                 moved {\n  from = tfhttp_legacy_item.a\n  to   = tfhttp_item.a\n}\n";
    w.write("main.tf", &tfhttp_config(server.port, moved));
    let plan = w.cairn(&["plan"]).success();
    assert!(plan.stdout.contains("# tfhttp_legacy_item.a has moved to tfhttp_item.a"), "{}", plan.all());
    assert!(plan.stdout.contains("Plan: 0 to add, 0 to change, 0 to destroy."), "{}", plan.all());
    w.cairn(&["apply", "-auto-approve"]).success();
    assert_eq!(w.addresses(), ["tfhttp_item.a"]);
    let attrs = w.attributes("tfhttp_item.a");
    assert_eq!((attrs["id"].as_str(), attrs["value"].as_str()), (Some("i1"), Some("hello")), "{attrs:#}");
    assert_eq!((attrs["size"].as_i64(), attrs["revision"].as_i64()), (Some(1), Some(1)), "{attrs:#}");
    assert_eq!(server.puts().len(), 1, "the move wrote to the store");
    assert_eq!(w.cairn(&["plan", "-detailed-exitcode"]).code, 0);

    // The moved object updates in place, with the revision it carried.
    let updated = moved.replace("value = \"hello\"", "value = \"hello again\"");
    w.write("main.tf", &tfhttp_config(server.port, &updated));
    let run = w.cairn(&["apply", "-auto-approve"]).success();
    assert!(run.stdout.contains("Resources: 0 added, 1 changed, 0 destroyed."), "{}", run.all());
    let update = server.puts().pop().unwrap();
    assert_eq!((update.name.as_str(), update.if_match.as_deref()), ("alpha", Some("1")), "{update:?}");
}

/// A move the provider does not take is refused at the `moved` block with
/// the framework's message, and nothing is planned.
#[test]
fn moved_across_types_from_a_type_the_provider_does_not_take_is_refused() {
    let server = ItemServer::start();
    let w = workdir(&tfhttp_config(server.port, "resource \"terraform_data\" \"a\" {\n  input = \"alpha\"\n}\n"));
    w.cairn(&["apply", "-auto-approve"]).success();
    let moved = "resource \"tfhttp_item\" \"a\" {\n  name  = \"alpha\"\n  value = \"hello\"\n}\n\n\
                 moved {\n  from = terraform_data.a\n  to   = tfhttp_item.a\n}\n";
    w.write("main.tf", &tfhttp_config(server.port, moved));
    let plan = w.cairn(&["plan"]).failure();
    assert!(plan.stderr.contains("terraform_data"), "{}", plan.all());
    assert!(plan.stderr.contains("main.tf:"), "the error is at the moved block: {}", plan.all());
    assert!(server.puts().is_empty());
    assert_eq!(w.addresses(), ["terraform_data.a"]);
}

/// `tfhttp_lease` for scope `scope`, its token in tfhttp_item's write-only
/// `secret`.
fn lease_config(port: u16, scope: &str) -> String {
    let lease = format!(
        "ephemeral \"tfhttp_lease\" \"l\" {{\n  scope = \"{scope}\"\n}}\n\n\
         resource \"tfhttp_item\" \"a\" {{\n  name   = \"alpha\"\n  value  = \"hello\"\n  secret = ephemeral.tfhttp_lease.l.token\n}}\n"
    );
    tfhttp_config(port, &lease)
}

/// The store refuses the lease: the framework's error, naming the
/// ephemeral block and reported at the line of the attribute it names
/// (`scope`), as Terraform reports it; nothing is written and no lease is
/// left open.
#[test]
fn an_ephemeral_resource_the_provider_cannot_open_fails_at_its_block_and_attribute() {
    let server = ItemServer::start();
    let w = workdir(&lease_config(server.port, "forbidden"));
    let plan = w.cairn(&["plan"]).failure();
    assert!(plan.stderr.contains("ephemeral.tfhttp_lease.l: Cannot lease a token"), "{}", plan.all());
    assert!(plan.stderr.contains("at attribute .scope"), "{}", plan.all());
    assert!(plan.stderr.contains("no leases for that scope"), "{}", plan.all());
    let config = std::fs::read_to_string(w.path().join("main.tf")).unwrap();
    let scope = config.lines().position(|l| l.contains("scope = \"forbidden\"")).expect("the scope line") + 1;
    assert!(plan.stderr.contains(&format!("main.tf:{scope}:11: ")), "at `scope`, line {scope}: {}", plan.all());
    assert!(server.lease_calls().is_empty(), "{:?}", server.lease_calls());
    assert!(server.puts().is_empty());
}

/// A provider that defers opening an ephemeral resource although cairn
/// (like Terraform) told it not to: refused by the bridge, at the block.
#[test]
fn an_ephemeral_resource_the_provider_defers_is_refused() {
    let server = ItemServer::start();
    let w = workdir(&lease_config(server.port, "later"));
    let plan = w.cairn(&["plan"]).failure();
    assert!(plan.stderr.contains("ephemeral.tfhttp_lease.l:"), "{}", plan.all());
    assert!(
        plan.stderr.contains("the provider deferred the opening of the ephemeral resource (reason ABSENT_PREREQ)"),
        "{}",
        plan.all()
    );
    assert!(plan.stderr.contains("cairn has no deferred actions"), "{}", plan.all());
    assert!(server.puts().is_empty());
}
