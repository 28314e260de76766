//! `cairn import ADDR ID`: adopt one existing object into the state at
//! once, without a plan, as Terraform's command does. The provider finds
//! the object by its id (checked by the contract gate), it is read back,
//! and the state records it — or nothing is written at all.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use anyhow::{Result, bail};

use crate::addr::{InstanceAddr, InstanceKey, Mode};
use crate::config::{Config, Resource};
use crate::contract::Gate;
use crate::graph::{DependencyGraph, Node};
use crate::plan::{Expansion, Plan, Providers};
use crate::state::{Attributes, InstanceState, State};
use crate::value::Value;

use super::{Engine, Intent, Workspace, diagnostics, staged};

/// What `cairn import` adopted.
#[derive(Debug)]
pub struct Imported {
    /// The object as it was read back and recorded.
    pub object: Value,
    /// The provider that manages it.
    pub provider: String,
}

impl Engine {
    /// Adopts the existing object `id` as `addr`: asks the provider for
    /// it, reads it back and writes it into the state (locked as `locking`
    /// says). Refuses an
    /// address the state already holds an object at, or that the
    /// configuration does not declare.
    pub fn import(
        &self,
        ws: &Workspace,
        addr: &InstanceAddr,
        id: &str,
        locking: crate::state::Locking,
    ) -> Result<Imported> {
        let mut backend = ws.backend()?;
        backend.lock_as(locking)?;
        let mut state = backend.read()?;
        if state.get(addr).is_some_and(|i| !i.attributes.is_null()) {
            bail!(
                "Resource already managed by cairn: cairn is already managing an object at {addr}. To import to \
                 this address you must first remove the existing object from the state (cairn state rm {addr})."
            );
        }
        let started = self.start_providers(ws, &state, Intent::Inspect)?;
        let providers = started.providers;
        let (config, graph) = config_for_import(ws, &state, &providers)?;
        let resource = declared(&config, addr)?;
        // A provider whose block refers to planned objects is configured
        // from the state's values, as Terraform's import does.
        if started.late.contains_key(&resource.provider) {
            let from_state = super::providers::StateConfiguration {
                config: &config,
                graph: &graph,
                providers: &providers,
                late: &started.late,
                variables: &ws.variables,
            };
            let names = BTreeSet::from([resource.provider.clone()]);
            self.tokio.block_on(from_state.configure(&names, &state)).map_err(diagnostics)?;
        }
        let Some(provider) = providers.get(&resource.provider) else {
            bail!("provider {:?} of {addr} is not available", resource.provider);
        };
        let gate = Gate::new(provider.as_ref());
        let schema = gate.schema_of(&addr.resource).map_err(|d| diagnostics(vec![d.at(&resource.location)]))?;
        let (found, _warnings) = self
            .tokio
            .block_on(gate.adopt(schema, addr, id))
            .map_err(|e| diagnostics(e.into_diagnostics(&resource.location)))?;
        let (object, private) =
            found.ok_or_else(|| diagnostics(vec![crate::contract::import_gone(addr, id).at(&resource.location)]))?;
        let kept = crate::contract::null_write_only(&schema.block, &object);
        state.set(InstanceState {
            private,
            dependencies: graph.resource_dependencies(&Node::Resource(addr.resource.clone())),
            create_before_destroy: resource.lifecycle.create_before_destroy,
            ..InstanceState::new(
                addr.clone(),
                &resource.provider,
                schema.version,
                Attributes::new(&kept, &schema.block.implied_type()),
            )
        });
        backend.write(&mut state)?;
        Ok(Imported { object, provider: resource.provider.clone() })
    }
}

/// The configuration to import into, and its graph: the workspace's, with
/// the module calls whose `count` or `for_each` only planning decides
/// expanded, as Terraform's import does, from the values of what they
/// refer to in `state` (an argument that refers to what the state does
/// not hold yet is Terraform's "Invalid for_each argument", at the
/// argument).
fn config_for_import(
    ws: &Workspace,
    state: &State,
    providers: &Providers,
) -> Result<(Arc<Config>, Arc<DependencyGraph>)> {
    let Some(staging) = &ws.staging else { return Ok((Arc::clone(&ws.config), Arc::clone(&ws.graph))) };
    let first = ws.first_stage(staging);
    let stage = staged::expand_in_rounds(&staging.parsed, &ws.variables, first, |stage, upstream| {
        Ok(stored_values(&stage.config, state, providers, &upstream))
    })?;
    Ok((stage.config, stage.graph))
}

/// A plan that only holds the objects `state` stores for the resources of
/// `wanted` (read with their providers' schemas), as a deferred call's
/// argument is evaluated from them; a resource the state has not, or
/// cannot be read, is unknown there.
fn stored_values(config: &Config, state: &State, providers: &Providers, wanted: &[InstanceAddr]) -> Plan {
    let mut plan = Plan::default();
    for resource in wanted.iter().map(|i| &i.resource) {
        let stored: Vec<&InstanceState> = state.resources.iter().filter(|i| &i.addr.resource == resource).collect();
        // Declared even when nothing is stored: unknown, not undeclared.
        let keys: Vec<Option<InstanceKey>> = stored.iter().map(|i| i.addr.key.clone()).collect();
        plan.expansions.insert(resource.clone(), stored_expansion(&keys));
        let Some(block) = config.resource(resource) else { continue };
        let Some(provider) = providers.get(&block.provider) else { continue };
        let Ok(schema) = Gate::new(provider.as_ref()).schema_of(resource) else { continue };
        for inst in stored.into_iter().filter(|i| i.schema_version == schema.version) {
            if let Ok(value) = inst.attributes.decode(&schema.block.implied_type()) {
                plan.data_values.insert(inst.addr.clone(), value);
            }
        }
    }
    plan
}

/// How a resource expanded, from the keys of its stored instances.
fn stored_expansion(keys: &[Option<InstanceKey>]) -> Expansion {
    let ints = keys.iter().filter_map(|k| match k {
        Some(InstanceKey::Int(i)) => Some(*i + 1),
        _ => None,
    });
    let strings: BTreeMap<String, Value> = (keys.iter())
        .filter_map(|k| match k {
            Some(InstanceKey::String(s)) => Some((s.clone(), Value::Null)),
            _ => None,
        })
        .collect();
    match ints.max() {
        Some(n) => Expansion::Count(n),
        None if !strings.is_empty() => Expansion::ForEach(strings),
        None => Expansion::Single,
    }
}

/// Whether the configuration declares `addr`'s resource block in another
/// instance of the same module calls (`module.m["b"]` for
/// `module.m["zz"]`): the key is not one the calls expand to.
fn in_another_module_instance(config: &Config, addr: &InstanceAddr) -> bool {
    let names = |module: &crate::addr::ModuleInstance| module.0.iter().map(|s| s.name.clone()).collect::<Vec<_>>();
    let wanted = names(&addr.resource.module);
    !wanted.is_empty()
        && config.resources.iter().any(|r| {
            r.addr.mode == Mode::Managed
                && r.addr.type_name == addr.resource.type_name
                && r.addr.name == addr.resource.name
                && names(&r.addr.module) == wanted
        })
}

/// The resource block `addr` is an instance of, when the configuration
/// declares one whose count or for_each (or their absence) fits its key.
fn declared<'a>(config: &'a Config, addr: &InstanceAddr) -> Result<&'a Resource> {
    let found = config.resource(&addr.resource).filter(|r| r.addr.mode == Mode::Managed);
    if found.is_none() && in_another_module_instance(config, addr) {
        bail!(
            "Configuration for import target does not exist: the configuration for the given import {addr} does \
             not exist. All target instances must have an associated configuration to be imported."
        );
    }
    let Some(resource) = found else {
        bail!(
            "resource address {addr} does not exist in the configuration. Before importing this resource, create \
             its configuration, for example:\n\nresource \"{}\" \"{}\" {{\n  # (resource arguments)\n}}",
            addr.resource.type_name,
            addr.resource.name
        );
    };
    let fits = match &addr.key {
        None => resource.count.is_none() && resource.for_each.is_none(),
        Some(InstanceKey::Int(_)) => resource.count.is_some(),
        Some(InstanceKey::String(_)) => resource.for_each.is_some(),
    };
    if !fits {
        let expected = match (&resource.count, &resource.for_each) {
            (Some(_), _) => "it has count, so its instances have whole-number keys, like [0]",
            (_, Some(_)) => "it has for_each, so its instances have string keys, like [\"a\"]",
            _ => "it has neither count nor for_each, so its one instance has no key",
        };
        bail!("{addr} is not an instance of the resource declared at {}: {expected}", resource.location);
    }
    Ok(resource)
}
