//! `moved` blocks, carried out before planning: every object in the prior
//! state whose address a `moved` block (or a chain of them, a→b then b→c)
//! names is rebound to its new address, so that the planner sees it there
//! and plans a no-op or an update rather than a delete and a create.

use std::collections::{BTreeMap, BTreeSet};

use crate::addr::InstanceAddr;
use crate::config::Moved;
use crate::diag::{Diagnostic, Location};
use crate::state::State;

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
