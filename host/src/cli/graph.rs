//! `cairn graph`: the dependency graph, or the steps of the current plan,
//! in Graphviz DOT.

use anyhow::{Result, bail};

use super::Common;
use super::output::Human;
use crate::diag::Diagnostic;
use crate::engine::{Engine, Event, EventSink, Intent, RunOptions};

/// Runs `cairn graph`.
pub(super) fn run(common: &Common, kind: &str) -> Result<i32> {
    let ws = common.workspace()?;
    match kind {
        // A module whose instances planning decides shows as one (see
        // `Workspace::with_unknown_instances`).
        "plain" => print!("{}", ws.with_unknown_instances()?.graph.to_dot()),
        "apply" => {
            let engine = Engine::new()?;
            // Reads the state without its lock: nothing is changed.
            let options = RunOptions { intent: Intent::Inspect, ..RunOptions::default() };
            let planned = engine.plan(&ws, options, false, &WithoutProgress)?;
            let g = engine.apply_graph(&ws, &planned.plan)?;
            print!("{}", crate::apply::graph::to_dot(&g, &planned.plan));
        }
        other => bail!("unknown graph type {other:?}: use plain or apply"),
    }
    Ok(0)
}

/// [`Human`] without the plan's progress lines (`Refreshing state...`,
/// `Reading...`): standard output is the graph alone.
struct WithoutProgress;

impl EventSink for WithoutProgress {
    fn emit(&self, event: Event) {
        let progress = matches!(
            event,
            Event::RefreshStart { .. }
                | Event::RefreshComplete { .. }
                | Event::NodeStart { .. }
                | Event::NodeFinish { .. }
        );
        if !progress {
            Human.emit(event);
        }
    }

    fn diagnostic(&self, d: &Diagnostic) {
        Human.diagnostic(d);
    }
}
