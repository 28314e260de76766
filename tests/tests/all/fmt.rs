//! `cairn fmt`: the repository's examples are in canonical style (`-check`
//! passes), a misformatted copy fails `-check` with exit 3 and its name,
//! `-diff` shows the change, and `cairn fmt` puts the file back exactly as
//! it was, as `terraform fmt` does.

use cairn_e2e::{Workdir, cairn_in, repo_root};

#[test]
fn the_examples_are_formatted() {
    let run = cairn_in(&repo_root(), &["fmt", "-check", "-recursive", "examples"]);
    assert_eq!(run.code, 0, "{}", run.all());
    assert!(run.stdout.is_empty(), "{}", run.all());
}

#[test]
fn a_misformatted_copy_fails_check_and_is_put_back() {
    let w = Workdir::example("quickstart");
    let canonical = w.read("main.tf");
    // Four-space indents and no spaces around `=`.
    let messy = canonical.replace("\n  ", "\n    ").replace(" = ", "=");
    assert_ne!(messy, canonical);
    w.write("main.tf", &messy);

    let check = w.cairn_here(&["fmt", "-check"]);
    assert_eq!(check.code, 3, "{}", check.all());
    assert_eq!(check.stdout, "main.tf\n");
    assert_eq!(w.read("main.tf"), messy, "-check changes nothing");

    let diff = w.cairn_here(&["fmt", "-check", "-diff"]);
    assert!(diff.stdout.contains("--- old/main.tf\n+++ new/main.tf\n"), "{}", diff.all());

    let fmt = w.cairn_here(&["fmt"]).success();
    assert_eq!(fmt.stdout, "main.tf\n");
    assert_eq!(w.read("main.tf"), canonical);
    let again = w.cairn_here(&["fmt", "-check"]).success();
    assert!(again.stdout.is_empty(), "{}", again.all());
}

#[test]
fn a_syntax_error_exits_2_and_says_where() {
    let w = Workdir::new();
    w.write("bad.tf", "a = {\n");
    let run = w.cairn_here(&["fmt", "-check"]);
    assert_eq!(run.code, 2, "{}", run.all());
    assert!(run.stderr.contains("bad.tf:"), "{}", run.all());
}
