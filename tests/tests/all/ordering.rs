//! The order of operations of Terraform's notes on destroying (and the
//! dependent replacements of Pulumi's resource registration; `docs/design.md`, "Sources"),
//! end to end: apply a configuration of the `recorder` test provider,
//! change it, apply again with `-json`, and read the order off the event
//! stream (checked against the provider's own log of what it was asked).

use cairn_e2e::{Run, Workdir, recorder_workdir as workdir};
use serde_json::Value;

/// Applies `before`, then `after` with `args`, and returns the second
/// apply's events.
fn change(before: &str, after: &str, args: &[&str]) -> (Workdir, Events) {
    let w = workdir(before);
    w.cairn(&["apply", "-auto-approve"]).success();
    w.configure_recorder(after);
    let mut full = vec!["apply", "-auto-approve", "-json"];
    full.extend_from_slice(args);
    let run = w.cairn(&full).success();
    (w, Events::of(&run))
}

/// A `-json` stream with questions about its order.
struct Events {
    events: Vec<Value>,
    text: String,
}

impl Events {
    fn of(run: &Run) -> Events {
        Events { events: run.events(), text: run.all() }
    }

    fn position(&self, kind: &str, node: &str) -> usize {
        let (address, action) = node.rsplit_once(' ').unwrap();
        self.events
            .iter()
            .position(|e| e["type"] == kind && e["address"] == address && e["action"] == action)
            .unwrap_or_else(|| panic!("no {kind} of {node}:\n{}", self.text))
    }

    /// Asserts that each node (`"<address> <action>"`) finished before the next started.
    fn order(&self, nodes: &[&str]) {
        for w in nodes.windows(2) {
            let (finish, start) = (self.position("node_finish", w[0]), self.position("node_start", w[1]));
            assert!(finish < start, "{} must finish before {} starts:\n{}", w[0], w[1], self.operations().join("\n"));
        }
    }

    /// The node starts, as `"<address> <action>[ deposed]"`, in order.
    fn operations(&self) -> Vec<String> {
        self.events
            .iter()
            .filter(|e| e["type"] == "node_start")
            .map(|e| {
                let deposed = if e["deposed"] == true { " deposed" } else { "" };
                format!("{} {}{deposed}", e["address"].as_str().unwrap(), e["action"].as_str().unwrap())
            })
            .collect()
    }

    fn never(&self, node: &str) {
        let (address, action) = node.rsplit_once(' ').unwrap();
        assert!(
            !self.events.iter().any(|e| e["type"] == "node_start" && e["address"] == address && e["action"] == action),
            "{node} must not happen:\n{}",
            self.operations().join("\n")
        );
    }
}

/// The provider's log: `(op, name)` in the order it did them.
fn ops(w: &Workdir) -> Vec<(String, String)> {
    w.read("log/ops.log")
        .lines()
        .map(|l| {
            let mut f = l.split(' ');
            (f.next().unwrap().to_string(), f.next().unwrap().to_string())
        })
        .collect()
}

/// `a` and `b`, `b` referring to `a` in `b_attr`, `a_lifecycle` and
/// `b_lifecycle` inside their blocks.
fn pair(b_attr: &str, a_lifecycle: &str, b_lifecycle: &str) -> String {
    format!(
        r#"
resource "recorder_thing" "a" {{
  name   = "a"
  keeper = var.ka
  {a_lifecycle}
}}

resource "recorder_thing" "b" {{
  name    = "b"
  {b_attr} = recorder_thing.a.id
  {b_lifecycle}
}}
"#
    )
}

const CBD: &str = "lifecycle {\n    create_before_destroy = true\n  }";

#[test]
fn replace_all_destroys_dependents_first_and_creates_dependencies_first() {
    let config = pair("keeper", "", "");
    let (w, events) = change(&config, &config, &["-var", "ka=2"]);
    events.order(&[
        "recorder_thing.b delete",
        "recorder_thing.a delete",
        "recorder_thing.a create",
        "recorder_thing.b create",
    ]);
    let names: Vec<String> = ops(&w).iter().skip(2).map(|(op, n)| format!("{op} {n}")).collect();
    assert_eq!(names, ["delete b", "delete a", "create a", "create b"]);
}

#[test]
fn replacing_one_updates_its_dependent_after_the_replacement_exists() {
    let config = pair("value", "", "");
    let (w, events) = change(&config, &config, &["-var", "ka=2"]);
    events.order(&["recorder_thing.a delete", "recorder_thing.a create", "recorder_thing.b update"]);
    events.never("recorder_thing.b delete");
    let new_a = w.attributes("recorder_thing.a")["id"].clone();
    assert_eq!(w.attributes("recorder_thing.b")["value"], new_a);
}

#[test]
fn only_dependents_that_are_really_replaced_are_destroyed_first() {
    // b's keeper follows a (so b is replaced), c's value does (so c is updated).
    let config = format!(
        "{}\nresource \"recorder_thing\" \"c\" {{\n  name  = \"c\"\n  value = recorder_thing.a.id\n}}\n",
        pair("keeper", "", "")
    );
    let (_w, events) = change(&config, &config, &["-var", "ka=2"]);
    events.order(&[
        "recorder_thing.b delete",
        "recorder_thing.a delete",
        "recorder_thing.a create",
        "recorder_thing.b create",
    ]);
    events.order(&["recorder_thing.a create", "recorder_thing.c update"]);
    events.never("recorder_thing.c delete");
}

#[test]
fn destroying_a_dependent_comes_before_updating_its_dependency() {
    let before = pair("value", "", "");
    let after = "resource \"recorder_thing\" \"a\" {\n  name   = \"a\"\n  keeper = var.ka\n  value  = \"new\"\n}\n";
    let (_w, events) = change(&before, after, &[]);
    events.order(&["recorder_thing.b delete", "recorder_thing.a update"]);
}

#[test]
fn create_before_destroy_on_the_dependency_of_a_replace_all() {
    let config = pair("keeper", CBD, "");
    let (w, events) = change(&config, &config, &["-var", "ka=2"]);
    events.order(&["recorder_thing.a create", "recorder_thing.b create", "recorder_thing.a delete"]);
    events.order(&["recorder_thing.b delete", "recorder_thing.b create"]);
    events.order(&["recorder_thing.b delete", "recorder_thing.a delete"]);
    assert!(events.operations().contains(&"recorder_thing.a delete deposed".to_string()), "{}", events.text);
    let state = w.state().unwrap();
    assert!(state.to_string().contains("\"create_before_destroy\":true"), "{state:#}");
    assert!(!state.to_string().contains("\"deposed\""), "no deposed object is left: {state:#}");
}

#[test]
fn create_before_destroy_on_the_dependency_updates_the_dependent_before_the_old_object_goes() {
    let config = pair("value", CBD, "");
    let (w, events) = change(&config, &config, &["-var", "ka=2"]);
    events.order(&["recorder_thing.a create", "recorder_thing.b update", "recorder_thing.a delete"]);
    // The provider saw the same: the old a went last.
    let last = ops(&w).last().cloned().unwrap();
    assert_eq!(last, ("delete".to_string(), "a".to_string()));
}

#[test]
fn create_before_destroy_is_inherited_by_what_it_depends_on() {
    let config = pair("keeper", "", CBD);
    let (_w, events) = change(&config, &config, &["-var", "ka=2"]);
    events.order(&[
        "recorder_thing.a create",
        "recorder_thing.b create",
        "recorder_thing.b delete",
        "recorder_thing.a delete",
    ]);
    let ops = events.operations();
    assert!(ops.contains(&"recorder_thing.a delete deposed".to_string()), "a inherited it:\n{}", ops.join("\n"));
}

#[test]
fn removing_a_create_before_destroy_dependency_updates_the_dependent_first() {
    let before = pair("value", CBD, "");
    let after = "resource \"recorder_thing\" \"b\" {\n  name  = \"b\"\n  value = \"standalone\"\n}\n";
    let (_w, events) = change(&before, after, &[]);
    events.order(&["recorder_thing.b update", "recorder_thing.a delete"]);
}

#[test]
fn apply_graph_shows_the_create_before_destroy_order() {
    let w = workdir(&pair("keeper", CBD, ""));
    w.cairn(&["apply", "-auto-approve"]).success();
    let dot = w.cairn(&["graph", "-type=apply", "-var", "ka=2"]).success().stdout;
    assert!(dot.contains("[label=\"recorder_thing.a create\"]"), "{dot}");
    assert!(dot.contains("\"recorder_thing.a\" -> \"recorder_thing.b\""), "{dot}");
    let deposed =
        dot.lines().find(|l| l.contains("(destroy deposed") && l.contains("label")).unwrap_or_else(|| panic!("{dot}"));
    let node = deposed.trim().split('"').nth(1).unwrap();
    assert!(dot.contains(&format!("\"recorder_thing.b\" -> \"{node}\"")), "{dot}");
}

#[test]
fn the_json_stream_has_a_start_a_summary_and_every_node() {
    let w = workdir(&pair("value", "", ""));
    let run = w.cairn(&["apply", "-auto-approve", "-json"]).success();
    let events = run.events();
    // Terraform's machine-readable UI: its version line first, and every
    // line in its envelope.
    assert_eq!((events[0]["type"].as_str(), events[0]["ui"].as_str()), (Some("version"), Some("1.2")), "{}", run.all());
    assert!(events.iter().all(|e| e["@level"].is_string() && e["@message"].is_string() && e["@timestamp"].is_string()));
    assert_eq!(events[1]["type"], "run_start", "{}", run.all());
    assert_eq!(events[1]["command"], "apply");
    let last = events.last().unwrap();
    assert_eq!(
        (last["type"].as_str(), last["outcome"].as_str(), last["added"].as_u64()),
        (Some("summary"), Some("success"), Some(2))
    );
    let planned: Vec<&Value> = events.iter().filter(|e| e["type"] == "planned_change").collect();
    assert_eq!(planned.len(), 2, "{}", run.all());
    assert_eq!(planned[0]["change"]["action"], "create", "Terraform's change beside cairn's fields");
    let complete = events.iter().find(|e| e["type"] == "apply_complete").unwrap();
    assert!(complete["hook"]["resource"]["addr"].as_str().unwrap().starts_with("recorder_thing."), "{complete}");
    let summaries: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "change_summary")
        .map(|e| e["changes"]["operation"].as_str().unwrap())
        .collect();
    assert_eq!(summaries, ["plan", "apply"]);
    let finish = events.iter().find(|e| e["type"] == "node_finish" && e["address"] == "recorder_thing.b").unwrap();
    assert_eq!(finish["action"], "create");
    assert_eq!(finish["outcome"], "done");
    assert_eq!(finish["deposed"], false);
    assert!(finish["duration_ms"].is_u64());
    assert!(finish["id"].as_str().unwrap().starts_with("b-"));
    // No human text in the stream: every line is an event (`events`
    // parses each), the human words only as Terraform's `@message`.
    assert!(run.stdout.lines().all(|l| l.starts_with('{')), "{}", run.all());

    let plan = w.cairn(&["plan", "-json"]).success();
    let last = plan.events().last().cloned().unwrap();
    assert_eq!(last["outcome"], "no_changes", "{}", plan.all());
    // Without -auto-approve there is no one to ask.
    let refused = w.cairn(&["destroy", "-json"]).failure();
    assert!(
        refused
            .events()
            .iter()
            .any(|e| e["type"] == "diagnostic" && e["summary"].as_str().unwrap().contains("-auto-approve")),
        "{}",
        refused.all()
    );
}

/// The most node operations running at once, read off the event stream.
fn most_at_once(events: &Events) -> usize {
    let (mut now, mut most) = (0usize, 0usize);
    for e in &events.events {
        if e["type"] == "node_start" {
            now += 1;
            most = most.max(now);
        } else if e["type"] == "node_finish" && e["outcome"] != "skipped" {
            now -= 1;
        }
    }
    most
}

#[test]
fn a_provider_s_max_concurrency_bounds_its_operations() {
    let things: String = (0..4)
        .map(|i| format!("resource \"recorder_thing\" \"t{i}\" {{\n  name = \"t{i}\"\n  sleep_ms = 20\n}}\n"))
        .collect();
    let w = workdir(&things);
    let limited = w.read("main.tf").replace("  sandbox {", "  sandbox {\n    max_concurrency = 1");
    w.write("main.tf", &limited);
    let run = w.cairn(&["apply", "-auto-approve", "-json", "-parallelism=4"]).success();
    let events = Events::of(&run);
    assert_eq!(events.operations().len(), 4, "{}", events.text);
    assert_eq!(most_at_once(&events), 1, "{}", events.operations().join("\n"));
    // The provider's configuration is unchanged by it.
    let plan = w.cairn(&["plan", "-detailed-exitcode"]);
    assert_eq!(plan.code, 0, "{}", plan.all());
}
