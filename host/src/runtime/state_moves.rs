//! The optional `state-moves` export (WIT `cairn:provider/state-moves`,
//! added within 0.2.0): converting an object stored as another resource
//! type, for a `moved` block across types.
//!
//! A component may or may not export it, so it is not part of the world
//! every provider is bound with: it has bindings of its own, looked up once
//! per component ([`lookup`]) and loaded from an instance when called.

use super::answer::AnswerSize;
use super::bindings::ProviderWorldPre;
use super::denials::Diagnosed;
use super::instance::{InstanceCall, StoreState};

/// The generated bindings of the `state-moves-world` world, sharing the
/// `types` of the provider world's bindings so that values convert alike.
mod generated {
    wasmtime::component::bindgen!({
        world: "state-moves-world",
        path: "../wit",
        exports: { default: async },
        with: { "cairn:provider/types": crate::runtime::bindings::cairn::provider::types },
    });
}

pub(crate) use generated::exports::cairn::provider::state_moves as wit_moves;

/// Where a component's `move-resource-state` is, when it exports it.
pub(crate) type Indices = wit_moves::GuestIndices;

/// The component's `state-moves` export, or `None` when it has none (a
/// component built before the interface was added, or by an SDK that does
/// not implement it).
pub(crate) fn lookup(pre: &ProviderWorldPre<StoreState>) -> Option<Indices> {
    wit_moves::GuestIndices::new(pre.instance_pre()).ok()
}

/// The call of `move-resource-state` with `request` on an instance.
pub(crate) fn move_call(indices: Indices, request: wit_moves::MoveRequest) -> InstanceCall<wit_moves::MoveResponse> {
    Box::new(move |instance| {
        Box::pin(async move {
            let guest = indices.load(&mut instance.store, &instance.instance)?;
            guest.call_move_resource_state(&mut instance.store, &request).await
        })
    })
}

/// The summary of the answer that says "this provider takes no moves": an
/// SDK whose components always export `state-moves` (Go's: exports are
/// static there) gives it, alone and with no detail or path, when the
/// provider has no move hook, so that the user gets the same error as for a
/// component without the export. Keep it identical to the Go SDK's
/// `unsupportedMoveSummary` (providers/sdk-go/move.go).
pub(crate) const UNSUPPORTED_SUMMARY: &str = "cairn: state-moves not implemented by this provider";

/// Whether `answer` is the distinguished "unsupported" answer (see
/// [`UNSUPPORTED_SUMMARY`]).
pub(crate) fn is_unsupported(answer: &wit_moves::MoveResponse) -> bool {
    use super::bindings::cairn::provider::types::Severity;
    match answer.diagnostics.as_slice() {
        [only] => {
            matches!(only.severity, Severity::Error)
                && only.summary == UNSUPPORTED_SUMMARY
                && only.detail.is_empty()
                && only.path.is_empty()
        }
        _ => false,
    }
}

impl AnswerSize for wit_moves::MoveResponse {
    fn answer_size(&self) -> usize {
        [
            self.target_state.answer_size(),
            self.target_private.len(),
            self.diagnostics.iter().map(AnswerSize::answer_size).fold(0, usize::saturating_add),
        ]
        .into_iter()
        .fold(0, usize::saturating_add)
    }
}

impl Diagnosed for wit_moves::MoveResponse {
    fn diagnostics(&mut self) -> Option<&mut Vec<super::bindings::cairn::provider::types::Diagnostic>> {
        Some(&mut self.diagnostics)
    }
}
