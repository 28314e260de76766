//! `cairn console` side by side with `terraform console` (1.11.4) on the
//! same configuration applied by each tool: `terraform_data` (built into
//! both), variables, locals, a module, `count` and `for_each` instances,
//! sensitive values; expressions piped in, as scripts do.

use std::io::Write;
use std::process::{Command, Stdio};

use cairn_e2e::{Run, Workdir, cairn_command};

const CONFIG: &str = r#"
variable "v" {
  default = "hello"
}

variable "secret" {
  default   = "s3cr3t"
  sensitive = true
}

variable "obj" {
  type    = object({ a = string, b = list(number) })
  default = { a = "x", b = [1, 2] }
}

locals {
  l      = "${var.v}-world"
  list   = ["a", "b"]
  nested = { list = [1, 2], map = { k = "v" }, empty = [], emptym = {}, text = "one\ntwo" }
  s      = var.secret
}

resource "terraform_data" "one" {
  input = var.v
}

resource "terraform_data" "many" {
  count = 2
  input = "n${count.index}"
}

resource "terraform_data" "each" {
  for_each = toset(local.list)
  input    = each.key
}

resource "terraform_data" "hidden" {
  input = { shown = "yes", secret = var.secret }
}

module "m" {
  source = "./mod"
  x      = var.v
}

output "o" {
  value = terraform_data.one.output
}
"#;

const MODULE: &str = r#"
variable "x" {}

resource "terraform_data" "inner" {
  input = var.x
}

output "out" {
  value = terraform_data.inner.output
}

output "plain" {
  value = "p-${var.x}"
}
"#;

/// Two copies of the configuration, each applied: one by terraform, one
/// by cairn.
fn applied_by_both() -> (Workdir, Workdir) {
    let tf = Workdir::new();
    let cairn = Workdir::new();
    for w in [&tf, &cairn] {
        w.write("main.tf", CONFIG);
        w.write("mod/main.tf", MODULE);
    }
    tf.terraform(&["init", "-input=false", "-no-color"]).success();
    tf.terraform(&["apply", "-auto-approve", "-no-color"]).success();
    cairn.cairn_here(&["apply", "-auto-approve"]).success();
    (tf, cairn)
}

/// Runs `command` with `input` on its standard input.
fn piped(mut command: Command, input: &str) -> Run {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the console starts");
    child.stdin.take().expect("stdin is piped").write_all(input.as_bytes()).expect("the console reads its input");
    child.wait_with_output().expect("the console ends").into()
}

/// `terraform console ARGS` in `w`, fed `input`.
fn terraform_console(w: &Workdir, args: &[&str], input: &str) -> Run {
    let mut command = Command::new("terraform");
    command
        .arg("console")
        .arg("-no-color")
        .args(args)
        .current_dir(w.path())
        .env("CHECKPOINT_DISABLE", "1")
        .env("TF_CLI_CONFIG_FILE", "/dev/null");
    piped(command, input)
}

/// `cairn console ARGS` in `w`, fed `input`.
fn cairn_console(w: &Workdir, args: &[&str], input: &str) -> Run {
    let mut command = cairn_command(&[&["console"], args].concat(), &[]);
    command.current_dir(w.path());
    piped(command, input)
}

/// The output with each object's `id` (a random UUID, another in each
/// tool's objects) replaced.
fn without_ids(text: &str) -> String {
    text.lines()
        .map(|line| match line.find("\"id\" = \"") {
            Some(at) => format!("{}\"id\" = ID", &line[..at]),
            None => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Feeds `input` to both consoles (with `args`), checks that both exit
/// with `code` and print the same values; returns both runs, terraform's
/// first.
fn same(tf: &Workdir, cairn: &Workdir, args: &[&str], input: &str, code: i32) -> (Run, Run) {
    let t = terraform_console(tf, args, input);
    let c = cairn_console(cairn, args, input);
    assert_eq!(t.code, code, "terraform console {args:?} <<< {input:?}:\n{}", t.all());
    assert_eq!(c.code, code, "cairn console {args:?} <<< {input:?}:\n{}", c.all());
    assert_eq!(without_ids(&c.stdout), without_ids(&t.stdout), "{input:?}\n{}\n{}", t.all(), c.all());
    (t, c)
}

#[test]
fn values_print_as_terraform_console_prints_them() {
    let (tf, cairn) = applied_by_both();
    let expressions = [
        "var.v",
        "local.l",
        "var.obj",
        "local.nested",
        "local.nested.text",
        "terraform_data.one",
        "terraform_data.one.output",
        "terraform_data.many",
        "terraform_data.many[1].input",
        "terraform_data.each",
        "[for k, r in terraform_data.each : r.output]",
        "module.m",
        "module.m.out",
        "var.secret",
        "local.s",
        "nonsensitive(var.secret)",
        "terraform_data.hidden.input",
        "{ a = sensitive(1), b = [sensitive(2), 3] }",
        "path.module",
        "terraform.workspace",
        "null",
        "[null]",
        "{}",
        "[]",
        "tolist([])",
        "tomap({ a = 1 })",
        "toset([\"b\", \"a\"])",
        "\"tab\\there \\u0001 q\\\"q é\"",
        "1.5",
        "1e20",
        "true",
        "upper(local.l)",
        "jsonencode(local.list)",
        "type(var.obj)",
        "type(local.nested)",
        "type(module.m)",
        "type(terraform_data.many)",
        "type(tolist([{ a = 1 }]))",
        "type(var.secret)",
    ];
    for e in expressions {
        same(&tf, &cairn, &[], &format!("{e}\n"), 0);
    }
    // An attribute the provider copied from a sensitive one: terraform
    // shows it in clear; cairn keeps it hidden, as its plans do.
    let c = cairn_console(&cairn, &[], "terraform_data.hidden.output.secret\n").success();
    assert_eq!(c.stdout, "(sensitive value)\n");
    // -var as plan takes it.
    same(&tf, &cairn, &["-var", "v=other"], "local.l\n", 0);
}

#[test]
fn piped_lines_print_the_last_result_and_stop_at_the_first_error() {
    let (tf, cairn) = applied_by_both();
    let (t, _) = same(&tf, &cairn, &[], "var.v\nlocal.l\n", 0);
    assert_eq!(t.stdout, "\"hello-world\"\n");
    same(&tf, &cairn, &[], "local.l\n\n", 0);
    same(&tf, &cairn, &[], "", 0);
    same(&tf, &cairn, &[], "exit\nlocal.l\n", 0);
    same(&tf, &cairn, &[], "var.v\nexit\n", 0);
    for input in ["var.nope\nlocal.l\n", "local.l\nvar.nope\n"] {
        let (t, c) = same(&tf, &cairn, &[], input, 1);
        for run in [&t, &c] {
            assert!(run.stderr.contains("Reference to undeclared input variable"), "{}", run.all());
        }
    }
}

#[test]
fn errors_are_terraforms_and_end_the_run_with_status_1() {
    let (tf, cairn) = applied_by_both();
    let cases = [
        ("terraform_data.nope", "Reference to undeclared resource"),
        ("data.terraform_data.x", "Reference to undeclared resource"),
        ("var.nope", "Reference to undeclared input variable"),
        ("local.nope", "Reference to undeclared local value"),
        ("module.nope", "Reference to undeclared module"),
        ("module.m.nope", "Unsupported attribute"),
        ("foo(1)", "Call to unknown function"),
        ("type(1) == \"number\"", "Invalid use of type function"),
    ];
    for (input, summary) in cases {
        let (t, c) = same(&tf, &cairn, &[], &format!("{input}\n"), 1);
        for run in [&t, &c] {
            assert!(run.stderr.contains(&format!("Error: {summary}")) || run.stderr.contains(summary), "{}", run.all());
        }
        // Located at the input, but for the misused `type`, which has no
        // place in Terraform's either.
        if !input.starts_with("type") {
            assert!(c.stderr.contains("<console-input>:1:"), "{}", c.all());
        }
    }
    // The other names are Terraform's too.
    let (t, c) = same(&tf, &cairn, &[], "terraform_data.nope\n", 1);
    for run in [&t, &c] {
        assert!(
            run.stderr.contains("A managed resource \"terraform_data\" \"nope\" has not been declared"),
            "{}",
            run.all()
        );
    }
}

#[test]
fn a_resource_not_in_the_state_is_unknown_and_with_plan_as_planned() {
    let (tf, cairn) = applied_by_both();
    let later = r#"
resource "terraform_data" "later" {
  input = "later"
}

resource "terraform_data" "later_many" {
  count = 2
  input = "x"
}

locals {
  uses = terraform_data.later.output
}
"#;
    for w in [&tf, &cairn] {
        w.write("later.tf", later);
    }
    let state_before = cairn.read("cairn.state.json");
    let expressions = [
        "terraform_data.later",
        "terraform_data.later.input",
        "terraform_data.later_many",
        "terraform_data.later_many[0]",
        "length(terraform_data.later_many)",
        "local.uses",
        "terraform_data.one.output",
    ];
    for e in expressions {
        let input = format!("{e}\n");
        let (t, _) = same(&tf, &cairn, &[], &input, 0);
        if e.contains("later") || e.contains("uses") {
            assert_eq!(t.stdout, "(known after apply)\n", "{e}");
        }
        same(&tf, &cairn, &["-plan"], &input, 0);
    }
    // Neither the state nor its lock was touched.
    assert_eq!(cairn.read("cairn.state.json"), state_before);
    let left: Vec<String> = std::fs::read_dir(cairn.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("lock") && n != "cairn.lock")
        .collect();
    assert!(left.is_empty(), "{left:?}");
    // Nothing was applied.
    let addresses = cairn.addresses();
    assert!(!addresses.iter().any(|a| a.contains("later")), "{addresses:?}");
}

#[test]
fn a_required_variable_nothing_gives_is_unknown_as_in_terraform() {
    let tf = Workdir::new();
    let cairn = Workdir::new();
    for w in [&tf, &cairn] {
        w.write("main.tf", "variable \"r\" {}\n\nlocals {\n  x = 1\n}\n");
    }
    tf.terraform(&["init", "-input=false", "-no-color"]).success();
    let (t, _) = same(&tf, &cairn, &[], "var.r\n", 0);
    assert_eq!(t.stdout, "(known after apply)\n");
    same(&tf, &cairn, &[], "local.x\n", 0);
    same(&tf, &cairn, &["-var", "r=given"], "var.r\n", 0);
}

#[test]
fn data_sources_are_read_as_a_plan_reads_them_since_the_state_keeps_none() {
    let w = Workdir::new();
    w.write("in.txt", "hi\n");
    w.write(
        "main.tf",
        r#"
provider "local" {
  sandbox {
    read_only = ["."]
  }
}

data "local_file" "f" {
  filename = "${path.module}/in.txt"
}

locals {
  c = data.local_file.f.content
}
"#,
    );
    let c = cairn_console(&w, &[], "local.c\n").success();
    assert_eq!(c.stdout, "<<EOT\nhi\n\nEOT\n");
    let c = cairn_console(&w, &[], "type(data.local_file.f.filename)\n").success();
    assert_eq!(c.stdout, "string\n");
    assert!(!w.exists("cairn.state.json"), "the console wrote a state");
}
