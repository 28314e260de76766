//! The optional `ephemeral-resources` export (WIT
//! `cairn:provider/ephemeral-resources`, added within 0.2.0): the types of
//! ephemeral resources a component offers and the calls that open, renew
//! and close them.
//!
//! Like `state-moves`, a component may or may not export it, so it has
//! bindings of its own, looked up once per component ([`lookup`]) and
//! loaded from an instance when called.

use super::answer::AnswerSize;
use super::bindings::ProviderWorldPre;
use super::bindings::cairn::provider::types as wit;
use super::denials::Diagnosed;
use super::instance::{InstanceCall, StoreState};

/// The generated bindings of the `ephemeral-resources-world` world, sharing
/// the `types` of the provider world's bindings so that values convert
/// alike.
mod generated {
    wasmtime::component::bindgen!({
        world: "ephemeral-resources-world",
        path: "../wit",
        exports: { default: async },
        with: { "cairn:provider/types": crate::runtime::bindings::cairn::provider::types },
    });
}

pub(crate) use generated::exports::cairn::provider::ephemeral_resources as wit_ephemeral;

/// Where a component's `ephemeral-resources` functions are, when it exports
/// them.
pub(crate) type Indices = wit_ephemeral::GuestIndices;

/// The component's `ephemeral-resources` export, or `None` when it has none
/// (a component built before the interface was added, or by an SDK or
/// provider that offers no ephemeral resource).
pub(crate) fn lookup(pre: &ProviderWorldPre<StoreState>) -> Option<Indices> {
    wit_ephemeral::GuestIndices::new(pre.instance_pre()).ok()
}

/// The ephemeral resource types the component offers, with their schemas.
pub(crate) type Schemas = Vec<(String, wit::Schema)>;

/// The call of `schemas` on an instance.
pub(crate) fn schemas_call(indices: Indices) -> InstanceCall<Schemas> {
    Box::new(move |instance| {
        Box::pin(async move {
            let guest = indices.load(&mut instance.store, &instance.instance)?;
            guest.call_schemas(&mut instance.store).await
        })
    })
}

/// The call of `validate` of `type_name` with `config` on an instance.
pub(crate) fn validate_call(
    indices: Indices,
    type_name: String,
    config: wit::Value,
) -> InstanceCall<Vec<wit::Diagnostic>> {
    Box::new(move |instance| {
        Box::pin(async move {
            let guest = indices.load(&mut instance.store, &instance.instance)?;
            guest.call_validate(&mut instance.store, &type_name, &config).await
        })
    })
}

/// The call of `open` of `type_name` with `config` on an instance.
pub(crate) fn open_call(
    indices: Indices,
    type_name: String,
    config: wit::Value,
) -> InstanceCall<wit_ephemeral::OpenResponse> {
    Box::new(move |instance| {
        Box::pin(async move {
            let guest = indices.load(&mut instance.store, &instance.instance)?;
            guest.call_open(&mut instance.store, &type_name, &config).await
        })
    })
}

/// The call of `renew` of an object of `type_name` with its `private`
/// bytes on an instance.
pub(crate) fn renew_call(
    indices: Indices,
    type_name: String,
    private: Vec<u8>,
) -> InstanceCall<wit_ephemeral::RenewResponse> {
    Box::new(move |instance| {
        Box::pin(async move {
            let guest = indices.load(&mut instance.store, &instance.instance)?;
            guest.call_renew(&mut instance.store, &type_name, &private).await
        })
    })
}

/// The call of `close` of an object of `type_name` with its `private`
/// bytes on an instance.
pub(crate) fn close_call(indices: Indices, type_name: String, private: Vec<u8>) -> InstanceCall<Vec<wit::Diagnostic>> {
    Box::new(move |instance| {
        Box::pin(async move {
            let guest = indices.load(&mut instance.store, &instance.instance)?;
            guest.call_close(&mut instance.store, &type_name, &private).await
        })
    })
}

impl AnswerSize for wit_ephemeral::OpenResponse {
    fn answer_size(&self) -> usize {
        [self.result.answer_size(), self.private.len(), self.diagnostics.answer_size()]
            .into_iter()
            .fold(0, usize::saturating_add)
    }
}

impl AnswerSize for wit_ephemeral::RenewResponse {
    fn answer_size(&self) -> usize {
        self.private.len().saturating_add(self.diagnostics.answer_size())
    }
}

impl Diagnosed for wit_ephemeral::OpenResponse {
    fn diagnostics(&mut self) -> Option<&mut Vec<wit::Diagnostic>> {
        Some(&mut self.diagnostics)
    }
}

impl Diagnosed for wit_ephemeral::RenewResponse {
    fn diagnostics(&mut self) -> Option<&mut Vec<wit::Diagnostic>> {
        Some(&mut self.diagnostics)
    }
}

impl Diagnosed for Schemas {
    fn diagnostics(&mut self) -> Option<&mut Vec<wit::Diagnostic>> {
        None
    }
}
