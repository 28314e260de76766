//! Golden files for configuration errors: each folder of
//! `tests/golden/diagnostics/` is a broken configuration (`main.tf`, and
//! an `args` file when the command is not `validate`) with the standard
//! error cairn must print for it in `expected.txt`: `Error:
//! FILE:LINE:COLUMN: summary`, the offending line with a caret under the
//! span, then the detail. The same run with `-json` must carry the same
//! place as Terraform's `range`.
//!
//! To accept the current output after an intended change, run the test
//! with `CAIRN_BLESS=1`; it rewrites every `expected.txt` (review the diff).

use std::path::{Path, PathBuf};

use cairn_e2e::Workdir;

fn cases() -> Vec<PathBuf> {
    cairn_e2e::golden_cases("diagnostics")
}

/// The case's command: the words of its `args` file, or `validate`.
fn command(case: &Path) -> Vec<String> {
    match std::fs::read_to_string(case.join("args")) {
        Ok(args) => args.split_whitespace().map(str::to_string).collect(),
        Err(_) => vec!["validate".to_string()],
    }
}

/// A working directory holding the case's configuration files.
fn workdir(case: &Path) -> Workdir {
    let w = Workdir::new();
    for entry in std::fs::read_dir(case).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.ends_with(".tf") || name.ends_with(".tfvars") {
            w.write(&name, &std::fs::read_to_string(&path).unwrap());
        }
    }
    w
}

/// `FILE:LINE:COLUMN` of the first `Error:` line.
fn first_position(stderr: &str) -> (String, u64, u64) {
    let line = stderr.lines().find(|l| l.starts_with("Error: ")).expect("an error");
    let mut parts = line.trim_start_matches("Error: ").splitn(4, ':');
    let file = parts.next().unwrap().to_string();
    let mut number = || parts.next().and_then(|n| n.trim().parse().ok()).unwrap_or_else(|| panic!("{line}"));
    (file, number(), number())
}

#[test]
fn broken_configurations_are_reported_with_their_place_and_a_caret() {
    let bless = std::env::var_os("CAIRN_BLESS").is_some();
    let cases = cases();
    assert!(cases.len() >= 10, "at least ten kinds of broken configuration: {cases:?}");
    let mut failures = Vec::new();
    for case in &cases {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let args = command(case);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let w = workdir(case);
        let run = w.cairn(&args).failure();
        let expected_file = case.join("expected.txt");
        if bless {
            std::fs::write(&expected_file, &run.stderr).unwrap();
        } else {
            let expected = std::fs::read_to_string(&expected_file).unwrap_or_default();
            if run.stderr != expected {
                failures.push(format!("--- {name}: expected\n{expected}\n--- {name}: got\n{}", run.stderr));
            }
        }

        // The same place, as `-json` gives it.
        let (file, line, column) = first_position(&run.stderr);
        let json_args: Vec<&str> = args.iter().copied().chain(["-json"]).collect();
        let json = w.cairn(&json_args).failure();
        let range = match args[0] {
            "validate" => {
                let doc: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
                assert_eq!(doc["valid"], false, "{name}: {}", json.all());
                doc["diagnostics"][0]["range"].clone()
            }
            _ => json.events().into_iter().find(|e| e["type"] == "diagnostic").unwrap()["range"].clone(),
        };
        assert_eq!(range["filename"], file, "{name}: {}", json.all());
        assert_eq!((range["start"]["line"].as_u64(), range["start"]["column"].as_u64()), (Some(line), Some(column)));
        let (start, end) = (range["start"]["byte"].as_u64().unwrap(), range["end"]["byte"].as_u64().unwrap());
        assert!(end > start, "{name}: a span covers at least one character: {range}");
    }
    assert!(
        failures.is_empty(),
        "stderr differs from the golden file (CAIRN_BLESS=1 rewrites them):\n{}",
        failures.join("\n")
    );
}
