//! Golden files for the human plan: each folder of `tests/golden/plans/`
//! is a configuration of `terraform_data` (built into both tools), the
//! commands to run on it (`steps`: `apply ARGS` and `config FILE` lines,
//! then the `plan ARGS` shown), and in `expected.txt` what Terraform
//! 1.11.4 prints for the last one, made by `tests/golden/plans/make.sh`.
//! cairn must print the same text: nested values over several lines with
//! `=` aligned, `-> null` on destroy, identifying attributes shown, aligned
//! outputs, `Refreshing state...`, the legend and the note about `-out`,
//! JSON strings as `jsonencode(...)`, and the `(because ...)` line under
//! each object the configuration no longer has.
//!
//! Both outputs are normalized alike: object ids (random) become `<id>`,
//! the tool's name `cairn`, and the `Refreshing state...` lines sorted.

use std::path::PathBuf;

use cairn_e2e::Workdir;

fn cases() -> Vec<PathBuf> {
    cairn_e2e::golden_cases("plans")
}

/// Whether `word` is an id as `terraform_data` makes them: a UUID.
fn is_id(word: &str) -> bool {
    let groups: Vec<&str> = word.split('-').collect();
    groups.iter().map(|g| g.len()).eq([8, 4, 4, 4, 12])
        && groups.iter().all(|g| g.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The output with its ids replaced by `<id>` and its refresh lines sorted,
/// as `make.sh` writes Terraform's.
fn normalize(out: &str) -> String {
    let mut text = String::new();
    let mut rest = out;
    while !rest.is_empty() {
        let len = rest.find(|c: char| c.is_ascii_hexdigit()).unwrap_or(rest.len());
        text.push_str(&rest[..len]);
        rest = &rest[len..];
        if rest.get(..36).is_some_and(is_id) {
            text.push_str("<id>");
            rest = &rest[36..];
        } else if let Some(c) = rest.chars().next() {
            text.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    let (mut refreshing, others): (Vec<&str>, Vec<&str>) =
        text.split_inclusive('\n').partition(|l| l.contains(": Refreshing state..."));
    refreshing.sort();
    refreshing.into_iter().chain(others).collect()
}

#[test]
fn plans_read_as_terraform_prints_them() {
    let cases = cases();
    assert!(cases.len() >= 7, "the plan cases: {cases:?}");
    let mut failures = Vec::new();
    for case in &cases {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let w = Workdir::new();
        w.write("main.tf", &std::fs::read_to_string(case.join("main.tf")).unwrap());
        let steps = std::fs::read_to_string(case.join("steps")).unwrap();
        let mut shown = String::new();
        for step in steps.lines() {
            let mut args: Vec<&str> = step.split_whitespace().collect();
            if args[0] == "config" {
                w.write("main.tf", &std::fs::read_to_string(case.join(args[1])).unwrap());
            } else if args[0] == "apply" {
                args.push("-auto-approve");
                w.cairn(&args).success();
            } else {
                shown = w.cairn(&args).success().stdout;
            }
        }
        let expected = std::fs::read_to_string(case.join("expected.txt")).unwrap();
        let got = normalize(&shown);
        if got != expected {
            failures.push(format!("--- {name}: expected (Terraform's)\n{expected}\n--- {name}: got\n{got}"));
        }
    }
    assert!(failures.is_empty(), "plans differ from Terraform's:\n{}", failures.join("\n"));
}

#[test]
fn ids_are_found_for_normalizing() {
    let out = "a [id=0377b682-6526-c64e-3dcf-f327b46e8655]\nx: Refreshing state...\nb: Refreshing state...\n";
    assert_eq!(normalize(out), "b: Refreshing state...\nx: Refreshing state...\na [id=<id>]\n");
}

/// A data source read while planning says so as Terraform 1.11.4 does
/// (checked by hand with its `terraform_remote_state`, which cairn does not
/// have): `data.x.y: Reading...`, then `Read complete after 0s [id=ID]`
/// before the plan; with `-json`, `apply_start` and `apply_complete` hooks
/// of action `read`, worded `Refreshing...` and `Refresh complete` as
/// Terraform's JSON words them.
#[test]
fn data_sources_read_while_planning_say_so() {
    let w = Workdir::new();
    w.write("hello.txt", "hi\n");
    w.write(
        "main.tf",
        "provider \"local\" {\n  sandbox {\n    read_only = [\".\"]\n  }\n}\n\ndata \"local_file\" \"f\" {\n  filename = \"hello.txt\"\n}\n\nresource \"terraform_data\" \"a\" {\n  input = data.local_file.f.content\n}\n",
    );
    let plan = w.cairn(&["plan"]).success();
    let lines: Vec<&str> = plan.stdout.lines().take(2).collect();
    assert_eq!(lines[0], "data.local_file.f: Reading...", "{}", plan.all());
    let sha1 = "55ca6286e3e4f4fba5d0448333fa99fc5a404a73";
    assert_eq!(lines[1], format!("data.local_file.f: Read complete after 0s [id={sha1}]"), "{}", plan.all());

    let plan = w.cairn(&["plan", "-json"]).success();
    let events = plan.events();
    let hooks: Vec<&serde_json::Value> =
        events.iter().filter(|e| e["hook"]["resource"]["addr"] == "data.local_file.f").collect();
    assert_eq!(hooks.len(), 2, "{}", plan.all());
    assert_eq!(hooks[0]["type"], "apply_start");
    assert_eq!(hooks[0]["hook"]["action"], "read");
    assert_eq!(hooks[0]["@message"], "data.local_file.f: Refreshing...");
    assert_eq!(hooks[1]["type"], "apply_complete");
    assert_eq!(hooks[1]["hook"]["id_value"], sha1);
    assert_eq!(hooks[1]["@message"], format!("data.local_file.f: Refresh complete after 0s [id={sha1}]"));
}

/// Each read is said when it happens, as Terraform 1.11.4 says them
/// (checked with its `terraform_remote_state` in place of `local_file`):
/// a data source that depends on one object and that another depends on
/// is read between their refreshes, not after all of them.
#[test]
fn reads_are_said_in_the_order_they_happen() {
    let w = Workdir::new();
    w.write("hello.txt", "hi\n");
    w.write(
        "main.tf",
        "provider \"local\" {\n  sandbox {\n    read_only = [\".\"]\n  }\n}\n\nresource \"terraform_data\" \"a\" {\n  input = \"hello.txt\"\n}\n\ndata \"local_file\" \"f\" {\n  filename = terraform_data.a.output\n}\n\nresource \"terraform_data\" \"z\" {\n  input = data.local_file.f.content\n}\n",
    );
    w.cairn(&["apply", "-auto-approve"]).success();
    let plan = w.cairn(&["plan"]).success();
    let lines: Vec<&str> = plan.stdout.lines().take(4).collect();
    let sha1 = "55ca6286e3e4f4fba5d0448333fa99fc5a404a73";
    let expected = [
        "terraform_data.a: Refreshing state... [id=<id>]".to_string(),
        "data.local_file.f: Reading...".to_string(),
        format!("data.local_file.f: Read complete after 0s [id={sha1}]"),
        "terraform_data.z: Refreshing state... [id=<id>]".to_string(),
    ];
    let normalized: Vec<String> = lines.iter().map(|l| normalize(l)).collect();
    assert_eq!(normalized, expected, "{}", plan.all());
}

/// A data source whose configuration is not known until apply is read
/// then, with Terraform's reason under its heading, and the JSON plan's
/// `action_reason`; a destroyed instance's reason is there too.
#[test]
fn reads_and_destroys_say_why_in_the_plan_and_its_json() {
    let w = Workdir::new();
    w.write(
        "main.tf",
        "provider \"local\" {\n  sandbox {\n    read_only = [\".\"]\n  }\n}\n\nresource \"terraform_data\" \"n\" {\n  count = 2\n  input = \"hello.txt\"\n}\n\ndata \"local_file\" \"f\" {\n  filename = terraform_data.n[0].output\n}\n",
    );
    let plan = w.cairn(&["plan"]).success();
    assert!(
        plan.stdout.contains(
            "  # data.local_file.f will be read during apply\n  # (config refers to values not yet known)\n <= data \"local_file\" \"f\" {"
        ),
        "{}",
        plan.all()
    );
    w.write("hello.txt", "hi\n");
    w.cairn(&["apply", "-auto-approve"]).success();
    w.write("main.tf", &w.read("main.tf").replace("count = 2", "count = 1"));
    w.cairn_here(&["plan", "-out=p.plan"]).success();
    let shown: serde_json::Value =
        serde_json::from_str(&w.cairn_here(&["show", "-json", "p.plan"]).success().stdout).unwrap();
    let changes = shown["resource_changes"].as_array().unwrap();
    let gone = changes.iter().find(|c| c["address"] == "terraform_data.n[1]").expect("the destroyed instance");
    assert_eq!(gone["action_reason"], "delete_because_count_index", "{gone:#}");
    // The -json stream's planned_change gives it as Terraform's `reason`.
    let plan = w.cairn(&["plan", "-json"]).success();
    let events = plan.events();
    let planned = events
        .iter()
        .find(|e| e["type"] == "planned_change" && e["change"]["resource"]["addr"] == "terraform_data.n[1]")
        .unwrap_or_else(|| panic!("{}", plan.all()));
    assert_eq!(planned["change"]["reason"], "delete_because_count_index", "{planned:#}");
}

/// With `-json`, each object refresh reads comes as Terraform's
/// `refresh_start` and `refresh_complete` hooks, with its id, worded as
/// Terraform 1.11.4 words them.
#[test]
fn refreshes_are_terraform_s_hooks_in_the_json_stream() {
    let w = Workdir::new();
    w.write("main.tf", "resource \"terraform_data\" \"a\" {\n  input = \"x\"\n}\n");
    w.cairn(&["apply", "-auto-approve"]).success();
    let id = w.state().unwrap()["resources"][0]["attributes"]["id"].as_str().unwrap().to_string();
    let plan = w.cairn(&["plan", "-json"]).success();
    let events = plan.events();
    let hooks: Vec<&serde_json::Value> =
        events.iter().filter(|e| e["type"] == "refresh_start" || e["type"] == "refresh_complete").collect();
    assert_eq!(hooks.len(), 2, "{}", plan.all());
    assert_eq!(hooks[0]["@message"], format!("terraform_data.a: Refreshing state... [id={id}]"));
    assert_eq!(hooks[1]["@message"], format!("terraform_data.a: Refresh complete [id={id}]"));
    for hook in hooks {
        assert_eq!(hook["hook"]["resource"]["addr"], "terraform_data.a");
        assert_eq!(
            (&hook["hook"]["id_key"], &hook["hook"]["id_value"]),
            (&serde_json::json!("id"), &serde_json::json!(id))
        );
    }
}
