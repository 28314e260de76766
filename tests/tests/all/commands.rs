//! The other commands — validate, show, graph, providers schema — and the
//! configuration features a Terraform user reaches for first: data sources,
//! variables, locals, count and for_each.

use cairn_e2e::Workdir;

#[test]
fn validate_accepts_a_good_configuration_without_touching_anything() {
    let w = Workdir::example("quickstart");
    let run = w.cairn(&["validate"]).success();
    assert!(run.stdout.contains("The configuration is valid."), "{}", run.all());
    assert!(w.state().is_none(), "validate must not write a state");
    assert!(!w.exists("out"), "validate must not run the providers' apply");
}

#[test]
fn show_prints_the_state_with_sensitive_values_hidden() {
    let w = Workdir::example("quickstart");
    w.cairn(&["apply", "-auto-approve"]).success();
    let password = w.attributes("random_password.secret")["result"].as_str().unwrap().to_string();
    assert_eq!(password.len(), 20);

    let show = w.cairn(&["show"]).success();
    assert!(show.stdout.contains("# random_password.secret:"), "{}", show.all());
    assert!(show.stdout.contains("result = (sensitive value)"), "{}", show.all());
    assert!(!show.stdout.contains(&password), "show must not print a sensitive value:\n{}", show.all());
    assert!(show.stdout.contains("filename = \"out/hello.txt\""), "{}", show.all());

    // `show -json` in Terraform's shape, `state pull` cairn's own file.
    let json = w.cairn(&["show", "-json"]).success();
    let shown: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(shown["format_version"], "1.0");
    assert_eq!(shown["values"]["root_module"]["resources"].as_array().unwrap().len(), 4, "{shown:#}");
    let pulled = w.cairn_here(&["state", "pull"]).success();
    let state: serde_json::Value = serde_json::from_str(&pulled.stdout).unwrap();
    assert_eq!(state["format_version"], cairn::state::FORMAT_VERSION);
    assert_eq!(state["resources"].as_array().unwrap().len(), 4);
}

#[test]
fn graph_prints_dot_with_the_dependencies() {
    let w = Workdir::example("quickstart");
    let run = w.cairn(&["graph"]).success();
    assert!(run.stdout.starts_with("digraph"), "{}", run.all());
    assert!(run.stdout.contains("\"local_file.hello\" -> \"local.lines\""), "{}", run.all());
    assert!(run.stdout.contains("\"local.lines\" -> \"random_id.run\""), "{}", run.all());
}

#[test]
fn providers_schema_describes_the_bundled_providers() {
    let w = Workdir::example("quickstart");
    let run = w.cairn(&["providers", "schema"]).success();
    assert!(run.stdout.contains("resource \"local_file\""), "{}", run.all());
    assert!(run.stdout.contains("filename: string (required)"), "{}", run.all());
    assert!(run.stdout.contains("result: string (computed, sensitive)"), "{}", run.all());

    let json = w.cairn(&["providers", "schema", "-json"]).success();
    let schemas: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let keepers = &schemas["random"]["resource_schemas"]["random_id"]["block"]["attributes"]["keepers"];
    assert_eq!(keepers["type"], serde_json::json!(["map", "string"]));
    assert_eq!(keepers["optional"], true);
}

#[test]
fn a_data_source_reads_a_granted_file_and_feeds_a_resource() {
    let w = Workdir::new();
    w.write("templates/greeting.txt", "hi there");
    w.write(
        "main.tf",
        r#"
provider "local" {
  sandbox {
    read_only  = ["./templates"]
    read_write = ["./out"]
  }
}

data "local_file" "greeting" {
  filename = "templates/greeting.txt"
}

resource "local_file" "copy" {
  filename = "out/copy.txt"
  content  = upper(data.local_file.greeting.content)
}
"#,
    );
    let run = w.cairn(&["apply", "-auto-approve"]).success();
    assert_eq!(w.read("out/copy.txt"), "HI THERE", "{}", run.all());
    w.cairn(&["plan", "-detailed-exitcode"]).success();
}

#[test]
fn a_read_only_grant_cannot_be_written() {
    let w = Workdir::new();
    w.write("templates/keep.txt", "original");
    w.write(
        "main.tf",
        r#"
provider "local" {
  sandbox {
    read_only = ["./templates"]
  }
}

resource "local_file" "overwrite" {
  filename = "templates/keep.txt"
  content  = "changed"
}
"#,
    );
    let run = w.cairn(&["apply", "-auto-approve"]).failure();
    assert!(run.stderr.contains("local_file.overwrite"), "{}", run.all());
    assert_eq!(w.read("templates/keep.txt"), "original");
}

#[test]
fn count_for_each_locals_and_functions_work_together() {
    let w = Workdir::new();
    w.write(
        "main.tf",
        r#"
provider "local" {
  sandbox {
    read_write = ["./out"]
  }
}

variable "pages" {
  type    = map(string)
  default = { index = "Home", about = "About us" }
}

locals {
  footer = format("-- %s --", lower("CAIRN"))
}

resource "local_file" "page" {
  for_each = var.pages
  filename = "out/${each.key}.html"
  content  = "<h1>${each.value}</h1>${local.footer}"
}

resource "random_id" "n" {
  count       = 2
  byte_length = 2 + count.index
}

output "lengths" {
  value = [for r in random_id.n : length(r.hex)]
}

output "files" {
  value = jsonencode(sort([for p in local_file.page : p.filename]))
}
"#,
    );
    let run = w.cairn(&["apply", "-auto-approve"]).success();
    assert_eq!(w.read("out/index.html"), "<h1>Home</h1>-- cairn --");
    assert_eq!(w.read("out/about.html"), "<h1>About us</h1>-- cairn --");
    let addrs = w.addresses();
    for a in [r#"local_file.page["about"]"#, r#"local_file.page["index"]"#, "random_id.n[0]", "random_id.n[1]"] {
        assert!(addrs.contains(&a.to_string()), "{a} missing from {addrs:?}\n{}", run.all());
    }
    let outputs = &w.state().unwrap()["outputs"];
    assert_eq!(outputs["lengths"]["value"], serde_json::json!([4, 6]));
    assert_eq!(outputs["files"]["value"], r#"["out/about.html","out/index.html"]"#);
    w.cairn(&["plan", "-detailed-exitcode"]).success();

    // Dropping a key destroys just that instance.
    w.write("main.tf", &w.read("main.tf").replace(", about = \"About us\"", ""));
    let run = w.cairn(&["apply", "-auto-approve"]).success();
    assert!(run.stdout.contains("Resources: 0 added, 0 changed, 1 destroyed."), "{}", run.all());
    assert!(!w.exists("out/about.html"));
    assert!(w.exists("out/index.html"));
}

#[test]
fn variables_come_from_flags_then_environment_then_defaults() {
    let w = Workdir::new();
    w.write(
        "main.tf",
        r#"
variable "word" {
  default = "default"
}

resource "null_data" "echo" {
  input = var.word
}

output "word" {
  value = null_data.echo.output
}
"#,
    );
    w.cairn_env(&["apply", "-auto-approve"], &[("CAIRN_VAR_word", "from-env")]).success();
    assert_eq!(w.state().unwrap()["outputs"]["word"]["value"], "from-env");
    w.cairn_env(&["apply", "-auto-approve", "-var", "word=from-flag"], &[("CAIRN_VAR_word", "from-env")]).success();
    assert_eq!(w.state().unwrap()["outputs"]["word"]["value"], "from-flag");
    let run = w.cairn(&["apply", "-auto-approve"]).success();
    assert!(run.stdout.contains("~ input  = \"from-flag\" -> \"default\""), "updated in place:\n{}", run.all());
    assert_eq!(w.state().unwrap()["outputs"]["word"]["value"], "default");
}

#[test]
fn a_reader_that_stops_early_is_no_panic() {
    // `cairn providers inspect local | head -0`: the reader is gone before
    // cairn prints anything.
    let w = Workdir::new();
    let mut child = cairn_e2e::cairn_command(&["providers", "inspect", "local"], &[])
        .current_dir(w.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(141), "ended as a process killed by SIGPIPE would: {stderr}");
}

#[test]
fn log_lines_carry_no_colour_codes_outside_a_terminal() {
    let w = Workdir::new();
    w.write("main.tf", "resource \"null_resource\" \"a\" {}\n");
    let out = w.command(&["plan"], &[("CAIRN_LOG", "debug")]).env_remove("NO_COLOR").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("DEBUG"), "debug lines were logged: {stderr}");
    assert!(!stderr.contains('\u{1b}'), "no escape codes in a pipe: {stderr:?}");
}

#[test]
fn validate_finds_what_plan_would_refuse() {
    let w = Workdir::new();
    // The provider's own check: local_file takes content or content_base64, not both.
    w.write(
        "main.tf",
        "resource \"local_file\" \"a\" {\n  filename       = \"out/a.txt\"\n  content        = \"x\"\n  content_base64 = \"eA==\"\n}\n",
    );
    let run = w.cairn(&["validate"]).failure();
    assert!(
        run.stderr.contains("main.tf:1:1: local_file.a: Exactly one of `content` and `content_base64` must be set"),
        "{}",
        run.all()
    );
    // An unknown function in a local or an output, whose values are not known yet.
    w.write("main.tf", "locals {\n  x = uper(\"a\")\n}\noutput \"o\" {\n  value = lowr(\"b\")\n}\n");
    let run = w.cairn(&["validate"]).failure();
    assert!(run.stderr.contains("main.tf:2:7: Call to unknown function"), "{}", run.all());
    assert!(run.stderr.contains("Did you mean \"upper\"?"), "{}", run.all());
    assert!(run.stderr.contains("main.tf:5:11: Call to unknown function"), "{}", run.all());
    assert!(!run.stdout.contains("Success"), "{}", run.all());
    assert!(w.state().is_none(), "validate writes no state");
}

#[test]
fn providers_cache_warm_compiles_ahead_so_the_first_plan_compiles_nothing() {
    // Issue 38: a CI image warms the cache once; every run after it
    // starts its providers without compiling.
    let w = Workdir::new();
    w.write("main.tf", "resource \"null_resource\" \"a\" {}\n\nresource \"random_id\" \"r\" {\n  byte_length = 2\n}\n");
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path().join("cache").display().to_string();
    let key = cache.path().join("cache.key").display().to_string();
    // Tiered (the default outside the tests): warm compiles optimised code
    // all the same, which is what a CI image wants.
    let env = [("CAIRN_CACHE_DIR", dir.as_str()), ("CAIRN_CACHE_KEY_FILE", key.as_str()), ("CAIRN_COMPILE", "tiered")];
    let warm = w.cairn_env(&["providers", "cache", "warm"], &env).success();
    assert!(warm.stdout.contains("- null: ready (") && warm.stdout.contains("- random: ready ("), "{}", warm.all());
    let plan = plan_with_cache(&w, cache.path(), &[("CAIRN_COMPILE_NOTICE_AFTER_MS", "0")]);
    assert!(!plan.stderr.contains("compiling provider"), "the plan compiled again:\n{}", plan.all());
}

/// `cairn plan` in `w`, with a compiled-code cache of its own in `cache`
/// (cold until a run fills it) and `env`.
fn plan_with_cache(w: &Workdir, cache: &std::path::Path, env: &[(&str, &str)]) -> cairn_e2e::Run {
    let dir = cache.join("cache").display().to_string();
    let key = cache.join("cache.key").display().to_string();
    let mut all = vec![("CAIRN_CACHE_DIR", dir.as_str()), ("CAIRN_CACHE_KEY_FILE", key.as_str())];
    all.extend_from_slice(env);
    w.cairn_env(&["plan"], &all).success()
}

#[test]
fn a_first_run_starts_on_baseline_code_and_the_next_run_loads_optimised_code() {
    // Issue 38: with an empty cache a provider starts on Winch's code at
    // once; a process of its own compiles the optimised code into the
    // cache, which the next run loads.
    let w = Workdir::new();
    w.write("main.tf", "resource \"null_resource\" \"a\" {}\n");
    let cache = tempfile::tempdir().unwrap();
    let env = [("CAIRN_COMPILE", "tiered"), ("CAIRN_COMPILE_NOTICE_AFTER_MS", "0")];
    let cold = plan_with_cache(&w, cache.path(), &env);
    assert!(cold.stdout.contains("1 to add"), "{}", cold.all());
    let notice: Vec<&str> = cold.stderr.lines().filter(|l| l.starts_with("compiling provider ")).collect();
    assert_eq!(notice.len(), 1, "{}", cold.all());
    assert!(
        notice[0].ends_with(
            " MB) for the first run, with the baseline compiler (optimised code follows in the background)…"
        ),
        "{}",
        notice[0]
    );
    let components = cache.path().join("cache").join("components");
    cairn_e2e::wait_for_background_compiles(&components);
    let entries: Vec<_> = std::fs::read_dir(&components).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(entries.len(), 1, "one optimised entry, no lock left: {entries:?}");
    let warm = plan_with_cache(&w, cache.path(), &env);
    assert!(!warm.stderr.contains("compiling provider"), "loaded from the cache:\n{}", warm.all());
}

#[test]
fn an_unknown_compile_mode_is_refused_with_the_modes_there_are() {
    let w = Workdir::new();
    w.write("main.tf", "resource \"null_resource\" \"a\" {}\n");
    let run = w.cairn_env(&["plan"], &[("CAIRN_COMPILE", "fast")]).failure();
    assert!(
        run.stderr.contains("CAIRN_COMPILE=\"fast\" is not a compile mode: use tiered, optimized or baseline"),
        "{}",
        run.all()
    );
}

#[test]
fn cairn_log_debug_shows_cairns_own_lines_and_not_cranelifts() {
    // Issue 32, item 9: a first run at CAIRN_LOG=debug printed 822,341
    // lines of Cranelift's timings (with a Python provider) around cairn's
    // own fifteen. A cold cache makes the run compile its provider.
    let w = Workdir::new();
    w.write("main.tf", "resource \"null_resource\" \"a\" {}\n");
    let run = plan_with_cache(&w, tempfile::tempdir().unwrap().path(), &[("CAIRN_LOG", "debug")]);
    assert!(run.stderr.contains(" DEBUG cairn::engine: configuration parsed"), "{}", run.all());
    let foreign: Vec<&str> = run.stderr.lines().filter(|l| l.contains(" DEBUG ") && !l.contains(" cairn")).collect();
    assert!(foreign.is_empty(), "{} debug lines of other crates, such as {:?}", foreign.len(), foreign.first());
    assert!(!run.stderr.contains("cranelift"), "{}", run.all());

    // Named, a crate logs as asked: the same cold compile, with Cranelift.
    let run = plan_with_cache(
        &w,
        tempfile::tempdir().unwrap().path(),
        &[("CAIRN_LOG", "debug,cranelift=debug"), ("CAIRN_COMPILE", "optimized")],
    );
    let head = &run.stderr[..run.stderr.len().min(4000)];
    assert!(run.stderr.contains(" DEBUG cranelift"), "no Cranelift line:\n{head}");
}

#[test]
fn a_compile_is_announced_on_a_cold_cache_and_not_on_a_warm_one() {
    // Issue 32, item 9: the 20 s first compile of a Python provider printed
    // nothing. A wait of 0 ms announces every compile, so that the test
    // does not depend on how long one takes.
    let w = Workdir::new();
    w.write("main.tf", "resource \"null_resource\" \"a\" {}\n");
    for (mode, ending) in
        [("optimized", " MB) for the first run…"), ("baseline", " MB) for the first run, with the baseline compiler…")]
    {
        let cache = tempfile::tempdir().unwrap();
        let now = [("CAIRN_COMPILE_NOTICE_AFTER_MS", "0"), ("CAIRN_COMPILE", mode)];
        let cold = plan_with_cache(&w, cache.path(), &now);
        let notice: Vec<&str> = cold.stderr.lines().filter(|l| l.starts_with("compiling provider ")).collect();
        assert_eq!(notice.len(), 1, "{mode}: {}", cold.all());
        assert!(notice[0].starts_with("compiling provider null ("), "{mode}: {}", notice[0]);
        assert!(notice[0].ends_with(ending), "{mode}: {}", notice[0]);
        let warm = plan_with_cache(&w, cache.path(), &now);
        assert!(!warm.stderr.contains("compiling provider"), "{mode}: loaded from the cache:\n{}", warm.all());
    }
}
