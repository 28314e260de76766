//! Variable files: `-var-file=FILE` on every command that takes `-var`,
//! `terraform.tfvars` and `*.auto.tfvars` loaded on their own, and
//! Terraform's precedence: environment < terraform.tfvars < *.auto.tfvars
//! (in name order) < -var and -var-file, in the order given.

use cairn_e2e::Workdir;

/// Five variables, each shown by an output, so that `plan` says which
/// value won.
const CONFIG: &str = r#"
variable "env_only" {
  default = "default"
}
variable "tfvars" {
  default = "default"
}
variable "auto" {
  default = "default"
}
variable "cli" {
  default = "default"
}
variable "sizes" {
  type    = list(number)
  default = []
}

output "values" {
  value = "${var.env_only} ${var.tfvars} ${var.auto} ${var.cli} ${length(var.sizes)}"
}
"#;

fn workdir() -> Workdir {
    let w = Workdir::new();
    w.write("main.tf", CONFIG);
    w
}

/// The planned value of the output, from `plan`'s text.
fn planned(run: &cairn_e2e::Run) -> String {
    let line = run.stdout.lines().find(|l| l.contains("values = ")).unwrap_or_else(|| panic!("{}", run.all()));
    line.split("values = ").nth(1).unwrap().trim_matches('"').to_string()
}

#[test]
fn each_source_overrides_the_ones_before_it() {
    let w = workdir();
    let env = [
        ("CAIRN_VAR_env_only", "env"),
        ("CAIRN_VAR_tfvars", "env"),
        ("CAIRN_VAR_auto", "env"),
        ("CAIRN_VAR_cli", "env"),
    ];
    w.write("terraform.tfvars", "tfvars = \"tfvars\"\nauto = \"tfvars\"\ncli = \"tfvars\"\n");
    w.write("a.auto.tfvars", "auto = \"a.auto\"\ncli = \"a.auto\"\n");
    w.write("b.auto.tfvars.json", r#"{"auto": "b.auto", "sizes": [1, 2, 3]}"#);
    w.write("first.tfvars", "cli = \"first\"\n");
    w.write("last.tfvars", "cli = \"last\"\n");
    let run = w.cairn_env(&["plan"], &env).success();
    assert_eq!(planned(&run), "env tfvars b.auto a.auto 3");

    // -var and -var-file apply in the order given.
    let file = |name: &str| format!("-var-file={}", w.path().join(name).display());
    let (first, last) = (file("first.tfvars"), file("last.tfvars"));
    let run = w.cairn_env(&["plan", &first, "-var", "cli=flag", &last], &env);
    assert_eq!(planned(&run.success()), "env tfvars b.auto last 3");
    let run = w.cairn_env(&["plan", &last, "-var", "cli=flag"], &env);
    assert_eq!(planned(&run.success()), "env tfvars b.auto flag 3");
}

#[test]
fn var_files_work_with_validate_and_apply_and_are_relative_to_chdir() {
    let w = workdir();
    w.write("vars/prod.tfvars", "sizes = [1, 2]\n");
    w.cairn(&["validate", "-var-file", &w.path().join("vars/prod.tfvars").display().to_string()]).success();
    let run = w.cairn_here(&["apply", "-auto-approve", "-var-file=vars/prod.tfvars"]).success();
    assert!(run.stdout.contains("values = \"default default default default 2\""), "{}", run.all());
    let run = w.cairn_here(&["output", "-raw", "values"]).success();
    assert_eq!(run.stdout, "default default default default 2");
}

#[test]
fn errors_in_a_var_file_name_the_file_line_and_column() {
    let w = workdir();
    w.write("bad.tfvars", "cli = \"ok\"\nsizes = [1, var.x]\n");
    let run = w.cairn_here(&["plan", "-var-file=bad.tfvars"]).failure();
    assert!(run.stderr.contains("bad.tfvars:2:"), "{}", run.all());
    assert!(run.stderr.contains("Variables not allowed"), "{}", run.all());

    w.write("terraform.tfvars", "sizes = \"many\"\n");
    let run = w.cairn_here(&["plan"]).failure();
    assert!(run.stderr.contains("terraform.tfvars:1:1"), "{}", run.all());
    assert!(run.stderr.contains("does not fit the type list(number)"), "{}", run.all());

    w.write("terraform.tfvars", "\n");
    let run = w.cairn_here(&["plan", "-var-file=missing.tfvars"]).failure();
    assert!(run.stderr.contains("missing.tfvars"), "{}", run.all());
}

#[test]
fn a_value_for_an_undeclared_variable_in_a_file_is_a_warning() {
    let w = workdir();
    w.write("terraform.tfvars", "clii = \"typo\"\n");
    let run = w.cairn_here(&["plan"]).success();
    assert!(run.stderr.contains("Value for undeclared variable"), "{}", run.all());
    assert!(run.stderr.contains("Did you mean \"cli\"?"), "{}", run.all());
}
