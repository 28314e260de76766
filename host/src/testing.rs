//! An in-process provider for the planner's and executor's tests, so that
//! their decisions are tested without WebAssembly.

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::diag::Diagnostic;
use crate::provider::{ApplyRequest, ApplyResponse, CallResult, PlanRequest, PlanResponse, Provider, ReadResponse};
use crate::schema::{Attribute, Block, ProviderSchema, Schema};
use crate::value::{Path, Type, Value};

/// A provider named `fake` with one resource type, `fake_thing`: `name`
/// (required; a change forces replacement), `size` (optional) and computed
/// `id`. Creates get the id `id-<name>`.
#[derive(Default)]
pub struct Fake {
    /// What it offers: `fake_thing`.
    pub schema: ProviderSchema,
    /// Plan `size = 99` whatever the configuration says (a contract violation).
    pub break_plan: bool,
    /// Names whose create fails, answering the object anyway (a partial create).
    pub fail_create: Vec<String>,
    /// Every apply call: (name, "create" | "update" | "delete").
    pub calls: Mutex<Vec<(String, &'static str)>>,
}

impl Fake {
    /// The well-behaved fake.
    pub fn new() -> Fake {
        let block = Block {
            attributes: [
                ("name".to_string(), Attribute::required(Type::String)),
                ("size".to_string(), Attribute::optional(Type::Number)),
                ("id".to_string(), Attribute::computed(Type::String)),
            ]
            .into(),
            ..Default::default()
        };
        let schema = ProviderSchema {
            resources: [("fake_thing".to_string(), Schema { version: 0, block })].into(),
            ..Default::default()
        };
        Fake { schema, ..Default::default() }
    }

    /// The apply calls made so far.
    pub fn calls(&self) -> Vec<(String, &'static str)> {
        self.calls.lock().unwrap().clone()
    }
}

impl Provider for Fake {
    fn name(&self) -> &str {
        "fake"
    }

    fn schema(&self) -> &ProviderSchema {
        &self.schema
    }

    fn validate_resource(&self, _: &str, _: &Value) -> CallResult<Vec<Diagnostic>> {
        Ok(Vec::new())
    }

    fn plan_resource(&self, r: PlanRequest) -> CallResult<PlanResponse> {
        let Value::Object(mut planned) = r.proposed_new_state else { unreachable!("the host plans deletes itself") };
        if planned.get("id").is_none_or(Value::is_null) {
            planned.insert("id".into(), Value::unknown());
        }
        if self.break_plan {
            planned.insert("size".into(), Value::int(99));
        }
        Ok(PlanResponse {
            planned_state: Value::Object(planned),
            requires_replace: vec![Path::root().attr("name")],
            ..Default::default()
        })
    }

    fn apply_resource(&self, r: ApplyRequest) -> CallResult<ApplyResponse> {
        let (object, kind) = match (&r.prior_state, &r.planned_state) {
            (prior, Value::Null) => (prior, "delete"),
            (Value::Null, planned) => (planned, "create"),
            (_, planned) => (planned, "update"),
        };
        let name = object.get_attr("name").as_str().unwrap_or_default().to_string();
        self.calls.lock().unwrap().push((name.clone(), kind));
        if kind == "delete" {
            return Ok(ApplyResponse::default());
        }
        let Value::Object(mut new) = r.planned_state else { unreachable!() };
        if new["id"].is_unknown() {
            new.insert("id".into(), Value::string(format!("id-{name}")));
        }
        let mut response = ApplyResponse { new_state: Value::Object(new), ..Default::default() };
        if kind == "create" && self.fail_create.contains(&name) {
            response.diagnostics.push(Diagnostic::error(format!("creating {name} failed half-way")));
        }
        Ok(response)
    }

    fn read_resource(&self, _: &str, current: &Value, private: &[u8]) -> CallResult<ReadResponse> {
        Ok(ReadResponse { new_state: Some(current.clone()), private: private.to_vec(), diagnostics: Vec::new() })
    }

    fn read_data_source(&self, _: &str, c: &Value) -> CallResult<(Value, Vec<Diagnostic>)> {
        Ok((c.clone(), Vec::new()))
    }

    fn upgrade_state(&self, _: &str, _: u64, _: &str) -> CallResult<(Value, Vec<Diagnostic>)> {
        Ok((Value::Object(BTreeMap::new()), vec![Diagnostic::error("the fake has no older schema versions")]))
    }
}
