//! Operations on a [`State`] that the `cairn state` commands perform:
//! finding instances by address, forgetting them, and moving them to
//! another address.
//!
//! An address given by the user names either one instance
//! (`random_id.x[2]`, or `local_file.a` for a resource without `count` or
//! `for_each`) or, without a key, every instance of a resource — as in
//! Terraform, `local_file.pages` matches `local_file.pages["index"]` and
//! `local_file.pages["about"]`.
//!
//! These functions only change the value in memory: reading, locking and
//! writing (with its backup) are the backend's job.

use crate::addr::{InstanceAddr, ModuleInstance, ResourceAddr};

use super::{InstanceState, State};

/// Why a `state mv` was refused. Every message names both addresses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MoveError {
    /// Nothing in the state matches the source.
    #[error("cannot move {from}: it does not match anything in the current state")]
    NoSource {
        /// The source address.
        from: String,
    },
    /// Something already exists at the destination.
    #[error("cannot move {from} to {to}: there is already a resource instance at {existing} in the current state")]
    DestinationExists {
        /// The source address.
        from: String,
        /// The destination address.
        to: String,
        /// The instance found there.
        existing: String,
    },
    /// The source and destination are of different resource types (or
    /// one is a data source and the other is not).
    #[error("cannot move {from} to {to}: resource types don't match")]
    TypeMismatch {
        /// The source address.
        from: String,
        /// The destination address.
        to: String,
    },
    /// An instance key given for the destination of several instances, or
    /// for a source that is a whole resource with keyed instances.
    #[error(
        "cannot move {from} to {to}: {from} has {count} instances, which move only to a resource address without a key"
    )]
    KeyForSeveral {
        /// The source address.
        from: String,
        /// The destination address.
        to: String,
        /// How many instances the source matched.
        count: usize,
    },
}

/// Whether the address `pattern` names the instance `addr`: itself when
/// it has a key, else every instance of its resource.
pub fn names(pattern: &InstanceAddr, addr: &InstanceAddr) -> bool {
    pattern.resource == addr.resource && (pattern.key.is_none() || pattern.key == addr.key)
}

impl State {
    /// The instances `pattern` names (see [`names`]), in address order.
    pub fn matching<'a>(&'a self, pattern: &'a InstanceAddr) -> impl Iterator<Item = &'a InstanceState> + 'a {
        self.resources.of_resource(&pattern.resource).filter(move |inst| names(pattern, &inst.addr))
    }

    /// Forgets every instance `pattern` names (see [`State::matching`]),
    /// with its deposed objects; returns their addresses. The objects
    /// themselves are not destroyed.
    pub fn remove_matching(&mut self, pattern: &InstanceAddr) -> Vec<InstanceAddr> {
        let found: Vec<InstanceAddr> = self.matching(pattern).map(|i| i.addr.clone()).collect();
        for addr in &found {
            self.remove(addr);
        }
        found
    }

    /// Moves what `from` names to `to`, returning the (old, new) addresses
    /// moved. A resource address moves every instance of the resource,
    /// keys kept, to a resource address; an instance (or the only,
    /// keyless instance of a resource) moves to any instance address. The
    /// type and mode must stay the same and nothing may exist at the
    /// destination; on any refusal the state is unchanged. Other
    /// instances' recorded dependencies on a moved resource follow it.
    pub fn move_matching(
        &mut self,
        from: &InstanceAddr,
        to: &InstanceAddr,
    ) -> Result<Vec<(InstanceAddr, InstanceAddr)>, MoveError> {
        let (from_text, to_text) = (from.to_string(), to.to_string());
        let sources: Vec<InstanceAddr> = self.matching(from).map(|i| i.addr.clone()).collect();
        if sources.is_empty() {
            return Err(MoveError::NoSource { from: from_text });
        }
        if from.resource.mode != to.resource.mode || from.resource.type_name != to.resource.type_name {
            return Err(MoveError::TypeMismatch { from: from_text, to: to_text });
        }
        let whole_resource = from.key.is_none() && to.key.is_none();
        let moves: Vec<(InstanceAddr, InstanceAddr)> = if whole_resource {
            sources
                .into_iter()
                .map(|a| (a.clone(), InstanceAddr { resource: to.resource.clone(), key: a.key }))
                .collect()
        } else {
            match sources.as_slice() {
                [only] => vec![(only.clone(), to.clone())],
                several => {
                    return Err(MoveError::KeyForSeveral { from: from_text, to: to_text, count: several.len() });
                }
            }
        };
        self.check_destinations(&moves, whole_resource.then_some(&to.resource), &from_text, &to_text)?;
        self.rebind(&moves);
        if whole_resource {
            self.rename_dependencies(|r| (*r == from.resource).then(|| to.resource.clone()));
        }
        Ok(moves)
    }

    /// Moves everything in the module instance `from` (every instance of
    /// the call, keys kept, when neither has a key) to `to`, returning the
    /// (old, new) addresses moved; refused, the state unchanged, when
    /// nothing is in `from` or something is already where an object would
    /// go. Recorded dependencies follow.
    pub fn move_module(
        &mut self,
        from: &ModuleInstance,
        to: &ModuleInstance,
    ) -> Result<Vec<(InstanceAddr, InstanceAddr)>, MoveError> {
        let (from_text, to_text) = (from.to_string(), to.to_string());
        let destination = |r: &ResourceAddr| Some(r.clone().in_module(r.module.moved(from, to)?));
        let moves: Vec<(InstanceAddr, InstanceAddr)> = self
            .resources
            .iter()
            .filter_map(|i| {
                Some((
                    i.addr.clone(),
                    InstanceAddr { resource: destination(&i.addr.resource)?, key: i.addr.key.clone() },
                ))
            })
            .collect();
        if moves.is_empty() {
            return Err(MoveError::NoSource { from: from_text });
        }
        self.check_destinations(&moves, None, &from_text, &to_text)?;
        self.rebind(&moves);
        self.rename_dependencies(destination);
        Ok(moves)
    }

    /// Rebinds the object at each `(old, new)` pair's old address to its
    /// new one. Every object is taken out before any is put back, so that
    /// objects may trade places. Checking that nothing is overwritten is
    /// the caller's business.
    pub fn rebind(&mut self, moves: &[(InstanceAddr, InstanceAddr)]) {
        let mut objects = Vec::new();
        for (old, new) in moves {
            if let Some(mut inst) = self.remove(old) {
                inst.addr = new.clone();
                objects.push(inst);
            }
        }
        for inst in objects {
            self.set(inst);
        }
    }

    /// Refuses moves onto an existing instance (one not itself moving
    /// away) or, for a whole resource, onto a resource that has any.
    fn check_destinations(
        &self,
        moves: &[(InstanceAddr, InstanceAddr)],
        to_resource: Option<&ResourceAddr>,
        from: &str,
        to: &str,
    ) -> Result<(), MoveError> {
        let moving_away = |addr: &InstanceAddr| moves.iter().any(|(old, _)| old == addr);
        let occupied = |existing: &InstanceAddr| MoveError::DestinationExists {
            from: from.to_string(),
            to: to.to_string(),
            existing: existing.to_string(),
        };
        if let Some(resource) = to_resource
            && let Some(inst) = self.resources.of_resource(resource).find(|i| !moving_away(&i.addr))
        {
            return Err(occupied(&inst.addr));
        }
        match moves.iter().find(|(_, new)| self.get(new).is_some() && !moving_away(new)) {
            Some((_, new)) => Err(occupied(new)),
            None => Ok(()),
        }
    }

    /// Points every recorded dependency that `renamed` maps to a new
    /// resource address at it, so that destroy order still holds after
    /// resources are renamed.
    pub fn rename_dependencies(&mut self, renamed: impl Fn(&ResourceAddr) -> Option<ResourceAddr>) {
        for inst in self.resources.iter_mut() {
            for dependency in inst.dependencies.iter_mut() {
                if let Some(new) = renamed(dependency) {
                    *dependency = new;
                }
            }
        }
        self.normalize();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(s: &str) -> InstanceAddr {
        s.parse().unwrap()
    }

    fn state(addrs: &[&str]) -> State {
        let mut state = State::new();
        for a in addrs {
            state.set(InstanceState::new(addr(a), "null", 0, serde_json::json!({"id": a})));
        }
        state
    }

    fn addresses(state: &State) -> Vec<String> {
        state.resources.iter().map(|i| i.addr.to_string()).collect()
    }

    #[test]
    fn a_resource_address_matches_all_its_instances_and_an_instance_address_only_itself() {
        let state = state(&["null_resource.a[0]", "null_resource.a[1]", "null_resource.ab", "null_resource.b"]);
        let found = |p: &str| state.matching(&addr(p)).map(|i| i.addr.to_string()).collect::<Vec<_>>();
        assert_eq!(found("null_resource.a"), ["null_resource.a[0]", "null_resource.a[1]"]);
        assert_eq!(found("null_resource.a[1]"), ["null_resource.a[1]"]);
        assert_eq!(found("null_resource.b"), ["null_resource.b"]);
        assert!(found("null_resource.c").is_empty());
    }

    #[test]
    fn remove_forgets_only_what_matches() {
        let mut state = state(&["null_resource.a[0]", "null_resource.a[1]", "null_resource.b"]);
        assert_eq!(state.remove_matching(&addr("null_resource.a[0]")), [addr("null_resource.a[0]")]);
        assert_eq!(addresses(&state), ["null_resource.a[1]", "null_resource.b"]);
        assert_eq!(state.remove_matching(&addr("null_resource.a")).len(), 1);
        assert!(state.remove_matching(&addr("null_resource.zz")).is_empty());
    }

    #[test]
    fn moving_a_resource_moves_every_instance_with_its_key_and_the_dependencies_on_it() {
        let mut state = state(&["null_resource.a[0]", "null_resource.a[1]", "null_resource.b"]);
        state.get_mut(&addr("null_resource.b")).unwrap().dependencies = vec!["null_resource.a".parse().unwrap()];
        let moved = state.move_matching(&addr("null_resource.a"), &addr("null_resource.c")).unwrap();
        assert_eq!(moved.len(), 2);
        assert_eq!(addresses(&state), ["null_resource.b", "null_resource.c[0]", "null_resource.c[1]"]);
        assert_eq!(
            state.get(&addr("null_resource.c[1]")).unwrap().attributes.to_json().unwrap()["id"],
            "null_resource.a[1]"
        );
        assert_eq!(state.get(&addr("null_resource.b")).unwrap().dependencies, ["null_resource.c".parse().unwrap()]);
    }

    #[test]
    fn moving_an_instance_may_add_or_drop_a_key() {
        let mut state = state(&["null_resource.a", "null_resource.b[\"x\"]"]);
        state.move_matching(&addr("null_resource.a"), &addr("null_resource.z[0]")).unwrap();
        state.move_matching(&addr("null_resource.b[\"x\"]"), &addr("null_resource.y")).unwrap();
        assert_eq!(addresses(&state), ["null_resource.y", "null_resource.z[0]"]);
    }

    #[test]
    fn refused_moves_leave_the_state_unchanged() {
        let original = state(&["null_resource.a[0]", "null_resource.a[1]", "null_resource.b", "null_resource.c[3]"]);
        let refused = |from: &str, to: &str| {
            let mut state = original.clone();
            let err = state.move_matching(&addr(from), &addr(to)).unwrap_err();
            assert_eq!(state, original, "{from} -> {to}");
            err.to_string()
        };
        assert_eq!(
            refused("null_resource.zz", "null_resource.y"),
            "cannot move null_resource.zz: it does not match anything in the current state"
        );
        assert_eq!(
            refused("null_resource.a[0]", "null_resource.b"),
            "cannot move null_resource.a[0] to null_resource.b: there is already a resource instance at null_resource.b in the current state"
        );
        assert!(
            refused("null_resource.b", "null_resource.c").contains("already a resource instance at null_resource.c[3]")
        );
        assert_eq!(
            refused("null_resource.b", "random_id.b"),
            "cannot move null_resource.b to random_id.b: resource types don't match"
        );
        assert!(refused("null_resource.b", "data.null_resource.b").contains("resource types don't match"));
        assert!(refused("null_resource.a", "null_resource.y[0]").contains("has 2 instances"));
    }

    #[test]
    fn moving_onto_itself_is_allowed() {
        let mut state = state(&["null_resource.a"]);
        state.move_matching(&addr("null_resource.a"), &addr("null_resource.a")).unwrap();
        assert_eq!(addresses(&state), ["null_resource.a"]);
    }
}
