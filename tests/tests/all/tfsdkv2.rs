//! An SDKv2 provider (`providers/testing/tfsdkv2`, written with
//! terraform-plugin-sdk/v2) built with the bridge's protocol 5 path and run
//! by the real binary: its legacy type system answers normalised where
//! Terraform's shims have one reading (unset values inside sets of blocks,
//! defaults), refused with the contract's message where they have none (a
//! StateFunc's stored value, a computed value an update changes behind its
//! plan).

use std::process::Command;

use cairn_e2e::languages::{Lang, lang_component, toolchain};
use cairn_e2e::{Run, Workdir, cairn_command, repo_root};
use serde_json::json;

const CONFIG: &str = r#"
terraform {
  required_providers {
    tfsdkv2 = { source = "./tfsdkv2.wasm" }
  }
}

provider "tfsdkv2" {}

variable "name" {
  default = "alpha"
}

variable "color" {
  default = "Red"
}

resource "tfsdkv2_widget" "a" {
  name   = var.name
  color  = var.color
  secret = "s3cret"
  labels = { team = "web" }

  tag {
    key   = "env"
    value = "prod"
  }
  tag {
    key = "tier"
  }

  settings {
    retries = 2
  }
}

resource "tfsdkv2_widget" "b" {
  name = "beta"
}

data "tfsdkv2_lookup" "b" {
  name = tfsdkv2_widget.b.name
}

output "upper" {
  value = data.tfsdkv2_lookup.b.upper
}
"#;

fn workdir(config: &str) -> Workdir {
    let w = Workdir::new();
    std::fs::copy(lang_component(Lang::Go, "testing/tfsdkv2"), w.path().join("tfsdkv2.wasm")).unwrap();
    w.write("main.tf", config);
    w
}

#[test]
fn sdkv2_provider_lives_through_plan_apply_update_replace_import_and_destroy() {
    let w = workdir(CONFIG);
    let plan = w.cairn(&["plan"]).success();
    assert!(plan.stdout.contains("Plan: 2 to add, 0 to change, 0 to destroy."), "{}", plan.all());
    // The Default is planned; Sensitive is the schema's.
    assert!(plan.stdout.contains("+ size        = 3\n"), "{}", plan.all());
    assert!(plan.stdout.contains("+ secret      = (sensitive value)"), "{}", plan.all());

    let run = w.cairn(&["apply", "-auto-approve"]).success();
    assert!(run.stdout.contains("upper = \"BETA\""), "{}", run.all());
    let a = w.attributes("tfsdkv2_widget.a");
    assert_eq!((a["id"].as_str(), a["size"].as_i64()), (Some("w-alpha"), Some(3)), "{a:#}");
    // The tag's unset value is null, not SDKv2's "": normalised.
    let mut tags = a["tag"].as_array().unwrap().clone();
    tags.sort_by_key(|t| t["key"].as_str().unwrap().to_string());
    assert_eq!(tags, [json!({"key": "env", "value": "prod"}), json!({"key": "tier", "value": null})], "{a:#}");
    assert_eq!(a["settings"], json!([{"mode": "auto", "retries": 2}]), "{a:#}");
    assert!(a["enabled"].is_null() && a["description"] == "widget alpha", "{a:#}");

    let again = w.cairn(&["plan", "-detailed-exitcode"]);
    assert_eq!(again.code, 0, "a second plan must find nothing to do:\n{}", again.all());
    // DiffSuppressFunc: another case of the same color is no change.
    let again = w.cairn(&["plan", "-detailed-exitcode", "-var", "color=RED"]);
    assert_eq!(again.code, 0, "a suppressed difference is no change:\n{}", again.all());

    // In place: size set, then removed again (the default comes back),
    // the fingerprint unknown until applied (CustomizeDiff).
    let sized = CONFIG.replace("name = \"beta\"", "name = \"beta\"\n  size = 5");
    w.write("main.tf", &sized);
    let plan = w.cairn(&["plan"]).success();
    assert!(plan.stdout.contains("~ size        = 3 -> 5"), "{}", plan.all());
    assert!(plan.stdout.contains("~ fingerprint = "), "{}", plan.all());
    w.cairn(&["apply", "-auto-approve"]).success();
    assert_eq!(w.attributes("tfsdkv2_widget.b")["size"], 5);
    w.write("main.tf", CONFIG);
    let plan = w.cairn(&["plan"]).success();
    assert!(plan.stdout.contains("~ size        = 5 -> 3"), "{}", plan.all());
    w.cairn(&["apply", "-auto-approve"]).success();
    assert_eq!(w.attributes("tfsdkv2_widget.b")["size"], 3);

    // ForceNew replaces.
    let plan = w.cairn(&["plan", "-var", "name=gamma"]).success();
    assert!(plan.stdout.contains("# tfsdkv2_widget.a must be replaced"), "{}", plan.all());
    w.cairn(&["apply", "-auto-approve", "-var", "name=gamma"]).success();
    assert_eq!(w.attributes("tfsdkv2_widget.a")["id"], "w-gamma");

    // Import passthrough: the id is all the provider gets; its read makes
    // the rest, and nothing is planned for what the configuration says.
    w.cairn_here(&["state", "rm", "tfsdkv2_widget.b"]).success();
    w.write("import.tf", "import {\n  to = tfsdkv2_widget.b\n  id = \"w-beta\"\n}\n");
    let run = w.cairn(&["apply", "-auto-approve", "-var", "name=gamma"]).success();
    assert!(run.stdout.contains("1 imported"), "{}", run.all());
    assert_eq!(w.cairn(&["plan", "-detailed-exitcode", "-var", "name=gamma"]).code, 0);
    std::fs::remove_file(w.path().join("import.tf")).unwrap();

    let run = w.cairn(&["destroy", "-auto-approve", "-var", "name=gamma"]).success();
    assert!(run.stdout.contains("Destroy complete! Resources: 2 destroyed."), "{}", run.all());
}

/// A StateFunc stores a value other than the configured one: there is no
/// faithful normalisation (the configuration says one thing, the provider
/// keeps another), so the host refuses the plan with the contract's
/// message, as it would any provider's.
#[test]
fn an_sdkv2_state_func_is_refused_with_the_contract_message() {
    let w = workdir(&format!("{CONFIG}\nresource \"tfsdkv2_note\" \"n\" {{\n  text = \"  Hello World \"\n}}\n"));
    let run = w.cairn(&["plan"]).failure();
    assert!(
        run.stderr.contains(
            "provider \"tfsdkv2\" produced an invalid plan for tfsdkv2_note.n: .text: planned value \"hello world\" \
             does not match config value \"  Hello World \""
        ),
        "{}",
        run.all()
    );
}

/// An update that changes a computed value its plan kept known (no
/// CustomizeDiff marking it unknown): Terraform only logs it for a legacy
/// provider; nothing can make the plan's promise true afterwards, so the
/// host refuses the new state with the contract's message.
#[test]
fn an_sdkv2_update_that_changes_what_its_plan_kept_is_refused_with_the_contract_message() {
    let counter = |label: &str| format!("{CONFIG}\nresource \"tfsdkv2_counter\" \"c\" {{\n  label = \"{label}\"\n}}\n");
    let w = workdir(&counter("one"));
    w.cairn(&["apply", "-auto-approve"]).success();
    assert_eq!(w.attributes("tfsdkv2_counter.c")["updates"], 0);
    w.write("main.tf", &counter("two"));
    let run = w.cairn(&["apply", "-auto-approve"]).failure();
    assert!(
        run.stderr.contains(
            "provider \"tfsdkv2\" produced an inconsistent result after apply for tfsdkv2_counter.c: \
             .updates: was 0, but now 1 (rule: a value known in the plan must not change)"
        ),
        "{}",
        run.all()
    );
}

/// `cairn providers check` takes the widget, with its defaults, sets of
/// blocks and ForceNew, through every step of its lifecycle: the
/// normalised legacy answers pass every contract check.
#[test]
fn providers_check_takes_the_sdkv2_widget_through_every_step() {
    let wasm = lang_component(Lang::Go, "testing/tfsdkv2");
    let run: Run = cairn_command(&["providers", "check"], &[]).arg(&wasm).output().unwrap().into();
    assert_eq!(run.code, 0, "{}", run.all());
    assert!(run.stdout.contains(", 0 failed, "), "{}", run.all());
    let widget: Vec<&str> = run
        .stdout
        .lines()
        .skip_while(|l| *l != "resource \"tfsdkv2_widget\"")
        .skip(1)
        .take_while(|l| l.starts_with(' '))
        .collect();
    for step in ["apply the create", "plan again: no changes", "plan a change that forces replacement", "delete"] {
        assert!(widget.contains(&format!("  ok    {step}").as_str()), "{step} did not pass:\n{}", run.all());
    }
}

/// The bridge's SDKv2 module and tfsdkv2's own tests (the real SDKv2
/// server through tf5to6server and the normalisations, natively), run
/// with `go test`.
#[test]
fn tfsdkv2_go_tests_pass() {
    let go = toolchain(Lang::Go);
    for dir in ["providers/tfbridge/sdkv2", "providers/testing/tfsdkv2"] {
        for args in [["vet", "./..."], ["test", "./..."]] {
            let out = Command::new(&go)
                .current_dir(repo_root().join(dir))
                .args(args)
                .env("GOTOOLCHAIN", "local")
                .output()
                .unwrap_or_else(|e| panic!("cannot run {}: {e}", go.display()));
            assert!(
                out.status.success(),
                "`go {}` in {dir} failed:\n{}{}",
                args.join(" "),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}
