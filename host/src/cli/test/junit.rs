//! `cairn test -junit-xml=FILE`: the results in the JUnit XML format CI
//! systems read, as Terraform writes it: a `testsuite` per test file, a
//! `testcase` per run, with `failure` or `skipped` inside.

use super::{FileResult, Status};

/// The whole report.
pub(super) fn report(files: &[FileResult]) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n");
    for file in files {
        let count = |s: &[Status]| file.runs.iter().filter(|r| s.contains(&r.status)).count();
        out.push_str(&format!(
            "  <testsuite name=\"{}\" tests=\"{}\" skipped=\"{}\" failures=\"{}\" errors=\"{}\">\n",
            escape(&file.name),
            file.runs.len(),
            count(&[Status::Skip]),
            count(&[Status::Fail]),
            count(&[Status::Error]),
        ));
        for run in &file.runs {
            let head = format!("    <testcase name=\"{}\" classname=\"{}\"", escape(&run.name), escape(&file.name));
            match run.status {
                Status::Pass => out.push_str(&format!("{head}></testcase>\n")),
                Status::Skip => out.push_str(&format!("{head}>\n      <skipped></skipped>\n    </testcase>\n")),
                Status::Fail | Status::Error => {
                    let tag = if run.status == Status::Fail { "failure" } else { "error" };
                    let message = run.failures.first().map_or("", String::as_str);
                    out.push_str(&format!(
                        "{head}>\n      <{tag} message=\"{}\"><![CDATA[{}]]></{tag}>\n    </testcase>\n",
                        escape(message),
                        run.failures.join("\n").replace("]]>", "]]]]><![CDATA[>")
                    ));
                }
            }
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

/// Text made safe for an XML attribute or element.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::super::RunResult;
    use super::*;

    #[test]
    fn each_run_is_a_test_case_with_its_failure() {
        let files = [FileResult {
            name: "main.tftest.hcl".into(),
            status: Status::Fail,
            runs: vec![
                RunResult { name: "ok".into(), status: Status::Pass, failures: vec![] },
                RunResult { name: "bad".into(), status: Status::Fail, failures: vec!["a < b".into()] },
            ],
        }];
        let xml = report(&files);
        assert!(
            xml.contains("<testsuite name=\"main.tftest.hcl\" tests=\"2\" skipped=\"0\" failures=\"1\" errors=\"0\">")
        );
        assert!(xml.contains("<testcase name=\"ok\" classname=\"main.tftest.hcl\"></testcase>"));
        assert!(xml.contains("<failure message=\"a &lt; b\"><![CDATA[a < b]]></failure>"), "{xml}");
    }
}
