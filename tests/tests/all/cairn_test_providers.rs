//! `cairn test` with `provider` blocks in the test file and a run's
//! `providers = { … }` map (issue 37, item 3): the same file run by cairn
//! and by the real `terraform test` 1.11.4 on PATH gives the same results
//! (terraform's offline mirror has only `hashicorp/null`, whose provider
//! takes no arguments); with the `recorder` test provider, whose `dir`
//! says where it works, cairn shows which configuration each run used.

use cairn_e2e::{Workdir, recorder_workdir, repo_root};

/// A copy of `tests/configs/cairn_test_providers`.
fn providers_config() -> Workdir {
    let w = Workdir::new();
    let src = repo_root().join("tests/configs/cairn_test_providers");
    for path in ["main.tf", "main.tftest.hcl"] {
        w.write(path, &std::fs::read_to_string(src.join(path)).unwrap());
    }
    w
}

#[test]
fn provider_blocks_and_a_runs_providers_map_give_what_terraform_test_gives() {
    let ours = providers_config().cairn(&["test", "-no-color"]);
    let tf_dir = providers_config();
    tf_dir.terraform(&["init", "-no-color"]);
    let theirs = tf_dir.terraform(&["test", "-no-color"]);
    assert_eq!(ours.stdout, theirs.stdout, "cairn:\n{}\nterraform:\n{}", ours.all(), theirs.all());
    assert_eq!((ours.code, theirs.code), (1, 1), "cairn:\n{}\nterraform:\n{}", ours.all(), theirs.all());
    for line in [
        "  run \"own\"... pass\n",
        "  run \"mapped\"... pass\n",
        "  run \"undeclared\"... fail\n",
        "  run \"skipped\"... skip\n",
    ] {
        assert!(ours.stdout.contains(line), "{line}{}", ours.all());
    }
    // A map to a provider the file does not configure fails the run at
    // the same place, with the same words.
    assert!(
        ours.stderr.contains("Error: main.tftest.hcl:25:12: Missing provider definition for null.missing"),
        "{}",
        ours.all()
    );
    assert!(theirs.stderr.contains("on main.tftest.hcl line 25, in run \"undeclared\":"), "{}", theirs.all());
    for out in [&ours.stderr, &theirs.stderr] {
        assert!(out.contains("This provider block references a provider definition that does not exist."), "{out}");
    }
    assert!(ours.stdout.ends_with("Failure! 2 passed, 1 failed, 1 skipped.\n"), "{}", ours.all());
}

/// The recorder's operations logged in `dir`/ops.log, without their ids
/// and keys: `create t`, `delete t`.
fn operations(w: &Workdir, dir: &str) -> Vec<String> {
    let log = std::fs::read_to_string(w.path().join(dir).join("ops.log")).unwrap_or_default();
    log.lines().map(|l| l.split(' ').take(2).collect::<Vec<_>>().join(" ")).collect()
}

/// The recorder configuration the tests below run: one object, and an
/// output a later run's provider block reads.
fn recorder_config() -> Workdir {
    let w = recorder_workdir(
        "resource \"recorder_thing\" \"t\" {\n  name = \"t\"\n}\n\noutput \"next\" {\n  value = \"log3\"\n}\n",
    );
    for dir in ["log2", "log3"] {
        std::fs::create_dir_all(w.path().join(dir)).unwrap();
    }
    w
}

/// Provider blocks of a test file: `recorder.alt` works in the file
/// variable's directory, `recorder.third` in the one an earlier run's
/// output names; each grants its own directory only.
const RECORDER_PROVIDERS: &str = r#"variables {
  second = "log2"
}

provider "recorder" {
  alias = "alt"
  dir   = var.second
  sandbox {
    read_write = ["./log2"]
  }
}

provider "recorder" {
  alias = "third"
  dir   = run.own.next
  sandbox {
    read_write = ["./log3"]
  }
}
"#;

#[test]
fn each_run_uses_the_provider_configuration_its_map_names() {
    let w = recorder_config();
    w.write(
        "main.tftest.hcl",
        &format!(
            "{RECORDER_PROVIDERS}\nrun \"own\" {{}}\n\nrun \"alt\" {{\n  state_key = \"alt\"\n  providers = {{\n    \
             recorder = recorder.alt\n  }}\n}}\n\nrun \"third\" {{\n  state_key = \"third\"\n  providers = {{\n    \
             recorder = recorder.third\n  }}\n}}\n"
        ),
    );
    let run = w.cairn(&["test", "-no-color"]).success();
    assert!(run.stdout.ends_with("Success! 3 passed, 0 failed.\n"), "{}", run.all());
    // "own" (no map: the file's aliased blocks stand for nothing the
    // configuration uses) worked with the configuration's own provider
    // block, in ./log; "alt" in the file variable's ./log2; "third" in
    // the ./log3 that run "own" gave. Each state was destroyed with the
    // provider configuration that made it.
    for dir in ["log", "log2", "log3"] {
        assert_eq!(operations(&w, dir), ["create t", "delete t"], "{dir}: {}", run.all());
    }
}

#[test]
fn a_test_files_provider_block_without_a_sandbox_is_granted_nothing() {
    let w = recorder_config();
    // The block stands for the configuration's `recorder`, which grants
    // ./log: the test file's block grants nothing, and nothing is what the
    // provider gets.
    w.write("main.tftest.hcl", "provider \"recorder\" {\n  dir = \"log\"\n}\n\nrun \"ungranted\" {}\n");
    let run = w.cairn(&["test", "-no-color"]);
    assert_eq!(run.code, 1, "{}", run.all());
    assert!(run.stdout.contains("  run \"ungranted\"... fail\n"), "{}", run.all());
    assert!(run.stderr.contains("the sandbox denied"), "{}", run.all());
    assert!(operations(&w, "log").is_empty(), "{}", run.all());
}

fn configured_and_mocked() -> Workdir {
    let w = Workdir::new();
    w.write("main.tf", "provider \"null\" {}\n\nresource \"null_resource\" \"a\" {}\n");
    w.write("main.tftest.hcl", "provider \"null\" {}\n\nmock_provider \"null\" {}\n\nrun \"own\" {}\n");
    w
}

#[test]
fn a_provider_both_configured_and_mocked_is_refused_as_terraform_refuses_it() {
    let ours = configured_and_mocked().cairn(&["test", "-no-color"]);
    let tf_dir = configured_and_mocked();
    tf_dir.terraform(&["init", "-no-color"]);
    let theirs = tf_dir.terraform(&["test", "-no-color"]);
    // Nothing runs: the file is refused when it is read.
    assert_eq!(ours.stdout, theirs.stdout, "cairn:\n{}\nterraform:\n{}", ours.all(), theirs.all());
    assert_eq!((ours.code, theirs.code), (1, 1), "cairn:\n{}\nterraform:\n{}", ours.all(), theirs.all());
    assert!(ours.stderr.contains("Error: main.tftest.hcl:3:1: Duplicate provider block"), "{}", ours.all());
    assert!(theirs.stderr.contains("on main.tftest.hcl line 3:"), "{}", theirs.all());
    for out in [&ours.stderr, &theirs.stderr] {
        assert!(out.contains("A provider for null is already defined at main.tftest.hcl:1"), "{out}");
    }
}

/// A test file whose provider block works where `var.where` says, a
/// variable the configuration declares with a default.
fn recorder_where() -> Workdir {
    let w = recorder_config();
    w.configure_recorder(
        "variable \"where\" {\n  type    = string\n  default = \"log\"\n}\n\n\
         resource \"recorder_thing\" \"t\" {\n  name = \"t\"\n}\n",
    );
    w.write(
        "main.tftest.hcl",
        "provider \"recorder\" {\n  dir = var.where\n  sandbox {\n    read_write = [\"./log\", \"./log2\", \"./log3\"]\n  }\n}\n\nrun \"here\" {}\n",
    );
    w
}

/// A test file's provider block reads, besides the file's variables, the
/// global ones — `-var`, `-var-file`, `TF_VAR_`, `terraform.tfvars` — and
/// not a variable's default, as terraform test 1.11.4 has it (checked by
/// hand with the framework provider tfhttp built natively, whose
/// `endpoint` shows which value was used: terraform's offline mirror has
/// only `hashicorp/null`, whose provider takes no arguments). The file's
/// own variables win over the global ones.
#[test]
fn a_test_files_provider_block_reads_the_global_variables_but_not_defaults() {
    let w = recorder_where();
    let run = w.cairn(&["test", "-no-color"]);
    assert_eq!(run.code, 1, "{}", run.all());
    assert!(run.stderr.contains("Reference to unavailable variable"), "{}", run.all());
    assert!(run.stderr.contains("main.tftest.hcl:2:9"), "at the reference: {}", run.all());
    assert!(
        run.stderr.contains(
            "The input variable \"where\" is not available to the current provider configuration. You can only \
             reference variables defined at the file or global levels."
        ),
        "{}",
        run.all()
    );

    let run = w.cairn_env(&["test", "-no-color", "-var", "where=log2"], &[]).success();
    assert_eq!(operations(&w, "log2"), ["create t", "delete t"], "-var: {}", run.all());
    w.write("v.tfvars", "where = \"log3\"\n");
    let var_file = format!("-var-file={}", w.path().join("v.tfvars").display());
    let run = w.cairn(&["test", "-no-color", &var_file]).success();
    assert_eq!(operations(&w, "log3"), ["create t", "delete t"], "-var-file: {}", run.all());
    let run = w.cairn_env(&["test", "-no-color"], &[("TF_VAR_where", "log")]).success();
    assert_eq!(operations(&w, "log"), ["create t", "delete t"], "TF_VAR_: {}", run.all());
    w.write("terraform.tfvars", "where = \"log2\"\n");
    let run = w.cairn(&["test", "-no-color"]).success();
    assert_eq!(operations(&w, "log2"), ["create t", "delete t", "create t", "delete t"], "{}", run.all());
    std::fs::remove_file(w.path().join("terraform.tfvars")).unwrap();

    // The file's variables over -var.
    let test = w.read("main.tftest.hcl");
    w.write("main.tftest.hcl", &format!("variables {{\n  where = \"log3\"\n}}\n\n{test}"));
    let run = w.cairn(&["test", "-no-color", "-var", "where=log"]).success();
    assert_eq!(operations(&w, "log3"), ["create t", "delete t", "create t", "delete t"], "{}", run.all());
    assert_eq!(operations(&w, "log").len(), 2, "{}", run.all());
}

/// A test file's provider block configures the provider of a run's
/// `module { source = … }` too, with the global variables that module
/// declares; its paths and grants are the test file's directory's (the
/// module's own provider blocks' are the module's).
#[test]
fn a_test_files_provider_block_configures_a_run_modules_provider() {
    let w = recorder_config();
    w.write(
        "setup/main.tf",
        "terraform {\n  required_providers {\n    recorder = { source = \"./recorder.wasm\" }\n  }\n}\n\n\
         variable \"where\" {\n  type = string\n}\n\nresource \"recorder_thing\" \"s\" {\n  name = \"s\"\n}\n",
    );
    std::fs::copy(w.path().join("recorder.wasm"), w.path().join("setup/recorder.wasm")).unwrap();
    std::fs::create_dir_all(w.path().join("slog")).unwrap();
    w.write(
        "main.tftest.hcl",
        "provider \"recorder\" {\n  dir = var.where\n  sandbox {\n    read_write = [\"./slog\"]\n  }\n}\n\n\
         run \"setup\" {\n  module {\n    source = \"./setup\"\n  }\n}\n",
    );
    let run = w.cairn(&["test", "-no-color", "-var", "where=slog"]).success();
    assert!(run.stdout.ends_with("Success! 1 passed, 0 failed.\n"), "{}", run.all());
    assert_eq!(operations(&w, "slog"), ["create s", "delete s"], "{}", run.all());
    assert!(operations(&w, "log").is_empty(), "the configuration's own block is not used: {}", run.all());
}
