//! `file_permission` and `directory_permission` of the bundled `local`
//! provider (issue 32, item 4), applied through the host's `files` import:
//! the plan's modes end up on disk, less the umask of the cairn process,
//! as Terraform's `local` provider creates files and directories with
//! them. Each run sets its own umask, so that the tests do not depend on
//! the umask of whoever runs them.

use std::os::unix::fs::PermissionsExt as _;
use std::process::{Command, Stdio};

use cairn_e2e::{LOCAL_OUT_GRANT, Run, Workdir, cairn_binary, use_shared_cache};

/// Runs `cairn ARGS DIR` under `umask` (an octal string), as a shell would.
fn cairn_with_umask(w: &Workdir, umask: &str, args: &[&str]) -> Run {
    let mut command = Command::new("sh");
    command.args(["-c", &format!("umask {umask} && exec \"$@\""), "sh"]);
    command.arg(cairn_binary()).args(args).arg(w.path());
    command.env_remove("CAIRN_LOG").env("NO_COLOR", "1");
    use_shared_cache(&mut command);
    command.stdin(Stdio::null()).output().expect("cairn runs").into()
}

/// The permission bits of `name` in the directory.
fn mode(w: &Workdir, name: &str) -> u32 {
    let metadata = std::fs::metadata(w.path().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    metadata.permissions().mode() & 0o7777
}

#[test]
fn a_file_permission_of_0600_is_the_mode_on_disk() {
    let w = Workdir::new();
    w.write(
        "main.tf",
        &format!(
            r#"{LOCAL_OUT_GRANT}
resource "local_sensitive_file" "key" {{
  filename             = "out/keys/key.pem"
  content              = "s3cr3t"
  file_permission      = "0600"
  directory_permission = "0700"
}}
"#
        ),
    );
    let plan = cairn_with_umask(&w, "022", &["plan"]).success();
    assert!(plan.stdout.contains("+ file_permission      = \"0600\""), "{}", plan.all());
    cairn_with_umask(&w, "022", &["apply", "-auto-approve"]).success();
    assert_eq!(w.read("out/keys/key.pem"), "s3cr3t");
    assert_eq!(mode(&w, "out/keys/key.pem"), 0o600, "the file's mode is the planned one");
    assert_eq!(mode(&w, "out/keys"), 0o700, "a directory the resource created gets directory_permission");
    // `out` is the grant, which cairn created, not the resource.
    assert_eq!(mode(&w, "out"), 0o755);
    let again = cairn_with_umask(&w, "022", &["plan", "-detailed-exitcode"]);
    assert_eq!(again.code, 0, "{}", again.all());
}

#[test]
fn the_default_permissions_respect_the_umask() {
    let w = Workdir::new();
    w.write(
        "main.tf",
        &format!(
            r#"{LOCAL_OUT_GRANT}
resource "local_file" "site" {{
  filename = "out/site/index.html"
  content  = "hello"
}}
"#
        ),
    );
    cairn_with_umask(&w, "027", &["apply", "-auto-approve"]).success();
    let attrs = w.attributes("local_file.site");
    assert_eq!(
        (attrs["file_permission"].as_str(), attrs["directory_permission"].as_str()),
        (Some("0777"), Some("0777"))
    );
    // Terraform's default of 0777, less the umask: never world-writable.
    assert_eq!(mode(&w, "out/site/index.html"), 0o750);
    assert_eq!(mode(&w, "out/site"), 0o750);
}
