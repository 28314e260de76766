//! An in-process provider for the planner's and executor's tests, so that
//! their decisions are tested without WebAssembly.

use std::sync::{Arc, Mutex};

use crate::diag::Diagnostic;
use crate::provider::{ApplyRequest, ApplyResponse, CallFuture, PlanRequest, PlanResponse, Provider, ready};
use crate::schema::{Attribute, Block, ProviderSchema, Schema};
use crate::value::{Path, Type, Value};

/// A provider named `fake` with one resource type, `fake_thing`: `name`
/// (required; a change forces replacement), `size` (optional) and computed
/// `id`. Creates get the id `id-<name>`. A data source of the same name and
/// shape reads back its configuration.
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
            resources: [("fake_thing".to_string(), Schema { version: 0, block: block.clone() })].into(),
            data_sources: [("fake_thing".to_string(), Schema { version: 0, block })].into(),
            ..Default::default()
        };
        Fake { schema, ..Default::default() }
    }

    /// The apply calls made so far.
    pub fn calls(&self) -> Vec<(String, &'static str)> {
        self.calls.lock().unwrap().clone()
    }
}

impl Fake {
    /// The plan: the proposed new state, with `id` unknown until created.
    pub fn plan(&self, r: PlanRequest) -> PlanResponse {
        let Value::Object(mut planned) = r.proposed_new_state else { unreachable!("the host plans deletes itself") };
        if planned.get("id").is_none_or(Value::is_null) {
            planned.insert("id".into(), Value::unknown());
        }
        if self.break_plan {
            planned.insert("size".into(), Value::int(99));
        }
        PlanResponse {
            planned_state: Value::Object(planned),
            requires_replace: vec![Path::root().attr("name")],
            ..Default::default()
        }
    }

    /// The apply: records the call; a create gets the id `id-<name>`.
    pub fn apply(&self, r: ApplyRequest) -> ApplyResponse {
        let (object, kind) = match (&r.prior_state, &r.planned_state) {
            (prior, Value::Null) => (prior, "delete"),
            (Value::Null, planned) => (planned, "create"),
            (_, planned) => (planned, "update"),
        };
        let name = object.get_attr("name").as_str().unwrap_or_default().to_string();
        self.calls.lock().unwrap().push((name.clone(), kind));
        if kind == "delete" {
            return ApplyResponse::default();
        }
        let Value::Object(mut new) = r.planned_state else { unreachable!() };
        if new.get("id").is_some_and(Value::is_unknown) {
            new.insert("id".into(), Value::string(format!("id-{name}")));
        }
        let mut response = ApplyResponse { new_state: Value::Object(new), ..Default::default() };
        if kind == "create" && self.fail_create.contains(&name) {
            response.diagnostics.push(Diagnostic::error(format!("creating {name} failed half-way")));
        }
        response
    }
}

/// Implements the rest of [`Provider`] for a fake whose `schema` field is
/// its schema, the same way every fake does: validation finds nothing, a
/// refresh finds the object as it was, a data source reads back its
/// configuration, and no older schema versions exist.
macro_rules! fake_provider_basics {
    () => {
        fn name(&self) -> &str {
            "fake"
        }

        fn schema(&self) -> &$crate::schema::ProviderSchema {
            &self.schema
        }

        fn validate_resource<'a>(
            &'a self,
            _: &'a str,
            _: &'a $crate::value::Value,
        ) -> $crate::provider::CallFuture<'a, Vec<$crate::diag::Diagnostic>> {
            $crate::provider::ready(Ok(Vec::new()))
        }

        fn read_resource<'a>(
            &'a self,
            _: &'a str,
            current: &'a $crate::value::Value,
            private: &'a [u8],
        ) -> $crate::provider::CallFuture<'a, $crate::provider::ReadResponse> {
            $crate::provider::ready(Ok($crate::provider::ReadResponse {
                new_state: Some(current.clone()),
                private: private.to_vec(),
                diagnostics: Vec::new(),
            }))
        }

        fn read_data_source<'a>(
            &'a self,
            _: &'a str,
            config: &'a $crate::value::Value,
        ) -> $crate::provider::CallFuture<'a, ($crate::value::Value, Vec<$crate::diag::Diagnostic>)> {
            $crate::provider::ready(Ok((config.clone(), Vec::new())))
        }

        fn upgrade_state<'a>(
            &'a self,
            _: &'a str,
            _: u64,
            _: &'a str,
        ) -> $crate::provider::CallFuture<'a, ($crate::value::Value, Vec<$crate::diag::Diagnostic>)> {
            $crate::provider::ready(Ok((
                $crate::value::Value::Null,
                vec![$crate::diag::Diagnostic::error("the fake has no older schema versions")],
            )))
        }
    };
}
pub(crate) use fake_provider_basics;

impl Provider for Fake {
    fake_provider_basics!();

    fn plan_resource(&self, r: PlanRequest) -> CallFuture<'_, PlanResponse> {
        ready(Ok(self.plan(r)))
    }

    fn apply_resource(&self, r: ApplyRequest) -> CallFuture<'_, ApplyResponse> {
        ready(Ok(self.apply(r)))
    }
}

/// A provider map with `provider` as `fake`.
pub fn providers(provider: Arc<dyn Provider>) -> crate::plan::Providers {
    [("fake".to_string(), provider)].into()
}

/// Writes `hcl` as `main.tf` in a new temporary directory and loads it.
pub fn workspace(hcl: &str) -> (tempfile::TempDir, crate::engine::Workspace) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("main.tf"), hcl).unwrap();
    let ws = crate::engine::Workspace::load(dir.path(), &[]).unwrap_or_else(|e| panic!("{e:#}"));
    (dir, ws)
}
