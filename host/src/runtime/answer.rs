//! The size of a provider's answer, as the host holds it after wasmtime has
//! lifted it out of the instance: every node, element and string counted in
//! bytes, so that an answer over the sandbox's limit is rejected before the
//! host decodes it or does anything else with it.
//!
//! What is bounded, and where: wasmtime copies (lifts) a whole answer into
//! host memory when the export returns, before the host sees it. That copy
//! is bounded by the store's hostcall fuel (see `instance`): wasmtime counts
//! every string's bytes and every list's elements as it copies, and stops
//! with an error past the fuel (128 MiB, or `max_answer_bytes` if larger) —
//! even for a crafted answer whose many strings all point at the same bytes
//! of guest memory, which would otherwise copy far more than the instance's
//! memory cap. An answer that fits the fuel is then measured here and
//! rejected over `max_answer_bytes` before anything else (decoding, contract
//! checks, state) touches it.

use std::mem::size_of;

use super::bindings::cairn::provider::types as wit;
use super::bindings::exports::cairn::provider::provider as api;

/// The bytes an answer occupies in the host once lifted.
pub(crate) trait AnswerSize {
    /// Its size in bytes, counting the items of every list and the bytes of
    /// every string (saturating, never overflowing).
    fn answer_size(&self) -> usize;
}

fn sum<T: AnswerSize>(items: &[T]) -> usize {
    items.iter().fold(0usize, |n, item| n.saturating_add(size_of::<T>()).saturating_add(item.answer_size()))
}

impl AnswerSize for String {
    fn answer_size(&self) -> usize {
        self.len()
    }
}

impl AnswerSize for u8 {
    fn answer_size(&self) -> usize {
        0
    }
}

impl AnswerSize for u32 {
    fn answer_size(&self) -> usize {
        0
    }
}

impl<T: AnswerSize> AnswerSize for Vec<T> {
    fn answer_size(&self) -> usize {
        sum(self)
    }
}

impl<T: AnswerSize> AnswerSize for Option<T> {
    fn answer_size(&self) -> usize {
        self.as_ref().map_or(0, T::answer_size)
    }
}

impl<A: AnswerSize, B: AnswerSize> AnswerSize for (A, B) {
    fn answer_size(&self) -> usize {
        self.0.answer_size().saturating_add(self.1.answer_size())
    }
}

impl AnswerSize for wit::Value {
    fn answer_size(&self) -> usize {
        sum(&self.nodes)
    }
}

impl AnswerSize for wit::Node {
    fn answer_size(&self) -> usize {
        match &self.kind {
            // A refinement's only unbounded part is its prefix.
            wit::ValueNode::Unknown(r) => r.prefix.as_ref().map_or(0, String::len),
            wit::ValueNode::Null
            | wit::ValueNode::Boolean(_)
            | wit::ValueNode::Integer(_)
            | wit::ValueNode::Float(_) => 0,
            wit::ValueNode::Text(s) => s.answer_size(),
            wit::ValueNode::List(xs) | wit::ValueNode::Set(xs) | wit::ValueNode::Tuple(xs) => sum(xs),
            wit::ValueNode::Map(entries) | wit::ValueNode::Object(entries) => sum(entries),
        }
    }
}

impl AnswerSize for wit::PathStep {
    fn answer_size(&self) -> usize {
        match self {
            wit::PathStep::Attribute(s) | wit::PathStep::Key(s) => s.answer_size(),
            wit::PathStep::Index(_) => 0,
        }
    }
}

impl AnswerSize for wit::Diagnostic {
    fn answer_size(&self) -> usize {
        self.summary.len().saturating_add(self.detail.len()).saturating_add(sum(&self.path))
    }
}

impl AnswerSize for wit::TypeNode {
    fn answer_size(&self) -> usize {
        match self {
            wit::TypeNode::Object(entries) => sum(entries),
            wit::TypeNode::Tuple(xs) => sum(xs),
            _ => 0,
        }
    }
}

impl AnswerSize for wit::Attribute {
    fn answer_size(&self) -> usize {
        [self.name.len(), self.description.len(), sum(&self.type_.nodes)].into_iter().fold(0, usize::saturating_add)
    }
}

impl AnswerSize for wit::NestedBlock {
    fn answer_size(&self) -> usize {
        self.name.len()
    }
}

impl AnswerSize for wit::Block {
    fn answer_size(&self) -> usize {
        [sum(&self.attributes), sum(&self.blocks), self.description.len()].into_iter().fold(0, usize::saturating_add)
    }
}

impl AnswerSize for wit::Schema {
    fn answer_size(&self) -> usize {
        sum(&self.blocks)
    }
}

impl AnswerSize for wit::ProviderSchema {
    fn answer_size(&self) -> usize {
        [self.provider.answer_size(), sum(&self.resources), sum(&self.data_sources)]
            .into_iter()
            .fold(0, usize::saturating_add)
    }
}

impl AnswerSize for api::PlanResponse {
    fn answer_size(&self) -> usize {
        [
            self.planned_state.answer_size(),
            sum(&self.requires_replace),
            self.planned_private.len(),
            sum(&self.diagnostics),
        ]
        .into_iter()
        .fold(0, usize::saturating_add)
    }
}

impl AnswerSize for api::ApplyResponse {
    fn answer_size(&self) -> usize {
        [self.new_state.answer_size(), self.private.len(), sum(&self.diagnostics)]
            .into_iter()
            .fold(0, usize::saturating_add)
    }
}

impl AnswerSize for api::ReadResponse {
    fn answer_size(&self) -> usize {
        [self.new_state.answer_size(), self.private.len(), sum(&self.diagnostics)]
            .into_iter()
            .fold(0, usize::saturating_add)
    }
}

impl AnswerSize for api::ImportedResource {
    fn answer_size(&self) -> usize {
        [self.type_name.answer_size(), self.state.answer_size(), self.private.len()]
            .into_iter()
            .fold(0, usize::saturating_add)
    }
}

impl AnswerSize for api::ImportResponse {
    fn answer_size(&self) -> usize {
        sum(&self.imported).saturating_add(sum(&self.diagnostics))
    }
}

impl AnswerSize for api::DataResponse {
    fn answer_size(&self) -> usize {
        self.state.answer_size().saturating_add(sum(&self.diagnostics))
    }
}

impl AnswerSize for api::UpgradeResponse {
    fn answer_size(&self) -> usize {
        self.upgraded_state.answer_size().saturating_add(sum(&self.diagnostics))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> wit::Node {
        wit::Node { kind: wit::ValueNode::Text(s.to_string()), sensitive: false }
    }

    #[test]
    fn strings_and_nodes_are_counted() {
        let node = size_of::<wit::Node>();
        let value = wit::Value { nodes: vec![text("abc"), text("")] };
        assert_eq!(value.answer_size(), 2 * node + 3);
        let list = wit::Node { kind: wit::ValueNode::List(vec![1, 2]), sensitive: false };
        let value = wit::Value { nodes: vec![list, text("x"), text("yz")] };
        assert_eq!(value.answer_size(), 3 * node + 2 * size_of::<u32>() + 3);
    }

    #[test]
    fn every_part_of_a_plan_answer_counts() {
        let diagnostic = wit::Diagnostic {
            severity: wit::Severity::Warning,
            summary: "12345".into(),
            detail: "67".into(),
            path: vec![wit::PathStep::Attribute("ab".into())],
        };
        let answer = api::PlanResponse {
            planned_state: wit::Value { nodes: Vec::new() },
            requires_replace: Vec::new(),
            planned_private: vec![0; 10],
            diagnostics: vec![diagnostic],
        };
        let expected = 10 + size_of::<wit::Diagnostic>() + 7 + size_of::<wit::PathStep>() + 2;
        assert_eq!(answer.answer_size(), expected);
    }
}
