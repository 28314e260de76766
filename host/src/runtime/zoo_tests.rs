//! The runtime against the zoo's hostile providers
//! (`providers/testing/zoo`): answers too big or too deep, log floods,
//! unbounded recursion, outgoing HTTP under the sandbox's grants, and many
//! calls waiting on the network at once.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use super::tests::plan;
use super::*;
use crate::provider::{ApplyRequest, PlanResponse};

fn zoo_wasm() -> &'static [u8] {
    static WASM: OnceLock<Vec<u8>> = OnceLock::new();
    WASM.get_or_init(|| std::fs::read(testing::build_component("cairn-provider-zoo")).unwrap())
}

fn zoo(sandbox: Sandbox) -> Arc<dyn Provider> {
    super::tests::configured("zoo", zoo_wasm(), sandbox)
}

fn assert_healthy(provider: &dyn Provider) {
    let config = Value::object([("needle", Value::string("x"))]);
    assert_eq!(plan(provider, "zoo_ok", config.clone()).unwrap().planned_state, config);
}

fn summaries(answer: &PlanResponse) -> Vec<String> {
    answer.diagnostics.iter().map(|d| d.summary.clone()).collect()
}

#[test]
fn an_answer_over_the_size_limit_is_rejected() {
    let provider = zoo(Sandbox::default());
    let err = plan(&*provider, "zoo_big", Value::Null).unwrap_err();
    assert_eq!(err.message, "returned an answer of 100.0 MiB, more than the limit of 32 MiB");
    assert_healthy(&*provider);

    let provider = zoo(Sandbox { max_answer_bytes: 1 << 20, ..Sandbox::default() });
    let err = plan(&*provider, "zoo_big", Value::Null).unwrap_err();
    assert_eq!(err.message, "returned an answer of 100.0 MiB, more than the limit of 1 MiB");
    assert_healthy(&*provider);
}

#[test]
fn an_answer_of_aliased_strings_is_refused_while_it_is_copied() {
    // 1,000 strings over the same 1 MiB: wasmtime stops copying at its
    // hostcall fuel (128 MiB, at least max_answer_bytes) instead of copying 1 GiB.
    let provider = zoo(Sandbox::default());
    let err = plan(&*provider, "zoo_alias", Value::Null).unwrap_err();
    assert_eq!(
        err.message, "handed the host more than 128 MiB at once (an answer, or a host call's arguments)",
        "{err}"
    );
    assert_healthy(&*provider);
}

#[test]
fn an_answer_nested_too_deep_is_rejected() {
    let provider = zoo(Sandbox::default());
    let err = plan(&*provider, "zoo_deep", Value::Null).unwrap_err();
    assert_eq!(err.message, "returned a malformed value: nested deeper than the limit of 256 levels (a cycle?)");
    assert_healthy(&*provider);

    let provider = zoo(Sandbox { max_answer_depth: 2, ..Sandbox::default() });
    let nested = Value::object([("needle", Value::List(vec![Value::List(vec![Value::string("x")])]))]);
    let err = plan(&*provider, "zoo_ok", nested).unwrap_err();
    assert!(err.message.ends_with("nested deeper than the limit of 2 levels (a cycle?)"), "{err}");
}

#[test]
fn unbounded_recursion_is_a_stack_overflow() {
    let provider = zoo(Sandbox::default());
    let err = plan(&*provider, "zoo_recurse", Value::Null).unwrap_err();
    assert_eq!(err.message, "overflowed its stack (unbounded recursion?)", "{err}");
    assert_healthy(&*provider);
}

#[test]
fn a_log_flood_is_cut_to_a_bounded_number_of_lines() {
    let provider = zoo(Sandbox::default());
    let logged = super::tests::capture_logs(|| {
        plan(&*provider, "zoo_flood", Value::Null).unwrap();
    });
    let flood_lines = logged.lines().filter(|l| l.contains("zoo: flood line")).count();
    assert_eq!(flood_lines, output::MAX_LINES_PER_CALL);
    // 100,000 lines on stderr, 100,000 logged, one long line: all but the
    // first 1000 are dropped and counted.
    let dropped = 200_001 - output::MAX_LINES_PER_CALL;
    let summary = format!("… {dropped} lines dropped (a provider call may log at most 1000 lines)");
    assert!(logged.contains(&summary), "no {summary:?} in the last lines:\n{}", tail(&logged));
    assert!(logged.len() < 1 << 20, "the log holds {} bytes", logged.len());
}

fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(5)..].join("\n")
}

#[test]
fn http_goes_only_to_granted_origins_with_host_held_headers() {
    let granted = testing::HttpServer::start();
    let ungranted = TcpListener::bind("127.0.0.1:0").unwrap();
    let ungranted_port = ungranted.local_addr().unwrap().port();
    let secret = "Bearer zoo-s3cret-token";
    let mut grant = HttpGrant { scheme: "http".into(), host: "127.0.0.1".into(), port: granted.port, headers: vec![] };
    grant.add_header("Authorization", secret).unwrap();
    let provider = zoo(Sandbox { http: vec![grant], call_timeout: Duration::from_secs(20), ..Sandbox::default() });
    let granted_url = format!("http://127.0.0.1:{}/granted", granted.port);
    let ungranted_url = format!("http://127.0.0.1:{ungranted_port}/stolen");
    let shifted: String = secret.bytes().map(|b| char::from(b + 1)).collect();
    let config = Value::object([
        ("http", Value::List(vec![Value::string(&granted_url), Value::string(&ungranted_url)])),
        ("connect", Value::List(vec![Value::string(format!("127.0.0.1:{ungranted_port}"))])),
        ("needle", Value::string(shifted)),
    ]);
    let answer = plan(&*provider, "zoo_probe", config).unwrap();
    assert_eq!(
        summaries(&answer),
        [
            format!("connect 127.0.0.1:{ungranted_port}: failed: Permission denied (os error 2)"),
            format!("http {granted_url}: ok (status 200, body \"hello\", request headers seen: [])"),
            format!("http {ungranted_url}: failed: ErrorCode::HttpRequestDenied"),
            "memory search: not found".to_string(),
        ]
    );
    let requests = granted.requests.lock().unwrap();
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert!(requests[0].starts_with("GET /granted HTTP/1.1\r\n"), "{}", requests[0]);
    assert!(requests[0].contains(&format!("authorization: {secret}\r\n")), "{}", requests[0]);
    ungranted.set_nonblocking(true).unwrap();
    let err = ungranted.accept().map(|_| ()).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::WouldBlock, "the ungranted listener saw a connection");
}

/// A loopback HTTP server that holds every request until `count` of them
/// wait at once, then answers them all `hello`.
struct BarrierServer {
    port: u16,
    most_waiting: Arc<AtomicUsize>,
}

impl BarrierServer {
    fn start(count: usize) -> BarrierServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let most_waiting = Arc::new(AtomicUsize::new(0));
        let most = Arc::clone(&most_waiting);
        std::thread::spawn(move || {
            let mut waiting: Vec<TcpStream> = Vec::new();
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                read_head(&mut stream);
                waiting.push(stream);
                most.fetch_max(waiting.len(), Ordering::SeqCst);
                if waiting.len() == count {
                    for mut stream in waiting.drain(..) {
                        let _ =
                            stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\nconnection: close\r\n\r\nhello");
                    }
                }
            }
        });
        BarrierServer { port, most_waiting }
    }

    /// The most requests that were waiting at the same time.
    fn most_waiting(&self) -> usize {
        self.most_waiting.load(Ordering::SeqCst)
    }
}

fn read_head(stream: &mut TcpStream) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
        head.push(byte[0]);
    }
}

/// How long a test waits for work that should finish in a second before it
/// calls it hung.
const HANG_GUARD: Duration = Duration::from_secs(120);

#[test]
fn calls_waiting_on_the_network_hold_no_threads() {
    const CALLS: usize = 256;
    let server = BarrierServer::start(CALLS);
    let grant = HttpGrant { scheme: "http".into(), host: "127.0.0.1".into(), port: server.port, headers: vec![] };
    let provider = zoo(Sandbox { http: vec![grant], max_concurrency: Some(CALLS), ..Sandbox::default() });
    let url = format!("http://127.0.0.1:{}/wait", server.port);
    let config = Value::object([("http", Value::List(vec![Value::string(&url)])), ("phase", Value::string("apply"))]);
    // Two threads run tasks and two may do blocking work. Were a waiting
    // call to hold a thread, at most four requests could wait at once and
    // the server would never answer 200.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (done, answers) = std::sync::mpsc::channel();
    let calls = async move {
        let mut calls = tokio::task::JoinSet::new();
        for i in 0..CALLS {
            let (provider, config) = (Arc::clone(&provider), config.clone());
            calls.spawn(async move {
                let request = ApplyRequest {
                    type_name: "zoo_probe".into(),
                    prior_state: Value::Null,
                    planned_state: config.clone(),
                    config,
                    planned_private: Vec::new(),
                    idempotency_key: format!("call-{i}"),
                };
                provider.apply_resource(request).await
            });
        }
        calls.join_all().await
    };
    std::thread::spawn(move || done.send(runtime.block_on(calls)));
    // Only a broken runtime gets here: the calls never finish, and the
    // test would hang instead of failing.
    let answers = answers.recv_timeout(HANG_GUARD).unwrap_or_else(|_| {
        panic!("the calls did not finish; at most {} waited at once (should be {CALLS})", server.most_waiting())
    });
    assert_eq!(server.most_waiting(), CALLS, "requests waiting at once");
    let ok = format!("http {url}: ok (status 200, body \"hello\", request headers seen: [])");
    for answer in answers {
        let answer = answer.unwrap();
        let said: Vec<&str> = answer.diagnostics.iter().map(|d| d.summary.as_str()).collect();
        assert_eq!(said, [ok.as_str()]);
    }
}

#[test]
fn a_computing_provider_lets_other_calls_use_its_thread() {
    // One worker thread. A provider spinning in a loop yields at every epoch
    // tick, so a call that starts while it spins finishes first; were it
    // to keep the thread, that call would wait until the loop's time limit.
    let provider =
        zoo(Sandbox { call_timeout: Duration::from_secs(5), max_concurrency: Some(2), ..Sandbox::default() });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .max_blocking_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let apply = |type_name: &str| {
        let provider = Arc::clone(&provider);
        let config = Value::object([("phase", Value::string("apply"))]);
        let request = ApplyRequest {
            type_name: type_name.to_string(),
            prior_state: Value::Null,
            planned_state: config.clone(),
            config,
            planned_private: Vec::new(),
            idempotency_key: type_name.to_string(),
        };
        async move { provider.apply_resource(request).await }
    };
    let finished = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (loop_done, ok_done) = (Arc::clone(&finished), Arc::clone(&finished));
    let (looped, ok) = runtime.block_on(async {
        let spinning = apply("zoo_loop");
        let looping = tokio::spawn(async move {
            let result = spinning.await;
            loop_done.lock().unwrap().push("loop");
            result
        });
        // Give the loop time to be spinning on the only worker.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let quick = apply("zoo_ok");
        let ok = tokio::spawn(async move {
            let result = quick.await;
            ok_done.lock().unwrap().push("ok");
            result
        });
        (looping.await.unwrap(), ok.await.unwrap())
    });
    assert!(ok.is_ok(), "{ok:?}");
    assert_eq!(looped.unwrap_err().message, "exceeded its time limit of 5s");
    assert_eq!(*finished.lock().unwrap(), ["ok", "loop"]);
}

/// Runs `f` on its own thread; fails the test instead of hanging when it
/// does not finish within [`HANG_GUARD`].
fn within_guard<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (done, result) = std::sync::mpsc::channel();
    std::thread::spawn(move || done.send(f()));
    result.recv_timeout(HANG_GUARD).unwrap_or_else(|_| panic!("{what} did not end"))
}

#[test]
fn an_answer_of_shared_nodes_is_refused_as_it_is_decoded() {
    // Issue 11, item 3: a million references to one 256-byte text node are
    // 4 MiB on the wire and over 256 MiB as a tree; the decoder used to
    // build the tree (2.1 GiB in the report) before anything measured it.
    // Issue 32, item 8: a million references to one refined unknown were
    // measured without their refinements, accepted while planning, and
    // refused only at apply. Both are paid for as they are decoded now,
    // and stop at the limit (the wire's accounting is tested in `wire`).
    let provider = zoo(Sandbox::default());
    for bomb in ["zoo_shared", "zoo_refined"] {
        let err = plan(&*provider, bomb, Value::Null).unwrap_err();
        assert_eq!(err.message, "returned an answer that decodes to more than the limit of 32 MiB", "{bomb}");
    }
    assert_healthy(&*provider);
}

#[test]
fn a_wait_in_the_host_ends_at_the_call_timeout() {
    // Issue 11, item 4: waiting for room in the body of a request that is
    // never sent blocked forever, using no CPU, so no epoch tick stopped it.
    let provider = zoo(Sandbox { call_timeout: Duration::from_secs(2), ..Sandbox::default() });
    let err = within_guard("the stalled call", move || {
        let err = plan(&*provider, "zoo_stall", Value::Null).unwrap_err();
        assert_healthy(&*provider);
        err
    });
    assert_eq!(err.message, "exceeded its time limit of 2s");
}

#[test]
fn a_long_timer_that_is_never_waited_out_is_not_a_timeout() {
    // Issue 11, item 5: polling a 10 ms and a one-hour timer failed at once,
    // because creating the long timer marked the call as timed out.
    let provider = zoo(Sandbox { call_timeout: Duration::from_secs(30), ..Sandbox::default() });
    let config = Value::object([("needle", Value::string("x"))]);
    let answer = plan(&*provider, "zoo_timers", config.clone()).unwrap();
    assert_eq!(answer.planned_state, config);
}

/// A sandbox granting `data/` (holding `data/f.txt`) read-only.
fn with_data_dir(config_dir: &std::path::Path, sandbox: Sandbox) -> Sandbox {
    std::fs::create_dir_all(config_dir.join("data")).unwrap();
    std::fs::write(config_dir.join("data/f.txt"), "x").unwrap();
    let granted = Sandbox::resolve(config_dir, &[], &["./data".into()]).unwrap();
    Sandbox { read_only: granted.read_only, ..sandbox }
}

#[test]
fn open_files_are_capped_per_instance_and_not_kept_in_the_pool() {
    // Issue 11, item 2: a provider held ~4,080 files open, and then other
    // providers and cairn's own state write failed with "Too many open files".
    let dir = tempfile::tempdir().unwrap();
    let sandbox =
        with_data_dir(dir.path(), Sandbox { max_descriptors: 16, max_concurrency: Some(1), ..Sandbox::default() });
    let provider = zoo(sandbox);
    let read = |count: Option<&str>| {
        let mut attrs = vec![("read", Value::List(vec![Value::string("data/f.txt")]))];
        attrs.extend(count.map(|n| ("payload", Value::string(n))));
        Value::object(attrs)
    };
    let err = plan(&*provider, "zoo_files", read(None)).unwrap_err();
    assert_eq!(err.message, "exceeded its limit of 16 open files");
    assert_healthy(&*provider);
    // Ten files held after a call that succeeded: with one instance, were it
    // pooled with its ten files, the second call would reach twenty.
    plan(&*provider, "zoo_files", read(Some("10"))).unwrap();
    plan(&*provider, "zoo_files", read(Some("10"))).unwrap();
}

#[test]
fn handles_are_capped_with_a_one_line_message() {
    let provider = zoo(Sandbox { max_handles: 1000, ..Sandbox::default() });
    let err = plan(&*provider, "zoo_handles", Value::Null).unwrap_err();
    assert_eq!(err.message, "exceeded its limit of 1000 handles");
    assert!(!err.detail.contains("wasm backtrace"), "{}", err.detail);
    assert_healthy(&*provider);
}

/// The probes of issue 32, item 6, with what each is refused: a write
/// outside every grant, a write into a read-only grant, a read out of a
/// grant through `..`, and an HTTP request to an origin not granted.
fn refused_probes(on_failure: &str) -> Value {
    Value::object([
        ("write", Value::List(vec![Value::string("out2/x.txt"), Value::string("data/new.txt")])),
        ("read", Value::List(vec![Value::string("data/../secret.txt"), Value::string("data/f.txt")])),
        ("http", Value::List(vec![Value::string("http://127.0.0.1:9/stolen")])),
        ("on_failure", Value::string(on_failure)),
    ])
}

/// What each refusal of [`refused_probes`] must be told as, in the order
/// the zoo probes (reads first).
const REFUSED: [&str; 4] = [
    "the sandbox denied: read data/../secret.txt (it leads out of the grant ./data)",
    "the sandbox denied: write to out2/x.txt (granted read-only: ./data)",
    "the sandbox denied: write to data/new.txt (granted read-only: ./data)",
    "the sandbox denied: HTTP request to http://127.0.0.1:9 (no HTTP origin is granted)",
];

#[test]
fn a_call_that_fails_after_a_refusal_says_what_the_sandbox_denied() {
    // Issue 32, item 6: the provider sees only an error code (ENOENT,
    // EPERM, HttpRequestDenied), and its error read as a bug of its own.
    let dir = tempfile::tempdir().unwrap();
    let provider = zoo(with_data_dir(dir.path(), Sandbox { max_concurrency: Some(1), ..Sandbox::default() }));
    let answer = plan(&*provider, "zoo_probe", refused_probes("error")).unwrap();
    let said = summaries(&answer);
    // The provider's own errors first, as it gave them.
    assert!(said[0].starts_with("read data/../secret.txt: failed: "), "{said:#?}");
    let added: Vec<&str> = said.iter().filter(|s| s.starts_with("the sandbox denied")).map(|s| &**s).collect();
    assert_eq!(added, REFUSED, "{said:#?}");
    let remedy = |summary: &str| answer.diagnostics.iter().find(|d| d.summary == summary).unwrap().detail.clone();
    assert_eq!(remedy(REFUSED[1]), "To grant it, add to the provider's block: sandbox { read_write = [\"./out2\"] }");
    assert!(remedy(REFUSED[2]).ends_with("sandbox { read_write = [\"./data\"] }"), "{}", remedy(REFUSED[2]));
    assert!(remedy(REFUSED[3]).ends_with("sandbox { http { url = \"http://127.0.0.1:9\" } }"));

    // The same refusals in a call that succeeds are nobody's business, and
    // the next call (on the same, only instance) is not told of them.
    let answer = plan(&*provider, "zoo_probe", refused_probes("warn")).unwrap();
    assert!(!summaries(&answer).iter().any(|s| s.starts_with("the sandbox denied")), "{:#?}", summaries(&answer));
    let fine = Value::object([
        ("read", Value::List(vec![Value::string("data/f.txt")])),
        ("on_failure", Value::string("error")),
    ]);
    assert!(plan(&*provider, "zoo_probe", fine).unwrap().diagnostics.iter().all(|d| !d.is_error()));
}

#[test]
fn a_call_that_traps_after_a_refusal_says_what_the_sandbox_denied() {
    let dir = tempfile::tempdir().unwrap();
    let provider = zoo(with_data_dir(dir.path(), Sandbox::default()));
    let err = plan(&*provider, "zoo_probe", refused_probes("panic")).unwrap_err();
    assert_eq!(err.message, "panicked: zoo: deliberate panic after a failed probe");
    for refused in REFUSED {
        assert!(err.detail.contains(refused), "{refused:?} not in:\n{}", err.detail);
    }
    assert!(err.detail.contains("provider stderr:"), "the provider's last words are still there:\n{}", err.detail);
}

#[test]
fn parallel_calls_are_each_told_only_their_own_refusals() {
    // Calls run on separate instances at once; each instance records its
    // own call's refusals.
    let dir = tempfile::tempdir().unwrap();
    let provider = zoo(with_data_dir(dir.path(), Sandbox { max_concurrency: Some(4), ..Sandbox::default() }));
    let calls: Vec<_> = (0..4)
        .map(|i| {
            let provider = provider.clone();
            std::thread::spawn(move || {
                let path = format!("out{i}/x.txt");
                let config = Value::object([
                    ("write", Value::List(vec![Value::string(&path)])),
                    ("on_failure", Value::string("error")),
                ]);
                (path, plan(&*provider, "zoo_probe", config).unwrap())
            })
        })
        .collect();
    for call in calls {
        let (path, answer) = call.join().unwrap();
        let denied: Vec<String> =
            summaries(&answer).into_iter().filter(|s| s.starts_with("the sandbox denied")).collect();
        assert_eq!(denied, [format!("the sandbox denied: write to {path} (granted read-only: ./data)")]);
    }
}

#[test]
fn permission_changes_are_made_only_inside_read_write_grants() {
    // Issue 32, item 4: the `files` import sets permission bits, and only
    // where a read-write grant reaches: not in a read-only grant, not
    // outside every grant, not through `..` or a link out of the grant.
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let mut sandbox = with_data_dir(root, Sandbox::default());
    sandbox.read_write = Sandbox::resolve(root, &["./out".into()], &[]).unwrap().read_write;
    sandbox.create_writable_dirs().unwrap();
    std::fs::write(root.join("out/x.txt"), "x").unwrap();
    std::fs::write(root.join("secret.txt"), "x").unwrap();
    std::os::unix::fs::symlink("../secret.txt", root.join("out/link")).unwrap();
    let mode = |path: &str| std::fs::metadata(root.join(path)).unwrap().permissions().mode() & 0o7777;
    for path in ["out/x.txt", "secret.txt", "data/f.txt"] {
        std::fs::set_permissions(root.join(path), std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let provider = zoo(sandbox);
    let tries = ["600 out/x.txt", "666 data/f.txt", "666 secret.txt", "666 out/../secret.txt", "666 out/link"];
    let config = Value::object([("chmod", Value::List(tries.iter().map(|t| Value::string(*t)).collect()))]);
    let logged = super::tests::capture_logs(|| {
        let answer = plan(&*provider, "zoo_probe", config).unwrap();
        let add = "To grant it, add to the provider's block";
        let escape = "it leads out of the grant ./out";
        assert_eq!(
            summaries(&answer),
            [
                "chmod 600 out/x.txt: ok".to_string(),
                "chmod 666 data/f.txt: failed: the sandbox denied: chmod of data/f.txt (granted read-only: ./data). \
                 To grant it, move ./data from read_only to read_write in the provider's sandbox block: \
                 sandbox { read_write = [\"./data\"] }"
                    .to_string(),
                format!(
                    "chmod 666 secret.txt: failed: the sandbox denied: chmod of secret.txt (granted read-write: \
                     ./out; read-only: ./data). {add}: sandbox {{ read_write = [\".\"] }}"
                ),
                format!(
                    "chmod 666 out/../secret.txt: failed: the sandbox denied: chmod of out/../secret.txt ({escape})"
                ),
                format!("chmod 666 out/link: failed: the sandbox denied: chmod of out/link ({escape})"),
            ]
        );
    });
    assert_eq!(logged.matches("the sandbox denied: chmod of").count(), 4, "each refusal is logged:\n{logged}");
    assert_eq!((mode("out/x.txt"), mode("secret.txt"), mode("data/f.txt")), (0o600, 0o644, 0o644));
}

/// A loopback TCP server that echoes what each connection sends until the
/// client shuts its side, then closes; or, `silent`, holds every connection
/// and never writes. Counts the connections it accepted, and those still
/// open.
struct EchoServer {
    port: u16,
    accepted: Arc<AtomicUsize>,
    open: Arc<AtomicUsize>,
}

impl EchoServer {
    fn start(silent: bool) -> EchoServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (accepted, open) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let (count, still_open) = (Arc::clone(&accepted), Arc::clone(&open));
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                // Open first: a test that sees a connection accepted sees it open.
                still_open.fetch_add(1, Ordering::SeqCst);
                count.fetch_add(1, Ordering::SeqCst);
                if silent {
                    held.push(stream);
                    continue;
                }
                let still_open = Arc::clone(&still_open);
                std::thread::spawn(move || {
                    let mut received = Vec::new();
                    if stream.read_to_end(&mut received).is_ok() {
                        let _ = stream.write_all(&received);
                    }
                    still_open.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
        EchoServer { port, accepted, open }
    }

    /// Waits until `accepted` connections were accepted and `open` of them
    /// are still open (the server sees a client's connect and close a
    /// moment after the client does); fails after [`HANG_GUARD`].
    fn wait_for(&self, accepted: usize, open: usize) {
        let started = std::time::Instant::now();
        while (self.accepted(), self.open.load(Ordering::SeqCst)) != (accepted, open) {
            assert!(
                started.elapsed() < HANG_GUARD,
                "the server saw {} connections, {} open; expected {accepted}, {open} open",
                self.accepted(),
                self.open.load(Ordering::SeqCst)
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

/// A sandbox granting `targets`, pinned as a run pins them.
fn connecting(targets: &[String], sandbox: Sandbox) -> Sandbox {
    let mut sandbox = sandbox;
    for target in targets {
        sandbox.grant_connect(target).unwrap();
    }
    block_on(sandbox.pin_connect_targets());
    sandbox
}

fn strings(items: &[String]) -> Value {
    Value::List(items.iter().map(Value::string).collect())
}

#[test]
fn a_granted_target_connects_and_round_trips_bytes() {
    let server = EchoServer::start(false);
    let port = server.port;
    let targets = [format!("127.0.0.1:{port}"), format!("localhost:{port}")];
    let sandbox = connecting(&targets, Sandbox::default());
    let pinned: Vec<String> = sandbox.connect[1].addresses().iter().map(|ip| ip.to_string()).collect();
    let provider = zoo(sandbox);
    let config = Value::object([
        ("connect", strings(&targets)),
        ("lookup", strings(&["localhost".to_string(), "LOCALHOST.".to_string()])),
    ]);
    let answer = plan(&*provider, "zoo_probe", config).unwrap();
    let found = format!("[{}]", pinned.join(", "));
    assert_eq!(
        summaries(&answer),
        [
            format!("connect 127.0.0.1:{port}: ok (echoed \"zoo\\n\")"),
            format!("connect localhost:{port}: ok (echoed \"zoo\\n\")"),
            format!("lookup localhost: ok {found}"),
            format!("lookup LOCALHOST.: ok {found}"),
        ]
    );
    assert!(pinned.contains(&"127.0.0.1".to_string()), "{pinned:?}");
    assert_eq!(server.accepted(), 2);
}

#[test]
fn a_granted_name_is_reached_at_its_pinned_addresses_only() {
    // The host pins the name once for the run; the provider's lookups are
    // answered from the pin, never from the DNS (which knows nothing of
    // this name), and an address the name does not pin is refused.
    let server = EchoServer::start(false);
    let port = server.port;
    let name = "db.cairn-test.invalid";
    let mut sandbox = Sandbox::default();
    sandbox.grant_connect(&format!("{name}:{port}")).unwrap();
    sandbox.connect[0].pinned = sandbox::Pinned::Resolved(vec![[127, 0, 0, 1].into()]);
    let provider = zoo(sandbox);
    let config = Value::object([
        ("connect", strings(&[format!("{name}:{port}"), format!("127.0.0.2:{port}")])),
        ("lookup", strings(&[name.to_string()])),
        ("on_failure", Value::string("error")),
    ]);
    let answer = plan(&*provider, "zoo_probe", config).unwrap();
    let granted = format!("granted connect: {name}:{port} (pinned to 127.0.0.1)");
    assert_eq!(
        summaries(&answer),
        [
            format!("connect {name}:{port}: ok (echoed \"zoo\\n\")"),
            format!("connect 127.0.0.2:{port}: failed: Permission denied (os error 2)"),
            format!("lookup {name}: ok [127.0.0.1]"),
            format!("the sandbox denied: connect to 127.0.0.2:{port} ({granted})"),
        ]
    );
    let detail = &answer.diagnostics[3].detail;
    assert!(detail.starts_with(&format!("{name}:{port} is pinned to the addresses the host resolved")), "{detail}");
    assert_eq!(server.accepted(), 1);
}

#[test]
fn connects_binds_listens_udp_and_lookups_not_granted_are_refused_and_told() {
    let granted_server = EchoServer::start(false);
    let other_server = EchoServer::start(false);
    let (port, other) = (granted_server.port, other_server.port);
    let provider = zoo(connecting(&[format!("127.0.0.1:{port}")], Sandbox::default()));
    let config = Value::object([
        ("connect", strings(&[format!("127.0.0.1:{other}")])),
        ("lookup", strings(&["example.com".to_string()])),
        ("bind", strings(&["127.0.0.1:0".to_string()])),
        ("listen", strings(&["unbound".to_string()])),
        ("udp", strings(&["127.0.0.1:0".to_string()])),
        ("on_failure", Value::string("error")),
    ]);
    let answer = plan(&*provider, "zoo_probe", config).unwrap();
    let said = summaries(&answer);
    let (outcomes, denied) = said.split_at(5);
    for (outcome, probe) in outcomes.iter().zip([
        format!("connect 127.0.0.1:{other}"),
        "lookup example.com".to_string(),
        "bind 127.0.0.1:0".to_string(),
        "listen unbound".to_string(),
        "udp 127.0.0.1:0".to_string(),
    ]) {
        assert!(outcome.starts_with(&format!("{probe}: failed: ")), "{said:#?}");
    }
    let granted = format!("granted connect: 127.0.0.1:{port}");
    let no_server = "a provider may only connect out; it may not bind, listen or accept";
    assert_eq!(
        denied,
        [
            format!("the sandbox denied: connect to 127.0.0.1:{other} ({granted})"),
            format!("the sandbox denied: look up the name example.com ({granted}; only granted names are looked up)"),
            format!("the sandbox denied: bind to 127.0.0.1:0 ({no_server})"),
            format!("the sandbox denied: listen for connections ({no_server})"),
            "the sandbox denied: open a UDP socket (IPv4) (UDP is never granted; a provider may only open TCP \
             connections to granted targets)"
                .to_string(),
        ]
    );
    let remedy = &answer.diagnostics[5].detail;
    assert_eq!(
        remedy,
        &format!("To grant it, add to the provider's block: sandbox {{ connect = [\"127.0.0.1:{other}\"] }}")
    );
    assert_eq!(other_server.accepted() + granted_server.accepted(), 0, "nothing was reached");
}

#[test]
fn connections_count_against_the_descriptor_budget() {
    let server = EchoServer::start(false);
    let target = format!("127.0.0.1:{}", server.port);
    let sandbox = Sandbox { max_descriptors: 4, max_concurrency: Some(1), ..Sandbox::default() };
    let provider = zoo(connecting(std::slice::from_ref(&target), sandbox));
    let sockets = |count: Option<&str>| {
        let mut attrs = vec![("connect", strings(std::slice::from_ref(&target)))];
        attrs.extend(count.map(|n| ("payload", Value::string(n))));
        Value::object(attrs)
    };
    let err = plan(&*provider, "zoo_sockets", sockets(None)).unwrap_err();
    assert_eq!(err.message, "exceeded its limit of 4 open files and sockets");
    // The fifth socket was refused before it was made; the instance that
    // held four is gone, and its connections with it.
    server.wait_for(4, 0);
    assert_healthy(&*provider);
    // An instance keeps its connections for its next call (a provider's
    // database session), up to half its budget...
    plan(&*provider, "zoo_sockets", sockets(Some("2"))).unwrap();
    server.wait_for(6, 2);
    plan(&*provider, "zoo_sockets", sockets(Some("2"))).unwrap();
    // ...and one holding more is dropped after its call, with them.
    server.wait_for(8, 0);
    plan(&*provider, "zoo_sockets", sockets(Some("2"))).unwrap();
    server.wait_for(10, 2);
}

#[test]
fn a_read_that_never_ends_stops_at_the_call_timeout() {
    let server = EchoServer::start(true);
    let target = format!("127.0.0.1:{}", server.port);
    let sandbox = Sandbox { call_timeout: Duration::from_secs(2), ..Sandbox::default() };
    let provider = zoo(connecting(std::slice::from_ref(&target), sandbox));
    let config = Value::object([("connect", strings(&[target]))]);
    let err = within_guard("the silent read", move || {
        let err = plan(&*provider, "zoo_silent", config).unwrap_err();
        assert_healthy(&*provider);
        err
    });
    assert_eq!(err.message, "exceeded its time limit of 2s");
    assert_eq!(server.accepted(), 1, "the provider connected, then waited");
}
