//! A deliberately hostile provider, for the host's sandbox and limits tests.
//!
//! What `plan-resource` does is chosen by the resource type name:
//!
//! - `misbehave_ok` plans normally (the planned state is the proposed one),
//!   or reports an error if `configure` was never called on this instance;
//! - `misbehave_loop` never returns;
//! - `misbehave_sleep` sleeps for an hour;
//! - `misbehave_oom` allocates memory until there is none;
//! - `misbehave_panic` panics;
//! - `misbehave_chatty` prints to stdout and stderr and logs, then plans
//!   normally;
//! - `misbehave_escape` tries the file operations listed in its config
//!   (`read`, `write` and `list`: lists of paths) and TCP connections
//!   (`connect`: `host:port`s), after changing directory to `chdir` if set,
//!   and reports each outcome as a warning
//!   `"<op> <path>: ok…"` or `"<op> <path>: failed: <error>"`;
//! - `misbehave_env` reports the environment it sees as a warning
//!   `"env: <count>"` whose detail lists `NAME=value` lines;
//! - `misbehave_malformed` answers a value with an out-of-range node index.
//!
//! `configure` rejects a provider configuration whose `reject` attribute is
//! true. Written against raw wit-bindgen bindings, not the SDK, so that the
//! host's tests do not depend on the SDK behaving.

use std::sync::atomic::{AtomicBool, Ordering};

wit_bindgen::generate!({ world: "provider-world", path: "../../../wit" });

use cairn::provider::log::{Level, log};
use cairn::provider::types::{
    Attribute, Block, Diagnostic, Node, ProviderSchema, Schema, Severity, TypeExpr, TypeNode, Value, ValueNode,
};
use exports::cairn::provider::provider::{
    ApplyRequest, ApplyResponse, DataResponse, Guest, ImportResponse, PlanRequest, PlanResponse, ReadRequest,
    ReadResponse, UpgradeResponse,
};

/// The resource types, one per behaviour.
const RESOURCE_TYPES: &[&str] = &[
    "misbehave_ok",
    "misbehave_loop",
    "misbehave_sleep",
    "misbehave_oom",
    "misbehave_panic",
    "misbehave_chatty",
    "misbehave_escape",
    "misbehave_env",
    "misbehave_malformed",
];

/// Set by `configure`: the host must configure every instance it uses.
static CONFIGURED: AtomicBool = AtomicBool::new(false);

// Natively (no export) nothing names the type but its trait impl.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
struct Misbehave;

impl Guest for Misbehave {
    fn schema() -> ProviderSchema {
        let provider = schema(vec![attribute("reject", TypeNode::Boolean)]);
        let resource = schema(vec![
            attribute("read", TypeNode::List(1)),
            attribute("write", TypeNode::List(1)),
            attribute("list", TypeNode::List(1)),
            attribute("connect", TypeNode::List(1)),
            attribute("chdir", TypeNode::Text),
        ]);
        ProviderSchema {
            provider,
            resources: RESOURCE_TYPES.iter().map(|name| (name.to_string(), resource.clone())).collect(),
            data_sources: Vec::new(),
        }
    }

    fn configure(config: Value) -> Vec<Diagnostic> {
        if matches!(attr(&config, "reject").map(|n| &n.kind), Some(ValueNode::Boolean(true))) {
            return vec![diagnostic(Severity::Error, "configuration rejected", "reject = true")];
        }
        CONFIGURED.store(true, Ordering::SeqCst);
        Vec::new()
    }

    fn validate_resource(_type_name: String, _config: Value) -> Vec<Diagnostic> {
        Vec::new()
    }

    fn plan_resource(request: PlanRequest) -> PlanResponse {
        let mut diagnostics = Vec::new();
        let mut planned_state = request.proposed_new_state.clone();
        match request.type_name.as_str() {
            "misbehave_loop" => spin_forever(),
            "misbehave_sleep" => std::thread::sleep(std::time::Duration::from_secs(3600)),
            "misbehave_oom" => exhaust_memory(),
            "misbehave_panic" => panic!("misbehave: deliberate panic in plan"),
            "misbehave_chatty" => chatter(),
            "misbehave_escape" => diagnostics = try_escape(&request.config),
            "misbehave_env" => diagnostics = report_env(),
            "misbehave_malformed" => {
                planned_state = Value { nodes: vec![Node { kind: ValueNode::List(vec![7]), sensitive: false }] };
            }
            _ if !CONFIGURED.load(Ordering::SeqCst) => {
                diagnostics.push(diagnostic(Severity::Error, "not configured", "plan before configure"));
            }
            _ => {}
        }
        PlanResponse { planned_state, requires_replace: Vec::new(), planned_private: Vec::new(), diagnostics }
    }

    fn apply_resource(request: ApplyRequest) -> ApplyResponse {
        ApplyResponse { new_state: request.planned_state, private: Vec::new(), diagnostics: Vec::new() }
    }

    fn read_resource(request: ReadRequest) -> ReadResponse {
        ReadResponse { new_state: Some(request.current_state), private: request.private, diagnostics: Vec::new() }
    }

    fn import_resource(_type_name: String, _id: String) -> ImportResponse {
        ImportResponse { imported: Vec::new(), diagnostics: Vec::new() }
    }

    fn read_data_source(_type_name: String, config: Value) -> DataResponse {
        DataResponse { state: config, diagnostics: Vec::new() }
    }

    fn upgrade_state(_type_name: String, _version: u64, _raw_state: String) -> UpgradeResponse {
        let error = diagnostic(Severity::Error, "cannot upgrade", "");
        UpgradeResponse { upgraded_state: Value { nodes: Vec::new() }, diagnostics: vec![error] }
    }
}

fn spin_forever() -> ! {
    let mut n: u64 = 0;
    loop {
        // black_box keeps the optimiser from reasoning the loop away.
        n = std::hint::black_box(n.wrapping_add(1));
    }
}

fn exhaust_memory() -> ! {
    let mut hoard: Vec<Vec<u8>> = Vec::new();
    loop {
        // Touch the memory so that it is really used, and keep every block.
        hoard.push(vec![1u8; 1 << 20]);
        std::hint::black_box(&hoard);
    }
}

fn chatter() {
    println!("chatty: hello on stdout");
    eprintln!("chatty: hello on stderr");
    print!("chatty: no newline at the end");
    // Rust's stdout is line-buffered: flush to hand the host a partial line.
    let _ = std::io::Write::flush(&mut std::io::stdout());
    log(Level::Info, "chatty: hello through the log import");
    log(Level::Warn, "chatty: a warning through the log import");
}

fn try_escape(config: &Value) -> Vec<Diagnostic> {
    let mut report = Vec::new();
    // Referencing `set_current_dir` links wasi-libc's `chdir`, which makes
    // the whole component resolve relative paths against its working
    // directory (`/`): then `./out/x` finds the `out` preopen like `out/x`.
    if let Some(Node { kind: ValueNode::Text(dir), .. }) = attr(config, "chdir") {
        report.push(outcome("chdir", dir, std::env::set_current_dir(dir).map(|()| String::new())));
    }
    for path in strings(config, "write") {
        report.push(outcome("write", &path, std::fs::write(&path, b"escaped").map(|()| String::new())));
    }
    for path in strings(config, "read") {
        report.push(outcome("read", &path, std::fs::read(&path).map(|b| format!(" ({} bytes)", b.len()))));
    }
    for path in strings(config, "list") {
        let names = std::fs::read_dir(&path).and_then(|entries| {
            let names: Result<Vec<String>, _> =
                entries.map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned())).collect();
            names.map(|n| format!(" [{}]", n.join(", ")))
        });
        report.push(outcome("list", &path, names));
    }
    for address in strings(config, "connect") {
        let connected = std::net::TcpStream::connect(address.as_str()).map(|_| String::new());
        report.push(outcome("connect", &address, connected));
    }
    report
}

fn outcome(op: &str, path: &str, result: std::io::Result<String>) -> Diagnostic {
    let summary = match result {
        Ok(extra) => format!("{op} {path}: ok{extra}"),
        Err(e) => format!("{op} {path}: failed: {e}"),
    };
    diagnostic(Severity::Warning, &summary, "")
}

fn report_env() -> Vec<Diagnostic> {
    let vars: Vec<String> = std::env::vars().map(|(k, v)| format!("{k}={v}")).collect();
    let args = std::env::args().count();
    let detail = vars.join("\n");
    vec![
        diagnostic(Severity::Warning, &format!("env: {}", vars.len()), &detail),
        diagnostic(Severity::Warning, &format!("args: {args}"), ""),
    ]
}

/// The object attribute `name` of the root of `value`.
fn attr<'a>(value: &'a Value, name: &str) -> Option<&'a Node> {
    let ValueNode::Object(attrs) = &value.nodes.first()?.kind else { return None };
    let (_, index) = attrs.iter().find(|(n, _)| n == name)?;
    value.nodes.get(*index as usize)
}

/// The strings of the list attribute `name` of the root of `value`.
fn strings(value: &Value, name: &str) -> Vec<String> {
    let Some(Node { kind: ValueNode::List(items), .. }) = attr(value, name) else { return Vec::new() };
    items
        .iter()
        .filter_map(|&i| match &value.nodes.get(i as usize)?.kind {
            ValueNode::Text(s) => Some(s.clone()),
            _ => None,
        })
        .collect()
}

fn schema(attributes: Vec<Attribute>) -> Schema {
    Schema { version: 0, blocks: vec![Block { attributes, blocks: Vec::new(), description: String::new() }] }
}

/// An optional attribute of type `root`, whose child type (if any) is text.
/// (A `Text` root leaves the second node unused, which the ABI allows.)
fn attribute(name: &str, root: TypeNode) -> Attribute {
    Attribute {
        name: name.to_string(),
        type_: TypeExpr { nodes: vec![root, TypeNode::Text] },
        nested: None,
        write_only: false,
        required: false,
        optional: true,
        computed: false,
        sensitive: false,
        description: String::new(),
    }
}

fn diagnostic(severity: Severity, summary: &str, detail: &str) -> Diagnostic {
    Diagnostic { severity, summary: summary.to_string(), detail: detail.to_string(), path: Vec::new() }
}

// Natively this crate is an ordinary library (so `cargo build --workspace`
// works); only the component exports the interface.
#[cfg(target_arch = "wasm32")]
export!(Misbehave);
