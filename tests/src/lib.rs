//! Support for cairn's end-to-end tests: the real `cairn` binary, run on
//! temporary copies of configurations, with the real provider components.
//!
//! The binary is built once per test process (a no-op when it is up to
//! date), in the same profile and with the same features as the tests.

pub mod languages;
pub mod loopback_http;
pub mod rabbitmq;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

/// The `cairn` binary, built on first use.
pub fn cairn_binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        // target/<profile>/deps/<test binary> → target/<profile>
        let exe = std::env::current_exe().expect("the test binary knows its path");
        let profile_dir = exe.parent().and_then(Path::parent).expect("tests run from target/<profile>/deps");
        // `cargo test --workspace --no-run` builds the binary (the host
        // crate has integration tests) with exactly the features of the
        // README's test command, so under that command it is a no-op; a
        // plain `cargo build -p cairn` would unify features differently and
        // rebuild wasmtime for minutes.
        let mut build = Command::new(env!("CARGO"));
        build.args(["test", "--workspace", "--no-run", "--quiet"]);
        // Cargo gives this test process the package's CARGO_PKG_* and
        // CARGO_MANIFEST_* variables. Build scripts that declare them with
        // rerun-if-env-changed (ring does) would then rerun on every switch
        // between `cargo test` and this build; the outer cargo has none.
        for (name, _) in std::env::vars_os() {
            let name = name.to_string_lossy();
            if name.starts_with("CARGO_PKG_") || name.starts_with("CARGO_MANIFEST_") || name == "CARGO_CRATE_NAME" {
                build.env_remove(&*name);
            }
        }
        if profile_dir.file_name().is_some_and(|n| n == "release") {
            build.arg("--release");
        }
        let status = build
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("cargo can be started to build the cairn binary");
        assert!(status.success(), "building the cairn binary failed");
        let binary = profile_dir.join("cairn");
        assert!(binary.exists(), "{} was not built", binary.display());
        binary
    })
}

/// The repository's root directory.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ is inside the repository").to_path_buf()
}

/// The case directories of `tests/golden/KIND`, sorted by name.
pub fn golden_cases(kind: &str) -> Vec<PathBuf> {
    let root = repo_root().join("tests/golden").join(kind);
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    cases
}

/// A temporary configuration directory, removed when dropped.
pub struct Workdir {
    dir: tempfile::TempDir,
}

/// What one run of `cairn` printed and returned.
#[derive(Debug)]
pub struct Run {
    /// The exit code.
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Run {
    /// Both streams, for assertion messages.
    pub fn all(&self) -> String {
        format!("exit code {}\n--- stdout\n{}\n--- stderr\n{}", self.code, self.stdout, self.stderr)
    }

    /// Panics unless the run succeeded.
    pub fn success(self) -> Run {
        assert_eq!(self.code, 0, "the command failed:\n{}", self.all());
        self
    }

    /// Standard output read as the `-json` event stream: one object a line.
    pub fn events(&self) -> Vec<serde_json::Value> {
        self.stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON line ({e}): {l}\n{}", self.all())))
            .collect()
    }

    /// Panics unless the run failed with exit code 1.
    pub fn failure(self) -> Run {
        assert_eq!(self.code, 1, "cairn should have failed:\n{}", self.all());
        self
    }
}

impl From<Output> for Run {
    fn from(o: Output) -> Run {
        Run {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

/// Runs the real `terraform` in `dir`, without its update check, for the
/// Terraform compatibility tests. It must be on PATH (scripts/test-tools.sh
/// checks for 1.4 or later; the features some tests compare need later
/// ones, and machines of this project have 1.11.4).
pub fn terraform_in(dir: &Path, args: &[&str]) -> Run {
    Command::new("terraform")
        .args(args)
        .current_dir(dir)
        .env("CHECKPOINT_DISABLE", "1")
        .env("TF_IN_AUTOMATION", "1")
        .env("TF_CLI_CONFIG_FILE", terraform_cli_config())
        .output()
        .expect("terraform (1.11 on this project's machines) must be on PATH for the Terraform compatibility tests")
        .into()
}

/// The terraform CLI configuration of the tests: `hashicorp/null` (the
/// minimal one scripts/test-tools.sh builds from tests/terraform-null) from
/// the filesystem mirror `target/terraform-plugins`, everything else as
/// usual. Written once per test process.
fn terraform_cli_config() -> &'static Path {
    static CONFIG: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    CONFIG.get_or_init(|| {
        let target = languages::target_dir();
        let mirror = target.join("terraform-plugins");
        let config = format!(
            "provider_installation {{\n  filesystem_mirror {{\n    path    = {mirror:?}\n    include = [\"registry.terraform.io/hashicorp/null\"]\n  }}\n  direct {{\n    exclude = [\"registry.terraform.io/hashicorp/null\"]\n  }}\n}}\n",
            mirror = mirror.display().to_string()
        );
        // Written aside and renamed, so that a test process starting at
        // the same time never reads half a file.
        let path = target.join("terraform-cli.tfrc");
        let written = target.join(format!("terraform-cli.tfrc.{}", std::process::id()));
        std::fs::write(&written, config).expect("the target directory is writable");
        std::fs::rename(&written, &path).expect("the target directory is writable");
        path
    })
}

impl Workdir {
    /// An empty configuration directory.
    pub fn new() -> Workdir {
        Workdir { dir: tempfile::tempdir().expect("a temporary directory can be made") }
    }

    /// A copy of one of the repository's example configurations.
    pub fn example(name: &str) -> Workdir {
        let w = Workdir::new();
        let src = repo_root().join("examples").join(name);
        for entry in std::fs::read_dir(&src).expect("the example exists") {
            let entry = entry.unwrap();
            if entry.file_type().unwrap().is_file() && entry.file_name() != "cairn.state.json" {
                std::fs::copy(entry.path(), w.path().join(entry.file_name())).unwrap();
            }
        }
        w
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Runs the real `terraform` here: see [`terraform_in`].
    pub fn terraform(&self, args: &[&str]) -> Run {
        terraform_in(self.path(), args)
    }

    /// Writes a file (creating directories), relative to the directory.
    pub fn write(&self, name: &str, content: &str) {
        let path = self.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }

    /// Reads a file relative to the directory.
    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.path().join(name)).unwrap_or_else(|e| panic!("reading {name}: {e}"))
    }

    /// Whether a file exists relative to the directory.
    pub fn exists(&self, name: &str) -> bool {
        self.path().join(name).exists()
    }

    /// Builds the provider crate `package` and copies its component into
    /// the directory as `<name>.wasm`, for a `required_providers` entry
    /// `name = { source = "./<name>.wasm" }` (see [`required_providers`]).
    pub fn install_provider(&self, name: &str, package: &str) {
        let to = self.path().join(format!("{name}.wasm"));
        std::fs::copy(component(package), &to).unwrap_or_else(|e| panic!("copying {package} to {}: {e}", to.display()));
    }

    /// Rewrites the state file with `edit` applied to its JSON: for setting
    /// up a state that no well-behaved run would produce.
    pub fn edit_state(&self, edit: impl FnOnce(&mut serde_json::Value)) {
        let mut state = self.state().expect("there is a state to edit");
        edit(&mut state);
        let text = serde_json::to_string_pretty(&state).unwrap();
        std::fs::write(self.path().join("cairn.state.json"), text).unwrap();
    }

    /// Runs `cairn ARGS DIR` and waits for it.
    pub fn cairn(&self, args: &[&str]) -> Run {
        self.cairn_env(args, &[])
    }

    /// Runs `cairn ARGS DIR` with extra environment variables.
    pub fn cairn_env(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        self.command(args, env).stdin(Stdio::null()).output().expect("cairn runs").into()
    }

    /// Runs `cairn ARGS` in the directory, with no directory argument: for
    /// commands whose positional arguments are something else (`apply
    /// FILE`, `state list ADDR…`, `output NAME`, `providers inspect FILE`).
    pub fn cairn_here(&self, args: &[&str]) -> Run {
        cairn_in(self.path(), args)
    }

    /// [`Workdir::cairn_here`] with extra environment variables.
    pub fn cairn_here_env(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut cmd = cairn_command(args, env);
        cmd.current_dir(self.path()).stdin(Stdio::null()).output().expect("cairn runs").into()
    }

    /// The command for `cairn ARGS DIR`, not started.
    pub fn command(&self, args: &[&str], env: &[(&str, &str)]) -> Command {
        let mut cmd = cairn_command(args, env);
        cmd.arg(self.path());
        cmd
    }

    /// The state file parsed, or None when there is none; panics when it
    /// is not valid JSON — a state file must never be.
    pub fn state(&self) -> Option<serde_json::Value> {
        let path = self.path().join("cairn.state.json");
        let text = std::fs::read_to_string(&path).ok()?;
        Some(serde_json::from_str(&text).unwrap_or_else(|e| panic!("the state file is not valid JSON ({e}):\n{text}")))
    }

    /// The raw state file, or empty when there is none.
    pub fn state_text(&self) -> String {
        std::fs::read_to_string(self.path().join("cairn.state.json")).unwrap_or_default()
    }

    /// Panics, saying where, if `needle` (an ephemeral value, or the start
    /// every such value has) is in the output and log of the `plan` saved
    /// to `plan_file` (in this directory), of the `apply`, in that plan
    /// file or in the state, which must exist.
    pub fn assert_stored_nowhere(&self, needle: &str, plan: &Run, apply: &Run, plan_file: &str) {
        let plan_file = std::fs::read(self.path().join(plan_file)).expect("the plan is saved");
        let state = std::fs::read_to_string(self.path().join("cairn.state.json")).expect("the state is written");
        for (what, text) in [
            ("the plan's output and log", plan.all()),
            ("the apply's output and log", apply.all()),
            ("the plan file", String::from_utf8_lossy(&plan_file).into_owned()),
            ("the state", state),
        ] {
            assert!(!text.contains(needle), "{what} holds {needle:?}, an ephemeral value:\n{text}");
        }
    }

    /// The attributes of one resource instance in the state.
    pub fn attributes(&self, addr: &str) -> serde_json::Value {
        let state = self.state().expect("there is a state");
        state["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["addr"] == addr)
            .unwrap_or_else(|| panic!("{addr} is not in the state:\n{state:#}"))["attributes"]
            .clone()
    }

    /// The addresses in the state.
    pub fn addresses(&self) -> Vec<String> {
        let Some(state) = self.state() else { return Vec::new() };
        state["resources"].as_array().unwrap().iter().map(|r| r["addr"].as_str().unwrap().to_string()).collect()
    }
}

/// The `local` provider's block granting it `./out`, where the tests'
/// files go.
pub const LOCAL_OUT_GRANT: &str = r#"
provider "local" {
  sandbox {
    read_write = ["./out"]
  }
}
"#;

impl Workdir {
    /// The identity and last write of the file `name`: equal before and
    /// after a run only if the run neither re-created nor rewrote it.
    pub fn file_stamp(&self, name: &str) -> (u64, i64, i64) {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(self.path().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        (m.ino(), m.mtime(), m.mtime_nsec())
    }
}

impl Default for Workdir {
    fn default() -> Workdir {
        Workdir::new()
    }
}

/// Runs `cairn ARGS` (no configuration directory) in `dir` and waits for it.
pub fn cairn_in(dir: &Path, args: &[&str]) -> Run {
    let mut cmd = cairn_command(args, &[]);
    cmd.current_dir(dir).stdin(Stdio::null()).output().expect("cairn runs").into()
}

/// `cairn ARGS` with the test run's environment (its compiled-code cache,
/// no colours, no log filter, no notice of a slow compile) and `env` on
/// top, not started.
pub fn cairn_command(args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(cairn_binary());
    cmd.args(args);
    cmd.env_remove("CAIRN_LOG").env("NO_COLOR", "1");
    // Whichever test compiles a provider first would print "compiling
    // provider …" when that takes over a second: an hour keeps every
    // test's output the same however loaded the machine is.
    cmd.env("CAIRN_COMPILE_NOTICE_AFTER_MS", "3600000");
    use_shared_cache(&mut cmd);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// Points `command` (cairn, or a script that runs it) at the test run's
/// cache of compiled components and at that cache's key. Every run of the
/// binary goes through here: a run with another key would find the
/// entries unsigned for it and compile the component again (ten seconds
/// for a Python one), replacing them for everyone else.
pub fn use_shared_cache(command: &mut Command) -> &mut Command {
    let cache = shared_cache_dir();
    // Baseline (Winch) code, cached, and no background compile: a test's
    // output and timing then do not depend on whether another test's
    // background compile has finished, and a test run with an empty cache
    // (every CI run) compiles each provider about four times faster than
    // Cranelift would (the framework provider tfhttp: 16 s against 74 s
    // on two cores), which is what a fresh run mostly waits for. Tiered
    // and optimised compiles have tests of their own, which set
    // CAIRN_COMPILE themselves.
    command.env("CAIRN_COMPILE", "baseline");
    // The key is kept outside the cache, as a user's is (and not in the
    // home of whoever runs the tests).
    command.env("CAIRN_CACHE_KEY_FILE", cache.with_extension("key")).env("CAIRN_CACHE_DIR", cache)
}

/// Waits until no background compile of a tiered first run holds a lock
/// (`ENTRY.compiling`) in the compiled-code cache's `components` directory.
///
/// # Panics
///
/// After five minutes, naming the directory.
pub fn wait_for_background_compiles(components: &std::path::Path) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
    loop {
        let locked = std::fs::read_dir(components)
            .map(|entries| entries.flatten().any(|e| e.path().extension().is_some_and(|x| x == "compiling")))
            .unwrap_or(true);
        if !locked {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "a background compile in {} never ended", components.display());
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// One cache of compiled components for the whole test run, not the
/// user's.
fn shared_cache_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().and_then(Path::parent).unwrap().join("cairn-test-cache")
}

/// The component of a bundled provider (`null`, `local`, `random`), built
/// from source as the host's build script builds it.
pub fn bundled_component(name: &str) -> PathBuf {
    component(&format!("cairn-provider-{name}"))
}

/// The component of the provider crate `package` of this workspace (e.g.
/// `cairn-provider-violations`), built from source once per test process.
pub fn component(package: &str) -> PathBuf {
    cairn::runtime::testing::build_component(package)
}

/// A `terraform { required_providers { … } }` block declaring each local
/// name's source as `./<name>.wasm`, as [`Workdir::install_provider`] puts it.
pub fn required_providers(names: &[&str]) -> String {
    let entries: String = names.iter().map(|n| format!("    {n} = {{ source = \"./{n}.wasm\" }}\n")).collect();
    format!("terraform {{\n  required_providers {{\n{entries}  }}\n}}\n")
}

/// The start of every configuration of the `recorder` test provider: its
/// source, a grant of `./log` (where it keeps objects and its log of
/// operations), and a variable `ka` tests use to force replacements.
pub const RECORDER_HEADER: &str = r#"
terraform {
  required_providers {
    recorder = { source = "./recorder.wasm" }
  }
}

provider "recorder" {
  sandbox {
    read_write = ["./log"]
  }
}

variable "ka" {
  default = "1"
}
"#;

/// A working directory with the recorder provider and `config` (after
/// [`RECORDER_HEADER`]) as its configuration.
pub fn recorder_workdir(config: &str) -> Workdir {
    let w = Workdir::new();
    w.install_provider("recorder", "cairn-provider-recorder");
    std::fs::create_dir_all(w.path().join("log")).unwrap();
    w.configure_recorder(config);
    w
}

impl Workdir {
    /// Replaces the configuration with `config` after [`RECORDER_HEADER`].
    pub fn configure_recorder(&self, config: &str) {
        self.write("main.tf", &format!("{RECORDER_HEADER}{config}"));
    }
}

/// A private OCI registry for the distribution tests: Debian's
/// `docker-registry` (the CNCF distribution registry) serving a temporary
/// directory on a free loopback port, stopped when dropped.
pub struct Registry {
    /// `127.0.0.1:PORT`.
    pub host: String,
    child: std::process::Child,
    _dir: tempfile::TempDir,
}

/// Where Debian installs the registry.
const REGISTRY_BINARY: &str = "/usr/bin/docker-registry";

impl Registry {
    /// Starts a registry and waits until it answers.
    ///
    /// # Panics
    ///
    /// When `docker-registry` is not installed (the test fails, it does not
    /// skip: `scripts/test.sh` installs it), or when it does not start.
    pub fn start() -> Registry {
        assert!(
            Path::new(REGISTRY_BINARY).exists(),
            "{REGISTRY_BINARY} is missing: the OCI registry tests need Debian's docker-registry. \
             Run the tests with scripts/test.sh, which installs it (apt-get install docker-registry)."
        );
        let dir = tempfile::tempdir().expect("a temporary directory can be made");
        // A free port: bind, read it, release it for the registry.
        let port =
            TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a loopback port is free").port();
        let host = format!("127.0.0.1:{port}");
        let config = dir.path().join("config.yml");
        let storage = dir.path().join("data");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: {host}\n",
                storage.display()
            ),
        )
        .expect("the registry's configuration can be written");
        let child = Command::new(REGISTRY_BINARY)
            .arg("serve")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{REGISTRY_BINARY} cannot be started: {e}"));
        let mut registry = Registry { host, child, _dir: dir };
        // Ready when GET /v2/ answers 200; 200 tries of 50 ms at most.
        for _ in 0..200 {
            if registry.get("/v2/").is_some_and(|(status, _)| status == 200) {
                return registry;
            }
            if let Ok(Some(status)) = registry.child.try_wait() {
                panic!("{REGISTRY_BINARY} exited at start: {status}");
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("{REGISTRY_BINARY} did not answer on {} within 10 s", registry.host);
    }

    /// The digest of the manifest `repository:tag` (`sha256:…`).
    pub fn digest(&self, repository: &str, tag: &str) -> String {
        let (status, head) = self.get(&format!("/v2/{repository}/manifests/{tag}")).expect("the registry answers");
        assert_eq!(status, 200, "no manifest {repository}:{tag}:\n{head}");
        head.lines()
            .find_map(|l| {
                l.strip_prefix("Docker-Content-Digest: ").or_else(|| l.strip_prefix("docker-content-digest: "))
            })
            .unwrap_or_else(|| panic!("no digest in:\n{head}"))
            .trim()
            .to_string()
    }

    /// A plain HTTP/1.1 GET (HEAD-like: the head of the answer is kept),
    /// with the OCI manifest media type accepted.
    fn get(&self, path: &str) -> Option<(u16, String)> {
        use std::io::{Read as _, Write as _};
        let mut stream = std::net::TcpStream::connect(&self.host).ok()?;
        let request = format!(
            "GET {path} HTTP/1.1\r\nHost: {}\r\nAccept: application/vnd.oci.image.manifest.v1+json\r\nConnection: close\r\n\r\n",
            self.host
        );
        stream.write_all(request.as_bytes()).ok()?;
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).ok()?;
        let answer = String::from_utf8_lossy(&answer).into_owned();
        let head = answer.split("\r\n\r\n").next()?.to_string();
        let status = head.split_whitespace().nth(1)?.parse().ok()?;
        Some((status, head))
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A PostgreSQL server for the state backend tests: Debian's PostgreSQL,
/// one per test run, on a free loopback port with its own data directory
/// in a temporary directory. Every test takes a schema of its own
/// ([`Postgres::schema`]), so tests share the server and never each
/// other's state.
///
/// Logins over TCP are those of a real server, not `trust` for all
/// ([`PG_HBA`]): the superuser `postgres`, which the state backend tests
/// and [`Postgres::psql`] use, logs in without a password; every other
/// role must give its password, by SCRAM-SHA-256, except the one role
/// [`Postgres::MD5_ROLE`], which logs in by md5 (a test sets its password
/// with `password_encryption = 'md5'`). So the `postgresql` provider's
/// password logins are tested over the wire.
///
/// It is stopped, and its directory removed, when the test process ends
/// (however it ends): a shell started with it waits for its standard input
/// to close, which happens when this process exits, then stops the server.
pub struct Postgres {
    /// The loopback port it listens on.
    pub port: u16,
    /// Holds the shell's standard input open while this process lives.
    _stop: std::process::ChildStdin,
    /// The shell that stops the server; never waited for: it ends after
    /// this process.
    _shell: std::process::Child,
}

/// Where Debian installs PostgreSQL's programs: `/usr/lib/postgresql/<version>/bin`.
const POSTGRES_ROOT: &str = "/usr/lib/postgresql";

/// The test server's `pg_hba.conf`: TCP on loopback only; the superuser
/// `postgres` trusted, [`Postgres::MD5_ROLE`] by md5, every other role by
/// SCRAM-SHA-256. The first line that matches a connection decides.
const PG_HBA: &str = "\
# TYPE  DATABASE  USER             ADDRESS       METHOD
host    all       postgres         127.0.0.1/32  trust
host    all       cairn_md5_login  127.0.0.1/32  md5
host    all       all              127.0.0.1/32  scram-sha-256
";

impl Postgres {
    /// The one role that logs in by md5 rather than SCRAM-SHA-256
    /// ([`PG_HBA`]); a test creates it, with its password stored as md5.
    pub const MD5_ROLE: &'static str = "cairn_md5_login";

    /// The test run's server, started on first use.
    ///
    /// # Panics
    ///
    /// When PostgreSQL is not installed (the test fails, it does not skip:
    /// `scripts/test.sh` installs it), or when it does not start.
    pub fn shared() -> &'static Postgres {
        static SERVER: OnceLock<Postgres> = OnceLock::new();
        SERVER.get_or_init(Postgres::start)
    }

    /// Starts a server: `initdb` a data directory (the `postgres`
    /// superuser), replace its `pg_hba.conf` with [`PG_HBA`] (passwords for
    /// every role but `postgres`), start `postgres` on a free loopback port
    /// without a Unix socket, and wait until it accepts connections.
    /// PostgreSQL refuses to run as root, so as root both run as `nobody`.
    fn start() -> Postgres {
        let bin = postgres_bin();
        let dir = tempfile::Builder::new().prefix("cairn-pg-").tempdir().expect("a temporary directory can be made");
        // Kept until the server stops: the shell below removes it.
        let dir = dir.keep();
        let data = dir.join("data");
        let nobody = running_as_root().then(nobody);
        if let Some((uid, gid)) = nobody {
            std::os::unix::fs::chown(&dir, Some(uid), Some(gid)).expect("the data directory can be given to nobody");
        }
        let run_as = |program: &Path| -> Command {
            match nobody {
                Some((uid, gid)) => {
                    let mut c = Command::new("setpriv");
                    c.arg(format!("--reuid={uid}")).arg(format!("--regid={gid}")).args(["--clear-groups", "--"]);
                    c.arg(program);
                    c
                }
                None => Command::new(program),
            }
        };
        let initdb = run_as(&bin.join("initdb"))
            .arg("-D")
            .arg(&data)
            .args(["-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"])
            .output()
            .expect("initdb can be started");
        assert!(
            initdb.status.success(),
            "initdb failed:\n{}{}",
            String::from_utf8_lossy(&initdb.stdout),
            String::from_utf8_lossy(&initdb.stderr)
        );
        // Overwritten in place: the file keeps initdb's owner and mode.
        std::fs::write(data.join("pg_hba.conf"), PG_HBA).expect("pg_hba.conf can be written");
        let port =
            TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a loopback port is free").port();
        let postgres = run_as(&bin.join("postgres"));
        let mut server: Vec<String> = std::iter::once(postgres.get_program())
            .chain(postgres.get_args())
            .map(|a| shell_quote(&a.to_string_lossy()))
            .collect();
        server.extend(
            [
                "-D",
                &data.to_string_lossy(),
                "-p",
                &port.to_string(),
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                "unix_socket_directories=",
                "-c",
                "fsync=off",
                "-c",
                "max_connections=200",
            ]
            .map(shell_quote),
        );
        // Fast shutdown (SIGINT) once standard input closes, then the
        // directory goes.
        let script = format!(
            "{} >{log} 2>&1 & pid=$!; cat >/dev/null; kill -INT $pid; wait $pid; rm -rf {dir}",
            server.join(" "),
            log = shell_quote(&dir.join("server.log").to_string_lossy()),
            dir = shell_quote(&dir.to_string_lossy()),
        );
        let (mut shell, stop) = spawn_until_stdin_closes(&script);
        // Ready when pg_isready says so; 300 tries of 100 ms at most.
        for _ in 0..300 {
            let ready = Command::new(bin.join("pg_isready"))
                .args(["-q", "-h", "127.0.0.1", "-p", &port.to_string(), "-U", "postgres"])
                .status()
                .is_ok_and(|s| s.success());
            if ready {
                return Postgres { port, _stop: stop, _shell: shell };
            }
            if let Ok(Some(status)) = shell.try_wait() {
                let log = std::fs::read_to_string(dir.join("server.log")).unwrap_or_default();
                panic!("postgres exited at start ({status}):\n{log}");
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let log = std::fs::read_to_string(dir.join("server.log")).unwrap_or_default();
        panic!("postgres did not accept connections on 127.0.0.1:{port} within 30 s:\n{log}");
    }

    /// The connection string of the server's `postgres` database, as the
    /// `superuser` postgres.
    pub fn conn_str(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres?sslmode=disable", self.port)
    }

    /// A server of the calling test's own, for a test that stops it
    /// ([`Postgres::stop`]); started as [`Postgres::shared`] is.
    pub fn private() -> Postgres {
        Postgres::start()
    }

    /// Stops the server (PostgreSQL's fast shutdown) and waits until it and
    /// its directory are gone.
    pub fn stop(self) {
        let Postgres { _stop, mut _shell, .. } = self;
        drop(_stop);
        let _ = _shell.wait();
    }

    /// Runs `sql` in database `database` as the superuser `postgres`, with
    /// psql; returns its rows, one a line, columns separated by `|`.
    ///
    /// # Panics
    ///
    /// When psql fails (the statement's error is in the message).
    pub fn psql(&self, database: &str, sql: &str) -> String {
        let out = Command::new(postgres_bin().join("psql"))
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", "postgres", "-d", database])
            .args(["-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-c", sql])
            .output()
            .expect("psql can be started");
        assert!(
            out.status.success(),
            "psql -d {database:?} -c {sql:?} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim_end().to_string()
    }

    /// Runs `sql` in database `database` as `user`, logging in with
    /// `password` (SCRAM-SHA-256, as the server asks of every role but the
    /// superuser); returns its rows as [`Postgres::psql`] does.
    ///
    /// # Panics
    ///
    /// When psql fails: a wrong password among the reasons.
    pub fn psql_as(&self, user: &str, password: &str, database: &str, sql: &str) -> String {
        let out = Command::new(postgres_bin().join("psql"))
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", user, "-d", database])
            .args(["-X", "-q", "-t", "-A", "-w", "-v", "ON_ERROR_STOP=1", "-c", sql])
            .env("PGPASSWORD", password)
            .output()
            .expect("psql can be started");
        assert!(
            out.status.success(),
            "psql -U {user:?} -d {database:?} -c {sql:?} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim_end().to_string()
    }

    /// A schema name no other test of this run uses, from `test`.
    pub fn schema(&self, test: &str) -> String {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        format!("{test}_{n}")
    }
}

/// The `bin` directory of the newest PostgreSQL installed.
fn postgres_bin() -> PathBuf {
    let versions = std::fs::read_dir(POSTGRES_ROOT).ok().into_iter().flatten().filter_map(|e| {
        let entry = e.ok()?;
        let version: u32 = entry.file_name().to_str()?.parse().ok()?;
        entry.path().join("bin/postgres").exists().then(|| (version, entry.path().join("bin")))
    });
    versions.max_by_key(|(v, _)| *v).map(|(_, bin)| bin).unwrap_or_else(|| {
        panic!(
            "PostgreSQL is missing ({POSTGRES_ROOT}/<version>/bin/postgres): the state backend tests need Debian's \
             postgresql package. Run the tests with scripts/test.sh, which installs it (apt-get install postgresql)."
        )
    })
}

/// Whether this process runs as root: a file it creates is owned by its
/// user.
fn running_as_root() -> bool {
    use std::os::unix::fs::MetadataExt as _;
    let probe = tempfile::tempfile().expect("a temporary file can be made");
    probe.metadata().expect("a file has metadata").uid() == 0
}

/// The uid and gid of `nobody`, from `id`.
fn nobody() -> (u32, u32) {
    let id = |flag: &str| -> u32 {
        let out = Command::new("id").args([flag, "nobody"]).output().expect("id can be started");
        String::from_utf8_lossy(&out.stdout).trim().parse().expect("nobody exists")
    };
    (id("-u"), id("-g"))
}

/// Starts `sh -c script` with its output discarded and its standard input
/// a pipe, and returns the shell and that pipe. A test server's script
/// waits on `cat >/dev/null` and then stops the server: dropping the pipe
/// (when the test process ends, or on purpose) is what stops it.
fn spawn_until_stdin_closes(script: &str) -> (std::process::Child, std::process::ChildStdin) {
    let mut shell = Command::new("sh")
        .arg("-c")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("sh can be started");
    let stop = shell.stdin.take().expect("the shell's standard input is piped");
    (shell, stop)
}

/// `text` quoted for `sh`.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}
