//! The zoo: hostile provider behaviours for the end-to-end sandbox tests
//! (`tests/tests/zoo.rs`), one resource type per behaviour.
//!
//! - `zoo_ok` plans and applies normally (the planned state is the proposed
//!   one): the resource that must still finish beside a hostile one;
//!   `zoo_tail` does the same, and its name sorts after every hostile type,
//!   so that the planner (which walks independent resources in address
//!   order) plans it after them;
//! - `zoo_probe` tries to get out of its sandbox, as its configuration says:
//!   `read`, `write` and `list` (paths), `env` (variable names), `connect`
//!   (`host:port`, raw TCP: once connected it sends `zoo\n`, shuts its side
//!   and reads until the server closes), `lookup` (names), `bind`
//!   (`host:port`, a TCP listener), `listen` (any text: a TCP socket that
//!   listens without binding first), `udp` (`host:port`, a UDP socket bound
//!   there) and `http` (URLs, GET through wasi:http), and
//!   with `needle` set, searches its own linear memory for a secret (the
//!   `needle`'s bytes each shifted up by one, so that the needle itself is
//!   not what it finds). Each outcome is a warning, `"<op> <what>: ok…"` or
//!   `"<op> <what>: failed: <error>"`; the plan goes on normally. With
//!   `phase = "apply"` it probes in `apply-resource` instead; with
//!   `on_failure = "error"` a failed probe is an error, and with
//!   `on_failure = "panic"` a failed probe makes it panic (a provider that
//!   fails on what the sandbox refused it);
//! - the hostile types below misbehave in `plan-resource`, or in
//!   `apply-resource` when their `phase` attribute is `"apply"`, or not at
//!   all when it is `"never"` (to create one that a later update breaks):
//! - `zoo_loop` never returns; `zoo_oom` allocates until memory runs out;
//!   `zoo_recurse` recurses without end; `zoo_panic` panics;
//! - `zoo_big` answers a planned state holding a 100 MiB string;
//! - `zoo_deep` answers a value nested 10,000 levels deep;
//! - `zoo_alias` answers 1,000 strings that all point at the same 1 MiB of
//!   its memory: 1 GiB once copied, from 1 MiB of guest memory;
//! - `zoo_flood` writes 100,000 lines (or `payload`, if fewer) to standard
//!   error, as many through the log import and one 1 MiB line, then plans
//!   normally;
//! - `zoo_shared` answers a list of a million references to one 256-byte
//!   text node: 4 MiB on the wire, 256 MiB and more once decoded as a tree;
//! - `zoo_refined` answers a list of a million references to one unknown
//!   node refined with a 100-byte prefix: 4 MiB on the wire, more than
//!   200 MiB once decoded (every unknown keeps its own refinements);
//! - `zoo_stall` writes the body of an outgoing HTTP request that is never
//!   sent, and waits for the body to take more: forever, without CPU;
//! - `zoo_timers` waits on the first of a 10 ms and a one-hour timer, then
//!   answers normally (an honest provider, not a hostile one);
//! - `zoo_files` opens the first `read` path again and again, holding every
//!   descriptor, `payload` times (a number) or until an open fails;
//! - `zoo_handles` creates timers (resource handles) and holds them,
//!   `payload` times or without end;
//! - `zoo_sockets` connects to its first `connect` target again and again,
//!   holding every connection, `payload` times or until a connect fails;
//! - `zoo_silent` connects to its first `connect` target and reads: from a
//!   server that never writes, forever, without CPU.
//!
//! `zoo_probe` also takes `symlink`: `"<dir>/<name>-><target>"` entries
//! that replace the directory `<dir>/<name>` by a link to `<target>`, as a
//! provider with a read-write grant of `<dir>` can; and `chmod`:
//! `"<octal mode> <path>"` entries that set exactly that mode through the
//! host's `files` import.
//!
//! The provider configuration's `fail = "panic"` panics in `configure`.
//!
//! Written against raw wit-bindgen bindings, not the SDK.

wit_bindgen::generate!({ world: "zoo", path: "wit", generate_all });

use cairn::provider::log::{Level, log};
use cairn::provider::types::{
    Attribute, Block, Diagnostic, Node, ProviderSchema, Refinements, Schema, Severity, TypeExpr, TypeNode, Value,
    ValueNode,
};
use exports::cairn::provider::provider::{
    ApplyRequest, ApplyResponse, DataResponse, Guest, ImportResponse, PlanRequest, PlanResponse, ReadRequest,
    ReadResponse, UpgradeResponse,
};

const RESOURCE_TYPES: &[&str] = &[
    "zoo_ok",
    "zoo_tail",
    "zoo_probe",
    "zoo_loop",
    "zoo_oom",
    "zoo_recurse",
    "zoo_panic",
    "zoo_big",
    "zoo_deep",
    "zoo_alias",
    "zoo_flood",
    "zoo_shared",
    "zoo_refined",
    "zoo_stall",
    "zoo_timers",
    "zoo_files",
    "zoo_handles",
    "zoo_sockets",
    "zoo_silent",
];

/// The lists of things `zoo_probe` tries.
const PROBES: &[&str] =
    &["read", "write", "list", "env", "connect", "lookup", "bind", "listen", "udp", "http", "symlink", "chmod"];

#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
struct Zoo;

impl Guest for Zoo {
    fn schema() -> ProviderSchema {
        let mut attributes: Vec<Attribute> = PROBES.iter().map(|name| attribute(name, TypeNode::List(1))).collect();
        attributes.push(attribute("needle", TypeNode::Text));
        attributes.push(attribute("phase", TypeNode::Text));
        attributes.push(attribute("on_failure", TypeNode::Text));
        attributes.push(attribute("payload", TypeNode::Text));
        let resource = schema(attributes);
        ProviderSchema {
            provider: schema(vec![attribute("fail", TypeNode::Text)]),
            resources: RESOURCE_TYPES.iter().map(|name| (name.to_string(), resource.clone())).collect(),
            data_sources: Vec::new(),
        }
    }

    fn configure(config: Value) -> Vec<Diagnostic> {
        if let Some(Node { kind: ValueNode::Text(fail), .. }) = attr(&config, "fail")
            && fail == "panic"
        {
            panic!("zoo: deliberate panic in configure");
        }
        Vec::new()
    }

    fn validate_resource(_type_name: String, _config: Value) -> Vec<Diagnostic> {
        Vec::new()
    }

    fn plan_resource(request: PlanRequest) -> PlanResponse {
        let mut diagnostics = Vec::new();
        let mut planned_state = request.proposed_new_state.clone();
        if request.type_name == "zoo_probe" {
            if phase(&request.config).is_none() {
                diagnostics = probe(&request.config);
            }
        } else if phase(&request.config).is_none()
            && let Some(answer) = misbehave(&request.type_name, &request.config)
        {
            planned_state = answer;
        }
        PlanResponse { planned_state, requires_replace: Vec::new(), planned_private: Vec::new(), diagnostics }
    }

    fn apply_resource(request: ApplyRequest) -> ApplyResponse {
        let mut new_state = request.planned_state;
        let mut diagnostics = Vec::new();
        if phase(&request.config) == Some("apply") {
            if request.type_name == "zoo_probe" {
                diagnostics = probe(&request.config);
            } else if let Some(answer) = misbehave(&request.type_name, &request.config) {
                new_state = answer;
            }
        }
        ApplyResponse { new_state, private: Vec::new(), diagnostics }
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
        UpgradeResponse { upgraded_state: Value { nodes: Vec::new() }, diagnostics: Vec::new() }
    }
}

/// The `phase` attribute: `"apply"`, `"never"`, or none (misbehave in plan).
fn phase(config: &Value) -> Option<&str> {
    match attr(config, "phase") {
        Some(Node { kind: ValueNode::Text(phase), .. }) => Some(phase),
        _ => None,
    }
}

/// What the hostile resource type `type_name` does; some answer a value.
fn misbehave(type_name: &str, config: &Value) -> Option<Value> {
    match type_name {
        "zoo_loop" => spin_forever(),
        "zoo_oom" => exhaust_memory(),
        "zoo_recurse" => {
            std::hint::black_box(recurse(std::hint::black_box(1)));
            None
        }
        "zoo_panic" => panic!("zoo: deliberate panic in {type_name}"),
        "zoo_big" => Some(big_value()),
        "zoo_deep" => Some(deep_value(10_000)),
        "zoo_alias" => Some(aliased_value(1000, 1 << 20)),
        "zoo_flood" => {
            flood(count(config).min(100_000));
            None
        }
        "zoo_shared" => Some(shared_value(1_000_000, 256)),
        "zoo_refined" => Some(refined_value(1_000_000, 100)),
        "zoo_stall" => stall(),
        "zoo_timers" => {
            first_of_two_timers();
            None
        }
        "zoo_files" => {
            let path = strings(config, "read").into_iter().next().unwrap_or_else(|| ".".to_string());
            hold_files(&path, count(config));
            None
        }
        "zoo_handles" => {
            hold_handles(count(config));
            None
        }
        "zoo_sockets" => {
            let target = strings(config, "connect").into_iter().next().unwrap_or_default();
            hold_connections(&target, count(config));
            None
        }
        "zoo_silent" => {
            let target = strings(config, "connect").into_iter().next().unwrap_or_default();
            read_silence(&target);
            None
        }
        _ => None,
    }
}

fn spin_forever() -> ! {
    let mut n: u64 = 0;
    loop {
        n = std::hint::black_box(n.wrapping_add(1));
    }
}

fn exhaust_memory() -> ! {
    let mut hoard: Vec<Vec<u8>> = Vec::new();
    loop {
        hoard.push(vec![1u8; 1 << 20]);
        std::hint::black_box(&hoard);
    }
}

/// Recursion without end: black_box keeps it from becoming a loop.
#[allow(unconditional_recursion)]
fn recurse(depth: u64) -> u64 {
    let next = std::hint::black_box(depth.wrapping_add(1));
    recurse(next).wrapping_add(std::hint::black_box(depth))
}

/// A planned state whose `payload` is a 100 MiB string.
fn big_value() -> Value {
    let payload = "x".repeat(100 << 20);
    Value {
        nodes: vec![
            Node { kind: ValueNode::Object(vec![("payload".to_string(), 1)]), sensitive: false },
            Node { kind: ValueNode::Text(payload), sensitive: false },
        ],
    }
}

/// A value nested `depth` levels deep: `{ payload = [[[…"bottom"…]]] }`.
fn deep_value(depth: u32) -> Value {
    let mut nodes = vec![Node { kind: ValueNode::Object(vec![("payload".to_string(), 1)]), sensitive: false }];
    for i in 1..depth {
        nodes.push(Node { kind: ValueNode::List(vec![i + 1]), sensitive: false });
    }
    nodes.push(Node { kind: ValueNode::Text("bottom".to_string()), sensitive: false });
    Value { nodes }
}

/// `{ payload = [s, s, …] }` with `count` strings that share the same `len`
/// bytes: the canonical ABI copies each one, so the host would copy
/// `count * len` bytes. The aliases are never dropped (they would free the
/// same memory many times): the host either refuses the answer before the
/// post-return function runs, or the instance is thrown away.
fn aliased_value(count: u32, len: usize) -> Value {
    let shared = std::mem::ManuallyDrop::new("z".repeat(len));
    let mut nodes = vec![
        Node { kind: ValueNode::Object(vec![("payload".to_string(), 1)]), sensitive: false },
        Node { kind: ValueNode::List((2..count + 2).collect()), sensitive: false },
    ];
    for _ in 0..count {
        // SAFETY: deliberately not: every alias claims the one buffer.
        let alias = unsafe { String::from_raw_parts(shared.as_ptr() as *mut u8, shared.len(), shared.capacity()) };
        nodes.push(Node { kind: ValueNode::Text(alias), sensitive: false });
    }
    Value { nodes }
}

/// `payload` as a number: how many of something to make; without end when
/// absent.
fn count(config: &Value) -> u64 {
    match attr(config, "payload") {
        Some(Node { kind: ValueNode::Text(n), .. }) => n.parse().unwrap_or(u64::MAX),
        _ => u64::MAX,
    }
}

/// `{ payload = [t, t, …] }`: `count` references to one text node of `len`
/// bytes. The wire holds the text once; a tree holds it `count` times.
fn shared_value(count: u32, len: usize) -> Value {
    let nodes = vec![
        Node { kind: ValueNode::Object(vec![("payload".to_string(), 1)]), sensitive: false },
        Node { kind: ValueNode::List(vec![2; count as usize]), sensitive: false },
        Node { kind: ValueNode::Text("s".repeat(len)), sensitive: false },
    ];
    Value { nodes }
}

/// `{ payload = [u, u, …] }`: `count` references to one unknown node whose
/// refinements promise a prefix of `len` bytes. The wire holds it once; a
/// tree holds the refinements `count` times.
fn refined_value(count: u32, len: usize) -> Value {
    let refinements = Refinements {
        not_null: true,
        prefix: Some("p".repeat(len)),
        lower: None,
        upper: None,
        min_length: None,
        max_length: None,
    };
    let nodes = vec![
        Node { kind: ValueNode::Object(vec![("payload".to_string(), 1)]), sensitive: false },
        Node { kind: ValueNode::List(vec![2; count as usize]), sensitive: false },
        Node { kind: ValueNode::Unknown(refinements), sensitive: false },
    ];
    Value { nodes }
}

/// Writes the body of an HTTP request that is never handed to the host
/// (so never sent, and no grant is needed): once the body's buffer is
/// full, waiting for room to write waits forever, in the host, using no
/// CPU, so no epoch deadline ever interrupts it.
fn stall() -> Option<Value> {
    use wasi::http::types::{Fields, OutgoingBody, OutgoingRequest};
    let request = OutgoingRequest::new(Fields::new());
    let body: OutgoingBody = request.body().expect("a new request has a body");
    let stream = body.write().expect("a new body has a stream");
    let chunk = vec![0u8; 4096];
    loop {
        match stream.check_write() {
            Ok(0) => stream.subscribe().block(),
            Ok(n) => {
                let n = (n as usize).min(chunk.len());
                if stream.write(&chunk[..n]).is_err() {
                    return None;
                }
            }
            Err(_) => return None,
        }
    }
}

/// Waits on the first of a 10 ms and a one-hour timer, as a provider with
/// a retry loop and an overall timeout does.
fn first_of_two_timers() {
    use wasi::clocks::monotonic_clock::subscribe_duration;
    let short = subscribe_duration(10_000_000);
    let long = subscribe_duration(3_600_000_000_000);
    let ready = wasi::io::poll::poll(&[&short, &long]);
    assert_eq!(ready, [0], "the short timer fires first");
}

/// Opens `path` `count` times (or until an open fails), and never closes.
fn hold_files(path: &str, count: u64) {
    let mut held = Vec::new();
    while (held.len() as u64) < count {
        match std::fs::File::open(path) {
            Ok(file) => held.push(file),
            Err(_) => break,
        }
    }
    std::mem::forget(held);
}

/// Creates `count` timers and never drops them: each is a handle in the
/// host's table and in the component's.
fn hold_handles(count: u64) {
    let mut held = Vec::new();
    while (held.len() as u64) < count {
        held.push(wasi::clocks::monotonic_clock::subscribe_duration(1));
    }
    std::mem::forget(held);
}

/// Connects to `target` `count` times (or until a connect fails), and never
/// closes.
fn hold_connections(target: &str, count: u64) {
    let mut held = Vec::new();
    while (held.len() as u64) < count {
        match std::net::TcpStream::connect(target) {
            Ok(stream) => held.push(stream),
            Err(e) => panic!("zoo: connection {} to {target} failed: {e}", held.len() + 1),
        }
    }
    std::mem::forget(held);
}

/// Connects to `target` and reads what it never sends.
fn read_silence(target: &str) {
    use std::io::Read;
    let mut stream = std::net::TcpStream::connect(target).expect("zoo: the silent server accepts");
    let mut byte = [0u8; 1];
    let read = stream.read(&mut byte);
    panic!("zoo: the silent server answered: {read:?}");
}

/// Connects to `target`, sends `zoo\n`, shuts its side, and reads until the
/// server closes: `" (echoed \"zoo\\n\")"`.
fn connect(target: &str) -> std::io::Result<String> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(target)?;
    stream.write_all(b"zoo\n")?;
    stream.shutdown(std::net::Shutdown::Write)?;
    let mut echoed = Vec::new();
    stream.read_to_end(&mut echoed)?;
    Ok(format!(" (echoed {:?})", String::from_utf8_lossy(&echoed)))
}

/// The addresses `name` resolves to: `" [127.0.0.1, ::1]"`.
fn lookup(name: &str) -> std::io::Result<String> {
    use std::net::ToSocketAddrs;
    let found: Vec<String> = (name, 0).to_socket_addrs()?.map(|a| a.ip().to_string()).collect();
    Ok(format!(" [{}]", found.join(", ")))
}

/// Listens on a TCP socket that was never bound (so that only the listen
/// can be refused), through wasi:sockets directly.
fn listen_unbound() -> std::io::Result<String> {
    use wasi::sockets::network::IpAddressFamily;
    let failed = |e| std::io::Error::other(format!("{e:?}"));
    let socket = wasi::sockets::tcp_create_socket::create_tcp_socket(IpAddressFamily::Ipv4).map_err(failed)?;
    socket.start_listen().map_err(failed)?;
    socket.subscribe().block();
    socket.finish_listen().map_err(failed)?;
    Ok(String::new())
}

/// Replaces the directory `<dir>/<name>` by a link to `target`, through the
/// preopen named `<dir>`.
fn plant_link(entry: &str) -> std::io::Result<String> {
    let (link, target) = entry.split_once("->").ok_or_else(|| std::io::Error::other("not <link>-><target>"))?;
    let (dir, name) = link.rsplit_once('/').ok_or_else(|| std::io::Error::other("not <dir>/<name>"))?;
    let preopens = wasi::filesystem::preopens::get_directories();
    let (descriptor, _) = preopens
        .iter()
        .find(|(_, guest)| guest == dir)
        .ok_or_else(|| std::io::Error::other(format!("no grant named {dir:?}")))?;
    let _ = descriptor.remove_directory_at(name);
    descriptor.symlink_at(target, name).map_err(|e| std::io::Error::other(format!("{e:?}")))?;
    Ok(String::new())
}

/// Sets the mode of `"<octal mode> <path>"` through the host's `files`
/// import, umask ignored.
fn chmod(entry: &str) -> std::io::Result<String> {
    let (mode, path) = entry.split_once(' ').ok_or_else(|| std::io::Error::other("not <mode> <path>"))?;
    let mode = u32::from_str_radix(mode, 8).map_err(std::io::Error::other)?;
    cairn::provider::files::set_permissions(path, mode, false).map_err(std::io::Error::other)?;
    Ok(String::new())
}

/// `lines` lines on standard error and as many through the log import,
/// then one 1 MiB line.
fn flood(lines: u64) {
    for i in 0..lines {
        eprintln!("zoo: flood line {i} on stderr");
        log(Level::Info, &format!("zoo: flood line {i} through the log import"));
    }
    eprintln!("{}", "y".repeat(1 << 20));
}

fn probe(config: &Value) -> Vec<Diagnostic> {
    let mut report = Vec::new();
    for path in strings(config, "read") {
        report.push(outcome("read", &path, std::fs::read(&path).map(|b| format!(" ({} bytes)", b.len()))));
    }
    for path in strings(config, "write") {
        report.push(outcome("write", &path, std::fs::write(&path, b"escaped").map(|()| String::new())));
    }
    for path in strings(config, "list") {
        let names = std::fs::read_dir(&path).and_then(|entries| {
            let names: Result<Vec<String>, _> =
                entries.map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned())).collect();
            names.map(|n| format!(" [{}]", n.join(", ")))
        });
        report.push(outcome("list", &path, names));
    }
    for name in strings(config, "env") {
        let seen = match std::env::var(&name) {
            Ok(v) => Ok(format!(" ({} chars)", v.len())),
            Err(e) => Err(std::io::Error::other(e.to_string())),
        };
        report.push(outcome("env", &name, seen));
    }
    for address in strings(config, "connect") {
        report.push(outcome("connect", &address, connect(&address)));
    }
    for name in strings(config, "lookup") {
        report.push(outcome("lookup", &name, lookup(&name)));
    }
    for address in strings(config, "bind") {
        let bound = std::net::TcpListener::bind(address.as_str()).map(|_| String::new());
        report.push(outcome("bind", &address, bound));
    }
    for what in strings(config, "listen") {
        report.push(outcome("listen", &what, listen_unbound()));
    }
    for address in strings(config, "udp") {
        let bound = std::net::UdpSocket::bind(address.as_str()).map(|_| String::new());
        report.push(outcome("udp", &address, bound));
    }
    for url in strings(config, "http") {
        report.push(outcome("http", &url, http_get(&url).map_err(std::io::Error::other)));
    }
    for entry in strings(config, "symlink") {
        report.push(outcome("symlink", &entry, plant_link(&entry)));
    }
    for entry in strings(config, "chmod") {
        report.push(outcome("chmod", &entry, chmod(&entry)));
    }
    if let Some(Node { kind: ValueNode::Text(needle), .. }) = attr(config, "needle") {
        let found = if memory_contains_shifted(needle.as_bytes()) { "found" } else { "not found" };
        report.push(diagnostic(Severity::Warning, &format!("memory search: {found}"), ""));
    }
    let failed = |d: &Diagnostic| d.summary.contains(": failed: ");
    match attr(config, "on_failure").map(|n| &n.kind) {
        Some(ValueNode::Text(how)) if how == "error" => {
            report.iter_mut().filter(|d| failed(d)).for_each(|d| d.severity = Severity::Error);
        }
        Some(ValueNode::Text(how)) if how == "panic" && report.iter().any(failed) => {
            panic!("zoo: deliberate panic after a failed probe");
        }
        _ => {}
    }
    report
}

/// A GET of `url` through wasi:http: `" (status 200, body \"…\", request
/// headers seen: […])"`.
fn http_get(url: &str) -> Result<String, String> {
    use wasi::http::outgoing_handler;
    use wasi::http::types::{Fields, OutgoingRequest, Scheme};

    let (scheme, rest) = url.split_once("://").ok_or("not a URL")?;
    let (authority, path) = match rest.find('/') {
        Some(at) => rest.split_at(at),
        None => (rest, "/"),
    };
    let request = OutgoingRequest::new(Fields::new());
    let scheme = if scheme == "https" { Scheme::Https } else { Scheme::Http };
    request.set_scheme(Some(&scheme)).map_err(|()| "bad scheme")?;
    request.set_authority(Some(authority)).map_err(|()| "bad authority")?;
    request.set_path_with_query(Some(path)).map_err(|()| "bad path")?;
    // The headers the provider can see on its own request: never the host's
    // credentials, which are added after the request has left its hands.
    let seen: Vec<String> = request.headers().entries().iter().map(|(k, _)| k.clone()).collect();
    let future = outgoing_handler::handle(request, None).map_err(|e| format!("{e:?}"))?;
    future.subscribe().block();
    let response = match future.get() {
        Some(Ok(Ok(response))) => response,
        Some(Ok(Err(e))) => return Err(format!("{e:?}")),
        Some(Err(())) => return Err("response taken twice".to_string()),
        None => return Err("no response".to_string()),
    };
    let status = response.status();
    let body = response.consume().map_err(|()| "no body")?;
    let stream = body.stream().map_err(|()| "no body stream")?;
    let mut bytes = Vec::new();
    while let Ok(chunk) = stream.blocking_read(64 * 1024) {
        bytes.extend(chunk);
    }
    Ok(format!(
        " (status {status}, body {:?}, request headers seen: [{}])",
        String::from_utf8_lossy(&bytes),
        seen.join(", ")
    ))
}

/// Whether this instance's linear memory holds `shifted` with every byte
/// one less: the secret the test means, which the test does not give the
/// provider in the clear (it would then find the test's own copy).
fn memory_contains_shifted(shifted: &[u8]) -> bool {
    #[cfg(target_arch = "wasm32")]
    {
        let size = core::arch::wasm32::memory_size(0) * 65536;
        if shifted.is_empty() || shifted.len() > size {
            return false;
        }
        let first = shifted[0].wrapping_sub(1);
        // Address 0 is a valid address in wasm; volatile reads keep the
        // compiler from reasoning about "null".
        let byte = |at: usize| unsafe { core::ptr::read_volatile(at as *const u8) };
        (0..=size - shifted.len())
            .any(|at| byte(at) == first && shifted.iter().enumerate().all(|(i, s)| byte(at + i) == s.wrapping_sub(1)))
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        let _ = shifted;
        false
    }
}

fn outcome(op: &str, what: &str, result: std::io::Result<String>) -> Diagnostic {
    let summary = match result {
        Ok(extra) => format!("{op} {what}: ok{extra}"),
        Err(e) => format!("{op} {what}: failed: {e}"),
    };
    diagnostic(Severity::Warning, &summary, "")
}

fn attr<'a>(value: &'a Value, name: &str) -> Option<&'a Node> {
    let ValueNode::Object(attrs) = &value.nodes.first()?.kind else { return None };
    let (_, index) = attrs.iter().find(|(n, _)| n == name)?;
    value.nodes.get(*index as usize)
}

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
fn attribute(name: &str, root: TypeNode) -> Attribute {
    Attribute {
        name: name.to_string(),
        type_: TypeExpr { nodes: vec![root, TypeNode::Text] },
        nested: None,
        write_only: false,
        required: false,
        optional: true,
        computed: name == "payload",
        sensitive: false,
        description: String::new(),
    }
}

fn diagnostic(severity: Severity, summary: &str, detail: &str) -> Diagnostic {
    Diagnostic { severity, summary: summary.to_string(), detail: detail.to_string(), path: Vec::new() }
}

#[cfg(target_arch = "wasm32")]
export!(Zoo);
