//! `cairn providers new`: the project it writes builds outside cairn's
//! repository, passes its own test and `cairn providers check`, and its
//! example applies.

use std::path::Path;
use std::process::Command;

use cairn_e2e::{Run, Workdir, cairn_binary, repo_root};

/// Runs `program` in `dir` with the project's builds in one target
/// directory shared by every run of the suite (the SDK's dependencies are
/// compiled once).
fn run_in(dir: &Path, program: &str, args: &[&str]) -> Run {
    Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", repo_root().join("target/scaffold"))
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"))
        .into()
}

#[test]
fn a_new_rust_provider_builds_and_passes_check() {
    let w = Workdir::new();
    let project = w.path().join("hello");
    let cairn = cairn_binary().to_str().unwrap();
    let made = run_in(w.path(), cairn, &["providers", "new", "hello", "--lang", "rust"]);
    assert_eq!(made.code, 0, "{}", made.all());
    assert!(made.stdout.contains("Next: cd "), "{}", made.all());

    let built = run_in(&project, "./build.sh", &[]);
    assert_eq!(built.code, 0, "{}", built.all());
    assert!(project.join("hello.wasm").is_file());

    let tested = run_in(&project, "cargo", &["test", "--quiet"]);
    assert_eq!(tested.code, 0, "{}", tested.all());
    assert!(tested.all().contains("1 passed"), "{}", tested.all());

    let checked = run_in(&project, cairn, &["providers", "check", "hello.wasm"]);
    assert_eq!(checked.code, 0, "{}", checked.all());
    assert!(checked.stdout.contains("8 passed, 0 failed"), "{}", checked.all());

    let applied = run_in(&project, cairn, &["apply", "-auto-approve", "example"]);
    assert_eq!(applied.code, 0, "{}", applied.all());
    assert!(applied.stdout.contains("text = \"Hello, world!\""), "{}", applied.all());

    // A second project may not overwrite the first.
    let again = run_in(w.path(), cairn, &["providers", "new", "hello", "--dir", "hello"]);
    assert_eq!(again.code, 1, "{}", again.all());
    assert!(again.stderr.contains("is not empty"), "{}", again.all());
}
