//! Mock providers and overrides for `cairn test`, as Terraform 1.11's test
//! runner has them.
//!
//! A mocked provider ([`Mock`]) is never configured or called: a plan
//! keeps what the configuration says and leaves the computed attributes it
//! does not set unknown ("known after apply"), an apply gives them their
//! values, a refresh finds the object as it was, a delete forgets it, and a
//! data source read gives every computed attribute its value at once. The
//! value of a computed attribute is the one its `mock_resource` or
//! `mock_data` block's `defaults` (or an override's `values`) gives, else
//! one generated as Terraform generates it: 8 random lowercase letters and
//! digits for a string, 0, false, empty collections, objects attribute by
//! attribute, null for a value of any type. With `override_during = plan`
//! the values are given in the plan already.
//!
//! An override (`override_resource`, `override_data`) makes the objects at
//! its target answered by such a mock instead of their provider, mocked or
//! real ([`Double`], through [`Provider::stand_in`]): the run's overrides
//! first, then the file's, then the mocked provider's own.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use crate::addr::{InstanceAddr, Mode};
use crate::config::OverrideDuring;
use crate::diag::{Diagnostic, Location};
use crate::engine::Doubles;
use crate::provider::{
    ApplyRequest, ApplyResponse, CallFuture, ImportResponse, PlanRequest, PlanResponse, Provider, ReadResponse, ready,
};
use crate::schema::{Block, Nesting, ProviderSchema};
use crate::value::{Map, Type, Value};

/// The values a mock gives the computed attributes of one resource type or
/// data source.
#[derive(Debug, Clone)]
pub struct TypeValues {
    /// Managed or data.
    pub mode: Mode,
    /// The type.
    pub type_name: String,
    /// An object of attribute values (null: all generated).
    pub values: Value,
    /// When they are given.
    pub during: OverrideDuring,
    /// Where they are written, for warnings.
    pub location: Location,
}

/// An override, its values evaluated.
#[derive(Debug, Clone)]
pub struct EvaluatedOverride {
    /// The resource or instance it targets.
    pub target: InstanceAddr,
    /// What its objects' computed attributes get.
    pub values: TypeValues,
}

impl EvaluatedOverride {
    /// Whether the override targets `addr`: the instance itself, or its
    /// resource (all its instances).
    fn targets(&self, addr: &InstanceAddr) -> bool {
        *addr == self.target || (self.target.key.is_none() && addr.resource == self.target.resource)
    }
}

/// A provider that is never called: see the module's documentation.
pub struct Mock {
    name: String,
    schema: ProviderSchema,
    /// By (mode, type); a type without an entry gets generated values,
    /// during apply.
    values: Vec<TypeValues>,
    /// What each create planned with `override_during = plan` (type and
    /// proposed state), so that the plan made again at apply plans the
    /// same generated values. (Terraform 1.11.4 generates new ones there
    /// and fails with "Provider produced inconsistent final plan".)
    planned: Mutex<Vec<(String, Value, Value)>>,
}

/// How computed attributes are filled.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fill {
    /// With unknown values (a plan before `override_during = plan`).
    Unknown,
    /// With their values.
    Known,
}

impl Mock {
    /// A mock of provider `name` with `schema`, giving `values`.
    pub fn new(name: &str, schema: ProviderSchema, values: Vec<TypeValues>) -> Mock {
        Mock { name: name.to_string(), schema, values, planned: Mutex::default() }
    }

    fn values_of(&self, mode: Mode, type_name: &str) -> Option<&TypeValues> {
        self.values.iter().find(|v| v.mode == mode && v.type_name == type_name)
    }

    fn block_of(&self, mode: Mode, type_name: &str) -> Option<&Block> {
        self.schema.table(mode).get(type_name).map(|s| &s.block)
    }

    /// `value` with its computed attributes that are `missing` (null in a
    /// plan, unknown at apply) filled the `fill` way.
    fn filled(&self, mode: Mode, type_name: &str, value: &Value, missing: fn(&Value) -> bool, fill: Fill) -> Value {
        let Some(block) = self.block_of(mode, type_name) else { return value.clone() };
        let given = self.values_of(mode, type_name).map(|v| &v.values).unwrap_or(&Value::Null);
        fill_block(block, value, given, missing, fill)
    }

    fn plan(&self, request: PlanRequest) -> PlanResponse {
        let proposed = request.proposed_new_state;
        if proposed.is_null() || !request.prior_state.is_null() {
            // A delete, or an update: nothing new to compute.
            return PlanResponse { planned_state: proposed, ..Default::default() };
        }
        let during = self.values_of(Mode::Managed, &request.type_name).map(|v| v.during);
        if during != Some(OverrideDuring::Plan) {
            let planned = self.filled(Mode::Managed, &request.type_name, &proposed, Value::is_null, Fill::Unknown);
            return PlanResponse { planned_state: planned, ..Default::default() };
        }
        let mut earlier = self.planned.lock().unwrap_or_else(PoisonError::into_inner);
        let same = |(t, p, _): &&(String, Value, Value)| *t == request.type_name && *p == proposed;
        if let Some((_, _, planned)) = earlier.iter().find(same) {
            return PlanResponse { planned_state: planned.clone(), ..Default::default() };
        }
        let planned = self.filled(Mode::Managed, &request.type_name, &proposed, Value::is_null, Fill::Known);
        earlier.push((request.type_name, proposed, planned.clone()));
        PlanResponse { planned_state: planned, ..Default::default() }
    }

    fn apply(&self, request: ApplyRequest) -> ApplyResponse {
        if request.planned_state.is_null() {
            return ApplyResponse::default();
        }
        let new =
            self.filled(Mode::Managed, &request.type_name, &request.planned_state, Value::is_unknown, Fill::Known);
        ApplyResponse { new_state: new, private: request.planned_private, ..Default::default() }
    }
}

impl Provider for Mock {
    fn name(&self) -> &str {
        &self.name
    }

    fn schema(&self) -> &ProviderSchema {
        &self.schema
    }

    fn validate_resource<'a>(&'a self, _: &'a str, _: &'a Value) -> CallFuture<'a, Vec<Diagnostic>> {
        ready(Ok(Vec::new()))
    }

    fn plan_resource(&self, request: PlanRequest) -> CallFuture<'_, PlanResponse> {
        ready(Ok(self.plan(request)))
    }

    fn apply_resource(&self, request: ApplyRequest) -> CallFuture<'_, ApplyResponse> {
        ready(Ok(self.apply(request)))
    }

    fn read_resource<'a>(&'a self, _: &'a str, current: &'a Value, private: &'a [u8]) -> CallFuture<'a, ReadResponse> {
        ready(Ok(ReadResponse { new_state: Some(current.clone()), private: private.to_vec(), diagnostics: Vec::new() }))
    }

    fn import_resource<'a>(&'a self, type_name: &'a str, _: &'a str) -> CallFuture<'a, ImportResponse> {
        ready(Ok(ImportResponse {
            imported: Vec::new(),
            diagnostics: vec![Diagnostic::error(format!(
                "Mocked provider {:?} cannot import {type_name}: a mock has no objects to find",
                self.name
            ))],
        }))
    }

    fn read_data_source<'a>(
        &'a self,
        type_name: &'a str,
        config: &'a Value,
    ) -> CallFuture<'a, (Value, Vec<Diagnostic>)> {
        // A read is answered at once, whatever override_during says.
        ready(Ok((self.filled(Mode::Data, type_name, config, Value::is_null, Fill::Known), Vec::new())))
    }

    fn upgrade_state<'a>(&'a self, type_name: &'a str, _: u64, _: &'a str) -> CallFuture<'a, (Value, Vec<Diagnostic>)> {
        let error = format!("Mocked provider {:?} cannot upgrade a stored {type_name}", self.name);
        ready(Ok((Value::Null, vec![Diagnostic::error(error)])))
    }
}

/// The computed attributes of `block` in `value` that are `missing`,
/// filled from `given` (an object, or null), recursing into nested blocks.
fn fill_block(block: &Block, value: &Value, given: &Value, missing: fn(&Value) -> bool, fill: Fill) -> Value {
    let Value::Object(fields) = value else { return value.clone() };
    let mut out = fields.clone();
    for (name, attr) in &block.attributes {
        let current = value.get_attr(name);
        if attr.computed && missing(current) {
            let produced = match fill {
                Fill::Unknown => Value::unknown(),
                Fill::Known => produce(&attr.ty, given.get_attr(name)),
            };
            out.insert(name.clone(), produced);
        }
    }
    for (name, nested) in &block.blocks {
        let inner = given.get_attr(name);
        let filled = match (nested.nesting, value.get_attr(name)) {
            (Nesting::Single, object @ Value::Object(_)) => fill_block(&nested.block, object, inner, missing, fill),
            (_, Value::List(items)) => {
                Value::List(items.iter().map(|i| fill_block(&nested.block, i, &Value::Null, missing, fill)).collect())
            }
            (_, other) => other.clone(),
        };
        out.insert(name.clone(), filled);
    }
    Value::Object(out)
}

/// The value of a computed attribute of type `ty`: `given` (converted),
/// object attributes one by one, else one generated.
fn produce(ty: &Type, given: &Value) -> Value {
    match (ty, given) {
        (_, Value::Null) => generated(ty),
        (Type::Object(fields), Value::Object(_) | Value::Map(_)) => {
            let mut out = Map::new();
            for (name, field) in fields {
                out.insert(name.clone(), produce(field, given.get_attr(name)));
            }
            Value::Object(out)
        }
        _ => ty.convert(given).unwrap_or_else(|_| generated(ty)),
    }
}

/// A value Terraform's mocks would generate for type `ty`.
fn generated(ty: &Type) -> Value {
    match ty {
        Type::String => Value::string(random_id()),
        Type::Number => Value::int(0),
        Type::Bool => Value::Bool(false),
        Type::List(_) => Value::List(Vec::new()),
        Type::Set(_) => Value::set(Vec::new()),
        Type::Map(_) => Value::Map(Map::new()),
        Type::Object(fields) => Value::Object(fields.iter().map(|(n, t)| (n.clone(), generated(t))).collect()),
        Type::Tuple(items) => Value::Tuple(items.iter().map(generated).collect()),
        Type::Dynamic => Value::Null,
    }
}

/// 8 random lowercase letters and digits, as Terraform's mocks make them.
fn random_id() -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).expect("the operating system's random source is unavailable");
    bytes.iter().map(|b| ALPHABET[*b as usize % ALPHABET.len()] as char).collect()
}

/// The names in `given` that are not computed attributes of `block`: a
/// mock or override gives them nothing.
pub fn ignored_fields(block: &Block, given: &Value) -> Vec<String> {
    let Value::Object(fields) = given else { return Vec::new() };
    fields
        .iter()
        .map(|(name, _)| name)
        .filter(|name| !block.attributes.get(*name).is_some_and(|a| a.computed) && !block.blocks.contains_key(*name))
        .cloned()
        .collect()
}

/// A run's provider with its overrides: calls about a targeted object go
/// to the override's mock, the rest to the provider (real or mocked).
pub struct Double {
    inner: Arc<dyn Provider>,
    overrides: Vec<(EvaluatedOverride, Mock)>,
}

impl Provider for Double {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn schema(&self) -> &ProviderSchema {
        self.inner.schema()
    }

    fn validate_resource<'a>(&'a self, type_name: &'a str, config: &'a Value) -> CallFuture<'a, Vec<Diagnostic>> {
        self.inner.validate_resource(type_name, config)
    }

    fn plan_resource(&self, request: PlanRequest) -> CallFuture<'_, PlanResponse> {
        self.inner.plan_resource(request)
    }

    fn apply_resource(&self, request: ApplyRequest) -> CallFuture<'_, ApplyResponse> {
        self.inner.apply_resource(request)
    }

    fn read_resource<'a>(
        &'a self,
        type_name: &'a str,
        current: &'a Value,
        private: &'a [u8],
    ) -> CallFuture<'a, ReadResponse> {
        self.inner.read_resource(type_name, current, private)
    }

    fn import_resource<'a>(&'a self, type_name: &'a str, id: &'a str) -> CallFuture<'a, ImportResponse> {
        self.inner.import_resource(type_name, id)
    }

    fn read_data_source<'a>(
        &'a self,
        type_name: &'a str,
        config: &'a Value,
    ) -> CallFuture<'a, (Value, Vec<Diagnostic>)> {
        self.inner.read_data_source(type_name, config)
    }

    fn upgrade_state<'a>(
        &'a self,
        type_name: &'a str,
        version: u64,
        raw_json: &'a str,
    ) -> CallFuture<'a, (Value, Vec<Diagnostic>)> {
        self.inner.upgrade_state(type_name, version, raw_json)
    }

    fn stand_in<'a>(&'a self, addr: &InstanceAddr) -> Option<&'a dyn Provider> {
        let found = self.overrides.iter().find(|(o, _)| o.targets(addr));
        found.map(|(_, mock)| mock as &dyn Provider).or_else(|| self.inner.stand_in(addr))
    }
}

/// A mocked provider as a run uses it.
pub struct Mocked {
    /// Its schema, read from its component (which is not configured).
    pub schema: ProviderSchema,
    /// Its `mock_resource` and `mock_data` values.
    pub values: Vec<TypeValues>,
    /// Its own overrides.
    pub overrides: Vec<EvaluatedOverride>,
}

/// A run's doubles: its mocked providers, and its overrides (the run's,
/// then the file's) for every provider.
pub struct TestDoubles {
    /// By configuration name.
    pub mocked: BTreeMap<String, Mocked>,
    /// The run's overrides, then the file's.
    pub overrides: Vec<EvaluatedOverride>,
    /// Fields a mock or override gives nothing (not computed
    /// attributes), said once each after the run.
    pub warnings: Mutex<Vec<Diagnostic>>,
}

impl TestDoubles {
    /// Warns once about each field of `values` that is not a computed
    /// attribute of its type in `schema`.
    fn warn_ignored(&self, schema: &ProviderSchema, values: &TypeValues) {
        let table = if values.mode == Mode::Data { &schema.data_sources } else { &schema.resources };
        let Some(type_schema) = table.get(&values.type_name) else { return };
        let mut warnings = self.warnings.lock().unwrap_or_else(PoisonError::into_inner);
        for field in ignored_fields(&type_schema.block, &values.values) {
            let d = Diagnostic::warning("Ignored mock/override field")
                .with_detail(format!(
                    "{} has no computed attribute \"{field}\": mocked and overridden values are given to computed \
                     attributes only.",
                    values.type_name
                ))
                .at(&values.location);
            if !warnings.iter().any(|w| w.detail == d.detail && w.location == d.location) {
                warnings.push(d);
            }
        }
    }

    /// The warnings gathered so far.
    pub fn take_warnings(&self) -> Vec<Diagnostic> {
        std::mem::take(&mut *self.warnings.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl Doubles for TestDoubles {
    fn mocks(&self, name: &str) -> bool {
        self.mocked.contains_key(name)
    }

    fn provider(&self, name: &str, real: Option<Arc<dyn Provider>>) -> Result<Arc<dyn Provider>, Diagnostic> {
        let mocked = self.mocked.get(name);
        let inner: Arc<dyn Provider> = match (real, mocked) {
            (Some(real), _) => real,
            (None, Some(m)) => {
                for values in &m.values {
                    self.warn_ignored(&m.schema, values);
                }
                Arc::new(Mock::new(name, m.schema.clone(), m.values.clone()))
            }
            (None, None) => {
                return Err(Diagnostic::error(format!("cairn test has no mock for provider {name:?}")));
            }
        };
        let own = mocked.map(|m| m.overrides.as_slice()).unwrap_or_default();
        let schema = inner.schema().clone();
        let mut overrides = Vec::new();
        for o in self.overrides.iter().chain(own) {
            // An override is this provider's when its type is.
            let table = if o.values.mode == Mode::Data { &schema.data_sources } else { &schema.resources };
            if table.contains_key(&o.values.type_name) {
                self.warn_ignored(&schema, &o.values);
                overrides.push((o.clone(), Mock::new(name, schema.clone(), vec![o.values.clone()])));
            }
        }
        if overrides.is_empty() && mocked.is_none() {
            return Ok(inner);
        }
        Ok(Arc::new(Double { inner, overrides }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{Attribute, Schema};

    fn schema() -> ProviderSchema {
        let block = Block {
            attributes: [
                ("name".to_string(), Attribute::required(Type::String)),
                ("id".to_string(), Attribute::computed(Type::String)),
                ("count".to_string(), Attribute::computed(Type::Number)),
                ("tags".to_string(), Attribute::computed(Type::Map(Box::new(Type::String)))),
                ("ok".to_string(), Attribute::computed(Type::Bool)),
            ]
            .into(),
            ..Default::default()
        };
        ProviderSchema {
            resources: [("t".to_string(), Schema { version: 0, block: block.clone() })].into(),
            data_sources: [("t".to_string(), Schema { version: 0, block })].into(),
            ..Default::default()
        }
    }

    fn object(fields: &[(&str, Value)]) -> Value {
        Value::Object(fields.iter().map(|(k, v)| (k.to_string(), v.clone())).collect())
    }

    fn values(during: OverrideDuring, given: Value) -> Vec<TypeValues> {
        let location = Location::new("a.tftest.hcl", 1, 1);
        vec![TypeValues { mode: Mode::Managed, type_name: "t".into(), values: given, during, location }]
    }

    fn plan_request(mock: &Mock) -> PlanResponse {
        let proposed = object(&[
            ("name", Value::string("n")),
            ("id", Value::Null),
            ("count", Value::Null),
            ("tags", Value::Null),
            ("ok", Value::Null),
        ]);
        mock.plan(PlanRequest {
            type_name: "t".into(),
            prior_state: Value::Null,
            proposed_new_state: proposed.clone(),
            config: proposed,
            prior_private: Vec::new(),
        })
    }

    #[test]
    fn a_create_plans_computed_values_unknown_and_applies_defaults_or_generated_ones() {
        let mock = Mock::new("p", schema(), values(OverrideDuring::Apply, object(&[("id", Value::string("fixed"))])));
        let planned = plan_request(&mock).planned_state;
        assert!(planned.get_attr("id").is_unknown() && planned.get_attr("count").is_unknown());
        assert_eq!(planned.get_attr("name"), &Value::string("n"));
        let applied = mock
            .apply(ApplyRequest {
                type_name: "t".into(),
                prior_state: Value::Null,
                planned_state: planned.clone(),
                config: planned,
                planned_private: Vec::new(),
                idempotency_key: String::new(),
            })
            .new_state;
        assert_eq!(applied.get_attr("id"), &Value::string("fixed"));
        assert_eq!(applied.get_attr("count"), &Value::int(0));
        assert_eq!(applied.get_attr("ok"), &Value::Bool(false));
        assert_eq!(applied.get_attr("tags"), &Value::Map(Map::new()));
    }

    #[test]
    fn override_during_plan_gives_the_values_in_the_plan() {
        let mock = Mock::new("p", schema(), values(OverrideDuring::Plan, object(&[("count", Value::int(3))])));
        let planned = plan_request(&mock).planned_state;
        assert_eq!(planned.get_attr("count"), &Value::int(3));
        let id = planned.get_attr("id").as_str().unwrap().to_string();
        assert!(id.len() == 8 && id.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()), "{id}");
        // Planned again at apply: the same generated values.
        assert_eq!(plan_request(&mock).planned_state, planned);
    }

    #[test]
    fn fields_that_are_not_computed_attributes_are_named() {
        let block = &schema().resources["t"].block;
        let given = object(&[("name", Value::string("x")), ("id", Value::string("y")), ("bogus", Value::int(1))]);
        assert_eq!(ignored_fields(block, &given), ["bogus", "name"]);
    }
}
