//! `cairn plan`: what apply would do, as Terraform shows it or as `-json`
//! events; with `-out=FILE`, also saved for `cairn apply FILE`. Also the
//! first half of `apply` and `destroy`.

use std::path::Path;

use anyhow::Result;

use super::{Common, RunFlags, json_run, render_plan, schemas_of};
use crate::engine::{Engine, Event, EventSink, Intent, Planned, Workspace};
use crate::plan::Action;

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
    let planned = engine.plan(ws, run.options(destroy, intent), true, events)?;
    let plan = &planned.plan;
    if run.json {
        for c in plan.changes.iter().filter(|c| c.action != Action::NoOp) {
            events.emit(Event::PlannedChange {
                address: c.addr.to_string(),
                action: c.action.to_string(),
                create_before_destroy: c.create_before_destroy,
                deposed_key: c.deposed.clone(),
            });
        }
        let (add, change, destroy) = plan.counts();
        events.emit(Event::ChangeSummary { add, change, destroy });
    } else {
        print!("{}", render_plan(plan, &schemas_of(&planned.providers), common.colors()));
    }
    Ok(planned)
}
