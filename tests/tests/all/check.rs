//! `cairn providers check`: the conformance run passes the well-behaved
//! providers and names every contract the `violations` provider breaks,
//! with the resource, the operation and the attribute path.

/// The steps of a replacement, each of which every bundled resource type
/// passes (each has an attribute whose change forces replacement).
const REPLACEMENT: [&str; 4] = [
    "plan a change that forces replacement",
    "plan the replacement's create: no stale computed values",
    "delete the replaced object",
    "apply the replacement's create",
];

use cairn_e2e::languages::{Lang, lang_component};
use cairn_e2e::{Run, cairn_command, component};

fn check(provider: &str) -> Run {
    cairn_command(&["providers", "check", provider], &[]).output().unwrap().into()
}

/// The lines of the check's output under `resource "<type_name>"`.
fn section<'a>(run: &'a Run, header: &str) -> Vec<&'a str> {
    let mut lines = run.stdout.lines().skip_while(|l| *l != header).skip(1);
    let mut out = Vec::new();
    for line in lines.by_ref() {
        if !line.starts_with(' ') {
            break;
        }
        out.push(line);
    }
    out
}

#[test]
fn bundled_providers_pass_by_name() {
    for (name, types) in [
        ("local", &["local_file", "local_sensitive_file"][..]),
        ("null", &["null_resource", "null_data"][..]),
        ("terraform", &["terraform_data"][..]),
        (
            "random",
            &[
                "random_id",
                "random_integer",
                "random_password",
                "random_pet",
                "random_shuffle",
                "random_string",
                "random_uuid",
            ][..],
        ),
    ] {
        let run = check(name);
        assert_eq!(run.code, 0, "{}", run.all());
        assert!(!run.stdout.contains("FAIL"), "{}", run.all());
        for type_name in types {
            let lines = section(&run, &format!("resource {type_name:?}"));
            let steps = ["apply the create", "read what apply made", "plan again: no changes", "delete"];
            for step in steps.into_iter().chain(REPLACEMENT) {
                assert!(
                    lines.contains(&format!("  ok    {step}").as_str()),
                    "{type_name}: {step} did not pass:\n{}",
                    run.all()
                );
            }
        }
    }
}

#[test]
fn a_provider_of_real_objects_passes_every_step() {
    let recorder = component("cairn-provider-recorder");
    let run = check(recorder.to_str().unwrap());
    assert_eq!(run.code, 0, "{}", run.all());
    let lines = section(&run, "resource \"recorder_thing\"");
    assert_eq!(lines.len(), 12, "{}", run.all());
    assert!(lines.iter().all(|l| l.starts_with("  ok ")), "{}", run.all());
    for step in REPLACEMENT {
        assert!(lines.contains(&format!("  ok    {step}").as_str()), "{step}:\n{}", run.all());
    }
    assert!(run.stdout.contains("13 passed, 0 failed, 0 warned, 0 skipped."), "{}", run.all());
}

#[test]
fn the_python_and_javascript_providers_pass() {
    for (lang, name, subject) in
        [(Lang::Python, "archive", "resource \"archive_file\""), (Lang::JavaScript, "http", "data \"http\"")]
    {
        let run = check(lang_component(lang, name).to_str().unwrap());
        assert_eq!(run.code, 0, "{}", run.all());
        assert!(run.stdout.contains("schema\n  ok    is well formed"), "{}", run.all());
        assert!(!section(&run, subject).is_empty(), "{}", run.all());
        assert!(!run.stdout.contains("FAIL"), "{}", run.all());
    }
}

#[test]
fn every_violation_is_caught_and_the_good_types_pass() {
    let violations = component("cairn-provider-violations");
    let run = check(violations.to_str().unwrap());
    assert_eq!(run.code, 1, "{}", run.all());
    // Each violating type fails at the step that breaks its contract,
    // naming the attribute.
    for (type_name, step, says) in [
        (
            "violations_changes_config",
            "plan a create twice, with required attributes only",
            ".byte_length: planned value 5 does not match config value 1",
        ),
        (
            "violations_invents_attribute",
            "plan a create twice, with required attributes only",
            ".note: planned value \"invented\"",
        ),
        (
            "violations_replan_differs",
            "plan a create twice, with required attributes only",
            "planned the same change twice with different answers for violations_replan_differs.check at .nonce",
        ),
        ("violations_changes_known", "apply the create", ".id: was \"planned-id\", but now \"applied-id\""),
        ("violations_unknown_after_apply", "apply the create", ".id: the new state leaves this value unknown"),
        ("violations_breaks_refinement", "apply the create", ".arn: planned as an unknown with prefix \"arn:\""),
        ("violations_wrong_type", "apply the create", ".count: a number is required, got the string \"three\""),
        // Issue 32, item 7: every answer keeps the contracts, but the
        // replacement is planned with the replaced object's `id`.
        (
            "violations_stale_on_replace",
            "plan the replacement's create: no stale computed values",
            ".id = \"violations_stale_on_replace-cairn-providers-check\", the replaced object's value, though it \
             left .id unknown in the create of that object",
        ),
    ] {
        let lines = section(&run, &format!("resource {type_name:?}"));
        let at = lines
            .iter()
            .position(|l| *l == format!("  FAIL  {step}"))
            .unwrap_or_else(|| panic!("{type_name}: no failed {step:?}:\n{}", run.all()));
        let why = lines[at + 1];
        assert!(why.contains(says) && why.contains(&format!("{type_name}.check")), "{type_name}: {why}");
    }
    for good in ["violations_ok", "violations_nested"] {
        let lines = section(&run, &format!("resource {good:?}"));
        assert_eq!(lines.iter().filter(|l| l.starts_with("  ok ")).count(), 7, "{good}:\n{}", run.all());
        assert!(!lines.iter().any(|l| l.starts_with("  FAIL")), "{good}:\n{}", run.all());
        // No change of an argument forces replacement: said, with what
        // was tried, not passed.
        let at = lines.iter().position(|l| *l == "  skip  plan a change that forces replacement");
        let why = at.map_or("", |at| lines[at + 1].trim());
        assert!(
            why.starts_with(
                "replacement not exercised: no change of one attribute made the provider answer requires-replace ("
            ) && why.contains("input: updated in place"),
            "{good}:\n{}",
            run.all()
        );
    }
}

#[test]
fn inspect_and_check_name_what_they_cannot_find() {
    let run = check("no-such-provider");
    assert_eq!(run.code, 1, "{}", run.all());
    assert!(run.stderr.contains("cannot read no-such-provider (nor is it a bundled provider: "), "{}", run.all());
    let inspect: Run = cairn_command(&["providers", "inspect", "random"], &[]).output().unwrap().into();
    assert_eq!(inspect.code, 0, "{}", inspect.all());
    assert!(
        inspect.stdout.contains(
            "resource types:\n  random_id\n  random_integer\n  random_password\n  random_pet\n  random_shuffle\n  random_string\n  random_uuid\n"
        ),
        "{}",
        inspect.all()
    );
}
