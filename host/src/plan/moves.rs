//! `moved` blocks, carried out before planning: every object in the prior
//! state whose address a `moved` block (or a chain of them, a→b then b→c)
//! names is rebound to its new address, so that the planner sees it there
//! and plans a no-op or an update rather than a delete and a create.

use std::collections::{BTreeMap, BTreeSet};

use crate::addr::InstanceAddr;
use crate::config::{Config, Moved};
use crate::diag::{Diagnostic, Location};
use crate::provider::{MoveRequest, MoveResponse};
use crate::state::{Attributes, State};

use super::Providers;

/// One object a `moved` block rebound.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Move {
    /// Where the state had it.
    pub from: InstanceAddr,
    /// Where it is now.
    pub to: InstanceAddr,
}

/// Rebinds the objects of `state` that `moves` name, following chains.
/// Returns what moved, in the state's order. It is an error for two
/// objects to end at one address, or for an object to move onto an address
/// that holds an object which stays there; then nothing is moved.
pub fn apply_moves(moves: &[Moved], state: &mut State) -> Result<Vec<Move>, Vec<Diagnostic>> {
    if moves.is_empty() {
        return Ok(Vec::new());
    }
    let mut planned: Vec<(Move, &Location)> = Vec::new();
    for inst in state.resources.iter() {
        if let Some((to, location)) = final_address(moves, &inst.addr) {
            planned.push((Move { from: inst.addr.clone(), to }, location));
        }
    }
    check_collisions(&planned, state)?;
    let pairs: Vec<(InstanceAddr, InstanceAddr)> =
        planned.iter().map(|(m, _)| (m.from.clone(), m.to.clone())).collect();
    state.rebind(&pairs);
    // Dependencies on a whole resource that moved follow it.
    state.rename_dependencies(|r| final_address(moves, &r.instance()).map(|(a, _)| a.resource));
    Ok(planned.into_iter().map(|(m, _)| m).collect())
}

/// Converts every object that `moved` (from [`apply_moves`]) took to a
/// resource of another type (Terraform 1.8's `moved { from =
/// null_resource.a  to = terraform_data.a }`): the target type's provider
/// is asked to rewrite it into the target's layout (the optional
/// `state-moves` export), and the state then holds it as the target's
/// provider's, at its current schema version. Errors are at the `moved`
/// block; with any, nothing is planned.
pub async fn convert_moves_across_types(
    moved: &[Move],
    moves: &[Moved],
    config: &Config,
    providers: &Providers,
    state: &mut State,
) -> Result<(), Vec<Diagnostic>> {
    let mut errors = Vec::new();
    for m in moved.iter().filter(|m| m.from.resource.type_name != m.to.resource.type_name) {
        let Some((_, location)) = final_address(moves, &m.from) else { continue };
        if let Err(e) = convert_one(m, location, config, providers, state).await {
            errors.extend(e);
        }
    }
    if errors.is_empty() { Ok(()) } else { Err(errors) }
}

/// Converts the object `m` took across types, now at `m.to` in `state`.
async fn convert_one(
    m: &Move,
    location: &Location,
    config: &Config,
    providers: &Providers,
    state: &mut State,
) -> Result<(), Vec<Diagnostic>> {
    let unsupported = |detail: String| {
        vec![Diagnostic::error("Unsupported `moved` across resource types").with_detail(detail).at(location)]
    };
    let Some(resource) = config.resource(&m.to.resource) else {
        return Err(unsupported(format!(
            "{} is not declared in the configuration: a move across resource types needs the target's resource \
             block, whose provider converts the object.",
            m.to.resource
        )));
    };
    let target_full_name = crate::cli::provider_full_name(&resource.provider, config);
    let (Some(provider), Some(inst)) = (providers.get(&resource.provider), state.get(&m.to)) else {
        return Ok(());
    };
    let Some(schema) = provider.schema().resources.get(&m.to.resource.type_name) else {
        // Validation says the type is unknown, at the resource block.
        return Ok(());
    };
    let request = MoveRequest {
        source_provider_address: crate::cli::provider_full_name(&inst.provider, config),
        source_type_name: m.from.resource.type_name.clone(),
        source_schema_version: inst.schema_version,
        source_state_json: inst.attributes.as_str().to_string(),
        source_private: inst.private.clone(),
        target_type_name: m.to.resource.type_name.clone(),
    };
    let answer = provider.move_resource_state(request).await.map_err(|e| {
        vec![Diagnostic::error(format!("Cannot move {} to {}", m.from, m.to)).with_detail(e.to_string()).at(location)]
    })?;
    let Some(MoveResponse { target_state, target_private, diagnostics }) = answer else {
        return Err(unsupported(format!(
            "The provider \"{target_full_name}\" does not support moved operations across resource types and \
             providers."
        )));
    };
    if diagnostics.iter().any(Diagnostic::is_error) {
        return Err(diagnostics.into_iter().filter(Diagnostic::is_error).map(|d| d.at(location)).collect());
    }
    let ty = schema.block.implied_type();
    let invalid = |why: String| {
        vec![
            Diagnostic::error("Provider returned invalid value")
                .with_detail(format!(
                    "The provider \"{target_full_name}\" returned an invalid value during an across type move \
                     operation to {}: {why}. This is a bug in the provider.",
                    m.to
                ))
                .at(location),
        ]
    };
    if target_state.is_null() {
        return Err(invalid("the returned state is null".into()));
    }
    if !target_state.is_wholly_known() {
        return Err(invalid("the returned state contains unknown values".into()));
    }
    ty.check(&target_state).map_err(|e| invalid(format!("it does not match the schema: {e}")))?;
    let inst = state.get_mut(&m.to).expect("found above");
    inst.provider = resource.provider.clone();
    inst.schema_version = schema.version;
    inst.attributes = Attributes::new(&target_state, &ty);
    inst.private = target_private;
    Ok(())
}

/// Where the object at `addr` ends after every move that applies to it,
/// and the block of the last one; `None` if no block moves it.
fn final_address<'a>(moves: &'a [Moved], addr: &InstanceAddr) -> Option<(InstanceAddr, &'a Location)> {
    let mut at = addr.clone();
    let mut last = None;
    // Configuration loading refused cycles, so a chain is at most one
    // step per block.
    for _ in 0..moves.len() {
        match moves.iter().find_map(|m| Some((m.destination(&at)?, &m.location))) {
            Some((next, location)) => {
                at = next;
                last = Some(location);
            }
            None => break,
        }
    }
    last.map(|location| (at, location))
}

/// The moves' errors: two objects to one address, or one onto an object
/// that does not move away.
fn check_collisions(planned: &[(Move, &Location)], state: &State) -> Result<(), Vec<Diagnostic>> {
    let leaving: BTreeSet<&InstanceAddr> = planned.iter().map(|(m, _)| &m.from).collect();
    let mut arriving: BTreeMap<&InstanceAddr, &InstanceAddr> = BTreeMap::new();
    let mut errors = Vec::new();
    for (m, location) in planned {
        if let Some(other) = arriving.insert(&m.to, &m.from) {
            errors.push(
                Diagnostic::error(format!("Cannot move two objects to {}", m.to))
                    .with_detail(format!(
                        "Both {other} and {} would move to {}. Each address can hold only one object.",
                        m.from, m.to
                    ))
                    .at(location),
            );
        } else if state.get(&m.to).is_some() && !leaving.contains(&m.to) {
            errors.push(
                Diagnostic::error(format!("Cannot move {} to {}", m.from, m.to))
                    .with_detail(format!(
                        "The state already has an object at {}. Remove it from the state, or move it \
                         somewhere else first, before moving {} there.",
                        m.to, m.from
                    ))
                    .at(location),
            );
        }
    }
    if errors.is_empty() { Ok(()) } else { Err(errors) }
}
