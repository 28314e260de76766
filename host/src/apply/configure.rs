//! The [`Step::Configure`](super::Step::Configure) of a provider configured
//! late (`plan::late`): with the values applied by then of what its block
//! refers to, or, in a destroy, with the state's values, as Terraform
//! configures a provider on its destroy path. Only providers the apply
//! calls are configured.

use std::collections::BTreeSet;

use crate::addr::{Mode, ResourceAddr};
use crate::diag::Diagnostic;
use crate::graph::Node;
use crate::plan::{Action, FromState};

use super::{Applier, Shared, lock};

/// The late providers the apply of `applier`'s plan calls, and the
/// ephemeral resources it opens: those its changes need
/// ([`providers_needed`], [`super::ephemeral_needed`]), the ephemeral
/// resources the blocks of those providers refer to, and the late
/// providers of those ephemeral resources, until nothing more is needed.
pub(super) fn needed(applier: &Applier) -> (BTreeSet<String>, BTreeSet<ResourceAddr>) {
    let mut providers = providers_needed(applier);
    let mut ephemeral = super::ephemeral_needed(&applier.plan);
    loop {
        ephemeral.extend(ephemeral_behind(applier, &providers));
        let more: BTreeSet<String> = applier
            .config
            .resources
            .iter()
            .filter(|r| ephemeral.contains(&r.addr) && applier.late_providers.contains_key(&r.provider))
            .map(|r| r.provider.clone())
            .filter(|p| !providers.contains(p))
            .collect();
        if more.is_empty() {
            return (providers, ephemeral);
        }
        providers.extend(more);
    }
}

/// The late providers the apply of `applier`'s plan calls for its changes:
/// those of its creates, updates, reads and destroys, and, unless it
/// destroys everything, those of the `check` blocks' data sources (read
/// after it).
fn providers_needed(applier: &Applier) -> BTreeSet<String> {
    if applier.late_providers.is_empty() {
        return BTreeSet::new();
    }
    let calls = |action: Action| !matches!(action, Action::NoOp | Action::Forget);
    let mut needed: BTreeSet<String> =
        applier.plan.changes.iter().filter(|c| calls(c.action)).map(|c| c.provider.clone()).collect();
    if !applier.plan.destroy {
        needed.extend(applier.config.checks.iter().flat_map(|c| &c.data).map(|d| d.provider.clone()));
    }
    needed.retain(|name| applier.late_providers.contains_key(name));
    needed
}

/// The ephemeral resources the blocks of the late providers `needed` refer
/// to, directly or not: the apply opens them for the configuration (a
/// destroy opens them itself, from the state).
fn ephemeral_behind(applier: &Applier, needed: &BTreeSet<String>) -> BTreeSet<ResourceAddr> {
    if applier.plan.destroy {
        return BTreeSet::new();
    }
    needed
        .iter()
        .flat_map(|name| applier.graph.resource_dependencies(&Node::Provider(name.clone())))
        .filter(|r| r.mode == Mode::Ephemeral)
        .collect()
}

impl Shared {
    /// Configures the late provider `name`, when the apply calls it.
    pub(super) async fn configure_provider(&self, name: &str) -> Result<(), Vec<Diagnostic>> {
        let applier = &self.applier;
        let Some(late) = applier.late_providers.get(name) else { return Ok(()) };
        if !self.providers_needed.contains(name) || applier.interrupt.is_stopped() {
            return Ok(());
        }
        if applier.plan.destroy {
            // Again, though the plan configured it from the same state:
            // the ephemeral resources it needs are opened for the apply.
            let state = lock(&self.ledger).state.clone();
            let from = FromState {
                config: &applier.config,
                graph: &applier.graph,
                providers: &applier.providers,
                late: &applier.late_providers,
                variables: &applier.variables,
                session: &self.ephemeral,
            };
            return from.configure(name, &state).await;
        }
        late.configure(self.node_context(&Node::Provider(name.to_string()))).await
    }
}
