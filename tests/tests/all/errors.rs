//! Bad input fails clearly, says where, and loses nothing: every error here
//! names a file and line (or an attribute path) and leaves the state as it was.

use cairn_e2e::Workdir;

const BASE: &str = r#"
provider "local" {
  sandbox {
    read_write = ["./out"]
  }
}

resource "random_id" "x" {
  byte_length = 4
}
"#;

/// Applies BASE, then replaces the configuration with `broken` and checks
/// that plan and apply both fail with `expected` in the message and that the
/// state file is byte-for-byte unchanged and valid JSON.
fn fails_without_touching_state(broken: &str, expected: &[&str]) {
    let w = Workdir::new();
    w.write("main.tf", BASE);
    w.cairn(&["apply", "-auto-approve"]).success();
    let before = w.state_text();
    w.write("main.tf", broken);
    for command in [&["plan"][..], &["apply", "-auto-approve"][..], &["validate"][..]] {
        let run = w.cairn(command).failure();
        for e in expected {
            assert!(run.stderr.contains(e), "`cairn {command:?}` should say {e:?}:\n{}", run.all());
        }
        assert_eq!(w.state_text(), before, "`cairn {command:?}` changed the state");
        w.state();
    }
}

#[test]
fn a_reference_to_an_undeclared_resource_names_file_and_line() {
    let broken = format!(
        "{BASE}\nresource \"local_file\" \"f\" {{\n  filename = \"out/f\"\n  content  = random_id.nope.hex\n}}\n"
    );
    fails_without_touching_state(
        &broken,
        &["main.tf:14", "Reference to undeclared resource", "\"random_id\" \"nope\""],
    );
}

/// Issue 32, item 5: `validate` checks every reference against the
/// provider schemas, before any value is known, with where and what was
/// meant.
#[test]
fn validate_finds_a_misspelt_attribute_of_a_resource_with_its_location() {
    let w = Workdir::new();
    w.write(
        "main.tf",
        "resource \"random_id\" \"r\" {\n  byte_length = 4\n}\n\nresource \"terraform_data\" \"a\" {\n  input = \"${random_id.r.hexx}\"\n}\n\noutput \"o\" {\n  value = terraform_data.a.outptu\n}\n",
    );
    let run = w.cairn(&["validate"]).failure();
    assert!(run.stderr.contains("main.tf:6:14"), "{}", run.all());
    assert!(run.stderr.contains("Did you mean \"hex\"?"), "{}", run.all());
    assert!(run.stderr.contains("main.tf:10:11"), "{}", run.all());
    assert!(run.stderr.contains("Did you mean \"output\"?"), "{}", run.all());
    let json: serde_json::Value = serde_json::from_str(&w.cairn(&["validate", "-json"]).failure().stdout).unwrap();
    assert_eq!(json["error_count"], 2, "{json:#}");
    // Attributes that are there, through instances and nested values.
    w.write(
        "main.tf",
        "resource \"random_id\" \"r\" {\n  count = 2\n  byte_length = 4\n}\n\noutput \"o\" {\n  value = [random_id.r[0].hex, random_id.r[*].b64_std, random_id.r[1].keepers]\n}\n",
    );
    w.cairn(&["validate"]).success();
}

#[test]
fn a_type_mismatch_names_file_line_and_attribute() {
    let broken = format!("{BASE}\nresource \"random_id\" \"y\" {{\n  byte_length = [1, 2]\n}}\n");
    fails_without_touching_state(&broken, &["main.tf:13", "byte_length"]);
}

#[test]
fn a_missing_required_attribute_names_file_and_line() {
    let broken = format!("{BASE}\nresource \"local_file\" \"f\" {{\n  content = \"x\"\n}}\n");
    fails_without_touching_state(&broken, &["main.tf:12", "filename"]);
}

#[test]
fn a_cycle_is_printed() {
    let broken = format!(
        "{BASE}\nresource \"null_resource\" \"a\" {{\n  triggers = {{ b = null_resource.b.id }}\n}}\n\
         resource \"null_resource\" \"b\" {{\n  triggers = {{ a = null_resource.a.id }}\n}}\n"
    );
    fails_without_touching_state(
        &broken,
        &["Cycle", "null_resource.a -> null_resource.b -> null_resource.a", "main.tf:"],
    );
}

#[test]
fn an_unsupported_argument_names_file_and_line() {
    let broken = BASE.replace("byte_length = 4", "byte_length = 4\n  bytes_length = 5");
    fails_without_touching_state(&broken, &["main.tf:10", "bytes_length"]);
}

#[test]
fn a_file_outside_the_granted_directory_is_refused_and_nothing_is_written() {
    let w = Workdir::new();
    w.write(
        "main.tf",
        r#"
provider "local" {
  sandbox {
    read_write = ["./out"]
  }
}

resource "local_file" "inside" {
  filename = "out/ok.txt"
  content  = "fine"
}

resource "local_file" "outside" {
  filename = "elsewhere/secret.txt"
  content  = "should never be written"
}
"#,
    );
    let run = w.cairn(&["apply", "-auto-approve"]).failure();
    assert!(run.stderr.contains("local_file.outside"), "{}", run.all());
    assert!(run.stderr.contains("elsewhere/secret.txt"), "{}", run.all());
    assert!(run.stderr.contains("sandbox"), "the error says how to grant access:\n{}", run.all());
    assert!(!w.exists("elsewhere"), "nothing may be written outside the grant");
    // The independent resource still completed and is recorded.
    assert_eq!(w.read("out/ok.txt"), "fine");
    assert_eq!(w.addresses(), vec!["local_file.inside".to_string()]);
}

#[test]
fn without_a_grant_the_local_provider_cannot_touch_any_file() {
    let w = Workdir::new();
    w.write("main.tf", "resource \"local_file\" \"f\" {\n  filename = \"f.txt\"\n  content  = \"x\"\n}\n");
    let run = w.cairn(&["apply", "-auto-approve"]).failure();
    assert!(run.stderr.contains("local_file.f"), "{}", run.all());
    assert!(!w.exists("f.txt"));
    assert!(w.addresses().is_empty());
}

#[test]
fn a_second_apply_while_the_first_holds_the_lock_fails_clearly() {
    use std::io::Write;
    let w = Workdir::new();
    w.write("main.tf", BASE);
    // The first apply waits at its confirmation prompt, holding the lock.
    let mut first = w
        .command(&["apply"], &[])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = first.stdout.take().unwrap();
    let mut seen = String::new();
    let mut buf = [0u8; 4096];
    while !seen.contains("Enter a value") {
        use std::io::Read;
        let n = stdout.read(&mut buf).unwrap();
        assert!(n > 0, "the first apply ended early:\n{seen}");
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    let second = w.cairn(&["apply", "-auto-approve"]).failure();
    assert!(second.stderr.contains("locked"), "{}", second.all());
    first.stdin.take().unwrap().write_all(b"no\n").unwrap();
    first.wait().unwrap();
    assert!(w.addresses().is_empty());
}

#[test]
fn an_undeclared_variable_on_the_command_line_is_an_error() {
    let w = Workdir::new();
    w.write("main.tf", BASE);
    let run = w.cairn(&["plan", "-var", "nope=1"]).failure();
    assert!(run.stderr.contains("nope"), "{}", run.all());
}

#[test]
fn a_provider_named_by_path_is_loaded_from_that_file() {
    let w = Workdir::new();
    std::fs::copy(cairn_e2e::bundled_component("null"), w.path().join("my-null.wasm")).unwrap();
    w.write(
        "main.tf",
        r#"
terraform {
  required_providers {
    null = { source = "./my-null.wasm" }
  }
}

resource "null_resource" "n" {
  triggers = { a = "b" }
}
"#,
    );
    w.cairn(&["apply", "-auto-approve"]).success();
    assert_eq!(w.addresses(), vec!["null_resource.n".to_string()]);

    w.write("main.tf", &w.read("main.tf").replace("./my-null.wasm", "./missing.wasm"));
    let run = w.cairn(&["plan"]).failure();
    assert!(run.stderr.contains("missing.wasm") && run.stderr.contains("main.tf:4"), "{}", run.all());
}

/// Where `text` is written in `config`: (line, column of the value), both
/// 1-based, the value being what follows `= ` on that line.
fn value_at(config: &str, text: &str) -> (usize, usize) {
    let (i, line) = config.lines().enumerate().find(|(_, l)| l.contains(text)).expect("the text is in the config");
    (i + 1, line.find("= ").expect("an attribute") + 3)
}

/// A provider's error about an attribute of a managed resource or a data
/// source is reported where that attribute's value is written, as
/// Terraform reports it (and as ephemeral resources' are): from the
/// provider's validate (`cairn validate` and plan), from its apply, and
/// from a data source's read while planning and during apply.
#[test]
fn a_provider_error_about_an_attribute_is_reported_at_that_attribute() {
    let w = Workdir::new();
    let range = "resource \"random_integer\" \"n\" {\n  max = 1\n  min = 5\n}\n";
    w.write("main.tf", range);
    let (line, column) = value_at(range, "min = 5");
    let at_min = format!("main.tf:{line}:{column}");
    for command in [&["validate"][..], &["plan"]] {
        let run = w.cairn(command).failure();
        assert!(run.stderr.contains("Minimum value needs to be smaller"), "{command:?}: {}", run.all());
        assert!(run.stderr.contains(&at_min), "{command:?}: at `min`, {at_min}: {}", run.all());
        assert!(!run.stderr.contains("main.tf:1:"), "{command:?}: not at the block: {}", run.all());
    }

    // The minimums add up to more than the length: the provider says so
    // when it makes the password.
    let password = "resource \"random_password\" \"p\" {\n  min_upper = 3\n  length    = 4\n  min_lower = 3\n}\n";
    w.write("main.tf", password);
    let (line, column) = value_at(password, "length    = 4");
    let apply = w.cairn(&["apply", "-auto-approve"]).failure();
    assert!(apply.stderr.contains("The minimums add up to more than `length`"), "{}", apply.all());
    assert!(apply.stderr.contains(&format!("main.tf:{line}:{column}")), "at `length`: {}", apply.all());

    // A data source read while planning, and one read during apply (its
    // file name is known only then).
    let read = "data \"local_file\" \"d\" {\n  filename = \"missing.txt\"\n}\n";
    w.write("main.tf", read);
    let (line, column) = value_at(read, "filename = \"missing.txt\"");
    let plan = w.cairn(&["plan"]).failure();
    assert!(plan.stderr.contains("Cannot read missing.txt"), "{}", plan.all());
    assert!(plan.stderr.contains(&format!("main.tf:{line}:{column}")), "at `filename`: {}", plan.all());
    let later = "resource \"random_id\" \"x\" {\n  byte_length = 2\n}\n\n\
                 data \"local_file\" \"d\" {\n  filename = \"missing-${random_id.x.hex}.txt\"\n}\n";
    w.write("main.tf", later);
    let (line, column) = value_at(later, "filename = ");
    let apply = w.cairn(&["apply", "-auto-approve"]).failure();
    assert!(apply.stderr.contains("Cannot read missing-"), "{}", apply.all());
    assert!(apply.stderr.contains(&format!("main.tf:{line}:{column}")), "at `filename`: {}", apply.all());
}
