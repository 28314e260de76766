//! Applying a refresh-only plan (`-refresh-only`): no provider is asked to
//! change anything; the state takes what refresh found — new attributes for
//! objects changed outside cairn, and no object for those deleted outside it
//! — and the outputs' values with it.

use crate::diag::Diagnostic;
use crate::state::State;

use super::{Plan, Providers};

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
