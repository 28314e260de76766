//! `cairn test` with `mock_provider`, `override_resource` and
//! `override_data` (issue 37, item 3): the same test files run by cairn
//! and by the real `terraform test` 1.11.4 on PATH give the same results;
//! a mocked provider is never configured or called; the quickstart
//! example's own tests run offline with mocks.

use cairn_e2e::{Workdir, repo_root};

/// A copy of `tests/configs/cairn_test_mocks`.
fn mocks_config() -> Workdir {
    let w = Workdir::new();
    let src = repo_root().join("tests/configs/cairn_test_mocks");
    for path in ["main.tf", "main.tftest.hcl", "tests/unknown.tftest.hcl", "tests/defaults.tftest.hcl"] {
        w.write(path, &std::fs::read_to_string(src.join(path)).unwrap());
    }
    w
}

#[test]
fn mocks_and_overrides_give_what_terraform_test_gives() {
    let w = mocks_config();
    let ours = w.cairn(&["test", "-no-color"]);
    let tf_dir = mocks_config();
    tf_dir.terraform(&["init", "-no-color"]);
    let theirs = tf_dir.terraform(&["test", "-no-color"]);
    assert_eq!(ours.stdout, theirs.stdout, "cairn:\n{}\nterraform:\n{}", ours.all(), theirs.all());
    assert_eq!((ours.code, theirs.code), (1, 1), "cairn:\n{}\nterraform:\n{}", ours.all(), theirs.all());
    // What each run did, as both print it.
    for line in [
        "  run \"plan_has_what_override_during_plan_gives\"... pass\n",
        "  run \"apply_gives_defaults_and_overrides\"... pass\n",
        "  run \"an_update_keeps_what_the_create_gave\"... pass\n",
        "  run \"a_failing_assertion\"... fail\n",
        "  run \"defaults_at_apply\"... pass\n",
        "  run \"computed_values_are_unknown_in_a_plan\"... fail\n",
    ] {
        assert!(ours.stdout.contains(line), "{line}{}", ours.all());
    }
    // The failing assertion is named with its place and message, and a
    // computed value is unknown in a plan until override_during = plan.
    assert!(ours.stderr.contains("Error: main.tftest.hcl:68:21: Test assertion failed"), "{}", ours.all());
    assert!(ours.stderr.contains("out is from-file"), "{}", ours.all());
    assert!(ours.stderr.contains("tests/unknown.tftest.hcl:16:21: Unknown condition value"), "{}", ours.all());
    assert!(ours.stdout.ends_with("Failure! 4 passed, 2 failed.\n"), "{}", ours.all());
    // Mocked objects live in the test's memory only.
    assert!(!w.path().join("cairn.state.json").exists());
}

#[test]
fn a_mocked_provider_is_never_configured_or_called() {
    let w = Workdir::new();
    // No sandbox grant: the real local provider could write no file.
    w.write(
        "main.tf",
        "resource \"local_file\" \"f\" {\n  filename = \"out/f.txt\"\n  content  = \"hello\"\n}\n\noutput \"id\" {\n  \
         value = local_file.f.id\n}\n",
    );
    w.write(
        "main.tftest.hcl",
        "mock_provider \"local\" {\n  mock_resource \"local_file\" {\n    defaults = {\n      id = \"abc\"\n    }\n  \
         }\n}\n\nrun \"write\" {\n  assert {\n    condition     = output.id == \"abc\" && local_file.f.content == \
         \"hello\"\n    error_message = \"id ${output.id}\"\n  }\n}\n",
    );
    let run = w.cairn(&["test", "-no-color"]).success();
    assert!(run.stdout.contains("  run \"write\"... pass\n"), "{}", run.all());
    assert!(!w.path().join("out").exists(), "the mocked local provider wrote something:\n{}", run.all());

    // The same test without the mock calls the real provider, which the
    // sandbox stops.
    w.write("main.tftest.hcl", "run \"write\" {}\n");
    let real = w.cairn(&["test", "-no-color"]);
    assert_eq!(real.code, 1, "{}", real.all());
    assert!(real.stdout.contains("  run \"write\"... fail\n"), "{}", real.all());
}

#[test]
fn a_mocked_provider_without_a_component_is_an_error_at_its_block() {
    let w = Workdir::new();
    w.write("main.tf", "resource \"nowhere_thing\" \"x\" {\n  name = \"a\"\n}\n");
    w.write("main.tftest.hcl", "mock_provider \"nowhere\" {}\n\nrun \"a\" {}\n");
    let run = w.cairn(&["test", "-no-color"]);
    assert_eq!(run.code, 1, "{}", run.all());
    assert!(
        run.stderr.contains("main.tftest.hcl:1:1: Cannot read the schema of mocked provider \"nowhere\""),
        "{}",
        run.all()
    );
    assert!(run.stderr.contains("Unknown provider \"nowhere\""), "{}", run.all());
}

#[test]
fn an_override_of_nothing_is_a_warning_as_in_terraform() {
    let w = Workdir::new();
    w.write("main.tf", "resource \"terraform_data\" \"a\" {\n  input = \"x\"\n}\n");
    w.write(
        "main.tftest.hcl",
        "override_resource {\n  target = terraform_data.nope\n  values = {\n    id = \"x\"\n  }\n}\n\nrun \"a\" {}\n",
    );
    let run = w.cairn(&["test", "-no-color"]).success();
    assert!(run.stderr.contains("Warning: main.tftest.hcl:1:1: Invalid override target"), "{}", run.all());
    assert!(run.stderr.contains("terraform_data.nope does not exist within the configuration"), "{}", run.all());
}

/// The quickstart example's `tests/offline.tftest.hcl`, next to a copy of
/// the example.
fn quickstart_with_tests() -> Workdir {
    let w = Workdir::example("quickstart");
    let test = "tests/offline.tftest.hcl";
    w.write(test, &std::fs::read_to_string(repo_root().join("examples/quickstart").join(test)).unwrap());
    w
}

#[test]
fn the_quickstart_tests_run_offline_with_mocks() {
    let w = quickstart_with_tests();
    let run = w.cairn(&["test", "-no-color"]).success();
    assert!(run.stdout.ends_with("Success! 2 passed, 0 failed.\n"), "{}", run.all());
    // The local provider was mocked: it wrote nothing.
    assert!(!w.path().join("out").exists(), "{}", run.all());
}

#[test]
fn a_failing_assertion_fails_cairn_test_and_names_its_run() {
    let w = quickstart_with_tests();
    let test = w.read("tests/offline.tftest.hcl").replace("hex = \"c0ffee00\"", "hex = \"0badf00d\"");
    w.write("tests/offline.tftest.hcl", &test);
    let run = w.cairn(&["test", "-no-color"]);
    assert_eq!(run.code, 1, "{}", run.all());
    assert!(run.stdout.contains("  run \"the_file_says_the_greeting_and_the_run_id\"... fail\n"), "{}", run.all());
    assert!(run.stdout.ends_with("Failure! 1 passed, 1 failed.\n"), "{}", run.all());
    assert!(run.stderr.contains("Run id: 0badf00d"), "{}", run.all());
}

#[test]
fn data_sources_are_mocked_and_overridden_without_being_read() {
    let w = Workdir::new();
    // A real read fails: there is no such file (and no grant to read it).
    w.write(
        "main.tf",
        "data \"local_file\" \"a\" {\n  filename = \"no/such/file\"\n}\n\noutput \"content\" {\n  value = \
         data.local_file.a.content\n}\n",
    );
    w.write(
        "tests/overridden.tftest.hcl",
        "override_data {\n  target = data.local_file.a\n  values = {\n    content = \"overridden\"\n  }\n}\n\nrun \
         \"read\" {\n  command = plan\n  assert {\n    condition     = output.content == \"overridden\"\n    \
         error_message = \"content ${output.content}\"\n  }\n}\n",
    );
    w.write(
        "tests/mocked.tftest.hcl",
        "mock_provider \"local\" {\n  mock_data \"local_file\" {\n    defaults = {\n      content = \"mocked\"\n    \
         }\n  }\n}\n\nrun \"read\" {\n  assert {\n    condition     = output.content == \"mocked\" && \
         length(data.local_file.a.id) == 8\n    error_message = \"content ${output.content}\"\n  }\n}\n",
    );
    w.write("tests/real.tftest.hcl", "run \"read\" {\n  command = plan\n}\n");
    let run = w.cairn(&["test", "-no-color"]);
    assert_eq!(run.code, 1, "{}", run.all());
    let expected = "tests/mocked.tftest.hcl... in progress\n  run \"read\"... pass\n";
    assert!(run.stdout.contains(expected), "{}", run.all());
    let expected = "tests/overridden.tftest.hcl... in progress\n  run \"read\"... pass\n";
    assert!(run.stdout.contains(expected), "{}", run.all());
    // Only the file without a double reads the file, and fails.
    assert!(run.stdout.contains("tests/real.tftest.hcl... in progress\n  run \"read\"... fail\n"), "{}", run.all());
    assert!(run.stdout.ends_with("Failure! 2 passed, 1 failed.\n"), "{}", run.all());
}
