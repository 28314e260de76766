//! The `rabbitmq` provider (`providers/rabbitmq`, written in Go with
//! `providers/sdk-go`), built from source and driven through the real
//! binary against a real RabbitMQ: Debian's `rabbitmq-server` with its
//! management plugin, started once per test run on free loopback ports
//! (`cairn_e2e::rabbitmq`). Each test works in virtual hosts and users of
//! its own.
//!
//! The provider reaches the server only through the operator's `http`
//! grant, which holds the credentials: the tests look at the server to see
//! what cairn did, change it behind cairn's back to make drift, and check
//! that the credentials never reach the provider (it logs every request's
//! headers as it hands them to the host, and every answer's as it gets
//! them back).

use std::net::TcpListener;
use std::process::Command;

use cairn_e2e::languages::{Lang, lang_component, toolchain};
use cairn_e2e::rabbitmq::{ADMIN_PASSWORD, ADMIN_USER, RabbitMq, basic_auth, segment};
use cairn_e2e::{Workdir, repo_root};
use serde_json::json;

/// `terraform` and `provider "rabbitmq"` blocks for the API at `endpoint`,
/// granted with `headers` (an HCL object, or nothing).
fn provider_block(endpoint: &str, headers: &str) -> String {
    format!(
        r#"
terraform {{
  required_providers {{
    rabbitmq = {{ source = "./rabbitmq.wasm" }}
  }}
}}

provider "rabbitmq" {{
  endpoint = "{endpoint}"
  sandbox {{
    http {{
      url     = "{endpoint}"
      {headers}
    }}
  }}
}}
"#
    )
}

/// The grant's headers carrying `user`'s credentials, as an operator
/// writes them.
fn credentials(user: &str, password: &str) -> String {
    format!("headers = {{ Authorization = \"Basic ${{base64encode(\"{user}:{password}\")}}\" }}")
}

/// A working directory with the provider, talking to the test server as
/// its administrator.
fn workdir(server: &RabbitMq, resources: &str) -> Workdir {
    let w = Workdir::new();
    std::fs::copy(lang_component(Lang::Go, "rabbitmq"), w.path().join("rabbitmq.wasm")).unwrap();
    configure(&w, server, resources);
    w
}

/// Replaces the configuration: the provider as [`workdir`] has it, then
/// `resources`.
fn configure(w: &Workdir, server: &RabbitMq, resources: &str) {
    let endpoint = server.endpoint();
    w.write("main.tf", &(provider_block(&endpoint, &credentials(ADMIN_USER, ADMIN_PASSWORD)) + resources));
}

/// What the lifecycle test changes between runs.
struct Knobs {
    description: &'static str,
    tags: &'static str,
    max_length: u32,
    priority: u32,
}

/// A virtual host with a user allowed in it, an exchange, a queue bound to
/// it and a policy: every resource type, each (but the user) in the
/// virtual host by reference, so that cairn orders them.
fn messaging(vhost: &str, user: &str, password: &str, k: &Knobs) -> String {
    let Knobs { description, tags, max_length, priority } = k;
    format!(
        r#"
resource "rabbitmq_vhost" "v" {{
  name        = "{vhost}"
  description = "{description}"
}}

resource "rabbitmq_user" "app" {{
  name     = "{user}"
  password = "{password}"
  tags     = {tags}
}}

resource "rabbitmq_permissions" "app" {{
  user  = rabbitmq_user.app.name
  vhost = rabbitmq_vhost.v.name
  permissions {{
    configure = "^orders"
    write     = ".*"
    read      = ".*"
  }}
}}

resource "rabbitmq_exchange" "events" {{
  name  = "events"
  vhost = rabbitmq_vhost.v.name
  settings {{
    type    = "topic"
    durable = true
  }}
}}

resource "rabbitmq_queue" "orders" {{
  name  = "orders"
  vhost = rabbitmq_vhost.v.name
  settings {{
    durable   = true
    arguments = {{ "x-max-length" = "{max_length}" }}
  }}
}}

resource "rabbitmq_binding" "orders" {{
  vhost            = rabbitmq_vhost.v.name
  source           = rabbitmq_exchange.events.name
  destination      = rabbitmq_queue.orders.name
  destination_type = "queue"
  routing_key      = "orders.#"

  # A new queue has none of the old one's bindings.
  lifecycle {{
    replace_triggered_by = [rabbitmq_queue.orders]
  }}
}}

resource "rabbitmq_policy" "limit" {{
  name  = "limit"
  vhost = rabbitmq_vhost.v.name
  policy {{
    pattern    = "^orders$"
    priority   = {priority}
    apply_to   = "queues"
    definition = {{ "max-length-bytes" = "1048576" }}
  }}
}}
"#
    )
}

/// The bindings from `events` to `queue` in `vhost`, as `(routing key,
/// properties key)`.
fn bindings(server: &RabbitMq, vhost: &str, queue: &str) -> Vec<(String, String)> {
    let path = format!("/api/bindings/{}/e/events/q/{queue}", segment(vhost));
    let list = server.get(&path).unwrap_or_else(|| panic!("{path}: no such exchange or queue"));
    list.as_array()
        .unwrap()
        .iter()
        .map(|b| (b["routing_key"].as_str().unwrap().to_string(), b["properties_key"].as_str().unwrap().to_string()))
        .collect()
}

#[test]
fn rabbitmq_objects_live_through_plan_apply_update_replace_drift_import_and_destroy() {
    let server = RabbitMq::shared();
    let vhost = server.name("lifecycle");
    let user = server.name("app");
    let password = "first-password";
    let v = segment(&vhost);
    let mut knobs = Knobs { description: "orders", tags: r#"["management"]"#, max_length: 10, priority: 1 };
    let w = workdir(server, &messaging(&vhost, &user, password, &knobs));

    w.cairn(&["validate"]).success();
    let plan = w.cairn(&["plan"]).success();
    assert!(plan.stdout.contains("Plan: 7 to add, 0 to change, 0 to destroy."), "{}", plan.all());
    assert!(plan.stdout.contains("password = (sensitive value)"), "{}", plan.all());
    assert!(!plan.stdout.contains(password), "{}", plan.all());

    // One apply makes all seven in dependency order: the virtual host
    // before what lives in it, the exchange and the queue before the
    // binding between them.
    let run = w.cairn(&["apply", "-auto-approve"]).success();
    assert!(run.stdout.contains("Apply complete! Resources: 7 added, 0 changed, 0 destroyed."), "{}", run.all());
    assert_eq!(server.get(&format!("/api/vhosts/{v}")).unwrap()["description"], "orders");
    assert_eq!(server.get(&format!("/api/users/{}", segment(&user))).unwrap()["tags"], json!(["management"]));
    let perms = server.get(&format!("/api/permissions/{v}/{}", segment(&user))).unwrap();
    assert_eq!((&perms["configure"], &perms["write"], &perms["read"]), (&json!("^orders"), &json!(".*"), &json!(".*")));
    let exchange = server.get(&format!("/api/exchanges/{v}/events")).unwrap();
    assert_eq!((&exchange["type"], &exchange["durable"]), (&json!("topic"), &json!(true)));
    // The argument RabbitMQ takes only as a number went as one.
    assert_eq!(server.get(&format!("/api/queues/{v}/orders")).unwrap()["arguments"], json!({"x-max-length": 10}));
    assert_eq!(bindings(server, &vhost, "orders"), [("orders.#".to_string(), "orders.%23".to_string())]);
    let policy = server.get(&format!("/api/policies/{v}/limit")).unwrap();
    assert_eq!((&policy["priority"], &policy["definition"]), (&json!(1), &json!({"max-length-bytes": 1048576})));
    // The user can log in with the configured password, which the state
    // keeps only as a sensitive value.
    assert_eq!(server.request_as((&user, password), "GET", "/api/whoami", None).status, 200);
    assert_eq!(w.attributes("rabbitmq_queue.orders")["id"], format!("orders@{vhost}"));
    assert_eq!(w.attributes("rabbitmq_binding.orders")["id"], format!("{vhost}/events/orders/queue/orders.%23"));

    let again = w.cairn(&["plan"]).success();
    assert!(again.stdout.contains("No changes."), "{}", again.all());

    // In place: the virtual host's description, the user's tags and the
    // policy's priority.
    knobs = Knobs { description: "orders and audit", tags: r#"["management", "monitoring"]"#, priority: 2, ..knobs };
    configure(&w, server, &messaging(&vhost, &user, password, &knobs));
    let plan = w.cairn(&["plan"]).success();
    assert!(plan.stdout.contains("Plan: 0 to add, 3 to change, 0 to destroy."), "{}", plan.all());
    assert!(plan.stdout.contains("# rabbitmq_user.app will be updated in-place"), "{}", plan.all());
    w.cairn(&["apply", "-auto-approve"]).success();
    assert_eq!(server.get(&format!("/api/vhosts/{v}")).unwrap()["description"], "orders and audit");
    assert_eq!(
        server.get(&format!("/api/users/{}", segment(&user))).unwrap()["tags"],
        json!(["management", "monitoring"])
    );
    assert_eq!(server.get(&format!("/api/policies/{v}/limit")).unwrap()["priority"], 2);

    // A queue cannot change: a new limit replaces it, and its binding with
    // it (replace_triggered_by), since the old queue's go with it.
    knobs.max_length = 20;
    configure(&w, server, &messaging(&vhost, &user, password, &knobs));
    let plan = w.cairn(&["plan"]).success();
    assert!(plan.stdout.contains("# rabbitmq_queue.orders must be replaced"), "{}", plan.all());
    assert!(plan.stdout.contains("# forces replacement"), "{}", plan.all());
    assert!(plan.stdout.contains("Plan: 2 to add, 0 to change, 2 to destroy."), "{}", plan.all());
    w.cairn(&["apply", "-auto-approve"]).success();
    assert_eq!(server.get(&format!("/api/queues/{v}/orders")).unwrap()["arguments"], json!({"x-max-length": 20}));
    assert_eq!(bindings(server, &vhost, "orders").len(), 1);
    assert!(w.cairn(&["plan"]).success().stdout.contains("No changes."));

    // Drift: behind cairn's back the user's password and the virtual
    // host's description change, and the policy goes. The plan puts all
    // three back.
    let user_path = format!("/api/users/{}", segment(&user));
    let changed =
        server.request("PUT", &user_path, Some(&json!({"password": "by-hand", "tags": "management,monitoring"})));
    assert_eq!(changed.status, 204, "{changed:?}");
    server.request("PUT", &format!("/api/vhosts/{v}"), Some(&json!({"description": "by hand"})));
    assert_eq!(server.request("DELETE", &format!("/api/policies/{v}/limit"), None).status, 204);
    let plan = w.cairn(&["plan"]).success();
    assert!(plan.stdout.contains("# rabbitmq_user.app will be updated in-place"), "{}", plan.all());
    assert!(plan.stdout.contains("# rabbitmq_vhost.v will be updated in-place"), "{}", plan.all());
    assert!(plan.stdout.contains("# rabbitmq_policy.limit will be created"), "{}", plan.all());
    assert!(plan.stdout.contains("Plan: 1 to add, 2 to change, 0 to destroy."), "{}", plan.all());
    w.cairn(&["apply", "-auto-approve"]).success();
    assert_eq!(server.request_as((&user, password), "GET", "/api/whoami", None).status, 200);
    assert_eq!(server.get(&format!("/api/vhosts/{v}")).unwrap()["description"], "orders and audit");
    assert!(server.get(&format!("/api/policies/{v}/limit")).is_some());
    assert!(w.cairn(&["plan"]).success().stdout.contains("No changes."));

    // Import: a queue and a binding made by hand join the configuration,
    // the queue through an import block, the binding through `cairn
    // import` with the community provider's id.
    let made = server.request("PUT", &format!("/api/queues/{v}/audit"), Some(&json!({"durable": true})));
    assert_eq!(made.status, 201, "{made:?}");
    let bound =
        server.request("POST", &format!("/api/bindings/{v}/e/events/q/audit"), Some(&json!({"routing_key": "audit"})));
    assert_eq!(bound.status, 201, "{bound:?}");
    let adopted = format!(
        r#"
resource "rabbitmq_queue" "audit" {{
  name  = "audit"
  vhost = rabbitmq_vhost.v.name
  settings {{
    durable = true
  }}
}}

import {{
  to = rabbitmq_queue.audit
  id = "audit@{vhost}"
}}

resource "rabbitmq_binding" "audit" {{
  vhost            = rabbitmq_vhost.v.name
  source           = rabbitmq_exchange.events.name
  destination      = rabbitmq_queue.audit.name
  destination_type = "queue"
  routing_key      = "audit"
}}
"#
    );
    configure(&w, server, &(messaging(&vhost, &user, password, &knobs) + &adopted));
    let binding_id = format!("{vhost}/events/audit/queue/audit");
    let imported = w.cairn(&["import", "rabbitmq_binding.audit", &binding_id]).success();
    assert!(imported.stdout.contains("Import successful!"), "{}", imported.all());
    let plan = w.cairn(&["plan"]).success();
    assert!(plan.stdout.contains("# rabbitmq_queue.audit will be imported"), "{}", plan.all());
    assert!(plan.stdout.contains("Plan: 1 to import, 0 to add, 0 to change, 0 to destroy."), "{}", plan.all());
    w.cairn(&["apply", "-auto-approve"]).success();
    assert_eq!(w.attributes("rabbitmq_binding.audit")["id"], binding_id);
    assert!(w.cairn(&["plan"]).success().stdout.contains("No changes."));

    // Destroy; a queue someone already deleted is gone either way, and its
    // delete (not refreshed away first) is no error.
    assert_eq!(server.request("DELETE", &format!("/api/queues/{v}/audit"), None).status, 204);
    let run = w.cairn(&["destroy", "-auto-approve", "-refresh=false"]).success();
    assert!(run.stdout.contains("Destroy complete! Resources: 9 destroyed."), "{}", run.all());
    assert!(server.get(&format!("/api/vhosts/{v}")).is_none());
    assert!(server.get(&user_path).is_none());
    assert!(w.addresses().is_empty());
}

#[test]
fn the_provider_never_sees_the_credentials_the_server_checks() {
    let server = RabbitMq::shared();
    // An administrator of the test's own, with a password nothing else
    // uses, so that it can be looked for everywhere.
    let user = server.name("ops");
    let password = format!("{user}-Pa55word");
    let token = basic_auth(&user, &password);
    let user_path = format!("/api/users/{}", segment(&user));
    server.request("PUT", &user_path, Some(&json!({"password": password, "tags": "administrator"})));
    let all = json!({"configure": ".*", "write": ".*", "read": ".*"});
    server.request("PUT", &format!("/api/permissions/%2F/{}", segment(&user)), Some(&all));

    let exchange = format!("audit-{user}");
    let resources = format!(
        "resource \"rabbitmq_exchange\" \"audit\" {{\n  name = \"{exchange}\"\n  settings {{\n    type = \"fanout\"\n  }}\n}}\n"
    );
    let w = workdir(server, "");
    let endpoint = server.endpoint();
    w.write("main.tf", &(provider_block(&endpoint, &credentials(&user, &password)) + &resources));
    let log = [("CAIRN_LOG", "cairn::provider=debug")];
    let run = w.cairn_env(&["apply", "-auto-approve"], &log).success();

    // The server saw them: it records who declared the exchange.
    let declared = server.get(&format!("/api/exchanges/%2F/{}", segment(&exchange))).unwrap();
    assert_eq!(declared["user_who_performed_action"], user.as_str());

    // The provider did not: every request it sent carried only its own
    // headers, no answer brought them back, and nothing it reported or
    // stored holds them.
    let sent: Vec<&str> = run.stderr.lines().filter(|l| l.contains("request headers the provider sends")).collect();
    let put = format!(
        "PUT /api/exchanges/%2F/{}: request headers the provider sends: [Content-Type: application/json]",
        segment(&exchange)
    );
    assert!(sent.iter().any(|l| l.contains(&put)), "{}", run.all());
    assert!(sent.iter().all(|l| !l.to_ascii_lowercase().contains("authorization")), "{}", run.all());
    assert!(run.stderr.contains("response headers the provider receives"), "{}", run.all());
    for (what, text) in [("stdout", &run.stdout), ("stderr", &run.stderr), ("state", &w.state_text())] {
        assert!(!text.contains(&password) && !text.contains(&token), "the credentials are in the {what}:\n{text}");
    }

    // And the server checks them: without the grant's header every
    // request is refused, and the error says where credentials go.
    w.write("main.tf", &(provider_block(&endpoint, "") + &resources));
    let refused = w.cairn(&["plan"]).failure();
    assert!(refused.stderr.contains("as unauthorised (401)"), "{}", refused.all());
    assert!(refused.stderr.contains("headers = { Authorization = "), "{}", refused.all());
}

#[test]
fn a_server_that_is_down_is_a_clear_error_and_changes_no_state() {
    let server = RabbitMq::shared();
    let vhost = server.name("down");
    let one = format!("resource \"rabbitmq_vhost\" \"a\" {{\n  name = \"{vhost}\"\n}}\n");
    let w = workdir(server, &one);
    w.cairn(&["apply", "-auto-approve"]).success();
    let before = w.state_text();

    // Nothing listens on a port the kernel just handed out and took back.
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let down = format!("http://127.0.0.1:{port}");
    let two = format!("{one}resource \"rabbitmq_vhost\" \"b\" {{\n  name = \"{vhost}-b\"\n}}\n");
    let cannot_reach = |args: &[&str]| {
        let run = w.cairn(args).failure();
        assert!(run.stderr.contains(&format!("cannot reach RabbitMQ at {down}")), "{args:?}: {}", run.all());
        assert!(run.stderr.contains("Is the server running"), "{args:?}: {}", run.all());
    };
    let down_config = provider_block(&down, &credentials(ADMIN_USER, ADMIN_PASSWORD)) + &two;
    w.write("main.tf", &down_config);
    for args in [&["plan"][..], &["apply", "-auto-approve"]] {
        cannot_reach(args);
        assert_eq!(w.state_text(), before, "{args:?} changed the state");
    }
    assert!(server.get(&format!("/api/vhosts/{}", segment(&vhost))).is_some());

    // Once it answers again, the plan picks up where it was.
    configure(&w, server, &two);
    let plan = w.cairn(&["plan"]).success();
    assert!(plan.stdout.contains("Plan: 1 to add, 0 to change, 0 to destroy."), "{}", plan.all());

    // A destroy that cannot reach it keeps the object, as it was, marked
    // for the next destroy to finish (an object is never forgotten while
    // it may still exist).
    let attributes = w.attributes("rabbitmq_vhost.a");
    w.write("main.tf", &down_config);
    cannot_reach(&["destroy", "-auto-approve"]);
    assert_eq!(w.addresses(), ["rabbitmq_vhost.a"]);
    assert_eq!(w.attributes("rabbitmq_vhost.a"), attributes);
    configure(&w, server, &two);
    w.cairn(&["destroy", "-auto-approve"]).success();
    assert!(server.get(&format!("/api/vhosts/{}", segment(&vhost))).is_none());
    assert!(w.addresses().is_empty());
}

#[test]
fn rabbitmq_configuration_mistakes_are_named_where_they_are() {
    let server = RabbitMq::shared();
    let vhost = server.name("mistakes");
    let w = workdir(
        server,
        &format!(
            r#"
resource "rabbitmq_binding" "b" {{
  vhost            = "{vhost}"
  source           = "events"
  destination      = "orders"
  destination_type = "topic"
}}

resource "rabbitmq_queue" "q" {{
  name  = "orders"
  vhost = "{vhost}"
  settings {{
    arguments = {{ "x-max-length" = "ten" }}
  }}
}}
"#
        ),
    );
    let run = w.cairn(&["validate"]).failure();
    assert!(run.stderr.contains(r#"destination_type must be "queue" or "exchange", not "topic""#), "{}", run.all());
    assert!(run.stderr.contains(r#"Argument "x-max-length" must be a whole number, not "ten""#), "{}", run.all());

    // Credentials in the provider block are refused with where they go.
    let endpoint = server.endpoint();
    w.write(
        "main.tf",
        &provider_block(&endpoint, "")
            .replace("sandbox {", "username = \"guest\"\n  password = \"guest\"\n  sandbox {"),
    );
    let run = w.cairn(&["validate"]).failure();
    assert!(run.stderr.contains("The rabbitmq provider takes no username or password"), "{}", run.all());
    assert!(run.stderr.contains("sandbox { http {"), "{}", run.all());
}

#[test]
fn the_rabbitmq_example_applies_and_destroys() {
    let server = RabbitMq::shared();
    let w = Workdir::example("rabbitmq");
    std::fs::copy(lang_component(Lang::Go, "rabbitmq"), w.path().join("rabbitmq.wasm")).unwrap();
    // The example's RabbitMQ is the usual one on port 15672; the test's is
    // on a port of its own.
    let config = w.read("main.tf");
    assert_eq!(config.matches("\"http://127.0.0.1:15672\"").count(), 2, "{config}");
    w.write("main.tf", &config.replace("http://127.0.0.1:15672", &server.endpoint()));
    let run = w.cairn(&["apply", "-auto-approve"]).success();
    assert!(run.stdout.contains("Apply complete! Resources: 7 added, 0 changed, 0 destroyed."), "{}", run.all());
    assert!(
        run.stdout.contains("binding_id = \"orders/events/orders.created/queue/orders.created.%23\""),
        "{}",
        run.all()
    );
    let queue = server.get("/api/queues/orders/orders.created").unwrap();
    assert_eq!(queue["arguments"], json!({"x-queue-type": "classic", "x-max-length": 100000}));
    assert!(w.cairn(&["plan"]).success().stdout.contains("No changes."));
    w.cairn(&["destroy", "-auto-approve"]).success();
    assert!(server.get("/api/vhosts/orders").is_none());
    assert!(server.get("/api/users/orders-service").is_none());
}

/// The provider's own tests (`go test ./...` in providers/rabbitmq: the
/// plan's defaults and replacements, typed arguments, password hashes,
/// ids, a delete answered 404), run natively, and `go vet`.
#[test]
fn rabbitmq_provider_unit_tests_pass() {
    let go = toolchain(Lang::Go);
    for args in [["vet", "./..."], ["test", "./..."]] {
        let out = Command::new(&go)
            .current_dir(repo_root().join("providers/rabbitmq"))
            .args(args)
            .env("GOTOOLCHAIN", "local")
            .env("GOPROXY", "off")
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", go.display()));
        assert!(
            out.status.success(),
            "`go {}` in providers/rabbitmq failed:\n{}{}",
            args.join(" "),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
