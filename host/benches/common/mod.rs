//! What the benchmarks share: the `bench_thing` resource type and how an
//! in-process provider plans and applies it.

use cairn::diag::Diagnostic;
use cairn::engine::{Event, EventSink};
use cairn::provider::{ApplyRequest, ApplyResponse, PlanRequest, PlanResponse};
use cairn::schema::{Attribute, Block, ProviderSchema, Schema};
use cairn::value::{Type, Value};

/// `bench_thing`: `name`, `deps` (ids of other things), computed `id`.
pub fn thing_schema() -> ProviderSchema {
    let block = Block {
        attributes: [
            ("name".to_string(), Attribute::required(Type::String)),
            ("deps".to_string(), Attribute::optional(Type::List(Box::new(Type::String)))),
            ("id".to_string(), Attribute::computed(Type::String)),
        ]
        .into(),
        ..Block::default()
    };
    ProviderSchema {
        resources: [("bench_thing".to_string(), Schema { version: 0, block })].into(),
        ..ProviderSchema::default()
    }
}

/// The proposed new state, with `id` unknown until the thing exists.
pub fn plan_with_unknown_id(r: PlanRequest) -> PlanResponse {
    let mut planned = r.proposed_new_state;
    if let Value::Object(m) = &mut planned
        && m.get("id").is_none_or(Value::is_null)
    {
        m.insert("id".into(), Value::unknown());
    }
    PlanResponse { planned_state: planned, ..PlanResponse::default() }
}

/// The planned state, with the thing's name as its `id`.
pub fn apply_with_id_from_name(r: ApplyRequest) -> ApplyResponse {
    let mut state = r.planned_state;
    if let Value::Object(m) = &mut state {
        let name = m.get("name").cloned().unwrap_or(Value::Null);
        m.insert("id".into(), name);
    }
    ApplyResponse { new_state: state, ..ApplyResponse::default() }
}

/// Drops every event.
pub struct Quiet;

impl EventSink for Quiet {
    fn emit(&self, _: Event) {}
    fn diagnostic(&self, _: &Diagnostic) {}
}

/// The parts of [`cairn::provider::Provider`] every benchmark provider
/// shares: named `bench`, its `schema` field, nothing to validate, no data
/// sources or upgrades. Refresh and the rest are each benchmark's own.
#[macro_export]
macro_rules! bench_provider_basics {
    () => {
        fn name(&self) -> &str {
            "bench"
        }
        fn schema(&self) -> &cairn::schema::ProviderSchema {
            &self.schema
        }
        fn validate_resource<'a>(
            &'a self,
            _: &'a str,
            _: &'a cairn::value::Value,
        ) -> cairn::provider::CallFuture<'a, Vec<cairn::diag::Diagnostic>> {
            cairn::provider::ready(Ok(Vec::new()))
        }
        fn read_data_source<'a>(
            &'a self,
            _: &'a str,
            c: &'a cairn::value::Value,
        ) -> cairn::provider::CallFuture<'a, (cairn::value::Value, Vec<cairn::diag::Diagnostic>)> {
            cairn::provider::ready(Ok((c.clone(), Vec::new())))
        }
        fn upgrade_state<'a>(
            &'a self,
            _: &'a str,
            _: u64,
            _: &'a str,
        ) -> cairn::provider::CallFuture<'a, (cairn::value::Value, Vec<cairn::diag::Diagnostic>)> {
            unreachable!("no upgrades")
        }
    };
}
