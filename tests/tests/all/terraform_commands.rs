//! Terraform's commands kept for scripts and habits — `taint`, `untaint`,
//! `refresh`, `version` — side by side with terraform 1.11.4 on the same
//! configuration (`terraform_data`, built into both), and the no-change
//! apply's closing lines, which scripts wait for.

use cairn_e2e::{Run, Workdir};

const CONFIG: &str = r#"
resource "terraform_data" "a" {
  input = "x"
}

resource "terraform_data" "b" {
  count = 2
  input = "y"
}

output "o" {
  value = terraform_data.a.output
}
"#;

/// Two copies of [`CONFIG`], each applied: one by terraform, one by cairn.
fn applied_by_both() -> (Workdir, Workdir) {
    let tf = Workdir::new();
    tf.write("main.tf", CONFIG);
    tf.terraform(&["init", "-input=false", "-no-color"]).success();
    tf.terraform(&["apply", "-auto-approve", "-no-color"]).success();
    let cairn = Workdir::new();
    cairn.write("main.tf", CONFIG);
    cairn.cairn_here(&["apply", "-auto-approve"]).success();
    (tf, cairn)
}

/// Runs `args` with both tools and checks that both exit with `code`;
/// returns both runs, terraform's first.
fn both(tf: &Workdir, cairn: &Workdir, args: &[&str], code: i32) -> (Run, Run) {
    let t = tf.terraform(&[args, &["-no-color"]].concat());
    let c = cairn.cairn_here(&[args, &["-no-color"]].concat());
    assert_eq!(t.code, code, "terraform {args:?}:\n{}", t.all());
    assert_eq!(c.code, code, "cairn {args:?}:\n{}", c.all());
    (t, c)
}

#[test]
fn taint_and_untaint_mark_an_instance_as_terraform_does() {
    let (tf, cairn) = applied_by_both();

    let (t, c) = both(&tf, &cairn, &["taint", "terraform_data.a"], 0);
    assert_eq!(t.stdout, "Resource instance terraform_data.a has been marked as tainted.\n");
    assert_eq!(c.stdout, t.stdout);
    // Tainting again is no error.
    both(&tf, &cairn, &["taint", "terraform_data.a"], 0);
    // The next plan replaces it, in both.
    let (t, c) = both(&tf, &cairn, &["plan"], 0);
    for run in [&t, &c] {
        assert!(run.stdout.contains("# terraform_data.a is tainted, so must be replaced"), "{}", run.all());
        assert!(run.stdout.contains("Plan: 1 to add, 0 to change, 1 to destroy."), "{}", run.all());
    }

    // An instance of a counted resource is named with its key.
    let (t, c) = both(&tf, &cairn, &["taint", "terraform_data.b"], 1);
    for run in [&t, &c] {
        assert!(run.stderr.contains("No such resource instance"), "{}", run.all());
        assert!(run.stderr.contains("with the address terraform_data.b."), "{}", run.all());
    }
    let (t, c) = both(&tf, &cairn, &["taint", "terraform_data.b[1]"], 0);
    assert_eq!(c.stdout, t.stdout);
    let (t, c) = both(&tf, &cairn, &["taint", "-allow-missing", "terraform_data.zz"], 0);
    for run in [&t, &c] {
        // terraform prints its warnings on standard output, cairn (as it
        // does every warning) on standard error.
        assert!(run.all().contains("Warning: No such resource instance"), "{}", run.all());
        assert!(run.all().contains("because -allow-missing was set"), "{}", run.all());
    }

    let (t, c) = both(&tf, &cairn, &["untaint", "terraform_data.a"], 0);
    assert_eq!(t.stdout, "Resource instance terraform_data.a has been successfully untainted.\n");
    assert_eq!(c.stdout, t.stdout);
    let (t, c) = both(&tf, &cairn, &["untaint", "terraform_data.a"], 1);
    for run in [&t, &c] {
        assert!(run.stderr.contains("Resource instance is not tainted"), "{}", run.all());
        assert!(run.stderr.contains("terraform_data.a is not currently tainted"), "{}", run.all());
    }
    // What is still tainted is still replaced; what was untainted is not.
    let (t, c) = both(&tf, &cairn, &["plan"], 0);
    for run in [&t, &c] {
        assert!(run.stdout.contains("# terraform_data.b[1] is tainted, so must be replaced"), "{}", run.all());
        assert!(!run.stdout.contains("# terraform_data.a "), "{}", run.all());
    }
    both(&tf, &cairn, &["untaint", "terraform_data.b[1]"], 0);
    let (t, c) = both(&tf, &cairn, &["plan", "-detailed-exitcode"], 0);
    for run in [&t, &c] {
        assert!(run.stdout.contains("No changes."), "{}", run.all());
    }
}

#[test]
fn refresh_and_a_no_change_apply_end_as_terraforms_do() {
    let (tf, cairn) = applied_by_both();
    let tail = "Apply complete! Resources: 0 added, 0 changed, 0 destroyed.\n\nOutputs:\n\no = \"x\"\n";
    let (t, c) = both(&tf, &cairn, &["apply", "-auto-approve"], 0);
    assert!(t.stdout.ends_with(tail), "{}", t.all());
    assert!(c.stdout.ends_with(tail), "{}", c.all());
    // refresh is apply -refresh-only -auto-approve: the state's outputs
    // at the end, and the serial moves only if something changed.
    let (t, c) = both(&tf, &cairn, &["refresh"], 0);
    for run in [&t, &c] {
        assert!(run.stdout.contains("terraform_data.a: Refreshing state..."), "{}", run.all());
        assert!(run.stdout.ends_with("o = \"x\"\n"), "{}", run.all());
    }
    // A destroy with nothing to destroy says so.
    let (t, c) = both(&tf, &cairn, &["destroy", "-auto-approve"], 0);
    assert!(t.stdout.ends_with("Destroy complete! Resources: 3 destroyed.\n"), "{}", t.all());
    assert!(c.stdout.ends_with("Destroy complete! Resources: 3 destroyed.\n"), "{}", c.all());
    let (t, c) = both(&tf, &cairn, &["destroy", "-auto-approve"], 0);
    assert!(t.stdout.ends_with("Destroy complete! Resources: 0 destroyed.\n"), "{}", t.all());
    assert!(c.stdout.ends_with("Destroy complete! Resources: 0 destroyed.\n"), "{}", c.all());
}

#[test]
fn version_names_cairn_and_the_platform_as_terraform_names_it() {
    let w = Workdir::new();
    let t: serde_json::Value = serde_json::from_str(&w.terraform(&["version", "-json"]).success().stdout).unwrap();
    let c: serde_json::Value = serde_json::from_str(&w.cairn_here(&["version", "-json"]).success().stdout).unwrap();
    assert_eq!(c["platform"], t["platform"], "{c}\n{t}");
    assert_eq!(c["cairn_version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(c["provider_selections"], serde_json::json!({}));
    let text = w.cairn_here(&["version"]).success().stdout;
    let first_lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        first_lines,
        [format!("cairn v{}", env!("CARGO_PKG_VERSION")), format!("on {}", t["platform"].as_str().unwrap())]
    );
}
