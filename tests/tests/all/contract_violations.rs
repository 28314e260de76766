//! The host refuses every answer that breaks the plan/apply contracts
//! (issue 3, item 5), through the real binary and the real
//! `cairn-provider-violations` component, whose resource types each break
//! one contract:
//!
//! - a violation in the first plan (a changed configured value, an invented
//!   non-computed attribute, a value of the wrong type) refuses the whole
//!   run before anything is applied, and the state file is left as it was;
//! - a violation at apply time (a second plan that disagrees with the first,
//!   a known value changed by apply, a wrong type or an unknown in the new
//!   state) fails that resource and what depends on it; independent
//!   resources in the same run complete and are recorded; the broken
//!   resource is not recorded (or keeps its old attributes, for an update),
//!   unless the answer still describes a usable object (known, of the
//!   schema's type: a known value changed by apply): then that object is
//!   recorded tainted, so that it is not orphaned, and the next plan
//!   replaces it (issue 16, item 3).
//!
//! Every refusal names the provider, the instance, the attribute path, both
//! values and the rule, and says that this is a bug in the provider.

use cairn_e2e::{Run, Workdir, required_providers};

/// The sentence every contract violation ends with.
const PROVIDER_BUG: &str = "This is a bug in the provider, which should be reported to its authors. \
     Nothing from this answer was recorded in the state.";

/// The sentence of a violation whose answer still described a usable
/// object, which was kept.
const PROVIDER_BUG_KEPT: &str = "This is a bug in the provider, which should be reported to its authors. \
     So that the object it describes is not lost, it was recorded in the state as tainted: \
     the next plan replaces it.";

/// The broken type whose apply answer describes a usable object (a known
/// value changed): recorded tainted.
const KEPT: &str = "violations_changes_known";

/// The provider-bug sentence that follows the error of `broken_type`.
fn bug_sentence(broken_type: &str) -> &'static str {
    if broken_type == KEPT { PROVIDER_BUG_KEPT } else { PROVIDER_BUG }
}

/// The `status` of `addr` in the state.
fn status(w: &Workdir, addr: &str) -> serde_json::Value {
    let state = w.state().expect("a state");
    let resources = state["resources"].as_array().unwrap();
    resources.iter().find(|r| r["addr"] == addr).unwrap_or_else(|| panic!("{addr} is not in the state"))["status"]
        .clone()
}

/// The resources around the broken one: one of the same provider and one
/// of another that depend on nothing, and one that depends on the broken
/// resource `violations_*.x` (its `id`).
fn neighbours(broken_type: &str) -> String {
    format!(
        r#"
resource "violations_ok" "independent" {{
  input = "fine"
}}

resource "null_resource" "independent" {{
  triggers = {{ k = "v" }}
}}

resource "violations_ok" "dependent" {{
  input = {broken_type}.x.id
}}
"#
    )
}

/// A configuration with the broken resource `body` (a `resource` block
/// declaring `<broken_type>.x`) and its neighbours.
fn config(broken_type: &str, body: &str) -> String {
    format!("{}\n{body}\n{}", required_providers(&["violations"]), neighbours(broken_type))
}

/// A configuration directory with the violations provider installed and a
/// resource unrelated to the test already applied, so that there is a
/// state file to compare.
fn workdir_with_state() -> Workdir {
    let w = Workdir::new();
    w.install_provider("violations", "cairn-provider-violations");
    w.write(
        "main.tf",
        &format!("{}\nresource \"null_resource\" \"before\" {{}}\n", required_providers(&["violations"])),
    );
    w.cairn(&["apply", "-auto-approve"]).success();
    assert_eq!(w.addresses(), ["null_resource.before"]);
    w
}

/// The 1-based line of the first line of `text` containing `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).unwrap_or_else(|| panic!("{needle:?} is not in:\n{text}")) + 1
}

/// How many errors a run printed.
fn error_count(run: &Run) -> usize {
    run.stderr.lines().filter(|l| l.starts_with("Error: ")).count()
}

/// Checks that `run` printed exactly one error, `Error: main.tf:<line of
/// the broken block>:1: <message>`, whose detail is the provider-bug
/// sentence.
fn assert_refused(run: &Run, main_tf: &str, broken_type: &str, message: &str) {
    let line = line_of(main_tf, &format!("resource \"{broken_type}\" \"x\""));
    assert_error_line(run, &format!("Error: main.tf:{line}:1: {message}"), message, PROVIDER_BUG);
    assert_eq!(error_count(run), 1, "only the broken resource fails:\n{}", run.all());
}

// ---------------------------------------------------------------------------
// Violations in the first plan: nothing is applied.

/// The broken resources caught in the first plan, with the exact message.
const PLAN_TIME: &[(&str, &str, &str)] = &[
    (
        "violations_changes_config",
        "byte_length = 4",
        "provider \"violations\" produced an invalid plan for violations_changes_config.x: .byte_length: \
         planned value 8 does not match config value 4 \
         (rule: a configured attribute must be planned as configured or as its prior value)",
    ),
    (
        "violations_invents_attribute",
        "",
        "provider \"violations\" produced an invalid plan for violations_invents_attribute.x: .note: \
         planned value \"invented\" for a non-computed attribute that the configuration leaves null \
         (rule: only a computed attribute may be given a value the configuration does not set)",
    ),
    (
        "violations_wrong_type",
        "phase = \"plan\"",
        "provider \"violations\" produced an invalid plan for violations_wrong_type.x: .count: \
         a number is required, got the string \"three\" (rule: every value must conform to the schema type)",
    ),
];

#[test]
fn a_violation_in_the_plan_refuses_the_whole_run_and_leaves_the_state_as_it_was() {
    for (broken_type, attributes, message) in PLAN_TIME {
        let w = workdir_with_state();
        let before = w.state_text();
        let main_tf = config(broken_type, &format!("resource \"{broken_type}\" \"x\" {{\n  {attributes}\n}}"));
        w.write("main.tf", &main_tf);

        let plan = w.cairn(&["plan"]).failure();
        assert_refused(&plan, &main_tf, broken_type, message);
        assert!(!plan.stdout.contains("Plan:"), "a refused plan is not shown:\n{}", plan.all());

        let apply = w.cairn(&["apply", "-auto-approve"]).failure();
        assert_refused(&apply, &main_tf, broken_type, message);
        // The plan failed, so nothing was applied: not the broken resource,
        // and not the independent ones either (and `null_resource.before`,
        // which the configuration no longer declares, was not destroyed).
        assert!(!apply.stdout.contains("Creating..."), "{broken_type}: nothing is applied:\n{}", apply.all());
        assert_eq!(w.state_text(), before, "{broken_type}: the state file changed");
        assert_eq!(w.addresses(), ["null_resource.before"]);
    }
}

#[test]
fn an_update_whose_plan_invents_an_attribute_is_refused_and_the_object_keeps_its_attributes() {
    let w = Workdir::new();
    w.install_provider("violations", "cairn-provider-violations");
    let providers = required_providers(&["violations"]);
    // With `note` set there is nothing to invent: this one is created fine.
    let valid = format!("{providers}\nresource \"violations_invents_attribute\" \"x\" {{\n  note = \"mine\"\n}}\n");
    w.write("main.tf", &valid);
    w.cairn(&["apply", "-auto-approve"]).success();
    let attributes = w.attributes("violations_invents_attribute.x");
    assert_eq!(attributes["note"], "mine");
    let before = w.state_text();

    let main_tf = format!(
        "{providers}\nresource \"violations_invents_attribute\" \"x\" {{\n  input = \"changed\"\n}}\n\n\
         resource \"violations_ok\" \"independent\" {{}}\n"
    );
    w.write("main.tf", &main_tf);
    let run = w.cairn(&["apply", "-auto-approve"]).failure();
    let message = "provider \"violations\" produced an invalid plan for violations_invents_attribute.x: .note: \
         planned value \"invented\" for a non-computed attribute that the configuration leaves null \
         (rule: only a computed attribute may be given a value the configuration does not set)";
    assert_refused(&run, &main_tf, "violations_invents_attribute", message);
    assert_eq!(w.state_text(), before, "the state file changed");
    assert_eq!(w.attributes("violations_invents_attribute.x"), attributes);
}

// ---------------------------------------------------------------------------
// Violations at apply time: that resource fails, the rest of the run goes on.

/// The broken resources caught at apply time, with the exact message: its
/// start and its end, around the second plan's random nonce.
const APPLY_TIME: &[(&str, &str, &str)] = &[
    (
        "violations_replan_differs",
        "provider \"violations\" produced an inconsistent final plan for violations_replan_differs.x: .nonce: \
         was \"NONCE\", but now \"",
        "\" (rule: a value known in the plan must not change)",
    ),
    (
        "violations_changes_known",
        "provider \"violations\" produced an inconsistent result after apply for violations_changes_known.x: .id: \
         was \"planned-id\", but now \"applied-id\" (rule: a value known in the plan must not change)",
        "",
    ),
    (
        "violations_wrong_type",
        "provider \"violations\" produced an inconsistent result after apply for violations_wrong_type.x: .count: \
         a number is required, got the string \"three\" (rule: every value must conform to the schema type)",
        "",
    ),
];

/// The nonce `violations_replan_differs.x` was planned with, from the plan
/// output (`+ nonce = "…"`, or `~ nonce = "…" -> "…"` for an update).
fn planned_nonce(run: &Run) -> String {
    let line = run.stdout.lines().find(|l| l.contains(" nonce = ")).expect("the plan shows the nonce");
    line.rsplit('"').nth(1).expect("the nonce is a string").to_string()
}

/// Checks that `run` printed an error line that starts with `start` and
/// ends with `end`, followed by the provider-bug sentence `bug`.
fn assert_error_line(run: &Run, start: &str, end: &str, bug: &str) {
    let found = run.stderr.lines().position(|l| l.starts_with(start) && l.ends_with(end));
    let Some(at) = found else { panic!("expected a line\n{start}…{end}\nin:\n{}", run.all()) };
    // The first line of the detail, after the source line and its caret.
    let is_source = |l: &str| {
        let l = l.trim_start();
        l.is_empty()
            || l.starts_with('|')
            || l.split_once(" |").is_some_and(|(n, _)| n.chars().all(|c| c.is_ascii_digit()))
    };
    let next = run.stderr.lines().skip(at + 1).find(|l| !is_source(l)).unwrap_or_default();
    assert_eq!(next, format!("  {bug}"), "{}", run.all());
}

/// Checks that `run` printed exactly one error, the message `start…end` of
/// the broken resource `<broken_type>.x`, followed by the provider-bug sentence.
fn assert_refused_at_apply(run: &Run, main_tf: &str, broken_type: &str, start: &str, end: &str) {
    let start = if start.contains("NONCE") { start.replace("NONCE", &planned_nonce(run)) } else { start.to_string() };
    let line = line_of(main_tf, &format!("resource \"{broken_type}\" \"x\""));
    assert_error_line(run, &format!("Error: main.tf:{line}:1: {start}"), end, bug_sentence(broken_type));
    assert_eq!(error_count(run), 1, "only the broken resource fails:\n{}", run.all());
}

/// The error the SDK adds when its provider leaves an unknown in a new state.
const SDK_UNKNOWN_ERROR: &str = "violations_unknown_after_apply.x: Provider bug: the new state has an unknown value";

/// Its attribute and detail, after the source line.
const SDK_UNKNOWN_DETAIL: &str = "\n  at attribute .id\n  Apply must set every attribute to a known value.";

#[test]
fn a_violation_at_apply_fails_that_resource_and_its_dependents_only() {
    for (broken_type, start, end) in APPLY_TIME {
        let w = workdir_with_state();
        let main_tf = config(broken_type, &format!("resource \"{broken_type}\" \"x\" {{}}"));
        let main_tf = format!("{main_tf}\nresource \"null_resource\" \"before\" {{}}\n");
        w.write("main.tf", &main_tf);

        let run = w.cairn(&["apply", "-auto-approve"]).failure();
        assert!(run.stdout.contains("Plan: 4 to add, 0 to change, 0 to destroy."), "{}", run.all());
        assert_refused_at_apply(&run, &main_tf, broken_type, start, end);
        assert!(
            run.stderr.contains("Apply failed: 1 error(s); the state records everything that finished."),
            "{}",
            run.all()
        );

        // Independent resources completed and were recorded; the broken one
        // was not, and what depends on it never started.
        for done in ["violations_ok.independent", "null_resource.independent"] {
            assert!(run.stdout.contains(&format!("{done}: Creation complete")), "{done}:\n{}", run.all());
        }
        assert!(!run.stdout.contains("violations_ok.dependent: Creating"), "{}", run.all());
        let mut addresses = w.addresses();
        addresses.sort();
        let mut expected = vec!["null_resource.before", "null_resource.independent", "violations_ok.independent"];
        let broken = format!("{broken_type}.x");
        if *broken_type == KEPT {
            // The object the provider made is kept, tainted: not orphaned.
            expected.push(&broken);
            expected.sort();
        }
        assert_eq!(addresses, expected, "{broken_type}");
        assert_eq!(w.attributes("violations_ok.independent")["input"], "fine");

        // The state is sound: the next plan creates what is missing (and
        // replaces what was kept).
        let next = w.cairn(&["plan"]).success();
        if *broken_type == KEPT {
            assert_eq!(status(&w, &broken), "tainted");
            assert_eq!(w.attributes(&broken)["id"], "applied-id", "the object as the provider answered it");
            assert!(next.stdout.contains(&format!("# {broken} is tainted, so must be replaced")), "{}", next.all());
            assert!(next.stdout.contains("Plan: 2 to add, 0 to change, 1 to destroy."), "{}", next.all());
        } else {
            assert!(next.stdout.contains("Plan: 2 to add, 0 to change, 0 to destroy."), "{}", next.all());
        }
    }
}

/// A provider that leaves an unknown in its new state is refused with the
/// host's own contract message. The Rust SDK notices the unknown first and
/// reports it as an error of the provider's answer; the host shows that too.
#[test]
fn an_unknown_left_after_apply_fails_that_resource_and_its_dependents_only() {
    let broken_type = "violations_unknown_after_apply";
    let w = workdir_with_state();
    let main_tf = config(broken_type, &format!("resource \"{broken_type}\" \"x\" {{}}"));
    let main_tf = format!("{main_tf}\nresource \"null_resource\" \"before\" {{}}\n");
    w.write("main.tf", &main_tf);

    let run = w.cairn(&["apply", "-auto-approve"]).failure();
    let line = line_of(&main_tf, &format!("resource \"{broken_type}\" \"x\""));
    let expected = format!("Error: main.tf:{line}:1: {SDK_UNKNOWN_ERROR}\n");
    assert!(run.stderr.contains(&expected), "expected\n{expected}\nin:\n{}", run.all());
    assert!(run.stderr.contains(SDK_UNKNOWN_DETAIL), "{}", run.all());
    let host = format!(
        "Error: main.tf:{line}:1: provider \"violations\" produced an inconsistent result after apply for \
         {broken_type}.x: .id: the new state leaves this value unknown (rule: a new state must not contain unknown values)"
    );
    assert!(run.stderr.contains(&host), "expected\n{host}\nin:\n{}", run.all());
    assert!(run.stderr.contains("This is a bug in the provider"), "{}", run.all());
    assert_eq!(error_count(&run), 2, "the SDK's error and the host's: {}", run.all());
    let mut addresses = w.addresses();
    addresses.sort();
    assert_eq!(addresses, ["null_resource.before", "null_resource.independent", "violations_ok.independent"]);
}

// ---------------------------------------------------------------------------
// Updates refused at apply time keep the object's old attributes.

#[test]
fn an_update_refused_at_apply_keeps_the_old_attributes() {
    // No create of these types ever succeeds, so the object to update is
    // made by a well-behaved type with the same attributes and moved to the
    // broken type in the state file (with the attributes it lacks).
    let extra_attributes = |broken_type: &str| match broken_type {
        "violations_wrong_type" => vec![("count", serde_json::json!(3)), ("phase", serde_json::Value::Null)],
        "violations_replan_differs" => vec![("nonce", serde_json::json!("0123456789abcdef"))],
        _ => Vec::new(),
    };
    let unknown = ("violations_unknown_after_apply", "", "");
    for &(broken_type, start, end) in APPLY_TIME.iter().chain([&unknown]) {
        let w = Workdir::new();
        w.install_provider("violations", "cairn-provider-violations");
        let providers = required_providers(&["violations"]);
        w.write("main.tf", &format!("{providers}\nresource \"violations_ok\" \"x\" {{\n  input = \"one\"\n}}\n"));
        w.cairn(&["apply", "-auto-approve"]).success();
        let addr = format!("{broken_type}.x");
        w.edit_state(|state| {
            let resource = &mut state["resources"][0];
            resource["addr"] = addr.clone().into();
            for (name, value) in extra_attributes(broken_type) {
                resource["attributes"][name] = value;
            }
        });
        let attributes = w.attributes(&addr);
        let before = w.state_text();

        let main_tf = format!(
            "{providers}\nresource \"{broken_type}\" \"x\" {{\n  input = \"two\"\n}}\n\n\
             resource \"violations_ok\" \"independent\" {{}}\n"
        );
        w.write("main.tf", &main_tf);
        let run = w.cairn(&["apply", "-auto-approve"]).failure();
        assert!(run.stdout.contains(&format!("# {addr} will be updated in-place")), "{}", run.all());
        if broken_type == unknown.0 {
            let line = line_of(&main_tf, &format!("resource \"{broken_type}\" \"x\""));
            assert!(run.stderr.contains(&format!("Error: main.tf:{line}:1: {SDK_UNKNOWN_ERROR}\n")), "{}", run.all());
            assert!(run.stderr.contains(SDK_UNKNOWN_DETAIL), "{}", run.all());
            assert!(run.stderr.contains(".id: the new state leaves this value unknown"), "{}", run.all());
            assert_eq!(error_count(&run), 2, "the SDK's error and the host's: {}", run.all());
        } else {
            assert_refused_at_apply(&run, &main_tf, broken_type, start, end);
        }
        if broken_type == KEPT {
            // The answer described an object: it is kept, tainted.
            assert_eq!(status(&w, &addr), "tainted", "{broken_type}");
            assert_eq!(w.attributes(&addr)["id"], "applied-id", "{broken_type}");
            assert_eq!(w.attributes(&addr)["input"], "two", "{broken_type}");
        } else {
            assert_eq!(w.attributes(&addr), attributes, "{broken_type}: the refused update reached the state");
        }
        assert_ne!(w.state_text(), before, "{broken_type}: the independent resource was recorded");
        let id = w.attributes("violations_ok.independent")["id"].as_str().map(str::to_string);
        assert!(id.is_some_and(|id| id.starts_with("violations_ok-")), "{broken_type}:\n{}", w.state_text());
    }
}
