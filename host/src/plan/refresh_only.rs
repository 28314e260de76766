//! Applying a refresh-only plan (`-refresh-only`): no provider is asked to
//! change anything; the state takes what refresh found — new attributes for
//! objects changed outside cairn, and no object for those deleted outside it
//! — and the outputs' values with it. Also what any apply writes of the
//! objects it does not change ([`unchanged_objects`]).

use crate::diag::Diagnostic;
use crate::state::State;

use super::{Action, Plan, Providers};

/// Writes into `state` the objects `plan` keeps as they are (its no-op
/// changes) as the plan read them: refreshed, and upgraded to the schema
/// version of their provider now. Terraform's apply writes its refreshed
/// state so, also when nothing changes; without it, an object stored at an
/// older schema version was upgraded again in every run (and a value the
/// upgrade makes, `random_password`'s `bcrypt_hash`, made anew). Returns
/// whether anything in `state` changed.
pub fn unchanged_objects(plan: &Plan, providers: &Providers, state: &mut State) -> bool {
    let unchanged = plan.changes.iter().filter(|c| {
        c.action == Action::NoOp && c.deposed.is_none() && c.importing.is_none() && c.prior.is_wholly_known()
    });
    let mut changed = false;
    for change in unchanged {
        let Some(schema) = providers.get(&change.provider).and_then(|p| p.schema().of(&change.addr.resource)) else {
            continue;
        };
        let Some(inst) = state.get_mut(&change.addr).filter(|i| !i.attributes.is_null()) else { continue };
        let kept = crate::contract::null_write_only(&schema.block, &change.prior);
        let attributes = crate::state::Attributes::new(&kept, &schema.block.implied_type());
        // Its marks stay: those the apply that made it recorded (copies
        // of secrets among them) are more than the plan's.
        let same = inst.schema_version == schema.version
            && inst.attributes == attributes
            && inst.private == change.prior_private;
        if same {
            continue;
        }
        inst.schema_version = schema.version;
        inst.attributes = attributes;
        inst.private = change.prior_private.clone();
        changed = true;
    }
    changed
}

/// Writes the drift `plan` found into `state`.
pub fn refreshed_state(plan: &Plan, providers: &Providers, state: &mut State) -> Result<(), Vec<Diagnostic>> {
    for drift in &plan.drift {
        if drift.deleted() {
            state.forget_current(&drift.addr);
            continue;
        }
        let schema =
            providers.get(&drift.provider).and_then(|p| p.schema().of(&drift.addr.resource)).ok_or_else(|| {
                vec![Diagnostic::error(format!(
                    "{}: provider {:?} no longer has the schema of this resource type",
                    drift.addr, drift.provider
                ))]
            })?;
        let Some(inst) = state.get_mut(&drift.addr) else { continue };
        let kept = crate::contract::null_write_only(&schema.block, &drift.current);
        inst.attributes = crate::state::Attributes::new(&kept, &schema.block.implied_type());
        inst.private = drift.current_private.clone();
    }
    for (name, output) in plan.outputs.iter().filter(|(_, o)| o.value.is_wholly_known()) {
        state.outputs.insert(name.clone(), crate::state::OutputState::new(&output.value, output.sensitive));
    }
    Ok(())
}
