//! `cairn apply` and `cairn destroy`: plan, ask, apply, report; or, for
//! `cairn apply FILE`, apply a saved plan as it is (see `engine::saved`).

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::Path;
use std::sync::Arc;

use anyhow::{Result, bail};

use super::{Common, RunFlags, json_run, render};
use crate::engine::{ApplyReport, Engine, Event, EventSink, Intent, Planned, SavedPlan, Workspace};

/// Runs `cairn apply` (or, with `destroy`, `cairn destroy`).
pub(super) fn run(common: &Common, run: &RunFlags, auto_approve: bool, destroy: bool) -> Result<i32> {
    let command = if destroy { "destroy" } else { "apply" };
    match common.plan_file() {
        Some(path) if destroy => bail!(
            "destroy takes a configuration directory, not a plan file: apply {} with `cairn apply`, \
             or save a plan to destroy with `cairn plan -destroy -out=FILE`",
            path.display()
        ),
        Some(path) => json_run(command, run, |events| apply_saved(common, run, &path, events)),
        None => json_run(command, run, |events| apply_with(common, run, auto_approve, destroy, events)),
    }
}

/// `cairn apply FILE`: the saved plan exactly, without asking (the plan
/// was reviewed when it was made, as in Terraform), or a refusal that says
/// what changed since.
fn apply_saved(common: &Common, run: &RunFlags, path: &Path, events: &Arc<dyn EventSink>) -> Result<i32> {
    let saved = SavedPlan::read(path)?;
    let ws = Workspace::with_saved_variables(
        &common.config_dir(),
        &saved.variables,
        &saved.ephemeral_variables,
        &common.variables.inputs(common.chdir.as_deref()),
        path,
    )?;
    let engine = Engine::new()?;
    let planned = engine.load_plan(&ws, saved, path, run.parallelism, run.lock.locking())?;
    finish(&engine, &ws, planned, common, run, "apply", events)
}

fn apply_with(
    common: &Common,
    run: &RunFlags,
    auto_approve: bool,
    destroy: bool,
    events: &Arc<dyn EventSink>,
) -> Result<i32> {
    let command = if destroy { "destroy" } else { "apply" };
    if run.json && !auto_approve {
        bail!("-json needs -auto-approve: there is no one to type 'yes' in a JSON stream");
    }
    let ws = common.workspace_asking(&run.input)?;
    let engine = Engine::new()?;
    super::plan::handle_interrupts(&engine, events, run.json)?;
    let mut planned = super::plan::plan_and_show(&engine, &ws, common, run, destroy, Intent::Change, events.as_ref())?;
    if !planned.plan.has_changes() {
        engine.settle(&mut planned)?;
        if run.json {
            events.emit(summary(command, "no_changes", None));
        } else {
            // Terraform's closing lines with zero counts, which scripts wait
            // for, and (after an apply) the outputs the state holds.
            let outputs = if destroy { BTreeMap::new() } else { super::outputs::all_decoded(&planned.state) };
            let report = ApplyReport { outputs, ..ApplyReport::default() };
            print_complete(destroy, &report, common.colors());
        }
        return Ok(0);
    }
    if !auto_approve {
        // Ctrl-C at the prompt cancels, as a wrong answer does.
        let approved = engine.unless_interrupted(move || confirm(destroy)).transpose()?;
        if approved != Some(true) {
            println!("\nApply cancelled.");
            return Ok(1);
        }
    }
    if !run.json {
        println!();
    }
    let code = finish(&engine, &ws, planned, common, run, command, events);
    crate::release::release(ws);
    code
}

/// The `-json` summary of a run.
fn summary(command: &str, outcome: &str, report: Option<&ApplyReport>) -> Event {
    Event::Summary {
        command: command.to_string(),
        outcome: outcome.to_string(),
        added: report.map_or(0, |r| r.added),
        changed: report.map_or(0, |r| r.changed),
        destroyed: report.map_or(0, |r| r.destroyed),
        imported: report.map_or(0, |r| r.imported),
        forgotten: report.map_or(0, |r| r.forgotten),
        errors: report.map_or(0, |r| r.errors.len()),
    }
}

/// Applies `planned` and reports, as `command` (`apply` or `destroy`).
fn finish(
    engine: &Engine,
    ws: &Workspace,
    planned: Planned,
    common: &Common,
    run: &RunFlags,
    command: &str,
    events: &Arc<dyn EventSink>,
) -> Result<i32> {
    let destroy = command == "destroy";
    let colors = common.colors();
    let (report, state) = engine.apply(ws, planned, Arc::clone(events));
    // Written already.
    crate::release::release(state);
    if run.json {
        let outcome = match () {
            () if report.interrupted => "interrupted",
            () if report.errors.is_empty() => "success",
            () => "failed",
        };
        if !report.outputs.is_empty() {
            events.emit(outputs_event(&report));
        }
        events.emit(summary(command, outcome, Some(&report)));
        return Ok(if outcome == "success" { 0 } else { 1 });
    }
    if report.interrupted {
        print_interrupted(command, &report, colors);
        return Ok(1);
    }
    if !report.errors.is_empty() {
        eprintln!(
            "{} {} error(s); the state records everything that finished.",
            colors.red("Apply failed:"),
            report.errors.len()
        );
        return Ok(1);
    }
    print_complete(destroy, &report, colors);
    Ok(0)
}

/// The lines that end a successful apply or destroy: the counts, then the
/// outputs (as Terraform's, a null one is not listed).
fn print_complete(destroy: bool, report: &ApplyReport, colors: super::Colors) {
    if destroy {
        println!("\n{} Resources: {} destroyed.", colors.green("Destroy complete!"), report.destroyed);
    } else {
        // Imports and forgets are counted only when there are any, as
        // Terraform does.
        let imported = if report.imported > 0 { format!("{} imported, ", report.imported) } else { String::new() };
        let forgotten = if report.forgotten > 0 { format!(", {} forgotten", report.forgotten) } else { String::new() };
        println!(
            "\n{} Resources: {imported}{} added, {} changed, {} destroyed{forgotten}.",
            colors.green("Apply complete!"),
            report.added,
            report.changed,
            report.destroyed
        );
    }
    if !report.outputs.is_empty() {
        println!("\nOutputs:\n");
        // As Terraform's: a null output is not listed.
        for (name, (v, sensitive)) in report.outputs.iter().filter(|(_, (v, _))| !v.is_null()) {
            println!("{name} = {}", render::output_value(v, *sensitive));
        }
    }
}

/// The outputs after an apply as Terraform's `outputs` message gives
/// them: a sensitive one's value is left out.
fn outputs_event(report: &ApplyReport) -> Event {
    let outputs = report
        .outputs
        .iter()
        .map(|(name, (v, sensitive))| {
            let mut entry = serde_json::Map::new();
            entry.insert("sensitive".into(), serde_json::json!(sensitive));
            if !*sensitive {
                let ty = crate::value::type_to_json(&crate::value::Type::of(v));
                entry.insert("type".into(), ty);
                entry.insert("value".into(), crate::value::to_json(v));
            }
            (name.clone(), serde_json::Value::Object(entry))
        })
        .collect();
    Event::Outputs { outputs }
}

/// Says what an interrupted apply did and did not do.
fn print_interrupted(command: &str, report: &ApplyReport, colors: super::Colors) {
    let title = if command == "destroy" { "Destroy interrupted:" } else { "Apply interrupted:" };
    eprintln!(
        "\n{} {} added, {} changed, {} destroyed.",
        colors.red(title),
        report.added,
        report.changed,
        report.destroyed
    );
    for (address, action) in &report.cancelled {
        eprintln!("  {address}: {action} cancelled");
    }
    for (address, action) in &report.not_started {
        eprintln!("  {address}: {action} not started");
    }
    if !report.errors.is_empty() {
        eprintln!("{} error(s), shown above.", report.errors.len());
    }
    if report.cancelled.is_empty() {
        eprintln!("The state records everything that finished; apply again to do the rest.");
    } else {
        eprintln!(
            "The state records everything that finished. The cancelled operations are pending: \
             the next plan or apply asks the provider what they left."
        );
    }
}

/// Asks the operator to type `yes`.
fn confirm(destroy: bool) -> Result<bool> {
    let question = if destroy {
        "Do you really want to destroy all resources?\n  cairn will destroy all your managed infrastructure, as shown above."
    } else {
        "Do you want to perform these actions?\n  cairn will perform the actions described above."
    };
    print!("\n{question}\n  Only 'yes' will be accepted to approve.\n\n  Enter a value: ");
    std::io::stdout().flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(answer.trim() == "yes")
}
