//! The zoo: hostile providers (`providers/testing/zoo`) run by the real
//! `cairn` binary. Each test asserts the exact outcome: the error names the
//! provider, the resource and the cause; the other resources finish; the
//! state stays valid and unchanged for the failed resource; cairn exits
//! with code 1 (never a signal).

use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::OnceLock;

use cairn_e2e::{Run, Workdir, cairn_command};

fn zoo_wasm() -> &'static PathBuf {
    static WASM: OnceLock<PathBuf> = OnceLock::new();
    WASM.get_or_init(|| cairn::runtime::testing::build_component("cairn-provider-zoo"))
}

/// A configuration using the zoo with `sandbox` as its sandbox block's body.
fn config(sandbox: &str, resources: &str) -> String {
    format!(
        "terraform {{\n  required_providers {{\n    zoo = {{ source = {:?} }}\n  }}\n}}\n\nprovider \"zoo\" {{\n  sandbox {{\n{sandbox}\n  }}\n}}\n\n{resources}",
        zoo_wasm().display().to_string()
    )
}

/// Asserts that a run failed the way a failed resource must: exit code 1,
/// every expected line among the errors, and a state that is valid JSON.
fn assert_failed_cleanly(w: &Workdir, run: &Run, expected: &[&str]) {
    assert_eq!(run.code, 1, "cairn must fail with exit code 1, not crash:\n{}", run.all());
    for line in expected {
        assert!(run.stderr.contains(line), "{line:?} not in:\n{}", run.all());
    }
    w.state(); // panics unless valid JSON
}

/// The warnings a run printed, with their `Warning: ` prefix removed.
fn warnings(run: &Run) -> Vec<String> {
    let all = format!("{}\n{}", run.stdout, run.stderr);
    all.lines().filter_map(|l| l.trim().strip_prefix("Warning: ")).map(str::to_string).collect()
}

#[test]
fn hostile_applies_fail_only_their_resource() {
    let w = Workdir::new();
    // 5s, not less: filling 256 MiB takes over 2s on a loaded 2-core
    // machine, and the out-of-memory case then reads as a timeout.
    let sandbox = "    memory  = \"256 MiB\"\n    timeout = \"5s\"";
    // A resource that behaves when created, and that an update breaks.
    let existing = |phase: &str| format!("resource \"zoo_panic\" \"existing\" {{\n  phase = \"{phase}\"\n}}\n");
    let before = format!("resource \"zoo_ok\" \"before\" {{\n  needle = \"kept\"\n}}\n{}", existing("never"));
    w.write("main.tf", &config(sandbox, &before));
    w.cairn(&["apply", "-auto-approve"]).success();
    let kept = w.attributes("zoo_ok.before");
    assert_eq!(w.attributes("zoo_panic.existing")["phase"], "never");

    let mut resources = format!("resource \"zoo_ok\" \"before\" {{\n  needle = \"kept\"\n}}\n{}", existing("apply"));
    resources.push_str("resource \"zoo_ok\" \"other\" {\n  needle = \"finished\"\n}\n");
    for hostile in ["loop", "oom", "recurse", "panic", "big", "deep", "alias"] {
        resources.push_str(&format!("resource \"zoo_{hostile}\" \"bad\" {{\n  phase = \"apply\"\n}}\n"));
    }
    w.write("main.tf", &config(sandbox, &resources));
    let run = w.cairn(&["apply", "-auto-approve"]);
    assert_failed_cleanly(
        &w,
        &run,
        &[
            "provider \"zoo\" exceeded its time limit of 5s while applying zoo_loop.bad",
            "provider \"zoo\" exceeded its memory limit of 256 MiB while applying zoo_oom.bad",
            "provider \"zoo\" overflowed its stack (unbounded recursion?) while applying zoo_recurse.bad",
            "provider \"zoo\" panicked: zoo: deliberate panic in zoo_panic while applying zoo_panic.bad",
            "provider \"zoo\" panicked: zoo: deliberate panic in zoo_panic while applying zoo_panic.existing",
            "provider \"zoo\" returned an answer of 100.0 MiB, more than the limit of 32 MiB while applying zoo_big.bad",
            "provider \"zoo\" returned a malformed value: nested deeper than the limit of 256 levels (a cycle?) while applying zoo_deep.bad",
            "provider \"zoo\" handed the host more than 128 MiB at once (an answer, or a host call's arguments) while applying zoo_alias.bad",
        ],
    );
    let mut addresses = w.addresses();
    addresses.sort();
    assert_eq!(
        addresses,
        ["zoo_ok.before", "zoo_ok.other", "zoo_panic.existing"],
        "only the well-behaved resources and the one that existed are in the state"
    );
    assert_eq!(w.attributes("zoo_ok.before"), kept);
    assert_eq!(w.attributes("zoo_panic.existing")["phase"], "never", "the failed update left the state alone");
    assert_eq!(w.attributes("zoo_ok.other")["needle"], "finished");
}

#[test]
fn an_answer_of_shared_nodes_over_the_limit_is_refused_while_planning() {
    // Issue 32, item 8: a million references to one node (4 MiB on the
    // wire) are refused by the plan, not after an apply has spent the
    // memory: a text node, and a refined unknown (whose refinements the
    // plan used to leave uncounted). The other resources plan fine.
    let w = Workdir::new();
    let resources = "resource \"zoo_shared\" \"bomb\" {}\nresource \"zoo_refined\" \"bomb\" {}\n\
                     resource \"zoo_tail\" \"after\" {}\n";
    w.write("main.tf", &config("", resources));
    let run = w.cairn(&["plan"]);
    assert_failed_cleanly(
        &w,
        &run,
        &[
            "provider \"zoo\" returned an answer that decodes to more than the limit of 32 MiB while planning zoo_shared.bomb",
            "provider \"zoo\" returned an answer that decodes to more than the limit of 32 MiB while planning zoo_refined.bomb",
        ],
    );
    assert_eq!(run.stderr.matches("Error: ").count(), 2, "zoo_tail.after planned fine:\n{}", run.all());
    assert!(w.state().is_none(), "planning wrote no state");
}

#[test]
fn a_fresh_instance_serves_the_call_after_a_crash() {
    // One instance at a time: after each crash the pool must make a new
    // one. The planner walks independent resources in address order, so
    // zoo_tail.after is planned after the hostile ones.
    let w = Workdir::new();
    let sandbox = "    memory          = 64\n    max_concurrency = 1";
    let resources =
        "resource \"zoo_oom\" \"bad\" {}\nresource \"zoo_panic\" \"bad\" {}\nresource \"zoo_tail\" \"after\" {}\n";
    w.write("main.tf", &config(sandbox, resources));
    let run = w.cairn(&["plan"]);
    assert_failed_cleanly(
        &w,
        &run,
        &[
            "provider \"zoo\" exceeded its memory limit of 64 MiB while planning zoo_oom.bad",
            "provider \"zoo\" panicked: zoo: deliberate panic in zoo_panic while planning zoo_panic.bad",
        ],
    );
    assert_eq!(run.stderr.matches("Error: ").count(), 2, "zoo_tail.after planned fine:\n{}", run.all());
    assert!(w.state().is_none(), "planning wrote no state");
}

#[test]
fn a_provider_cannot_leave_its_grants() {
    let w = Workdir::new();
    let root = w.path().canonicalize().unwrap();
    w.write("secret.txt", "top secret");
    w.write("data/ok.txt", "fine");
    w.write("home/.ssh/id_rsa", "PRIVATE KEY");
    std::os::unix::fs::symlink("../secret.txt", w.path().join("data/link")).unwrap();
    std::os::unix::fs::symlink("/etc", w.path().join("data/etc")).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let home = root.join("home");
    let outside = root.join("outside.txt");
    let sandbox = "    read_only  = [\"./data\"]\n    read_write = [\"./out\"]\n    env        = [\"ZOO_GRANTED\"]";
    let reads = [
        "/etc/passwd".to_string(),
        format!("{}/.ssh/id_rsa", home.display()),
        "~/.ssh/id_rsa".to_string(),
        "data/../secret.txt".to_string(),
        "../secret.txt".to_string(),
        format!("{}/secret.txt", root.display()),
        "data/link".to_string(),
        "data/etc/passwd".to_string(),
        "data/ok.txt".to_string(),
    ];
    let writes = [
        outside.display().to_string(),
        "escaped.txt".to_string(),
        "data/new.txt".to_string(),
        "out/fine.txt".to_string(),
    ];
    let resource = format!(
        "resource \"zoo_probe\" \"escape\" {{\n  read    = {reads:?}\n  write   = {writes:?}\n  env     = [\"ZOO_SECRET\", \"ZOO_GRANTED\"]\n  connect = [\"127.0.0.1:{port}\", \"localhost:{port}\"]\n}}\n",
    );
    w.write("main.tf", &config(sandbox, &resource));
    let home_env = home.display().to_string();
    let env = [("HOME", home_env.as_str()), ("ZOO_SECRET", "hunter2"), ("ZOO_GRANTED", "granted")];
    let run = w.cairn_env(&["apply", "-auto-approve"], &env).success();
    let seen = warnings(&run);
    // No such file: outside every grant there is nothing to find. Not
    // permitted: a path inside a grant that leads out of it (`..`, a
    // symlink), or a write into a read-only grant.
    let absent = "failed: No such file or directory (os error 44)";
    let refused = "failed: Operation not permitted (os error 63)";
    let outcomes = [absent, absent, absent, refused, absent, absent, refused, refused];
    let mut expected: Vec<String> =
        reads[..8].iter().zip(outcomes).map(|(path, outcome)| format!("read {path}: {outcome}")).collect();
    expected.push("read data/ok.txt: ok (4 bytes)".into());
    expected.push(format!("write {}: {absent}", outside.display()));
    expected.push(format!("write escaped.txt: {absent}"));
    expected.push(format!("write data/new.txt: {refused}"));
    expected.push("write out/fine.txt: ok".into());
    expected.push("env ZOO_SECRET: failed: environment variable not found".into());
    expected.push("env ZOO_GRANTED: ok (7 chars)".into());
    expected.push(format!("connect 127.0.0.1:{port}: failed: Permission denied (os error 2)"));
    // No connect grant: the connection is refused, and so is the lookup of
    // a name that no grant names.
    expected.push(format!("connect localhost:{port}: failed: Permission denied (os error 2)"));
    for line in &expected {
        assert!(seen.iter().any(|s| s.ends_with(line.as_str())), "{line:?} not among the warnings:\n{}", run.all());
    }
    assert!(!outside.exists() && !w.exists("escaped.txt") && !w.exists("data/new.txt"));
    assert_eq!(w.read("out/fine.txt"), "escaped");
    assert!(w.addresses().contains(&"zoo_probe.escape".to_string()));
    listener.set_nonblocking(true).unwrap();
    let err = listener.accept().map(|_| ()).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::WouldBlock, "the listener saw a connection");
}

#[test]
fn http_reaches_only_granted_origins_with_host_held_headers() {
    let cairn::runtime::testing::HttpServer { port, requests } = cairn::runtime::testing::HttpServer::start();
    let ungranted = TcpListener::bind("127.0.0.1:0").unwrap();
    let other = ungranted.local_addr().unwrap().port();
    let secret = "Bearer zoo-e2e-s3cret";
    // The provider looks for the secret in its own memory; it is given it
    // shifted by one so that it does not find its own copy of the needle.
    let needle: String = secret.bytes().map(|b| char::from(b + 1)).collect();
    let w = Workdir::new();
    let sandbox = format!(
        "    timeout = \"20s\"\n    http {{\n      url     = \"http://127.0.0.1:{port}\"\n      headers = {{ Authorization = var.token }}\n    }}"
    );
    let resource = format!(
        "variable \"token\" {{\n  sensitive = true\n}}\n\nresource \"zoo_probe\" \"web\" {{\n  http   = [\"http://127.0.0.1:{port}/granted\", \"http://127.0.0.1:{other}/stolen\", \"http://localhost:{port}/renamed\"]\n  needle = {needle:?}\n}}\n"
    );
    w.write("main.tf", &config(&sandbox, &resource));
    let var = format!("token={secret}");
    let run = w.cairn(&["plan", "-var", &var]).success();
    let seen = warnings(&run);
    for line in [
        format!("http http://127.0.0.1:{port}/granted: ok (status 200, body \"hello\", request headers seen: [])"),
        format!("http http://127.0.0.1:{other}/stolen: failed: ErrorCode::HttpRequestDenied"),
        format!("http http://localhost:{port}/renamed: failed: ErrorCode::HttpRequestDenied"),
        "memory search: not found".to_string(),
    ] {
        assert!(seen.iter().any(|s| s.ends_with(line.as_str())), "{line:?} not among the warnings:\n{}", run.all());
    }
    assert!(!run.stdout.contains(secret) && !run.stderr.contains(secret), "the secret was printed:\n{}", run.all());
    let requests = requests.lock().unwrap();
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert!(requests[0].starts_with("GET /granted HTTP/1.1\r\n"), "{}", requests[0]);
    assert!(requests[0].contains(&format!("authorization: {secret}\r\n")), "{}", requests[0]);
    ungranted.set_nonblocking(true).unwrap();
    let err = ungranted.accept().map(|_| ()).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::WouldBlock, "the ungranted listener saw a connection");
}

#[test]
fn a_log_flood_is_cut_short() {
    let w = Workdir::new();
    w.write("main.tf", &config("", "resource \"zoo_flood\" \"noisy\" {}\n"));
    let run = w.cairn_env(&["plan"], &[("CAIRN_LOG", "cairn::provider=debug")]).success();
    let flood = run.stderr.lines().filter(|l| l.contains("zoo: flood line")).count();
    assert_eq!(flood, 1000, "one call logs at most 1000 lines");
    let dropped = "… 199001 lines dropped (a provider call may log at most 1000 lines)";
    assert!(run.stderr.contains(dropped), "no {dropped:?} in the output");
    assert!(run.stderr.len() < 1 << 20, "cairn printed {} bytes", run.stderr.len());
}

#[test]
fn sandbox_mistakes_are_errors_before_any_provider_runs() {
    let w = Workdir::new();
    let sandbox = "    read_only = [\"./missing\"]\n    memroy    = \"64 MiB\"";
    w.write("main.tf", &config(sandbox, "resource \"zoo_panic\" \"never\" {}\n"));
    let run = w.cairn(&["plan"]);
    // Both are found when the configuration is read, each where it is written.
    assert_failed_cleanly(
        &w,
        &run,
        &[
            "An argument named \"memroy\" is not expected in a sandbox block. Did you mean \"memory\"?",
            "Invalid sandbox grant",
            "The read-only directory \"./missing\"",
        ],
    );
    assert!(!run.stderr.contains("panicked"), "the provider ran:\n{}", run.all());

    w.write("main.tf", &config("    read_only = [\"./missing\"]", "resource \"zoo_panic\" \"never\" {}\n"));
    for command in ["validate", "plan"] {
        let run = w.cairn(&[command]);
        assert_failed_cleanly(&w, &run, &["main.tf:", "The read-only directory \"./missing\""]);
        assert!(!run.stderr.contains("panicked"), "the provider ran:\n{}", run.all());
    }
}

#[test]
fn inspect_shows_what_a_provider_could_ask_for() {
    let output = cairn_command(&["providers", "inspect"], &[]).arg(zoo_wasm()).output().unwrap();
    let run: Run = output.into();
    assert_eq!(run.code, 0, "{}", run.all());
    for expected in [
        "provider \"cairn_provider_zoo\"",
        "resource types:\n  zoo_alias\n  zoo_big\n",
        "  zoo_probe\n",
        "data sources:\n  (none)\n",
        "wasi:http/outgoing-handler@0.2.12",
        "outgoing HTTP: only the origins granted with http { url = … }",
        "files: only the directories granted with read_only / read_write",
        "environment variables: only those granted with env",
        "cairn:provider/log@0.2.0",
        "wasi:sockets/tcp-create-socket@",
        "TCP: outgoing connections only to the targets granted with connect = [\"host:port\"]",
        "wasi:sockets/ip-name-lookup@",
        "name lookup: only the names granted with connect, answered with the addresses the host pinned",
    ] {
        assert!(run.stdout.contains(expected), "{expected:?} not in:\n{}", run.stdout);
    }
}

#[test]
fn a_link_planted_in_a_grant_does_not_redirect_a_nested_grant() {
    // Issue 11, item 1: with `./out` read-write, a provider replaces the
    // nested read-only grant `./out/ro` by a link to a directory outside
    // every grant; the next run must not open the grant through it.
    let w = Workdir::new();
    w.write("secret/key.txt", "top secret");
    std::fs::create_dir_all(w.path().join("out/ro")).unwrap();
    let sandbox = "    read_write = [\"./out\"]\n    read_only  = [\"./out/ro\"]";
    let plant = "resource \"zoo_probe\" \"plant\" {\n  phase   = \"apply\"\n  symlink = [\"out/ro->../secret\"]\n}\n";
    w.write("main.tf", &config(sandbox, plant));
    let run = w.cairn(&["apply", "-auto-approve"]).success();
    let link = w.path().join("out/ro");
    assert!(link.symlink_metadata().unwrap().file_type().is_symlink(), "no link planted:\n{}", run.all());

    let steal = "resource \"zoo_probe\" \"steal\" {\n  read = [\"out/ro/key.txt\"]\n}\n";
    w.write("main.tf", &config(sandbox, &format!("{plant}{steal}")));
    let run = w.cairn(&["plan"]);
    assert_failed_cleanly(&w, &run, &["\"ro\" is a symbolic link or not a directory"]);
    assert!(!run.all().contains("read out/ro/key.txt: ok"), "the provider read through the link:\n{}", run.all());
}

#[test]
fn warnings_of_an_apply_are_shown() {
    let w = Workdir::new();
    let resource = "resource \"zoo_probe\" \"w\" {\n  phase = \"apply\"\n  env   = [\"ZOO_GRANTED\"]\n}\n";
    w.write("main.tf", &config("    env = [\"ZOO_GRANTED\"]", resource));
    let run = w.cairn_env(&["apply", "-auto-approve"], &[("ZOO_GRANTED", "granted")]).success();
    assert!(
        warnings(&run).iter().any(|s| s.ends_with(": zoo_probe.w: env ZOO_GRANTED: ok (7 chars)")),
        "the apply's warning was not shown:\n{}",
        run.all()
    );

    let resource = "resource \"zoo_probe\" \"v\" {\n  phase = \"apply\"\n  env   = [\"ZOO_GRANTED\"]\n}\n";
    w.write("main.tf", &config("    env = [\"ZOO_GRANTED\"]", resource));
    let run = w.cairn_env(&["apply", "-auto-approve", "-json"], &[("ZOO_GRANTED", "granted")]).success();
    let warned = run.events().into_iter().any(|e| {
        e["type"] == "diagnostic"
            && e["severity"] == "warning"
            && e["summary"] == "zoo_probe.v: env ZOO_GRANTED: ok (7 chars)"
    });
    assert!(warned, "no warning event:\n{}", run.all());
}

#[test]
fn a_crash_in_configure_aborts_the_run_before_any_change() {
    // Issue 11, item 6: like Terraform, a provider that cannot be configured
    // stops the whole run, before planning, so nothing is half-applied.
    let w = Workdir::new();
    let resources = "resource \"zoo_ok\" \"a\" {\n  needle = \"a\"\n}\nresource \"null_resource\" \"n\" {}\n";
    w.write("main.tf", &config("", resources));
    w.cairn(&["apply", "-auto-approve"]).success();
    let before = w.state_text();

    let more = format!("{resources}resource \"null_resource\" \"m\" {{}}\nresource \"zoo_ok\" \"b\" {{}}\n");
    let crashing = config("", &more).replace("provider \"zoo\" {\n", "provider \"zoo\" {\n  fail = \"panic\"\n");
    w.write("main.tf", &crashing);
    let run = w.cairn(&["apply", "-auto-approve"]);
    assert_failed_cleanly(&w, &run, &["provider \"zoo\" panicked: zoo: deliberate panic in configure"]);
    assert_eq!(w.state_text(), before, "the state file is byte for byte what it was");
    assert!(!run.stdout.contains("null_resource.m: Creat"), "another provider's change began:\n{}", run.all());
}

#[test]
fn a_provider_at_its_limits_leaves_cairn_and_other_providers_working() {
    // Every instance of the zoo at once (max_concurrency) holds files and
    // handles up to its budgets, or runs out of memory, time, answer size or
    // log lines, while the bundled null provider creates its resources and
    // cairn writes its state.
    let w = Workdir::new();
    w.write("data/f.txt", "x");
    let sandbox = "    read_only       = [\"./data\"]\n    memory          = 256\n    timeout         = \"10s\"\n    max_concurrency = 4\n    max_descriptors = 8\n    max_handles     = 2000\n    max_log_lines   = 100";
    // A timer takes two entries of the host's table (the deadline and its
    // pollable), so 900 timers and the instance's own handles stay just
    // under a budget of 2000.
    let mut resources = String::new();
    for i in 0..4 {
        resources.push_str(&format!(
            "resource \"zoo_files\" \"f{i}\" {{\n  phase   = \"apply\"\n  read    = [\"data/f.txt\"]\n  payload = \"8\"\n}}\n"
        ));
        resources.push_str(&format!(
            "resource \"zoo_handles\" \"h{i}\" {{\n  phase   = \"apply\"\n  payload = \"900\"\n}}\n"
        ));
        resources.push_str(&format!("resource \"null_resource\" \"n{i}\" {{}}\n"));
    }
    for hostile in ["files", "handles", "oom", "loop", "big", "shared", "stall"] {
        resources.push_str(&format!(
            "resource \"zoo_{hostile}\" \"over\" {{\n  phase = \"apply\"\n  read  = [\"data/f.txt\"]\n}}\n"
        ));
    }
    // 2 × 5000 lines, fifty times the budget: cut, counted, and created.
    resources.push_str("resource \"zoo_flood\" \"over\" {\n  phase   = \"apply\"\n  payload = \"5000\"\n}\n");
    w.write("main.tf", &config(sandbox, &resources));
    let run = w.cairn(&["apply", "-auto-approve", "-parallelism", "16"]);
    assert_failed_cleanly(
        &w,
        &run,
        &[
            "provider \"zoo\" exceeded its limit of 8 open files while applying zoo_files.over",
            "provider \"zoo\" exceeded its limit of 2000 handles while applying zoo_handles.over",
            "provider \"zoo\" exceeded its memory limit of 256 MiB while applying zoo_oom.over",
            "provider \"zoo\" exceeded its time limit of 10s while applying zoo_loop.over",
            "provider \"zoo\" exceeded its time limit of 10s while applying zoo_stall.over",
            "provider \"zoo\" returned an answer of 100.0 MiB, more than the limit of 32 MiB while applying zoo_big.over",
            "more than the limit of 32 MiB while applying zoo_shared.over",
        ],
    );
    let mut addresses = w.addresses();
    addresses.sort();
    let mut expected: Vec<String> = (0..4)
        .flat_map(|i| [format!("null_resource.n{i}"), format!("zoo_files.f{i}"), format!("zoo_handles.h{i}")])
        .collect();
    expected.push("zoo_flood.over".to_string());
    expected.sort();
    assert_eq!(addresses, expected, "everything within its budgets was created:\n{}", run.all());
}

#[test]
fn a_resource_that_fails_on_a_refusal_is_told_what_the_sandbox_denied() {
    // Issue 32, item 6: a provider refused by the sandbox saw only an
    // error code ("[Errno 44]", "[Errno 63]", HttpRequestDenied) and failed
    // as if with a bug of its own. The error now says what was refused,
    // what is granted, and the line that would grant it.
    let w = Workdir::new();
    w.write("data/f.txt", "x");
    let sandbox = "    read_only  = [\"./data\"]\n    read_write = [\"./out\"]";
    let resource = "resource \"zoo_probe\" \"refused\" {\n  phase      = \"apply\"\n  on_failure = \"error\"\n  \
                    write      = [\"out2/x.txt\", \"data/new.txt\", \"out/fine.txt\"]\n  \
                    http       = [\"http://127.0.0.1:9/stolen\"]\n}\n";
    w.write("main.tf", &config(sandbox, resource));
    let run = w.cairn(&["apply", "-auto-approve"]);
    assert_failed_cleanly(
        &w,
        &run,
        &[
            "write out2/x.txt: failed: No such file or directory (os error 44)",
            "the sandbox denied: write to out2/x.txt (granted read-write: ./out; read-only: ./data)",
            "To grant it, add to the provider's block: sandbox { read_write = [\"./out2\"] }",
            "write data/new.txt: failed: Operation not permitted (os error 63)",
            "the sandbox denied: write to data/new.txt (granted read-only: ./data)",
            "move ./data from read_only to read_write in the provider's sandbox block: \
             sandbox { read_write = [\"./data\"] }",
            "the sandbox denied: HTTP request to http://127.0.0.1:9 (no HTTP origin is granted)",
            "sandbox { http { url = \"http://127.0.0.1:9\" } }",
        ],
    );
    assert_eq!(run.stderr.matches("the sandbox denied").count(), 3, "out/fine.txt was granted:\n{}", run.all());
    assert!(!w.exists("out2/x.txt") && !w.exists("data/new.txt"));
}

#[test]
fn a_permission_change_outside_the_read_write_grants_is_refused() {
    // Issue 32, item 4: the `files` import changes modes only inside a
    // read-write grant; while planning, nothing is writable.
    use std::os::unix::fs::PermissionsExt as _;
    let w = Workdir::new();
    w.write("data/f.txt", "x");
    w.write("out/x.txt", "x");
    w.write("out2/x.txt", "x");
    for path in ["data/f.txt", "out/x.txt", "out2/x.txt"] {
        std::fs::set_permissions(w.path().join(path), std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let sandbox = "    read_write = [\"./out\"]\n    read_only  = [\"./data\"]";
    let chmods = ["600 out/x.txt", "666 out2/x.txt", "666 data/f.txt"];
    // Probes while planning, or with `phase = "apply"` while applying.
    let probe = |phase: &str| format!("resource \"zoo_probe\" \"chmod\" {{\n{phase}  chmod = {chmods:?}\n}}\n");
    let mode = |path: &str| std::fs::metadata(w.path().join(path)).unwrap().permissions().mode() & 0o777;

    w.write("main.tf", &config(sandbox, &probe("")));
    let plan = w.cairn(&["plan"]).success();
    let refused = "chmod 600 out/x.txt: failed: the sandbox denied: chmod of out/x.txt (granted read-write: ./out, \
                   which is read-only while nothing may change (validate, plan))";
    let seen = warnings(&plan);
    assert!(seen.iter().any(|s| s.ends_with(refused)), "{refused:?} not among the warnings:\n{}", plan.all());
    assert_eq!(mode("out/x.txt"), 0o644, "a plan changes nothing");

    w.write("main.tf", &config(sandbox, &probe("  phase = \"apply\"\n")));
    let run = w.cairn(&["apply", "-auto-approve"]).success();
    for line in [
        "chmod 600 out/x.txt: ok",
        "chmod 666 out2/x.txt: failed: the sandbox denied: chmod of out2/x.txt (granted read-write: ./out; \
         read-only: ./data). To grant it, add to the provider's block: sandbox { read_write = [\"./out2\"] }",
        "chmod 666 data/f.txt: failed: the sandbox denied: chmod of data/f.txt (granted read-only: ./data). To \
         grant it, move ./data from read_only to read_write in the provider's sandbox block: \
         sandbox { read_write = [\"./data\"] }",
    ] {
        assert!(warnings(&run).iter().any(|s| s.ends_with(line)), "{line:?} not among the warnings:\n{}", run.all());
    }
    assert_eq!((mode("out/x.txt"), mode("out2/x.txt"), mode("data/f.txt")), (0o600, 0o644, 0o644));
}

/// A loopback TCP server that echoes what each connection sends until the
/// client shuts its side; returns its port and a count of connections.
fn echo_server() -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::{Read, Write};
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = std::sync::Arc::new(AtomicUsize::new(0));
    let count = std::sync::Arc::clone(&accepted);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            count.fetch_add(1, Ordering::SeqCst);
            std::thread::spawn(move || {
                let mut received = Vec::new();
                if stream.read_to_end(&mut received).is_ok() {
                    let _ = stream.write_all(&received);
                }
            });
        }
    });
    (port, accepted)
}

#[test]
fn a_connect_grant_reaches_its_targets_and_nothing_else() {
    // Issue 34, item 1: outgoing TCP to the granted host:port only, a
    // granted name resolved by cairn and pinned, no lookup of another
    // name, no bind, no listen, no UDP; each refusal told.
    let (port, accepted) = echo_server();
    let (other, other_accepted) = echo_server();
    let w = Workdir::new();
    let sandbox = format!("    connect = [\"127.0.0.1:{port}\", \"localhost:{port}\"]");
    let granted = format!(
        "resource \"zoo_probe\" \"granted\" {{\n  connect = [\"127.0.0.1:{port}\", \"localhost:{port}\"]\n}}\n"
    );
    let refused = format!(
        "resource \"zoo_probe\" \"refused\" {{\n  phase      = \"apply\"\n  on_failure = \"error\"\n  \
         connect    = [\"127.0.0.1:{other}\"]\n  lookup     = [\"example.com\"]\n  \
         bind       = [\"127.0.0.1:0\"]\n  listen     = [\"unbound\"]\n  udp        = [\"127.0.0.1:0\"]\n}}\n"
    );
    w.write("main.tf", &config(&sandbox, &format!("{granted}{refused}")));
    let run = w.cairn(&["apply", "-auto-approve"]);
    let seen = warnings(&run);
    for line in [
        format!("connect 127.0.0.1:{port}: ok (echoed \"zoo\\n\")"),
        format!("connect localhost:{port}: ok (echoed \"zoo\\n\")"),
    ] {
        assert!(seen.iter().any(|s| s.ends_with(line.as_str())), "{line:?} not among the warnings:\n{}", run.all());
    }
    let targets = format!("granted connect: 127.0.0.1:{port}, localhost:{port} (pinned to ");
    let no_server = "(a provider may only connect out; it may not bind, listen or accept)";
    assert_failed_cleanly(
        &w,
        &run,
        &[
            &format!("connect 127.0.0.1:{other}: failed: Permission denied (os error 2)"),
            &format!("the sandbox denied: connect to 127.0.0.1:{other} ({targets}"),
            &format!("To grant it, add to the provider's block: sandbox {{ connect = [\"127.0.0.1:{other}\"] }}"),
            "lookup example.com: failed: Permission denied (os error 2)",
            "the sandbox denied: look up the name example.com (",
            &format!("the sandbox denied: bind to 127.0.0.1:0 {no_server}"),
            &format!("the sandbox denied: listen for connections {no_server}"),
            "the sandbox denied: open a UDP socket (IPv4) (UDP is never granted",
        ],
    );
    // The granted probe connected to both its targets (it probes while
    // planning); the refused one reached nothing.
    assert!(w.addresses().contains(&"zoo_probe.granted".to_string()), "{}", run.all());
    use std::sync::atomic::Ordering;
    assert_eq!(other_accepted.load(Ordering::SeqCst), 0, "the ungranted server saw a connection");
    assert!(accepted.load(Ordering::SeqCst) >= 2, "the granted server saw no connection");
}

#[test]
fn connect_grants_are_checked_where_they_are_written() {
    let w = Workdir::new();
    let sandbox = "    connect = [\"db.internal\", \"postgres://db.internal:5432\", \"db.internal:0\"]";
    w.write("main.tf", &config(sandbox, "resource \"zoo_ok\" \"x\" {}\n"));
    let run = w.cairn(&["validate"]);
    assert_eq!(run.code, 1, "{}", run.all());
    for line in [
        "\"db.internal\" has no port; write host:port, such as \"db.internal:5432\".",
        "\"postgres://db.internal:5432\" is a URL; a connect target is host:port",
        "The port of \"db.internal:0\" is 0",
    ] {
        assert!(run.stderr.contains(line), "{line:?} not in:\n{}", run.all());
    }
}
