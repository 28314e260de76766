//! `cairn providers new`: the project it writes, in each language, builds
//! outside cairn's repository, passes its own test and `cairn providers
//! check`, and its example applies.

use std::path::Path;
use std::process::Command;

use cairn_e2e::languages::{Lang, toolchain};
use cairn_e2e::{Run, Workdir, cairn_binary, repo_root, use_shared_cache};

/// Runs `program` in `dir`: Rust builds share one target directory across
/// the suite (the SDK's dependencies are compiled once), components one
/// compiled-code cache, and the Python and JavaScript tools are the pinned
/// ones `scripts/test.sh` installs.
fn run_in(dir: &Path, program: &str, args: &[&str], tools: &[(&str, &Path)]) -> Run {
    let mut command = Command::new(program);
    command.args(args).current_dir(dir).env("CARGO_TARGET_DIR", repo_root().join("target/scaffold"));
    use_shared_cache(&mut command);
    for (var, tool) in tools {
        command.env(var, tool);
    }
    command.output().unwrap_or_else(|e| panic!("cannot run {program}: {e}")).into()
}

/// Makes the project `hello` in `lang`, builds it, runs its own test
/// (`test`), checks it and applies its example.
fn new_project_works(lang: &str, test: &[&str], tools: &[(&str, &Path)]) {
    let w = Workdir::new();
    let project = w.path().join("hello");
    let cairn = cairn_binary().to_str().unwrap();
    let made = run_in(w.path(), cairn, &["providers", "new", "hello", "--lang", lang], tools);
    assert_eq!(made.code, 0, "{}", made.all());
    assert!(made.stdout.contains("Next: cd "), "{}", made.all());

    let built = run_in(&project, "./build.sh", &[], tools);
    assert_eq!(built.code, 0, "{lang}: {}", built.all());
    assert!(project.join("hello.wasm").is_file());

    // Every language's build writes the provider's name and version into
    // the file, where cairn reads them before running any of it.
    let inspected = run_in(&project, cairn, &["providers", "inspect", "hello.wasm"], tools);
    assert_eq!(inspected.code, 0, "{lang}: {}", inspected.all());
    assert!(inspected.stdout.contains("provider \"hello\"\n"), "{lang}: {}", inspected.all());
    assert!(inspected.stdout.contains("  version: 0.1.0\n"), "{lang}: {}", inspected.all());

    let tested = run_in(&project, test[0], &test[1..], tools);
    assert_eq!(tested.code, 0, "{lang}: {}", tested.all());

    let checked = run_in(&project, cairn, &["providers", "check", "hello.wasm"], tools);
    assert_eq!(checked.code, 0, "{lang}: {}", checked.all());
    assert!(checked.stdout.contains("12 passed, 0 failed"), "{lang}: {}", checked.all());

    let applied = run_in(&project, cairn, &["apply", "-auto-approve", "example"], tools);
    assert_eq!(applied.code, 0, "{lang}: {}", applied.all());
    assert!(applied.stdout.contains("text = \"Hello, world!\""), "{lang}: {}", applied.all());
    let id = |project: &Path| {
        let text = std::fs::read_to_string(project.join("example/cairn.state.json")).unwrap();
        let state: serde_json::Value = serde_json::from_str(&text).unwrap();
        state["resources"][0]["attributes"]["id"].as_str().map(str::to_string)
    };
    let first_id = id(&project).expect("the greeting has an id");

    // An in-place update keeps the object; a new name replaces it.
    let config = project.join("example/main.tf");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, text.replace("name = \"world\"", "name = \"world\"\n  punctuation = \"?\"")).unwrap();
    let updated = run_in(&project, cairn, &["apply", "-auto-approve", "example"], tools);
    assert_eq!(updated.code, 0, "{lang}: {}", updated.all());
    assert!(updated.stdout.contains("1 changed, 0 destroyed"), "{lang}: {}", updated.all());
    assert!(updated.stdout.contains("text = \"Hello, world?\""), "{lang}: {}", updated.all());
    assert_eq!(id(&project).as_deref(), Some(first_id.as_str()), "{lang}: an update in place keeps the object");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, text.replace("name = \"world\"", "name = \"moon\"")).unwrap();
    let replaced = run_in(&project, cairn, &["apply", "-auto-approve", "example"], tools);
    assert_eq!(replaced.code, 0, "{lang}: {}", replaced.all());
    assert!(replaced.stdout.contains("1 added, 0 changed, 1 destroyed"), "{lang}: {}", replaced.all());
    assert_ne!(id(&project).as_deref(), Some(first_id.as_str()), "{lang}: a new name makes a new object");

    // A second project may not overwrite the first.
    let again = run_in(w.path(), cairn, &["providers", "new", "hello", "--lang", lang, "--dir", "hello"], tools);
    assert_eq!(again.code, 1, "{}", again.all());
    assert!(again.stderr.contains("is not empty"), "{}", again.all());
}

#[test]
fn a_new_rust_provider_builds_and_passes_check() {
    new_project_works("rust", &["cargo", "test", "--quiet"], &[]);
}

#[test]
fn a_new_python_provider_builds_and_passes_check() {
    let tool = toolchain(Lang::Python);
    new_project_works("python", &["./test.sh"], &[("CAIRN_COMPONENTIZE_PY", &tool)]);
}

#[test]
fn a_new_javascript_provider_builds_and_passes_check() {
    let tool = toolchain(Lang::JavaScript);
    new_project_works("js", &["node", "--test", "test/"], &[("CAIRN_COMPONENTIZE_JS", &tool)]);
}

#[test]
fn a_new_go_provider_builds_and_passes_check() {
    // Go on PATH (checked here, so that a missing one says what to install);
    // the project's build.sh runs `go` and the cairn binary under test.
    toolchain(Lang::Go);
    new_project_works("go", &["go", "test", "./..."], &[("CAIRN", cairn_binary())]);
}

#[test]
fn a_new_c_provider_builds_and_passes_check() {
    let clang = toolchain(Lang::C);
    // build.sh runs `cairn providers componentize`: the cairn under test.
    new_project_works("c", &["./test.sh"], &[("CC", &clang), ("CAIRN", cairn_binary())]);
}
