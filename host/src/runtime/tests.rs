//! The runtime against real components: the hostile `misbehave` provider
//! (built from `providers/testing/misbehave`) and the bundled providers.

use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use super::sandbox::DEFAULT_MAX_CONCURRENCY;
use super::*;
use crate::diag::Severity;
use crate::provider::{ApplyRequest, CallResult, PlanRequest, PlanResponse};

/// Waits for a provider call from a plain (non-async) test.
pub(super) trait Wait: std::future::Future + Send + Sized
where
    Self::Output: Send,
{
    fn wait(self) -> Self::Output {
        block_on(self)
    }
}

impl<F: std::future::Future + Send> Wait for F where F::Output: Send {}

fn misbehave_wasm() -> &'static [u8] {
    static WASM: OnceLock<Vec<u8>> = OnceLock::new();
    WASM.get_or_init(|| std::fs::read(testing::build_component("cairn-provider-misbehave")).unwrap())
}

fn misbehave(sandbox: Sandbox) -> Arc<dyn Provider> {
    configured("misbehave", misbehave_wasm(), sandbox)
}

/// Test component `wasm` loaded (without a disk cache) and configured with null.
pub(super) fn configured(name: &str, wasm: &[u8], sandbox: Sandbox) -> Arc<dyn Provider> {
    let runtime = Runtime::with_cache_dir(None).unwrap();
    let loaded = runtime.load(name, wasm).unwrap();
    loaded.configure(sandbox, Value::Null).wait().unwrap()
}

/// Plans a create of `type_name` with `config`.
pub(super) fn plan(provider: &dyn Provider, type_name: &str, config: Value) -> CallResult<PlanResponse> {
    provider
        .plan_resource(PlanRequest {
            type_name: type_name.to_string(),
            prior_state: Value::Null,
            proposed_new_state: config.clone(),
            config,
            prior_private: Vec::new(),
        })
        .wait()
}

/// A normal call works: the provider still serves calls after a failure,
/// and the instance that answers was configured first.
fn assert_healthy(provider: &dyn Provider) {
    let config = Value::object([("write", Value::List(vec![Value::string("x")]))]);
    let answer = plan(provider, "misbehave_ok", config.clone()).unwrap();
    assert!(answer.diagnostics.is_empty(), "{:?}", answer.diagnostics);
    assert_eq!(answer.planned_state, config);
}

fn summaries(answer: &PlanResponse) -> Vec<String> {
    answer.diagnostics.iter().map(|d| d.summary.clone()).collect()
}

fn strings(items: &[&str]) -> Value {
    Value::List(items.iter().map(|s| Value::string(*s)).collect())
}

#[test]
fn schema_comes_from_a_throwaway_instance() {
    let runtime = Runtime::with_cache_dir(None).unwrap();
    let loaded = runtime.load("misbehave", misbehave_wasm()).unwrap();
    let schema = loaded.schema(&Sandbox::default()).wait().unwrap();
    assert!(schema.resources.contains_key("misbehave_loop"));
    let read = &schema.resources["misbehave_escape"].block.attributes["read"];
    assert_eq!(read.ty, crate::value::Type::List(Box::new(crate::value::Type::String)));
    assert!(schema.provider.block.attributes.contains_key("reject"));
}

#[test]
fn every_operation_round_trips() {
    let provider = misbehave(Sandbox::default());
    assert_eq!(provider.name(), "misbehave");
    assert!(provider.schema().resources.contains_key("misbehave_ok"));
    assert_healthy(&*provider);
    let state = Value::object([("id", Value::int(7)), ("f", Value::Number(crate::value::Number::Float(0.5)))]);
    assert!(provider.validate_resource("misbehave_ok", &state).wait().unwrap().is_empty());
    let applied = provider
        .apply_resource(ApplyRequest {
            type_name: "misbehave_ok".into(),
            prior_state: Value::Null,
            planned_state: state.clone(),
            config: state.clone(),
            planned_private: Vec::new(),
            idempotency_key: "k".into(),
        })
        .wait()
        .unwrap();
    assert_eq!(applied.new_state, state);
    let read = provider.read_resource("misbehave_ok", &state, b"private").wait().unwrap();
    assert_eq!((read.new_state, read.private), (Some(state.clone()), b"private".to_vec()));
    assert_eq!(provider.read_data_source("misbehave_ok", &state).wait().unwrap().0, state);
    let (upgraded, diags) = provider.upgrade_state("misbehave_ok", 0, "{}").wait().unwrap();
    assert!(upgraded.is_null() && diags[0].severity == Severity::Error);
}

#[test]
fn an_endless_loop_times_out_and_the_provider_recovers() {
    let provider = misbehave(Sandbox { call_timeout: Duration::from_secs(1), ..Sandbox::default() });
    let err = plan(&*provider, "misbehave_loop", Value::Null).unwrap_err();
    assert_eq!((err.provider.as_str(), err.operation), ("misbehave", "plan-resource"));
    assert_eq!(err.message, "exceeded its time limit of 1s");
    assert_healthy(&*provider);
}

#[test]
fn a_long_sleep_times_out_and_the_provider_recovers() {
    // The provider sleeps for an hour in a host call, where epoch
    // interruption cannot reach it; the clock ends the sleep at the
    // deadline. (Should that break, this test takes an hour.)
    let provider = misbehave(Sandbox { call_timeout: Duration::from_secs(1), ..Sandbox::default() });
    let err = plan(&*provider, "misbehave_sleep", Value::Null).unwrap_err();
    assert_eq!(err.message, "exceeded its time limit of 1s");
    assert_healthy(&*provider);
}

#[test]
fn running_out_of_memory_is_reported_and_the_provider_recovers() {
    let provider = misbehave(Sandbox { memory_limit: 64 << 20, ..Sandbox::default() });
    let err = plan(&*provider, "misbehave_oom", Value::Null).unwrap_err();
    assert_eq!(err.message, "exceeded its memory limit of 64 MiB");
    assert!(err.to_string().starts_with("provider \"misbehave\" exceeded its memory limit of 64 MiB while planning"));
    assert_healthy(&*provider);
}

#[test]
fn a_panic_is_a_crash_with_the_panic_message() {
    let provider = misbehave(Sandbox::default());
    let err = plan(&*provider, "misbehave_panic", Value::Null).unwrap_err();
    assert_eq!(err.message, "panicked: misbehave: deliberate panic in plan", "{err}");
    assert!(err.detail.starts_with("provider stderr:\n  thread '<unnamed>'"), "{err}");
    assert_healthy(&*provider);
}

#[test]
fn a_malformed_answer_is_rejected() {
    let provider = misbehave(Sandbox::default());
    let err = plan(&*provider, "misbehave_malformed", Value::Null).unwrap_err();
    assert!(err.message.starts_with("returned a malformed value: node index 7 out of range"), "{err}");
    assert_healthy(&*provider);
}

#[test]
fn a_rejected_configuration_is_reported() {
    let runtime = Runtime::with_cache_dir(None).unwrap();
    let loaded = runtime.load("misbehave", misbehave_wasm()).unwrap();
    let config = Value::object([("reject", Value::Bool(true))]);
    let Err(ConfigureError::Diagnostics { provider, diagnostics }) =
        loaded.configure(Sandbox::default(), config).wait()
    else {
        panic!("the configuration was accepted")
    };
    assert_eq!(provider, "misbehave");
    assert_eq!(diagnostics[0].summary, "configuration rejected");
}

/// The `tracing` output (debug and up, no colours) of `f`, run on this thread.
pub(super) fn capture_logs(f: impl FnOnce()) -> String {
    let capture = Capture::default();
    let writer = capture.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::DEBUG)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    tracing::subscriber::with_default(subscriber, f);
    let bytes = capture.0.lock().unwrap().clone();
    String::from_utf8(bytes).unwrap()
}

/// Where [`capture_logs`] collects output.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<u8>>>);

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn output_and_logs_land_in_tracing() {
    let provider = misbehave(Sandbox::default());
    let logged = capture_logs(|| {
        plan(&*provider, "misbehave_chatty", Value::Null).unwrap();
    });
    for expected in [
        r#"DEBUG cairn::provider: chatty: hello on stdout provider=misbehave stream="stdout""#,
        r#"DEBUG cairn::provider: chatty: hello on stderr provider=misbehave stream="stderr""#,
        r#"DEBUG cairn::provider: chatty: no newline at the end provider=misbehave stream="stdout""#,
        r#"INFO cairn::provider: chatty: hello through the log import provider=misbehave"#,
        r#"WARN cairn::provider: chatty: a warning through the log import provider=misbehave"#,
    ] {
        assert!(logged.contains(expected), "{expected:?} not in:\n{logged}");
    }
}

#[test]
fn the_environment_is_empty_unless_granted() {
    let provider = misbehave(Sandbox::default());
    let answer = plan(&*provider, "misbehave_env", Value::Null).unwrap();
    assert_eq!(summaries(&answer), ["env: 0", "args: 0"]);

    let provider = misbehave(Sandbox { env: vec![("GREETING".into(), "hi".into())], ..Sandbox::default() });
    let answer = plan(&*provider, "misbehave_env", Value::Null).unwrap();
    assert_eq!(summaries(&answer)[0], "env: 1");
    assert_eq!(answer.diagnostics[0].detail, "GREETING=hi");
}

#[test]
fn files_are_reachable_only_through_grants() {
    let root = tempfile::tempdir().unwrap();
    let config_dir = root.path().join("config");
    std::fs::create_dir_all(config_dir.join("data")).unwrap();
    std::fs::create_dir_all(config_dir.join("secret")).unwrap();
    std::fs::write(config_dir.join("data/in.txt"), "input").unwrap();
    let sandbox = Sandbox::resolve(&config_dir, &["./out".into()], &["data".into()]).unwrap();
    sandbox.create_writable_dirs().unwrap();
    let provider = misbehave(sandbox);
    let config = Value::object([
        (
            "write",
            strings(&[
                "out/site.txt",
                "/out/slash.txt",
                "./out/dot.txt",
                "data/new.txt",
                "secret/x",
                "/etc/cairn-escape",
                "../escaped.txt",
                "out/../../escaped.txt",
            ]),
        ),
        ("read", strings(&["data/in.txt", "/etc/passwd", "secret"])),
        ("list", strings(&["out", "/", "."])),
    ]);
    let answer = plan(&*provider, "misbehave_escape", config).unwrap();
    let outcomes = summaries(&answer);
    let outcome =
        |prefix: &str| outcomes.iter().find(|s| s.starts_with(&format!("{prefix}: "))).cloned().unwrap_or_default();
    // Granted: relative, `./` and `/`-prefixed paths all reach the grant.
    // (`./out/…` needs wasi-libc's working-directory-aware path resolution,
    // which a component gets by linking `chdir`: misbehave references
    // `std::env::set_current_dir`. Without it, wasi-libc matches the path
    // as written against the preopen names, and `./out/…` matches none.)
    for path in ["out/site.txt", "/out/slash.txt", "./out/dot.txt"] {
        assert_eq!(outcome(&format!("write {path}")), format!("write {path}: ok"), "{outcomes:#?}");
    }
    assert_eq!(std::fs::read_to_string(config_dir.join("out/site.txt")).unwrap(), "escaped");
    assert!(config_dir.join("out/slash.txt").is_file() && config_dir.join("out/dot.txt").is_file());
    assert_eq!(outcome("read data/in.txt"), "read data/in.txt: ok (5 bytes)");
    assert!(outcome("list out").contains("site.txt"), "{outcomes:#?}");
    // Not granted, or granted read-only: the guest gets an error.
    for op in [
        "write data/new.txt",
        "write secret/x",
        "write /etc/cairn-escape",
        "write ../escaped.txt",
        "write out/../../escaped.txt",
        "read /etc/passwd",
        "read secret",
        "list /",
        "list .",
    ] {
        assert!(outcome(op).starts_with(&format!("{op}: failed: ")), "{op}: {outcomes:#?}");
    }
    assert!(!config_dir.join("data/new.txt").exists());
    assert!(!config_dir.join("secret/x").exists());
    assert!(!root.path().join("escaped.txt").exists());
    assert!(!Path::new("/etc/cairn-escape").exists());
}

#[test]
fn there_is_no_network() {
    // A server on the host's loopback that the provider must not reach.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let by_name = format!("localhost:{}", listener.local_addr().unwrap().port());
    let provider = misbehave(Sandbox::default());
    let config = Value::object([("connect", strings(&[&address, &by_name]))]);
    let answer = plan(&*provider, "misbehave_escape", config).unwrap();
    let outcomes = summaries(&answer);
    assert_eq!(outcomes.len(), 2);
    for (outcome, target) in outcomes.iter().zip([&address, &by_name]) {
        assert!(outcome.starts_with(&format!("connect {target}: failed: ")), "{outcomes:#?}");
    }
}

#[test]
fn compiled_components_are_cached() {
    let cache = tempfile::tempdir().unwrap();
    let runtime = Runtime::with_cache_dir(Some(cache.path().to_path_buf())).unwrap();
    let components = runtime.component_cache_dir().unwrap().to_path_buf();
    assert_eq!(components, cache.path().join("components"));
    let first = runtime.load("misbehave", misbehave_wasm()).unwrap();
    assert!(!first.from_cache());
    let entries: Vec<_> = std::fs::read_dir(&components).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0].extension().unwrap(), "cwasm");

    // A second runtime (a second run of cairn) loads the compiled code.
    let runtime = Runtime::with_cache_dir(Some(cache.path().to_path_buf())).unwrap();
    let second = runtime.load("misbehave", misbehave_wasm()).unwrap();
    assert!(second.from_cache());
    assert_healthy(&*second.configure(Sandbox::default(), Value::Null).wait().unwrap());

    // A corrupted entry is recompiled (and rewritten), not run.
    let mut bytes = std::fs::read(&entries[0]).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&entries[0], bytes).unwrap();
    let third = runtime.load("misbehave", misbehave_wasm()).unwrap();
    assert!(!third.from_cache());
    assert_healthy(&*third.configure(Sandbox::default(), Value::Null).wait().unwrap());
    assert!(runtime.load("misbehave", misbehave_wasm()).unwrap().from_cache());
}

#[test]
fn something_that_is_not_a_component_is_an_error() {
    let runtime = Runtime::with_cache_dir(None).unwrap();
    let err = runtime.load("junk", b"not wasm").err().unwrap();
    assert!(format!("{err:#}").contains("cannot compile provider \"junk\""), "{err:#}");
}

#[test]
fn concurrent_calls_share_a_bounded_pool() {
    let provider = misbehave(Sandbox::default());
    std::thread::scope(|scope| {
        for _ in 0..(2 * DEFAULT_MAX_CONCURRENCY) {
            scope.spawn(|| {
                for _ in 0..5 {
                    assert_healthy(&*provider);
                }
            });
        }
    });
}

#[test]
fn failing_calls_do_not_leak_pool_slots() {
    // More failures than the pool has slots: each must give its slot back.
    let provider = misbehave(Sandbox::default());
    for _ in 0..(DEFAULT_MAX_CONCURRENCY + 2) {
        assert!(plan(&*provider, "misbehave_panic", Value::Null).is_err());
    }
    assert_healthy(&*provider);
}

#[test]
fn bundled_providers_load_and_describe_themselves() {
    let runtime = Runtime::with_cache_dir(None).unwrap();
    for name in BUILTIN_NAMES {
        let loaded = runtime.load(name, builtin(name).unwrap()).unwrap();
        let schema = loaded.schema(&Sandbox::default()).wait().unwrap();
        assert!(!schema.resources.is_empty() || !schema.data_sources.is_empty(), "{name}");
        let provider = loaded.configure(Sandbox::default(), Value::Null).wait().unwrap();
        for type_name in schema.resources.keys() {
            provider.validate_resource(type_name, &Value::Object(Default::default())).wait().unwrap();
        }
    }
}

/// An object of `type_name`'s schema with every attribute null but `set`.
fn full_object(provider: &dyn Provider, type_name: &str, set: &[(&str, Value)]) -> Value {
    let block = &provider.schema().resources[type_name].block;
    let mut object: crate::value::Map = block.attributes.keys().map(|name| (name.clone(), Value::Null)).collect();
    for (name, value) in set {
        object.insert(name.to_string(), value.clone());
    }
    Value::Object(object)
}

#[test]
fn the_bundled_local_provider_writes_inside_its_grant_only() {
    let Some(wasm) = builtin("local") else { return };
    let config_dir = tempfile::tempdir().unwrap();
    let runtime = Runtime::with_cache_dir(None).unwrap();
    let sandbox = Sandbox::resolve(config_dir.path(), &["./out".into()], &[]).unwrap();
    sandbox.create_writable_dirs().unwrap();
    let provider = runtime.load("local", wasm).unwrap().configure(sandbox, Value::Null).wait().unwrap();
    let create = |filename: &str| {
        let set = [("filename", Value::string(filename)), ("content", Value::string("hi"))];
        let config = full_object(&*provider, "local_file", &set);
        let planned = plan(&*provider, "local_file", config.clone()).unwrap();
        assert!(planned.diagnostics.is_empty(), "{:?}", planned.diagnostics);
        provider
            .apply_resource(ApplyRequest {
                type_name: "local_file".into(),
                prior_state: Value::Null,
                planned_state: planned.planned_state,
                config,
                planned_private: planned.planned_private,
                idempotency_key: "k".into(),
            })
            .wait()
            .unwrap()
    };
    let written = create("out/hello.txt");
    assert!(written.diagnostics.is_empty(), "{:?}", written.diagnostics);
    assert_eq!(std::fs::read_to_string(config_dir.path().join("out/hello.txt")).unwrap(), "hi");
    let refused = create("secret.txt");
    assert!(Diagnostics::has_errors(&refused.diagnostics), "{:?}", refused.diagnostics);
    assert!(!config_dir.path().join("secret.txt").exists());
}

#[test]
fn a_component_built_against_the_old_abi_is_refused_with_what_to_do() {
    let old = ["cairn:provider/provider@0.1.0".to_string()];
    let err = check_abi(&old).unwrap_err();
    assert!(
        err.starts_with("cairn:provider@0.1.0 is no longer supported: rebuild the provider with cairn-sdk 0.2"),
        "{err}"
    );
    assert!(check_abi(&[PROVIDER_INTERFACE.to_string()]).is_ok());
    // A component exporting both (a bridge) speaks the current ABI.
    assert!(check_abi(&[old[0].clone(), PROVIDER_INTERFACE.to_string()]).is_ok());
    // No provider export at all is for linking to explain.
    assert!(check_abi(&["wasi:cli/run@0.2.0".to_string()]).is_ok());
}

#[test]
fn import_goes_through_the_gate() {
    use crate::addr::InstanceAddr;
    use crate::contract::{CheckedCallError, Gate, RULE_IMPORT_ONE};

    let random = configured("random", builtin("random").unwrap(), Sandbox::default());
    let gate = Gate::new(&*random);
    let addr: InstanceAddr = "random_id.x".parse().unwrap();
    let schema = gate.schema_of(&addr.resource).unwrap();
    let ((state, _private), warnings) = gate.import(schema, &addr, "p-,-_8B").wait().unwrap();
    assert!(warnings.is_empty());
    assert_eq!(state.get_attr("hex").as_str(), Some("p-fbff01"));
    let Err(CheckedCallError::Reported(_, diags)) = gate.import(schema, &addr, "!!").wait() else {
        panic!("a bad id was accepted")
    };
    assert!(diags[0].summary.contains("Cannot import random_id"), "{diags:?}");

    // An answer with no object at all is the provider's bug, in the host's words.
    let provider = misbehave(Sandbox::default());
    let gate = Gate::new(&*provider);
    let addr: InstanceAddr = "misbehave_ok.x".parse().unwrap();
    let schema = gate.schema_of(&addr.resource).unwrap();
    let Err(CheckedCallError::Contract(d)) = gate.import(schema, &addr, "anything").wait() else {
        panic!("an empty import answer was accepted")
    };
    assert!(d.summary.contains("returned 0 objects") && d.summary.contains(RULE_IMPORT_ONE), "{d:?}");
}
