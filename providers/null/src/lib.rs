//! The `null` provider: resources that manage nothing, for wiring
//! dependencies and triggers, shaped like Terraform's `null` provider and
//! its built-in `terraform_data`.
//!
//! - `null_resource`: `triggers` (map of strings; any change replaces the
//!   resource), computed `id` (a random decimal number).
//! - `null_data`: `input` (any type), computed `output` (a copy of `input`,
//!   unknown in a plan that changes `input`), `triggers_replace` (any type;
//!   any change replaces the resource), computed `id` (a random UUID).

#![warn(missing_docs)]

use cairn_sdk::{
    ApplyRequest, ApplyResponse, Attr, Diagnostic, PlanRequest, PlanResponse, Provider, ProviderSchema, Schema, Type,
    Value, random,
};

/// The provider; it has no configuration.
pub struct Null;

impl Provider for Null {
    fn schema() -> ProviderSchema {
        ProviderSchema::new()
            .resource(
                "null_resource",
                Schema::new(0)
                    .description("A resource that does nothing; replace it to re-run what depends on it.")
                    .attribute(
                        "triggers",
                        Attr::map(Type::String).optional().description("Any change replaces the resource."),
                    )
                    .attribute("id", Attr::string().computed().description("A random number, as a string.")),
            )
            .resource(
                "null_data",
                Schema::new(0)
                    .description("Stores a value in state and follows its changes, like Terraform's terraform_data.")
                    .attribute("input", Attr::dynamic().optional().description("A value to copy to `output`."))
                    .attribute("output", Attr::dynamic().computed().description("`input`, as of the last apply."))
                    .attribute(
                        "triggers_replace",
                        Attr::dynamic().optional().description("Any change replaces the resource."),
                    )
                    .attribute("id", Attr::string().computed().description("A random UUID.")),
            )
    }

    fn configure(_config: Value) -> Result<Self, Vec<Diagnostic>> {
        Ok(Null)
    }

    fn plan(&self, req: PlanRequest) -> Result<PlanResponse, Vec<Diagnostic>> {
        Ok(match req.type_name.as_str() {
            "null_data" => {
                let resp = PlanResponse::from_proposed(&req).requires_replace(["triggers_replace"]);
                // `output` follows `input`, which only apply copies over; an
                // unchanged input keeps the prior output the host merged in.
                if !req.is_create() && req.config.get_attr("input") != req.prior_state.get_attr("input") {
                    resp.set("output", Value::unknown())
                } else {
                    resp
                }
            }
            _ => PlanResponse::from_proposed(&req).requires_replace(["triggers"]),
        })
    }

    fn apply(&self, req: ApplyRequest) -> Result<ApplyResponse, Vec<Diagnostic>> {
        if req.is_delete() {
            return Ok(ApplyResponse::deleted());
        }
        let mut state = req.planned_state.clone();
        if req.type_name == "null_data" {
            let input = req.config.get_attr("input").clone();
            state.set_attr("output", req.planned_or("output", || input));
            let id = random::uuid_v4().map_err(|d| vec![d])?;
            state.set_attr("id", req.planned_or("id", || Value::from(id)));
        } else {
            // Terraform's null_resource id is a non-negative 63-bit number.
            let bytes = random::bytes(8).map_err(|d| vec![d])?;
            let number = u64::from_le_bytes(bytes.try_into().expect("8 bytes were asked for")) >> 1;
            state.set_attr("id", req.planned_or("id", || Value::from(number.to_string())));
        }
        Ok(ApplyResponse::new(state))
    }
}

cairn_sdk::export_provider!(Null, name = "null");

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(type_name: &str, prior: Value, config: Value) -> PlanResponse {
        let schema = Null::schema().resource_schema(type_name).unwrap().clone();
        Null.plan(PlanRequest::proposed(type_name, schema, prior, config)).unwrap()
    }

    fn data(input: Value, triggers: Value, output: Value, id: Value) -> Value {
        Value::object([("input", input), ("triggers_replace", triggers), ("output", output), ("id", id)])
    }

    #[test]
    fn schema_is_well_formed() {
        Null::schema().check().unwrap();
    }

    #[test]
    fn null_data_output_follows_input() {
        let prior = data(Value::from("a"), Value::Null, Value::from("a"), Value::from("id1"));
        // Unchanged input: everything as before.
        let same = plan("null_data", prior.clone(), data(Value::from("a"), Value::Null, Value::Null, Value::Null));
        assert_eq!(same.planned_state, prior);
        // Changed input: output unknown until apply, id kept (no replacement).
        let changed = plan("null_data", prior.clone(), data(Value::from(2), Value::Null, Value::Null, Value::Null));
        assert!(changed.planned_state.get_attr("output").is_unknown());
        assert_eq!(changed.planned_state.get_attr("id").as_str(), Some("id1"));
        // Changed triggers_replace: a new object, so a new id too.
        let replaced = plan("null_data", prior, data(Value::from("a"), Value::from(1), Value::Null, Value::Null));
        assert!(replaced.planned_state.get_attr("id").is_unknown());
    }

    #[test]
    fn apply_fills_unknowns_and_keeps_known_values() {
        let planned = data(Value::list([1, 2]), Value::Null, Value::unknown(), Value::unknown());
        let req = ApplyRequest {
            type_name: "null_data".into(),
            schema: Null::schema().resource_schema("null_data").unwrap().clone().into(),
            prior_state: Value::Null,
            planned_state: planned.clone(),
            config: data(Value::list([1, 2]), Value::Null, Value::Null, Value::Null),
            planned_private: Vec::new(),
            idempotency_key: "k".into(),
        };
        let state = Null.apply(req.clone()).unwrap().new_state;
        assert_eq!(state.get_attr("output"), &Value::list([1, 2]));
        assert_eq!(state.get_attr("id").as_str().map(str::len), Some(36));

        let req = ApplyRequest {
            type_name: "null_resource".into(),
            planned_state: Value::object([("triggers", Value::Null), ("id", Value::unknown())]),
            ..req
        };
        let id = Null.apply(req).unwrap().new_state.get_attr("id").as_str().unwrap().to_owned();
        assert!(id.parse::<i64>().is_ok_and(|n| n >= 0), "{id}");
    }
}
