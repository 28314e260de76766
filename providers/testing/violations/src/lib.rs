//! The `violations` test provider: each resource type breaks exactly one of
//! the plan/apply contracts the host enforces, so that end-to-end tests can
//! show each is refused (and that the rest of a run still completes). Never
//! use it for anything else.
//!
//! Every type has `input` (optional string, for wiring dependencies) and
//! `id` (computed string). Deletes always succeed.
//!
//! | type                              | breaks                          | how                                                                    |
//! |-----------------------------------|---------------------------------|------------------------------------------------------------------------|
//! | `violations_changes_config`       | plan keeps configured values    | plans `byte_length` as the configured value + 4 (4 → 8)                |
//! | `violations_invents_attribute`    | only computed attributes are set| plans `note` (optional, not computed) as `"invented"` when it is unset |
//! | `violations_wrong_type`           | values conform to the schema    | `count` is a number; returns the string `"three"` at apply, or already in the plan with `phase = "plan"` |
//! | `violations_replan_differs`       | re-plan keeps known values      | plans `nonce` (computed) as a fresh random value on every plan call    |
//! | `violations_changes_known`        | apply keeps known values        | plans `id` as `"planned-id"`, then returns `"applied-id"`              |
//! | `violations_unknown_after_apply`  | no unknowns in the new state    | returns `id` still unknown (the SDK adds its own error diagnostic too) |
//! | `violations_ok`                   | nothing                         | a well-behaved resource                                                |

#![warn(missing_docs)]

use cairn_sdk::{
    ApplyRequest, ApplyResponse, Attr, Diagnostic, PlanRequest, PlanResponse, Provider, ProviderSchema, Schema, Value,
};

/// The provider; it has no configuration.
pub struct Violations;

/// The schema every type starts from: `input` and `id`.
fn base(description: &str) -> Schema {
    Schema::new(0)
        .description(description)
        .attribute("input", Attr::string().optional().description("Anything; for wiring dependencies."))
        .attribute("id", Attr::string().computed().description("Set at apply."))
}

impl Provider for Violations {
    fn schema() -> ProviderSchema {
        ProviderSchema::new()
            .resource(
                "violations_changes_config",
                base("Plans `byte_length` as configured + 4.")
                    .attribute("byte_length", Attr::number().required().description("Planned as this + 4.")),
            )
            .resource(
                "violations_invents_attribute",
                base("Plans `note` when the configuration leaves it null.")
                    .attribute("note", Attr::string().optional().description("Not computed, yet planned.")),
            )
            .resource(
                "violations_wrong_type",
                base("Gives the number `count` a string value.")
                    .attribute("count", Attr::number().computed().description("Comes back as a string."))
                    .attribute(
                        "phase",
                        Attr::string().optional().description("\"plan\" to break the type in the plan; else at apply."),
                    ),
            )
            .resource(
                "violations_replan_differs",
                base("Plans a different `nonce` on every plan call.")
                    .attribute("nonce", Attr::string().computed().description("Random, and known in every plan.")),
            )
            .resource("violations_changes_known", base("Plans `id` as \"planned-id\" and applies \"applied-id\"."))
            .resource("violations_unknown_after_apply", base("Leaves `id` unknown after apply."))
            .resource("violations_ok", base("Keeps every contract."))
    }

    fn configure(_config: Value) -> Result<Self, Vec<Diagnostic>> {
        Ok(Violations)
    }

    fn plan(&self, req: PlanRequest) -> Result<PlanResponse, Vec<Diagnostic>> {
        let resp = PlanResponse::from_proposed(&req);
        Ok(match req.type_name.as_str() {
            "violations_changes_config" => match req.config.get_attr("byte_length").as_i64() {
                Some(n) => resp.set("byte_length", n + 4),
                None => resp,
            },
            "violations_invents_attribute" if req.config.get_attr("note").is_null() => resp.set("note", "invented"),
            "violations_wrong_type" if req.config.get_attr("phase").as_str() == Some("plan") => {
                resp.set("count", "three")
            }
            "violations_replan_differs" => resp.set("nonce", random_hex()),
            "violations_changes_known" => resp.set("id", "planned-id"),
            _ => resp,
        })
    }

    fn apply(&self, req: ApplyRequest) -> Result<ApplyResponse, Vec<Diagnostic>> {
        if req.is_delete() {
            return Ok(ApplyResponse::deleted());
        }
        let mut state = req.planned_state.clone();
        let id = req.planned_or("id", || Value::from(format!("{}-{}", req.type_name, req.idempotency_key)));
        state.set_attr("id", id);
        match req.type_name.as_str() {
            "violations_wrong_type" => state.set_attr("count", "three"),
            "violations_changes_known" => state.set_attr("id", "applied-id"),
            "violations_unknown_after_apply" => state.set_attr("id", Value::Unknown),
            _ => {}
        }
        Ok(ApplyResponse::new(state))
    }
}

/// 16 random hex digits from the host's WASI random source.
fn random_hex() -> String {
    let mut bytes = [0u8; 8];
    // WASI `random` cannot fail; getrandom's Result is for other platforms.
    getrandom::fill(&mut bytes).expect("WASI random is available");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

cairn_sdk::export_provider!(Violations);

#[cfg(test)]
mod tests {
    use super::*;

    /// Plan a create of `type_name` with `config` (the host's proposed new
    /// state is the config itself on create).
    fn plan(type_name: &str, config: Value) -> Value {
        let schema = Violations::schema().resource_schema(type_name).unwrap().clone();
        let req = PlanRequest {
            type_name: type_name.into(),
            schema,
            prior_state: Value::Null,
            proposed_new_state: config.clone(),
            config,
            prior_private: Vec::new(),
        };
        Violations.plan(req).unwrap().planned_state
    }

    fn apply(type_name: &str, planned: Value) -> Value {
        let req = ApplyRequest {
            type_name: type_name.into(),
            schema: Violations::schema().resource_schema(type_name).unwrap().clone(),
            prior_state: Value::Null,
            planned_state: planned.clone(),
            config: planned,
            planned_private: Vec::new(),
            idempotency_key: "k".into(),
        };
        Violations.apply(req).unwrap().new_state
    }

    #[test]
    fn schema_is_well_formed() {
        Violations::schema().check().unwrap();
    }

    #[test]
    fn changes_config_plans_another_value() {
        let planned = plan("violations_changes_config", Value::object([("byte_length", Value::from(4))]));
        assert_eq!(planned.get_attr("byte_length").as_i64(), Some(8));
    }

    #[test]
    fn invents_attribute_plans_an_unset_note() {
        let planned = plan("violations_invents_attribute", Value::object([("note", Value::Null)]));
        assert_eq!(planned.get_attr("note").as_str(), Some("invented"));
        let kept = plan("violations_invents_attribute", Value::object([("note", Value::from("mine"))]));
        assert_eq!(kept.get_attr("note").as_str(), Some("mine"));
    }

    #[test]
    fn wrong_type_gives_a_string_for_a_number() {
        let planned = plan("violations_wrong_type", Value::object([("phase", Value::Null)]));
        assert!(planned.get_attr("count").is_unknown());
        assert_eq!(apply("violations_wrong_type", planned).get_attr("count").as_str(), Some("three"));
        let early = plan("violations_wrong_type", Value::object([("phase", Value::from("plan"))]));
        assert_eq!(early.get_attr("count").as_str(), Some("three"));
    }

    #[test]
    fn replan_differs_from_the_first_plan() {
        let first = plan("violations_replan_differs", Value::object([("input", Value::Null)]));
        let second = plan("violations_replan_differs", Value::object([("input", Value::Null)]));
        assert!(first.get_attr("nonce").as_str().is_some());
        assert_ne!(first.get_attr("nonce"), second.get_attr("nonce"));
    }

    #[test]
    fn changes_known_applies_another_id() {
        let planned = plan("violations_changes_known", Value::object([("input", Value::Null)]));
        assert_eq!(planned.get_attr("id").as_str(), Some("planned-id"));
        assert_eq!(apply("violations_changes_known", planned).get_attr("id").as_str(), Some("applied-id"));
    }

    #[test]
    fn unknown_after_apply_leaves_the_id_unknown() {
        let planned = plan("violations_unknown_after_apply", Value::object([("input", Value::Null)]));
        assert!(apply("violations_unknown_after_apply", planned).get_attr("id").is_unknown());
    }

    #[test]
    fn ok_keeps_every_contract() {
        let planned = plan("violations_ok", Value::object([("input", Value::from("x"))]));
        assert!(planned.get_attr("id").is_unknown());
        let new = apply("violations_ok", planned);
        assert_eq!(new.get_attr("input").as_str(), Some("x"));
        assert_eq!(new.get_attr("id").as_str(), Some("violations_ok-k"));
    }
}
