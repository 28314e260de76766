//! Golden files for the human plan: each folder of `tests/golden/plans/`
//! is a configuration of `terraform_data` (built into both tools), the
//! commands to run on it (`steps`: `apply ARGS` lines, then the `plan
//! ARGS` shown), and in `expected.txt` what Terraform 1.11.4 prints for the
//! last one, made by `tests/golden/plans/make.sh`. cairn must print the
//! same text: nested values over several lines with `=` aligned, `-> null`
//! on destroy, identifying attributes shown, aligned outputs, `Refreshing
//! state...`, the legend and the note about `-out`.
//!
//! Both outputs are normalized alike: object ids (random) become `<id>`,
//! the tool's name `cairn`, and the `Refreshing state...` lines sorted.

use std::path::PathBuf;

use cairn_e2e::Workdir;

fn cases() -> Vec<PathBuf> {
    cairn_e2e::golden_cases("plans")
}

/// Whether `word` is an id as `terraform_data` makes them: a UUID.
fn is_id(word: &str) -> bool {
    let groups: Vec<&str> = word.split('-').collect();
    groups.iter().map(|g| g.len()).eq([8, 4, 4, 4, 12])
        && groups.iter().all(|g| g.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The output with its ids replaced by `<id>` and its refresh lines sorted,
/// as `make.sh` writes Terraform's.
fn normalize(out: &str) -> String {
    let mut text = String::new();
    let mut rest = out;
    while !rest.is_empty() {
        let len = rest.find(|c: char| c.is_ascii_hexdigit()).unwrap_or(rest.len());
        text.push_str(&rest[..len]);
        rest = &rest[len..];
        if rest.get(..36).is_some_and(is_id) {
            text.push_str("<id>");
            rest = &rest[36..];
        } else if let Some(c) = rest.chars().next() {
            text.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    let (mut refreshing, others): (Vec<&str>, Vec<&str>) =
        text.split_inclusive('\n').partition(|l| l.contains(": Refreshing state..."));
    refreshing.sort();
    refreshing.into_iter().chain(others).collect()
}

#[test]
fn plans_read_as_terraform_prints_them() {
    let cases = cases();
    assert!(cases.len() >= 5, "the plan cases: {cases:?}");
    let mut failures = Vec::new();
    for case in &cases {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let w = Workdir::new();
        w.write("main.tf", &std::fs::read_to_string(case.join("main.tf")).unwrap());
        let steps = std::fs::read_to_string(case.join("steps")).unwrap();
        let mut shown = String::new();
        for step in steps.lines() {
            let mut args: Vec<&str> = step.split_whitespace().collect();
            if args[0] == "apply" {
                args.push("-auto-approve");
                w.cairn(&args).success();
            } else {
                shown = w.cairn(&args).success().stdout;
            }
        }
        let expected = std::fs::read_to_string(case.join("expected.txt")).unwrap();
        let got = normalize(&shown);
        if got != expected {
            failures.push(format!("--- {name}: expected (Terraform's)\n{expected}\n--- {name}: got\n{got}"));
        }
    }
    assert!(failures.is_empty(), "plans differ from Terraform's:\n{}", failures.join("\n"));
}

#[test]
fn ids_are_found_for_normalizing() {
    let out = "a [id=0377b682-6526-c64e-3dcf-f327b46e8655]\nx: Refreshing state...\nb: Refreshing state...\n";
    assert_eq!(normalize(out), "b: Refreshing state...\nx: Refreshing state...\na [id=<id>]\n");
}
