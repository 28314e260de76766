//! `cairn import ADDR ID`: adopt one existing object into the state at
//! once, without a plan, as Terraform's command does. The provider finds
//! the object by its id (checked by the contract gate), it is read back,
//! and the state records it — or nothing is written at all.

use anyhow::{Result, bail};

use crate::addr::{InstanceAddr, InstanceKey, Mode};
use crate::config::Resource;
use crate::contract::Gate;
use crate::graph::Node;
use crate::state::{Attributes, InstanceState};
use crate::value::Value;

use super::{Engine, Intent, Workspace, diagnostics};

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
        let resource = declared(ws, addr)?;
        let mut backend = ws.backend()?;
        backend.lock_as(locking)?;
        let mut state = backend.read()?;
        if state.get(addr).is_some_and(|i| !i.attributes.is_null()) {
            bail!(
                "Resource already managed by cairn: cairn is already managing an object at {addr}. To import to \
                 this address you must first remove the existing object from the state (cairn state rm {addr})."
            );
        }
        let (providers, _hashes) = self.start_providers(ws, &state, Intent::Inspect)?;
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
            dependencies: ws.graph.resource_dependencies(&Node::Resource(addr.resource.clone())),
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

/// The resource block `addr` is an instance of, when the configuration
/// declares one whose count or for_each (or their absence) fits its key.
fn declared<'a>(ws: &'a Workspace, addr: &InstanceAddr) -> Result<&'a Resource> {
    let Some(resource) = ws.config.resource(&addr.resource).filter(|r| r.addr.mode == Mode::Managed) else {
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
