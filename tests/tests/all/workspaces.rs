//! Workspaces (issue 36, item 3): several states for one configuration,
//! as Terraform's. `cairn workspace new|select|list|show|delete`,
//! `terraform.workspace` in expressions, `TF_WORKSPACE` (and
//! `CAIRN_WORKSPACE`) choosing one for a run, on the local file
//! (`cairn.state.d/NAME/cairn.state.json`, as Terraform's
//! `terraform.tfstate.d`) and on PostgreSQL (a schema per workspace).

use cairn_e2e::{Postgres, Workdir};

const CONFIG: &str = r#"
resource "terraform_data" "a" {
  input = "made in ${terraform.workspace}"
}

output "where" {
  value = terraform_data.a.output
}
"#;

fn output(w: &Workdir, env: &[(&str, &str)]) -> String {
    w.cairn_here_env(&["output", "-raw", "where"], env).success().stdout
}

#[test]
fn each_workspace_has_its_own_state_and_terraform_workspace_names_it() {
    let w = Workdir::new();
    w.write("main.tf", CONFIG);
    w.cairn(&["apply", "-auto-approve"]).success();
    assert_eq!(output(&w, &[]), "made in default");
    assert_eq!(w.cairn_here(&["workspace", "show"]).success().stdout, "default\n");

    let created = w.cairn_here(&["workspace", "new", "staging"]).success();
    assert!(created.stdout.contains("Created and switched to workspace \"staging\"!"), "{}", created.all());
    assert_eq!(w.cairn_here(&["workspace", "show"]).success().stdout, "staging\n");
    let plan = w.cairn(&["plan"]).success();
    assert!(plan.stdout.contains("Plan: 1 to add, 0 to change, 0 to destroy."), "a new, empty state:\n{}", plan.all());
    w.cairn(&["apply", "-auto-approve"]).success();
    assert_eq!(output(&w, &[]), "made in staging");
    assert!(w.exists("cairn.state.d/staging/cairn.state.json"));
    assert_eq!(w.cairn_here(&["workspace", "list"]).success().stdout, "  default\n* staging\n\n");

    // The default workspace's state is as it was.
    w.cairn_here(&["workspace", "select", "default"]).success();
    assert_eq!(output(&w, &[]), "made in default");
    assert!(w.cairn(&["plan"]).success().stdout.contains("No changes."));

    // TF_WORKSPACE chooses one for a run, as in Terraform's CI scripts, and
    // then selecting is refused.
    let ci = [("TF_WORKSPACE", "staging")];
    assert_eq!(output(&w, &ci), "made in staging");
    let refused = w.cairn_here_env(&["workspace", "select", "staging"], &ci).failure();
    assert!(refused.stderr.contains("overridden using the TF_WORKSPACE environment variable"), "{}", refused.all());

    let missing = w.cairn_here(&["workspace", "select", "prod"]).failure();
    assert!(missing.stderr.contains("Workspace \"prod\" doesn't exist."), "{}", missing.all());
    w.cairn_here(&["workspace", "select", "-or-create", "prod"]).success();
    assert_eq!(w.cairn_here(&["workspace", "show"]).success().stdout, "prod\n");
    w.cairn_here(&["workspace", "select", "default"]).success();

    // Deleting: never default, and a state that tracks objects only with -force.
    assert!(w.cairn_here(&["workspace", "delete", "default"]).failure().stderr.contains("can't delete"));
    let tracked = w.cairn_here(&["workspace", "delete", "staging"]).failure();
    assert!(tracked.stderr.contains("terraform_data.a"), "{}", tracked.all());
    w.cairn_here(&["workspace", "delete", "-force", "staging"]).success();
    w.cairn_here(&["workspace", "delete", "prod"]).success();
    assert!(!w.exists("cairn.state.d/staging"));
    assert_eq!(w.cairn_here(&["workspace", "list"]).success().stdout, "* default\n\n");
    let bad = w.cairn_here(&["workspace", "new", "../escape"]).failure();
    assert!(bad.stderr.contains("not a valid workspace name"), "{}", bad.all());
}

#[test]
fn on_postgresql_each_workspace_is_a_schema_of_its_own() {
    let server = Postgres::shared();
    let schema = server.schema("ws");
    let w = Workdir::new();
    w.write("main.tf", CONFIG);
    w.write(
        "backend.tf",
        &format!(
            "cairn {{\n  backend \"pg\" {{\n    conn_str    = \"{}\"\n    schema_name = \"{schema}\"\n  }}\n}}\n",
            server.conn_str()
        ),
    );
    w.cairn(&["init"]).success();
    w.cairn(&["apply", "-auto-approve"]).success();
    w.cairn_here(&["workspace", "new", "blue"]).success();
    w.cairn(&["apply", "-auto-approve"]).success();
    assert_eq!(output(&w, &[]), "made in blue");
    assert_eq!(w.cairn_here(&["workspace", "list"]).success().stdout, "  default\n* blue\n\n");
    w.cairn_here(&["workspace", "select", "default"]).success();
    assert_eq!(output(&w, &[]), "made in default");
    w.cairn_here(&["workspace", "delete", "-force", "blue"]).success();
    assert_eq!(w.cairn_here(&["workspace", "list"]).success().stdout, "* default\n\n");
}
