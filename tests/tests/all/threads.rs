//! The engine's own thread count (`CAIRN_THREADS`) changes how fast a run
//! is, never what it prints or writes: the plan's text and the state's
//! bytes are the same on one thread and on several.

use cairn_e2e::Workdir;

/// Enough resources that the plan's rendering is shared out in several
/// runs (256 changes a run) and the graph has parts that plan side by side.
const RESOURCES: usize = 700;

/// `RESOURCES` null_resources, each but the first referring to the one at
/// half its number: a tree, so that many plan at once.
fn tree() -> String {
    (0..RESOURCES)
        .map(|i| match i {
            0 => "resource \"null_resource\" \"r0\" {}\n".to_string(),
            _ => format!(
                "resource \"null_resource\" \"r{i}\" {{\n  triggers = {{\n    parent = null_resource.r{}.id\n    n = \"{i}\"\n  }}\n}}\n",
                i / 2
            ),
        })
        .collect()
}

/// `cairn ARGS` in `w` on `threads` threads.
fn on_threads(w: &Workdir, args: &[&str], threads: &str) -> String {
    w.cairn_env(args, &[("CAIRN_THREADS", threads)]).success().stdout
}

#[test]
fn one_thread_and_several_print_the_same_plan_and_write_the_same_state() {
    let a = Workdir::new();
    a.write("main.tf", &tree());
    let plan = |w: &Workdir, args: &[&str], threads| on_threads(w, args, threads);
    let first = plan(&a, &["plan"], "1");
    assert!(first.contains(&format!("Plan: {RESOURCES} to add, 0 to change, 0 to destroy.")), "{first}");
    for threads in ["2", "4"] {
        assert_eq!(plan(&a, &["plan"], threads), first, "the plan from empty on {threads} threads");
    }
    on_threads(&a, &["apply", "-auto-approve"], "2");
    let no_op = plan(&a, &["plan", "-refresh=false"], "1");
    assert_eq!(plan(&a, &["plan", "-refresh=false"], "4"), no_op, "the no-op plan on 4 threads");

    // The same state written on one thread and on four, byte for byte
    // (`state rm` writes it whole again).
    let b = Workdir::new();
    b.write("main.tf", &tree());
    let applied = a.state_text();
    b.write("cairn.state.json", &applied);
    let rm = ["state", "rm", "null_resource.r0"];
    a.cairn_here_env(&rm, &[("CAIRN_THREADS", "1")]).success();
    b.cairn_here_env(&rm, &[("CAIRN_THREADS", "4")]).success();
    assert_ne!(a.state_text(), applied, "state rm writes the state again");
    assert_eq!(a.state_text(), b.state_text(), "the state written on 1 and on 4 threads");
}

#[test]
fn a_thread_count_that_is_not_a_number_is_an_error_that_names_it() {
    let w = Workdir::new();
    w.write("main.tf", "resource \"null_resource\" \"a\" {}\n");
    for wrong in ["0", "many"] {
        let run = w.cairn_env(&["plan"], &[("CAIRN_THREADS", wrong)]).failure();
        assert!(run.stderr.contains(&format!("CAIRN_THREADS=\"{wrong}\" is not a number of threads")), "{}", run.all());
    }
}
