//! `cairn plan`: what apply would do, as Terraform shows it or as `-json`
//! events; with `-out=FILE`, also saved for `cairn apply FILE`. Also the
//! first half of `apply` and `destroy`.

use std::path::Path;

use anyhow::Result;

use super::{Common, RunFlags, json_run, render_plan, schemas_of};
use crate::apply::events::Importing;
use crate::engine::{Engine, Event, EventSink, Intent, Planned, Workspace};
use crate::plan::{Action, ResourceChange};

/// Runs `cairn plan`.
pub(super) fn run(
    common: &Common,
    run: &RunFlags,
    detailed_exitcode: bool,
    destroy: bool,
    out: Option<&Path>,
) -> Result<i32> {
    json_run("plan", run, |events| {
        let ws = common.workspace()?;
        let engine = Engine::new()?;
        let planned = plan_and_show(&engine, &ws, common, run, destroy, Intent::Inspect, events.as_ref())?;
        if let Some(out) = out {
            engine.save_plan(&ws, &planned, &common.resolve(out))?;
            if !run.json {
                let shown = out.display();
                println!(
                    "\nSaved the plan to: {shown}\n\nTo perform exactly these actions, run the following command to \
                     apply:\n    cairn apply \"{shown}\""
                );
            }
        }
        let changes = planned.plan.has_changes();
        if run.json {
            events.emit(Event::Summary {
                command: "plan".to_string(),
                outcome: if changes { "success" } else { "no_changes" }.to_string(),
                added: 0,
                changed: 0,
                destroyed: 0,
                errors: 0,
            });
        }
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
    } else {
        print!("{}", render_plan(plan, &schemas_of(&planned.providers), common.colors()));
    }
    Ok(planned)
}
