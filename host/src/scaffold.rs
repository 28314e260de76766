//! `cairn providers new`: the files of a new provider project that builds
//! and passes `cairn providers check` as written.
//!
//! The templates live in `host/templates/<lang>/`, with `__NAME__` where
//! the provider's name goes. A project carries a copy of the SDK this
//! cairn was built with (`sdk/`, and for Python and JavaScript the WIT in
//! `wit/`), so that it builds outside cairn's repository and speaks the
//! interface this cairn speaks.

use std::path::PathBuf;

/// The languages a project can be made in.
pub const LANGUAGES: &[&str] = &["rust", "python", "js", "c", "go"];

/// One file of a project: where, what, and whether it is a script to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectFile {
    /// Relative to the project's directory.
    pub path: PathBuf,
    /// The file's text.
    pub text: String,
    /// Whether it is made executable (a build script).
    pub executable: bool,
}

/// Files by path: the text of each, templates or copies.
type Files = &'static [(&'static str, &'static str)];

/// The templates of a Rust project.
const RUST: Files = &[
    ("Cargo.toml", include_str!("../templates/rust/Cargo.toml.tmpl")),
    ("src/lib.rs", include_str!("../templates/rust/src/lib.rs.tmpl")),
    ("build.sh", include_str!("../templates/rust/build.sh")),
    ("example/main.tf", include_str!("../templates/rust/example/main.tf.tmpl")),
    ("README.md", include_str!("../templates/rust/README.md.tmpl")),
];

/// The Rust SDK's sources, copied into a project as `sdk/`.
const RUST_SDK: Files = &[
    ("sdk/src/lib.rs", include_str!("../../providers/sdk/src/lib.rs")),
    ("sdk/src/diag.rs", include_str!("../../providers/sdk/src/diag.rs")),
    ("sdk/src/files.rs", include_str!("../../providers/sdk/src/files.rs")),
    ("sdk/src/glue.rs", include_str!("../../providers/sdk/src/glue.rs")),
    ("sdk/src/heap.rs", include_str!("../../providers/sdk/src/heap.rs")),
    ("sdk/src/log.rs", include_str!("../../providers/sdk/src/log.rs")),
    ("sdk/src/provider.rs", include_str!("../../providers/sdk/src/provider.rs")),
    ("sdk/src/random.rs", include_str!("../../providers/sdk/src/random.rs")),
    ("sdk/src/schema.rs", include_str!("../../providers/sdk/src/schema.rs")),
    ("sdk/src/value.rs", include_str!("../../providers/sdk/src/value.rs")),
    ("sdk/wit/provider.wit", include_str!("../../wit/provider.wit")),
];

/// The templates of a Python project (componentize-py).
const PYTHON: Files = &[
    ("app.py", include_str!("../templates/python/app.py.tmpl")),
    ("test_app.py", include_str!("../templates/python/test_app.py.tmpl")),
    ("build.sh", include_str!("../templates/python/build.sh")),
    ("test.sh", include_str!("../templates/python/test.sh")),
    ("example/main.tf", include_str!("../templates/python/example/main.tf.tmpl")),
    ("README.md", include_str!("../templates/python/README.md.tmpl")),
];

/// The Python SDK and the WIT it is built against.
const PYTHON_SDK: Files = &[
    ("sdk/cairn_provider/__init__.py", include_str!("../../providers/sdk-python/cairn_provider/__init__.py")),
    ("sdk/cairn_provider/glue.py", include_str!("../../providers/sdk-python/cairn_provider/glue.py")),
    ("sdk/cairn_provider/log.py", include_str!("../../providers/sdk-python/cairn_provider/log.py")),
    ("sdk/cairn_provider/provider.py", include_str!("../../providers/sdk-python/cairn_provider/provider.py")),
    ("sdk/cairn_provider/schema.py", include_str!("../../providers/sdk-python/cairn_provider/schema.py")),
    ("sdk/cairn_provider/values.py", include_str!("../../providers/sdk-python/cairn_provider/values.py")),
    ("sdk/stamp_identity.py", include_str!("../../providers/sdk-python/stamp_identity.py")),
    // The SDK's world (provider-world plus the ephemeral-resources export),
    // for a provider that offers ephemeral resources.
    ("sdk/wit/world.wit", include_str!("../../providers/sdk-python/wit/world.wit")),
    ("sdk/wit/deps/provider/provider.wit", include_str!("../../wit/provider.wit")),
    ("wit/provider.wit", include_str!("../../wit/provider.wit")),
];

/// The templates of a JavaScript project (componentize-js).
const JS: Files = &[
    ("app.js", include_str!("../templates/js/app.js.tmpl")),
    ("test/app.test.mjs", include_str!("../templates/js/test/app.test.mjs.tmpl")),
    ("build.sh", include_str!("../templates/js/build.sh")),
    ("example/main.tf", include_str!("../templates/js/example/main.tf.tmpl")),
    ("README.md", include_str!("../templates/js/README.md.tmpl")),
];

/// The JavaScript SDK and the WIT it is built against.
const JS_SDK: Files = &[
    ("sdk/cairn-provider.js", include_str!("../../providers/sdk-js/cairn-provider.js")),
    ("sdk/log.js", include_str!("../../providers/sdk-js/log.js")),
    ("sdk/stamp-identity.mjs", include_str!("../../providers/sdk-js/stamp-identity.mjs")),
    // The SDK's world (provider-world plus the ephemeral-resources export),
    // for a provider that offers ephemeral resources.
    ("sdk/wit/world.wit", include_str!("../../providers/sdk-js/wit/world.wit")),
    ("sdk/wit/deps/provider/provider.wit", include_str!("../../wit/provider.wit")),
    ("wit/provider.wit", include_str!("../../wit/provider.wit")),
];

/// The templates of a C project (clang wasm32-wasi + `cairn providers
/// componentize`).
const C: Files = &[
    ("provider.c", include_str!("../templates/c/provider.c.tmpl")),
    ("test_provider.c", include_str!("../templates/c/test_provider.c.tmpl")),
    ("build.sh", include_str!("../templates/c/build.sh")),
    ("test.sh", include_str!("../templates/c/test.sh")),
    ("example/main.tf", include_str!("../templates/c/example/main.tf.tmpl")),
    ("README.md", include_str!("../templates/c/README.md.tmpl")),
];

/// The C SDK, its wit-bindgen glue, and the WIT it is built against.
const C_SDK: Files = &[
    ("sdk/cairn.h", include_str!("../../providers/sdk-c/cairn.h")),
    ("sdk/cairn.c", include_str!("../../providers/sdk-c/cairn.c")),
    ("sdk/glue/provider_world.h", include_str!("../../providers/sdk-c/glue/provider_world.h")),
    ("sdk/glue/provider_world.c", include_str!("../../providers/sdk-c/glue/provider_world.c")),
    ("sdk/glue/WIT_SHA256", include_str!("../../providers/sdk-c/glue/WIT_SHA256")),
    ("wit/provider.wit", include_str!("../../wit/provider.wit")),
];

/// The templates of a Go project (standard Go, wasip1 + `cairn providers
/// componentize`).
const GO: Files = &[
    ("main.go", include_str!("../templates/go/main.go.tmpl")),
    ("main_test.go", include_str!("../templates/go/main_test.go.tmpl")),
    ("go.mod", include_str!("../templates/go/go.mod.tmpl")),
    ("build.sh", include_str!("../templates/go/build.sh")),
    ("example/main.tf", include_str!("../templates/go/example/main.tf.tmpl")),
    ("README.md", include_str!("../templates/go/README.md.tmpl")),
];

/// The Go SDK (module `cairn.dev/sdk-go`): its sources, the generated
/// bindings and the runtime they import, and the WIT it is built against
/// (`wit/deps/provider` is cairn's own `wit/provider.wit`). Every file of
/// `providers/sdk-go` but its tests.
const GO_SDK: Files = &[
    ("sdk/README.md", include_str!("../../providers/sdk-go/README.md")),
    ("sdk/cairnhttp/doc.go", include_str!("../../providers/sdk-go/cairnhttp/doc.go")),
    ("sdk/cairnhttp/transport_native.go", include_str!("../../providers/sdk-go/cairnhttp/transport_native.go")),
    ("sdk/cairnhttp/transport_wasip1.go", include_str!("../../providers/sdk-go/cairnhttp/transport_wasip1.go")),
    ("sdk/cmd/stamp-identity/main.go", include_str!("../../providers/sdk-go/cmd/stamp-identity/main.go")),
    ("sdk/diag.go", include_str!("../../providers/sdk-go/diag.go")),
    ("sdk/ephemeral.go", include_str!("../../providers/sdk-go/ephemeral.go")),
    ("sdk/glue.go", include_str!("../../providers/sdk-go/glue.go")),
    ("sdk/go.mod", include_str!("../../providers/sdk-go/go.mod")),
    ("sdk/internal/gopkg/LICENSE", include_str!("../../providers/sdk-go/internal/gopkg/LICENSE")),
    ("sdk/internal/gopkg/README.md", include_str!("../../providers/sdk-go/internal/gopkg/README.md")),
    ("sdk/internal/gopkg/wit/async/async.go", include_str!("../../providers/sdk-go/internal/gopkg/wit/async/async.go")),
    ("sdk/internal/gopkg/wit/async/empty.s", include_str!("../../providers/sdk-go/internal/gopkg/wit/async/empty.s")),
    (
        "sdk/internal/gopkg/wit/runtime/empty.s",
        include_str!("../../providers/sdk-go/internal/gopkg/wit/runtime/empty.s"),
    ),
    (
        "sdk/internal/gopkg/wit/runtime/runtime.go",
        include_str!("../../providers/sdk-go/internal/gopkg/wit/runtime/runtime.go"),
    ),
    (
        "sdk/internal/gopkg/wit/types/future.go",
        include_str!("../../providers/sdk-go/internal/gopkg/wit/types/future.go"),
    ),
    (
        "sdk/internal/gopkg/wit/types/option.go",
        include_str!("../../providers/sdk-go/internal/gopkg/wit/types/option.go"),
    ),
    (
        "sdk/internal/gopkg/wit/types/result.go",
        include_str!("../../providers/sdk-go/internal/gopkg/wit/types/result.go"),
    ),
    (
        "sdk/internal/gopkg/wit/types/stream.go",
        include_str!("../../providers/sdk-go/internal/gopkg/wit/types/stream.go"),
    ),
    ("sdk/internal/gopkg/wit/types/tuple.go", include_str!("../../providers/sdk-go/internal/gopkg/wit/types/tuple.go")),
    ("sdk/internal/gopkg/wit/types/unit.go", include_str!("../../providers/sdk-go/internal/gopkg/wit/types/unit.go")),
    ("sdk/internal/wit/WIT_SHA256", include_str!("../../providers/sdk-go/internal/wit/WIT_SHA256")),
    (
        "sdk/internal/wit/exports/export_cairn_provider_ephemeral_resources/handler.go",
        include_str!(
            "../../providers/sdk-go/internal/wit/exports/export_cairn_provider_ephemeral_resources/handler.go"
        ),
    ),
    (
        "sdk/internal/wit/exports/export_cairn_provider_provider/handler.go",
        include_str!("../../providers/sdk-go/internal/wit/exports/export_cairn_provider_provider/handler.go"),
    ),
    (
        "sdk/internal/wit/exports/export_cairn_provider_state_moves/handler.go",
        include_str!("../../providers/sdk-go/internal/wit/exports/export_cairn_provider_state_moves/handler.go"),
    ),
    (
        "sdk/internal/wit/exports/wit_exports/wit_exports.go",
        include_str!("../../providers/sdk-go/internal/wit/exports/wit_exports/wit_exports.go"),
    ),
    (
        "sdk/internal/wit/imports/cairn_provider_ephemeral_resources/empty.s",
        include_str!("../../providers/sdk-go/internal/wit/imports/cairn_provider_ephemeral_resources/empty.s"),
    ),
    (
        "sdk/internal/wit/imports/cairn_provider_ephemeral_resources/wit_bindings.go",
        include_str!("../../providers/sdk-go/internal/wit/imports/cairn_provider_ephemeral_resources/wit_bindings.go"),
    ),
    (
        "sdk/internal/wit/imports/cairn_provider_files/empty.s",
        include_str!("../../providers/sdk-go/internal/wit/imports/cairn_provider_files/empty.s"),
    ),
    (
        "sdk/internal/wit/imports/cairn_provider_files/wit_bindings.go",
        include_str!("../../providers/sdk-go/internal/wit/imports/cairn_provider_files/wit_bindings.go"),
    ),
    (
        "sdk/internal/wit/imports/cairn_provider_log/empty.s",
        include_str!("../../providers/sdk-go/internal/wit/imports/cairn_provider_log/empty.s"),
    ),
    (
        "sdk/internal/wit/imports/cairn_provider_log/wit_bindings.go",
        include_str!("../../providers/sdk-go/internal/wit/imports/cairn_provider_log/wit_bindings.go"),
    ),
    (
        "sdk/internal/wit/imports/cairn_provider_provider/empty.s",
        include_str!("../../providers/sdk-go/internal/wit/imports/cairn_provider_provider/empty.s"),
    ),
    (
        "sdk/internal/wit/imports/cairn_provider_provider/wit_bindings.go",
        include_str!("../../providers/sdk-go/internal/wit/imports/cairn_provider_provider/wit_bindings.go"),
    ),
    (
        "sdk/internal/wit/imports/cairn_provider_state_moves/empty.s",
        include_str!("../../providers/sdk-go/internal/wit/imports/cairn_provider_state_moves/empty.s"),
    ),
    (
        "sdk/internal/wit/imports/cairn_provider_state_moves/wit_bindings.go",
        include_str!("../../providers/sdk-go/internal/wit/imports/cairn_provider_state_moves/wit_bindings.go"),
    ),
    (
        "sdk/internal/wit/imports/cairn_provider_types/empty.s",
        include_str!("../../providers/sdk-go/internal/wit/imports/cairn_provider_types/empty.s"),
    ),
    (
        "sdk/internal/wit/imports/cairn_provider_types/wit_bindings.go",
        include_str!("../../providers/sdk-go/internal/wit/imports/cairn_provider_types/wit_bindings.go"),
    ),
    (
        "sdk/internal/wit/imports/wasi_clocks_monotonic_clock/empty.s",
        include_str!("../../providers/sdk-go/internal/wit/imports/wasi_clocks_monotonic_clock/empty.s"),
    ),
    (
        "sdk/internal/wit/imports/wasi_clocks_monotonic_clock/wit_bindings.go",
        include_str!("../../providers/sdk-go/internal/wit/imports/wasi_clocks_monotonic_clock/wit_bindings.go"),
    ),
    (
        "sdk/internal/wit/imports/wasi_http_outgoing_handler/empty.s",
        include_str!("../../providers/sdk-go/internal/wit/imports/wasi_http_outgoing_handler/empty.s"),
    ),
    (
        "sdk/internal/wit/imports/wasi_http_outgoing_handler/wit_bindings.go",
        include_str!("../../providers/sdk-go/internal/wit/imports/wasi_http_outgoing_handler/wit_bindings.go"),
    ),
    (
        "sdk/internal/wit/imports/wasi_http_types/empty.s",
        include_str!("../../providers/sdk-go/internal/wit/imports/wasi_http_types/empty.s"),
    ),
    (
        "sdk/internal/wit/imports/wasi_http_types/wit_bindings.go",
        include_str!("../../providers/sdk-go/internal/wit/imports/wasi_http_types/wit_bindings.go"),
    ),
    (
        "sdk/internal/wit/imports/wasi_io_error/empty.s",
        include_str!("../../providers/sdk-go/internal/wit/imports/wasi_io_error/empty.s"),
    ),
    (
        "sdk/internal/wit/imports/wasi_io_error/wit_bindings.go",
        include_str!("../../providers/sdk-go/internal/wit/imports/wasi_io_error/wit_bindings.go"),
    ),
    (
        "sdk/internal/wit/imports/wasi_io_poll/empty.s",
        include_str!("../../providers/sdk-go/internal/wit/imports/wasi_io_poll/empty.s"),
    ),
    (
        "sdk/internal/wit/imports/wasi_io_poll/wit_bindings.go",
        include_str!("../../providers/sdk-go/internal/wit/imports/wasi_io_poll/wit_bindings.go"),
    ),
    (
        "sdk/internal/wit/imports/wasi_io_streams/empty.s",
        include_str!("../../providers/sdk-go/internal/wit/imports/wasi_io_streams/empty.s"),
    ),
    (
        "sdk/internal/wit/imports/wasi_io_streams/wit_bindings.go",
        include_str!("../../providers/sdk-go/internal/wit/imports/wasi_io_streams/wit_bindings.go"),
    ),
    ("sdk/internal/withash/main.go", include_str!("../../providers/sdk-go/internal/withash/main.go")),
    ("sdk/json.go", include_str!("../../providers/sdk-go/json.go")),
    ("sdk/log.go", include_str!("../../providers/sdk-go/log.go")),
    ("sdk/log_native.go", include_str!("../../providers/sdk-go/log_native.go")),
    ("sdk/log_wasip1.go", include_str!("../../providers/sdk-go/log_wasip1.go")),
    ("sdk/move.go", include_str!("../../providers/sdk-go/move.go")),
    ("sdk/provider.go", include_str!("../../providers/sdk-go/provider.go")),
    ("sdk/schema.go", include_str!("../../providers/sdk-go/schema.go")),
    ("sdk/value.go", include_str!("../../providers/sdk-go/value.go")),
    ("sdk/wire.go", include_str!("../../providers/sdk-go/wire.go")),
    ("sdk/wit/deps/cli/cli.wit", include_str!("../../providers/sdk-go/wit/deps/cli/cli.wit")),
    ("sdk/wit/deps/clocks/clocks.wit", include_str!("../../providers/sdk-go/wit/deps/clocks/clocks.wit")),
    (
        "sdk/wit/deps/filesystem/filesystem.wit",
        include_str!("../../providers/sdk-go/wit/deps/filesystem/filesystem.wit"),
    ),
    ("sdk/wit/deps/http/http.wit", include_str!("../../providers/sdk-go/wit/deps/http/http.wit")),
    ("sdk/wit/deps/io/io.wit", include_str!("../../providers/sdk-go/wit/deps/io/io.wit")),
    ("sdk/wit/deps/provider/provider.wit", include_str!("../../wit/provider.wit")),
    ("sdk/wit/deps/random/random.wit", include_str!("../../providers/sdk-go/wit/deps/random/random.wit")),
    ("sdk/wit/deps/sockets/sockets.wit", include_str!("../../providers/sdk-go/wit/deps/sockets/sockets.wit")),
    ("sdk/wit/world.wit", include_str!("../../providers/sdk-go/wit/world.wit")),
];

/// The SDK's manifest outside cairn's workspace: the same crate, with the
/// versions the workspace would give it written out.
const RUST_SDK_MANIFEST: &str = r#"[package]
name = "cairn-provider-sdk"
description = "Write cairn providers in Rust: implement a trait, get a WebAssembly component"
version = "0.2.0"
edition = "2024"
license = "Apache-2.0"

[lib]
name = "cairn_sdk"

[features]
# The SDK's allocator in components (`heap`). Turn default features off to
# install another `#[global_allocator]`.
default = ["heap"]
heap = []

[dependencies]
wit-bindgen = "0.63"
serde_json = { version = "1", features = ["float_roundtrip"] }
getrandom = "0.4"
uuid = { version = "1", features = ["v4"] }
"#;

/// The files of a new provider called `name` in `lang`, or why not.
pub fn project(name: &str, lang: &str) -> Result<Vec<ProjectFile>, String> {
    check_name(name)?;
    let (templates, extra): (Files, Vec<(&str, &str)>) = match lang {
        "rust" => (RUST, [RUST_SDK, &[("sdk/Cargo.toml", RUST_SDK_MANIFEST)]].concat()),
        "python" => (PYTHON, PYTHON_SDK.to_vec()),
        "js" => (JS, JS_SDK.to_vec()),
        "go" => (GO, GO_SDK.to_vec()),
        "c" => (C, C_SDK.to_vec()),
        other => return Err(format!("no template for the language {other:?}; there are: {}", LANGUAGES.join(", "))),
    };
    let filled = templates.iter().map(|(path, text)| (*path, text.replace("__NAME__", name)));
    let copied = extra.into_iter().map(|(path, text)| (path, text.to_string()));
    Ok(filled
        .chain(copied)
        .map(|(path, text)| ProjectFile { path: PathBuf::from(path), executable: path.ends_with(".sh"), text })
        .collect())
}

/// A provider's name is the prefix of its resource types: lower-case
/// letters, digits and underscores, starting with a letter.
fn check_name(name: &str) -> Result<(), String> {
    let valid = name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if valid {
        Ok(())
    } else {
        Err(format!(
            "{name:?} cannot name a provider: use lower-case letters, digits and underscores, starting with a letter \
             (it becomes the prefix of its resource types, as in {name}_greeting)"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rust_project_names_its_provider_everywhere() {
        let files = project("hello", "rust").unwrap();
        let text = |path: &str| &files.iter().find(|f| f.path == std::path::Path::new(path)).unwrap().text;
        assert!(text("Cargo.toml").contains("name = \"cairn-provider-hello\""));
        assert!(text("src/lib.rs").contains("\"hello_greeting\""));
        assert!(text("example/main.tf").contains("hello = { source = \"../hello.wasm\" }"));
        assert!(files.iter().all(|f| !f.text.contains("__NAME__")), "a placeholder is left");
        assert!(files.iter().any(|f| f.path == std::path::Path::new("sdk/wit/provider.wit")));
        assert!(files.iter().find(|f| f.path == std::path::Path::new("build.sh")).unwrap().executable);
    }

    #[test]
    fn the_copied_sdk_is_the_workspace_sdk() {
        let manifest = include_str!("../../providers/sdk/Cargo.toml");
        let version = manifest.lines().find(|l| l.starts_with("version = ")).unwrap();
        assert!(RUST_SDK_MANIFEST.contains(version), "the copied SDK's version differs: {version}");
        // The same features, or the copy builds without what they turn on.
        let features = manifest.split("[features]").nth(1).unwrap().split("\n[").next().unwrap();
        for line in features.lines().filter(|l| !l.is_empty() && !l.starts_with('#')) {
            assert!(RUST_SDK_MANIFEST.contains(line), "the copied SDK's manifest lacks the feature line {line:?}");
        }
        for (copies, dir, into) in [
            (RUST_SDK, "providers/sdk/src", "sdk/src"),
            (PYTHON_SDK, "providers/sdk-python/cairn_provider", "sdk/cairn_provider"),
            (PYTHON_SDK, "providers/sdk-python", "sdk"),
            (JS_SDK, "providers/sdk-js", "sdk"),
            (C_SDK, "providers/sdk-c", "sdk"),
            (C_SDK, "providers/sdk-c/glue", "sdk/glue"),
        ] {
            let sources = std::fs::read_dir(format!("{}/../{dir}", env!("CARGO_MANIFEST_DIR"))).unwrap();
            for source in sources.map(Result::unwrap).filter(|s| s.path().is_file()) {
                let name = format!("{into}/{}", source.file_name().to_string_lossy());
                assert!(copies.iter().any(|(path, _)| *path == name), "{name} is not copied into new projects");
            }
        }
    }

    #[test]
    fn python_and_javascript_projects_carry_their_sdk_and_the_wit() {
        for (lang, app, sdk) in
            [("python", "app.py", "sdk/cairn_provider/glue.py"), ("js", "app.js", "sdk/cairn-provider.js")]
        {
            let files = project("hello", lang).unwrap();
            let has = |path: &str| files.iter().any(|f| f.path == std::path::Path::new(path));
            assert!(has(app) && has(sdk) && has("wit/provider.wit") && has("build.sh"), "{lang}");
            let app = &files.iter().find(|f| f.path == std::path::Path::new(app)).unwrap().text;
            assert!(app.contains("hello_greeting"), "{lang}");
            assert!(files.iter().all(|f| !f.text.contains("__NAME__")), "{lang}: a placeholder is left");
        }
    }

    #[test]
    fn a_go_project_carries_the_whole_go_sdk() {
        let files = project("hello", "go").unwrap();
        let has = |path: &str| files.iter().any(|f| f.path == std::path::Path::new(path));
        assert!(has("main.go") && has("go.mod") && has("sdk/go.mod") && has("sdk/wit/world.wit"));
        assert!(files.iter().all(|f| !f.text.contains("__NAME__")), "a placeholder is left");
        // Every file of the SDK but its tests, in every directory.
        let root = std::path::PathBuf::from(format!("{}/../providers/sdk-go", env!("CARGO_MANIFEST_DIR")));
        let mut dirs = vec![root.clone()];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().map(Result::unwrap) {
                let path = entry.path();
                if path.is_dir() {
                    dirs.push(path);
                } else if !path.to_string_lossy().ends_with("_test.go") {
                    let name = format!("sdk/{}", path.strip_prefix(&root).unwrap().to_string_lossy());
                    let copy = GO_SDK.iter().find(|(p, _)| *p == name);
                    let copy = copy.unwrap_or_else(|| panic!("{name} is not copied into new Go projects"));
                    assert_eq!(copy.1, std::fs::read_to_string(&path).unwrap(), "{name}");
                }
            }
        }
    }

    #[test]
    fn bad_names_and_languages_are_refused() {
        assert!(project("Hello", "rust").unwrap_err().contains("lower-case"));
        assert!(project("my-provider", "rust").is_err());
        assert!(project("hello", "cobol").unwrap_err().contains("no template for the language \"cobol\""));
    }
}
