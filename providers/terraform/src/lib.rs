//! The `terraform` provider: Terraform's built-in `terraform_data`
//! (Terraform ≥ 1.4), bundled so that a configuration uses it with no
//! `required_providers` entry, as in Terraform (whose address for it is
//! `terraform.io/builtin/terraform`).
//!
//! - `terraform_data`: `input` (any type), computed `output` (a copy of
//!   `input`, unknown in a plan that changes `input`), `triggers_replace`
//!   (any type; any change replaces the resource), computed `id` (a random
//!   UUID). Importable, as in Terraform: the object imported has the id
//!   given. A `moved` block from `null_resource` (of `hashicorp/null`)
//!   converts the object as Terraform 1.8 does: `triggers` becomes
//!   `triggers_replace` (an object of the same strings), the id stays.

#![warn(missing_docs)]

use cairn_sdk::{
    ApplyRequest, ApplyResponse, Attr, Diagnostic, MoveRequest, PlanRequest, PlanResponse, Provider, ProviderSchema,
    Schema, Type, Value, random,
};

/// The provider; it has no configuration.
pub struct Terraform;

impl Provider for Terraform {
    fn schema() -> ProviderSchema {
        ProviderSchema::new().resource(
            "terraform_data",
            Schema::new(0)
                .description(
                    "Stores a value in state and follows its changes; replace it to re-run what depends on it.",
                )
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
        Ok(Terraform)
    }

    fn plan(&self, req: PlanRequest) -> Result<PlanResponse, Vec<Diagnostic>> {
        let resp = PlanResponse::from_proposed(&req).requires_replace(["triggers_replace"]);
        // `output` follows `input`, which only apply copies over; an
        // unchanged input keeps the prior output the host merged in.
        Ok(if !req.is_create() && req.config.get_attr("input") != req.prior_state.get_attr("input") {
            resp.set("output", Value::unknown())
        } else {
            resp
        })
    }

    /// As Terraform's: the object imported has the id given, and nothing
    /// else yet (the plan then sets `input` from the configuration).
    fn import(&self, type_name: &str, id: &str) -> Result<Value, Vec<Diagnostic>> {
        if type_name != "terraform_data" {
            return Err(Diagnostic::error(format!("Resource type `{type_name}` does not support import")).into());
        }
        Ok(data_object(Value::Null, Value::Null, Value::Null, Value::from(id)))
    }

    /// As Terraform's `moveDataStoreResourceState`: only from
    /// `hashicorp/null`'s `null_resource` (any registry host, for mirrors).
    fn move_state(&self, req: MoveRequest) -> Result<Value, Vec<Diagnostic>> {
        if !req.source_provider_address.ends_with("hashicorp/null") {
            return Err(Diagnostic::error("Unsupported source provider for move operation")
                .detail("Only moving from the official hashicorp/null provider to terraform_data is supported.")
                .into());
        }
        if req.source_type_name != "null_resource" {
            return Err(Diagnostic::error("Unsupported source resource type for move operation")
                .detail("Only moving from the null_resource managed resource to terraform_data is supported.")
                .into());
        }
        let null_resource = null_resource_schema().state_from_json(&req.source_state_json)?;
        // A map of strings becomes an object of them: `triggers_replace`
        // is then equal to the `{ … }` a configuration usually writes, so
        // the move plans no replacement.
        let triggers = match null_resource.get_attr("triggers") {
            Value::Map(entries) => Value::Object(entries.clone()),
            _ => Value::Null,
        };
        Ok(data_object(Value::Null, triggers, Value::Null, null_resource.get_attr("id").clone()))
    }

    fn apply(&self, req: ApplyRequest) -> Result<ApplyResponse, Vec<Diagnostic>> {
        if req.is_delete() {
            return Ok(ApplyResponse::deleted());
        }
        let mut state = req.planned_state.clone();
        let input = req.config.get_attr("input").clone();
        state.set_attr("output", req.planned_or("output", || input));
        let id = random::uuid_v4().map_err(|d| vec![d])?;
        state.set_attr("id", req.planned_or("id", || Value::from(id)));
        Ok(ApplyResponse::new(state))
    }
}

/// The attributes of `hashicorp/null`'s `null_resource` a move reads.
fn null_resource_schema() -> Schema {
    Schema::new(0).attribute("triggers", Attr::map(Type::String).optional()).attribute("id", Attr::string().computed())
}

/// A `terraform_data` object.
fn data_object(input: Value, triggers: Value, output: Value, id: Value) -> Value {
    Value::object([("input", input), ("triggers_replace", triggers), ("output", output), ("id", id)])
}

cairn_sdk::export_provider!(Terraform, name = "terraform");
cairn_sdk::export_state_moves!(Terraform);

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(prior: Value, config: Value) -> PlanResponse {
        let schema = Terraform::schema().resource_schema("terraform_data").unwrap().clone();
        Terraform.plan(PlanRequest::proposed("terraform_data", schema, prior, config)).unwrap()
    }

    fn data(input: Value, triggers: Value, output: Value, id: Value) -> Value {
        data_object(input, triggers, output, id)
    }

    #[test]
    fn an_import_has_the_id_given_and_nothing_else() {
        let imported = Terraform.import("terraform_data", "abc").unwrap();
        assert_eq!(imported, data(Value::Null, Value::Null, Value::Null, Value::from("abc")));
        assert!(Terraform.import("terraform_other", "abc").is_err());
    }

    fn move_request(provider: &str, type_name: &str, json: &str) -> MoveRequest {
        MoveRequest {
            source_provider_address: provider.into(),
            source_type_name: type_name.into(),
            source_schema_version: 0,
            source_state_json: json.into(),
            source_private: Vec::new(),
            target_type_name: "terraform_data".into(),
        }
    }

    #[test]
    fn a_null_resource_moves_with_its_triggers_as_triggers_replace() {
        let null = "registry.terraform.io/hashicorp/null";
        let moved = Terraform.move_state(move_request(null, "null_resource", r#"{"id":"42","triggers":{"a":"x"}}"#));
        let triggers = Value::object([("a", "x")]);
        assert_eq!(moved.unwrap(), data(Value::Null, triggers, Value::Null, Value::from("42")));
        let bare = Terraform.move_state(move_request(null, "null_resource", r#"{"id":"7","triggers":null}"#));
        assert_eq!(bare.unwrap(), data(Value::Null, Value::Null, Value::Null, Value::from("7")));
    }

    #[test]
    fn moves_from_anything_but_hashicorp_null_resource_are_refused() {
        let other = Terraform.move_state(move_request("registry.terraform.io/hashicorp/random", "null_resource", "{}"));
        assert_eq!(other.unwrap_err()[0].summary, "Unsupported source provider for move operation");
        let null = "registry.terraform.io/hashicorp/null";
        let data_source = Terraform.move_state(move_request(null, "null_data", "{}"));
        assert_eq!(data_source.unwrap_err()[0].summary, "Unsupported source resource type for move operation");
    }

    #[test]
    fn schema_is_well_formed() {
        Terraform::schema().check().unwrap();
    }

    #[test]
    fn output_follows_input_and_triggers_replace() {
        let prior = data(Value::from("a"), Value::Null, Value::from("a"), Value::from("id1"));
        let same = plan(prior.clone(), data(Value::from("a"), Value::Null, Value::Null, Value::Null));
        assert_eq!(same.planned_state, prior);
        // Changed input: output unknown until apply, the same object.
        let changed = plan(prior.clone(), data(Value::from(2), Value::Null, Value::Null, Value::Null));
        assert!(changed.planned_state.get_attr("output").is_unknown());
        assert_eq!(changed.planned_state.get_attr("id").as_str(), Some("id1"));
        // Changed triggers_replace: a new object, with a new id.
        let replaced = plan(prior, data(Value::from("a"), Value::from(1), Value::Null, Value::Null));
        assert!(replaced.planned_state.get_attr("id").is_unknown());
    }

    #[test]
    fn apply_copies_input_and_makes_an_id() {
        let planned = data(Value::list([1, 2]), Value::Null, Value::unknown(), Value::unknown());
        let req = ApplyRequest {
            type_name: "terraform_data".into(),
            schema: Terraform::schema().resource_schema("terraform_data").unwrap().clone().into(),
            prior_state: Value::Null,
            planned_state: planned,
            config: data(Value::list([1, 2]), Value::Null, Value::Null, Value::Null),
            planned_private: Vec::new(),
            idempotency_key: "k".into(),
        };
        let state = Terraform.apply(req).unwrap().new_state;
        assert_eq!(state.get_attr("output"), &Value::list([1, 2]));
        assert_eq!(state.get_attr("id").as_str().map(str::len), Some(36));
        assert_eq!(&state.get_attr("id").as_str().unwrap()[14..15], "4");
    }
}
