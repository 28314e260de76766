//! `cairn plan`: what apply would do, as Terraform shows it or as `-json`
//! events; with `-out=FILE`, also saved for `cairn apply FILE`. Also the
//! first half of `apply` and `destroy`, and how both tell the user about
//! Ctrl-C ([`handle_interrupts`]).

use std::path::Path;
use std::sync::Arc;

use anyhow::Result;

use super::{Common, RunFlags, json_run, render_plan, schemas_of};
use crate::apply::events::Importing;
use crate::diag::Diagnostic;
use crate::engine::{Engine, Event, EventSink, Intent, Planned, Received, Workspace};
use crate::plan::{Action, ResourceChange};

/// What Terraform says on the first Ctrl-C, with cairn's name.
const FIRST_INTERRUPT: &str =
    "Interrupt received.\nPlease wait for cairn to exit or data loss may occur.\nGracefully shutting down...";

/// The line Terraform draws between a plan and what to do with it (its
/// width when not on a terminal).
const RULE: &str = "─────────────────────────────────────────────────────────────────────────────";

/// What Terraform says on the second Ctrl-C.
const SECOND_INTERRUPT: &str = "Two interrupts received. Exiting immediately. Note that data loss may have occurred.";

/// Makes Ctrl-C (and SIGTERM) interrupt `engine`'s run instead of ending
/// the process, and tells the user as Terraform does: on standard error,
/// or with `-json` as a warning.
pub(super) fn handle_interrupts(engine: &Engine, events: &Arc<dyn EventSink>, json: bool) -> Result<()> {
    let events = Arc::clone(events);
    engine.handle_signals(move |received| {
        let text = match received {
            Received::First => FIRST_INTERRUPT,
            Received::Second => SECOND_INTERRUPT,
        };
        if json {
            let (summary, detail) = text.split_once('\n').unwrap_or((text, ""));
            let summary = summary.trim_end_matches('.');
            events.diagnostic(&Diagnostic::warning(summary.to_string()).with_detail(detail.to_string()));
        } else {
            eprintln!("\n{text}");
        }
    })
}

/// Runs `cairn plan`.
pub(super) fn run(
    common: &Common,
    run: &RunFlags,
    detailed_exitcode: bool,
    destroy: bool,
    out: Option<&Path>,
) -> Result<i32> {
    json_run("plan", run, |events| {
        let ws = common.workspace_asking(&run.input)?;
        let engine = Engine::new()?;
        handle_interrupts(&engine, events, run.json)?;
        let planned = plan_and_show(&engine, &ws, common, run, destroy, Intent::Inspect, events.as_ref())?;
        let changes = planned.plan.has_changes();
        if let Some(out) = out {
            engine.save_plan(&ws, &planned, &common.resolve(out))?;
            if !run.json {
                let shown = out.display();
                println!(
                    "\n{RULE}\n\nSaved the plan to: {shown}\n\nTo perform exactly these actions, run the following \
                     command to apply:\n    cairn apply \"{shown}\""
                );
            }
        } else if changes && !run.json {
            println!(
                "\n{RULE}\n\nNote: You didn't use the -out option to save this plan, so cairn can't\nguarantee to \
                 take exactly these actions if you run \"cairn apply\" now."
            );
        }
        if run.json {
            events.emit(Event::Summary {
                command: "plan".to_string(),
                outcome: if changes { "success" } else { "no_changes" }.to_string(),
                added: 0,
                changed: 0,
                destroyed: 0,
                imported: 0,
                forgotten: 0,
                errors: 0,
            });
        }
        planned.release();
        crate::release::release(ws);
        Ok(if detailed_exitcode && changes { 2 } else { 0 })
    })
}

/// Plans (the state locked) and shows the plan.
pub(super) fn plan_and_show(
    engine: &Engine,
    ws: &Workspace,
    common: &Common,
    run: &RunFlags,
    destroy: bool,
    intent: Intent,
    events: &dyn EventSink,
) -> Result<Planned> {
    let planned = engine.plan(ws, run.options(destroy, intent)?, true, events)?;
    let plan = &planned.plan;
    // Each refresh and data source read went to `events` as it happened.
    if run.json {
        for d in &plan.drift {
            let action = if d.deleted() { "delete" } else { "update" };
            events.emit(Event::ResourceDrift { address: d.addr.to_string(), action: action.to_string() });
        }
        let shown = |c: &&ResourceChange| c.action != Action::NoOp || c.importing.is_some() || c.moved_from.is_some();
        for c in plan.changes.iter().filter(shown) {
            // A rebound object with nothing else to do is a move.
            let action = match (c.action, &c.moved_from, &c.importing) {
                (Action::NoOp, Some(_), None) => "move".to_string(),
                (Action::NoOp, _, Some(_)) => "import".to_string(),
                (action, _, _) => action.to_string(),
            };
            events.emit(Event::PlannedChange {
                address: c.addr.to_string(),
                action,
                create_before_destroy: c.create_before_destroy,
                deposed_key: c.deposed.clone(),
                importing: c.importing.clone().map(|id| Importing { id }),
                previous_address: c.moved_from.as_ref().map(ToString::to_string),
                reason: super::plan_json::action_reason(c).map(str::to_string),
            });
        }
        let s = plan.summary();
        events.emit(Event::ChangeSummary {
            add: s.add,
            change: s.change,
            destroy: s.destroy,
            import: s.import,
            forget: s.forget,
        });
        if !plan.outputs.is_empty() || !plan.removed_outputs.is_empty() {
            events.emit(planned_outputs_event(plan));
        }
    } else {
        let started = std::time::Instant::now();
        print!("{}", render_plan(plan, &schemas_of(&planned.providers), common.colors()));
        tracing::debug!(elapsed = ?started.elapsed(), "plan shown");
    }
    Ok(planned)
}

/// The plan's outputs as Terraform's `outputs` message of a plan gives
/// them: each one's sensitivity and what happens to it (`create`,
/// `update`, `no-op`, `delete`).
fn planned_outputs_event(plan: &crate::plan::Plan) -> Event {
    let mut outputs = std::collections::BTreeMap::new();
    for (name, o) in &plan.outputs {
        let action = match &o.prior {
            None => "create",
            Some(prior) if *prior != o.value => "update",
            Some(_) => "noop",
        };
        outputs.insert(name.clone(), serde_json::json!({"sensitive": o.sensitive, "action": action}));
    }
    for name in &plan.removed_outputs {
        let sensitive = plan.removed_output_values.get(name).is_some_and(|o| o.sensitive);
        outputs.insert(name.clone(), serde_json::json!({"sensitive": sensitive, "action": "delete"}));
    }
    Event::Outputs { outputs }
}
