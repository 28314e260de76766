//! `cairn test` with a run's `module { source = … }` (setup modules),
//! `state_key`, `override_module` of a nested call, and the `test` block
//! that Terraform 1.11 refuses (issue 37, item 3): the same files run by
//! cairn and by the real `terraform test` 1.11.4 on PATH give the same
//! results.

use cairn_e2e::{Workdir, repo_root};

/// A copy of `tests/configs/cairn_test_modules`.
fn modules_config() -> Workdir {
    let w = Workdir::new();
    let src = repo_root().join("tests/configs/cairn_test_modules");
    for path in ["main.tf", "main.tftest.hcl", "testing/setup/main.tf", "m/main.tf", "m/n/main.tf"] {
        w.write(path, &std::fs::read_to_string(src.join(path)).unwrap());
    }
    w
}

#[test]
fn run_modules_and_state_keys_keep_the_states_terraform_test_keeps() {
    let ours = modules_config().cairn(&["test", "-no-color"]);
    let tf_dir = modules_config();
    tf_dir.terraform(&["init", "-no-color"]);
    let theirs = tf_dir.terraform(&["test", "-no-color"]);
    assert_eq!(ours.stdout, theirs.stdout, "cairn:\n{}\nterraform:\n{}", ours.all(), theirs.all());
    assert_eq!((ours.code, theirs.code), (1, 1), "cairn:\n{}\nterraform:\n{}", ours.all(), theirs.all());
    // Each run as both print it: the setup module's state is shared by the
    // runs of that module, the state_key's is another, the main
    // configuration's a third; the nested module call is overridden.
    for line in [
        "  run \"setup\"... pass\n",
        "  run \"main\"... pass\n",
        "  run \"setup_shared\"... pass\n",
        "  run \"setup_keyed\"... pass\n",
        "  run \"main_again\"... pass\n",
        "  run \"keyed_again\"... fail\n",
    ] {
        assert!(ours.stdout.contains(line), "{line}{}", ours.all());
    }
    assert!(ours.stderr.contains("Error: main.tftest.hcl:85:21: Test assertion failed"), "{}", ours.all());
    assert!(ours.stdout.ends_with("Failure! 5 passed, 1 failed.\n"), "{}", ours.all());
}

#[test]
fn every_state_is_destroyed_with_its_own_module() {
    let w = Workdir::new();
    let sandboxed = "provider \"local\" {\n  sandbox {\n    read_write = [\"out\"]\n  }\n}\n\n";
    w.write(
        "main.tf",
        &format!(
            "{sandboxed}variable \"from_setup\" {{\n  type = string\n}}\n\nresource \"local_file\" \"main\" {{\n  \
             filename = \"out/main.txt\"\n  content  = var.from_setup\n}}\n"
        ),
    );
    w.write(
        "testing/setup/main.tf",
        &format!(
            "{sandboxed}resource \"local_file\" \"setup\" {{\n  filename = \"out/setup.txt\"\n  content  = \
             \"setup\"\n}}\n\noutput \"content\" {{\n  value = local_file.setup.content\n}}\n"
        ),
    );
    w.write(
        "main.tftest.hcl",
        "run \"setup\" {\n  module {\n    source = \"./testing/setup\"\n  }\n}\n\nrun \"main\" {\n  variables {\n    \
         from_setup = run.setup.content\n  }\n  assert {\n    condition     = local_file.main.content == \
         \"setup\"\n    error_message = \"the setup's file is not there\"\n  }\n}\n",
    );
    // A run module's relative paths and sandbox grants are its own
    // directory's, as for any configuration cairn plans.
    for dir in ["out", "testing/setup/out"] {
        std::fs::create_dir_all(w.path().join(dir)).unwrap();
    }
    let run = w.cairn(&["test", "-no-color", "-verbose"]).success();
    assert!(run.stdout.contains("  run \"setup\"... pass\n"), "{}", run.all());
    assert!(run.stdout.contains("  run \"main\"... pass\n"), "{}", run.all());
    // Both files existed during the runs.
    assert!(run.stdout.contains("local_file.setup"), "{}", run.all());
    assert!(run.stdout.contains("local_file.main"), "{}", run.all());
    // Both states are destroyed, each with its own module's configuration.
    assert!(!w.path().join("out/main.txt").exists(), "{}", run.all());
    assert!(!w.path().join("testing/setup/out/setup.txt").exists(), "{}", run.all());
}

fn with_test_block() -> Workdir {
    let w = Workdir::new();
    w.write("main.tf", "resource \"terraform_data\" \"a\" {\n  input = 1\n}\n");
    w.write("a.tftest.hcl", "run \"fine\" {}\n");
    w.write("b.tftest.hcl", "test {\n  parallel = true\n}\n\nrun \"b\" {}\n");
    w
}

#[test]
fn the_test_block_is_refused_as_terraform_1_11_refuses_it() {
    let ours = with_test_block().cairn(&["test", "-no-color"]);
    let tf_dir = with_test_block();
    tf_dir.terraform(&["init", "-no-color"]);
    let theirs = tf_dir.terraform(&["test", "-no-color"]);
    // Nothing runs: the files are read before any run, as Terraform's.
    assert_eq!(ours.stdout, theirs.stdout, "cairn:\n{}\nterraform:\n{}", ours.all(), theirs.all());
    assert_eq!(ours.stdout, "", "{}", ours.all());
    assert_eq!((ours.code, theirs.code), (1, 1), "cairn:\n{}\nterraform:\n{}", ours.all(), theirs.all());
    assert!(ours.stderr.contains("Error: b.tftest.hcl:1:1: Unsupported block type"), "{}", ours.all());
    for out in [&ours.stderr, &theirs.stderr] {
        assert!(out.contains("Blocks of type \"test\" are not expected here."), "{}", ours.all());
    }
    assert!(theirs.stderr.contains("on b.tftest.hcl line 1:"), "{}", theirs.all());
}
