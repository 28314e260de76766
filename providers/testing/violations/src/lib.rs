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
//! | `violations_breaks_refinement`    | refinements are promises        | plans `arn` as an unknown, not null, prefix `"arn:"`; returns `"x"`   |
//! | `violations_stale_on_replace`     | a replacement is a new object   | `name` forces replacement; plans a create with the `id` of the last object it made |
//! | `violations_ok`                   | nothing                         | a well-behaved resource                                                |
//! | `violations_nested`               | nothing                         | well-behaved, with a nested attribute of each nesting and a write-only `password` |
//!
//! `violations_stale_on_replace` keeps the contracts of each single
//! answer: it remembers (in the instance's memory) the `id` of the last
//! object it created, and plans every create with it, as a provider that
//! looks its objects up by a key that leaves out the attribute forcing
//! replacement would. The replacement of an object is planned with the
//! `id` of the object it replaces: `cairn providers check` catches it.
//!
//! `violations_nested` keeps every contract: `login` (single), `ports`
//! (list), `rules` (set) and `env` (map) are nested attribute types with a
//! computed attribute inside each object, and `password` is write-only:
//! the provider sees it (`password_length`, computed, is its length at
//! apply) and never returns it. `token` (computed, not sensitive in the
//! schema) is the known `"tok-marked-secret"`, which the provider marks
//! sensitive on the wire in its plan and its new state.

#![warn(missing_docs)]

use std::sync::{Mutex, PoisonError};

use cairn_sdk::{
    ApplyRequest, ApplyResponse, Attr, Block, Diagnostic, Nesting, PlanRequest, PlanResponse, Provider, ProviderSchema,
    Schema, Value,
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
            .resource(
                "violations_breaks_refinement",
                base("Promises an `arn` starting with \"arn:\" and returns \"x\".")
                    .attribute("arn", Attr::string().computed().description("Planned unknown with prefix \"arn:\".")),
            )
            .resource(
                "violations_stale_on_replace",
                base("Plans a replacement with the `id` of the object it replaces.")
                    .attribute("name", Attr::string().optional().description("Changing it replaces the object.")),
            )
            .resource("violations_ok", base("Keeps every contract."))
            .resource("violations_nested", nested_schema())
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
            "violations_breaks_refinement" => resp.set("arn", Value::unknown().not_null().prefix("arn:")),
            "violations_stale_on_replace" => {
                let resp = resp.requires_replace(["name"]);
                match last_made() {
                    Some(id) if req.is_create() => resp.set("id", id),
                    _ => resp,
                }
            }
            "violations_nested" => {
                let length = req.config.get_attr("password").as_str().map(|p| p.len() as i64);
                let mut resp =
                    resp.set("password_length", Value::from(length)).set("token", TOKEN).mark_sensitive("token");
                resp.planned_state = fill_nested(&resp.planned_state, &|_| Value::unknown().not_null().prefix("n-"));
                resp
            }
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
            "violations_unknown_after_apply" => state.set_attr("id", Value::unknown()),
            "violations_breaks_refinement" => state.set_attr("arn", "x"),
            "violations_stale_on_replace" if req.is_create() => {
                *LAST_MADE.lock().unwrap_or_else(PoisonError::into_inner) =
                    state.get_attr("id").as_str().map(str::to_owned);
            }
            "violations_nested" => {
                // The write-only password reaches apply in the configuration.
                let length = req.config.get_attr("password").as_str().map(|p| p.len() as i64);
                state.set_attr("password_length", Value::from(length));
                state = fill_nested(&state, &|at| Value::from(format!("n-{at}")));
                return Ok(ApplyResponse::new(state).sensitive("token"));
            }
            _ => {}
        }
        Ok(ApplyResponse::new(state))
    }
}

/// The `id` of the last object `violations_stale_on_replace` created.
static LAST_MADE: Mutex<Option<String>> = Mutex::new(None);

/// The `id` of the last object `violations_stale_on_replace` created, if any.
fn last_made() -> Option<String> {
    LAST_MADE.lock().unwrap_or_else(PoisonError::into_inner).clone()
}

/// The value `violations_nested` marks sensitive itself.
const TOKEN: &str = "tok-marked-secret";

/// `violations_nested`: a nested attribute of each nesting, each object
/// with a computed `id`, and a write-only password.
fn nested_schema() -> Schema {
    let object = |name: &str| {
        Block::new()
            .attribute(name, Attr::string().required())
            .attribute("id", Attr::string().computed().description("Set at apply: \"n-<where>\"."))
    };
    base("Nested attribute types of every nesting, and a write-only password.")
        .attribute("login", Attr::nested(Nesting::Single, object("user")).optional())
        .attribute("ports", Attr::nested(Nesting::List, object("port")).optional())
        .attribute("rules", Attr::nested(Nesting::Set, object("cidr")).optional())
        .attribute("env", Attr::nested(Nesting::Map, object("value")).optional())
        .attribute("password", Attr::string().optional().sensitive().write_only().description("Never stored."))
        .attribute("password_length", Attr::number().computed().description("The length of the password it was given."))
        .attribute("token", Attr::string().computed().description("Marked sensitive by the provider, not the schema."))
}

/// `state` with the `id` of every object of the nested attributes that is
/// not known yet set to `id(where)` (`where` names the object).
fn fill_nested(state: &Value, id: &dyn Fn(&str) -> Value) -> Value {
    let mut out = state.clone();
    let fill = |o: &Value, at: &str| {
        let mut o = o.clone();
        // A whole object still unknown (the configuration refers to what
        // is known only after apply) stays unknown: it has no `id` yet.
        if !o.is_null() && !o.is_unknown() && (o.get_attr("id").is_null() || o.get_attr("id").is_unknown()) {
            o.set_attr("id", id(at));
        }
        o
    };
    out.set_attr(
        "login",
        match state.get_attr("login") {
            Value::Null => Value::Null,
            o => fill(o, "login"),
        },
    );
    if let Some(items) = state.get_attr("ports").as_slice() {
        out.set_attr(
            "ports",
            Value::List(items.iter().enumerate().map(|(i, o)| fill(o, &format!("port{i}"))).collect()),
        );
    }
    if let Some(items) = state.get_attr("rules").as_slice() {
        let filled = items.iter().map(|o| fill(o, o.get_attr("cidr").as_str().unwrap_or("rule"))).collect();
        out.set_attr("rules", Value::Set(filled));
    }
    if let Some(m) = state.get_attr("env").as_map() {
        out.set_attr("env", Value::Map(m.iter().map(|(k, o)| (k.clone(), fill(o, k))).collect()));
    }
    out
}

/// 16 random hex digits from the host's WASI random source.
fn random_hex() -> String {
    let mut bytes = [0u8; 8];
    // WASI `random` cannot fail; getrandom's Result is for other platforms.
    getrandom::fill(&mut bytes).expect("WASI random is available");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

cairn_sdk::export_provider!(Violations, name = "violations");

#[cfg(test)]
mod tests {
    use super::*;

    /// Plan a create of `type_name` with `config` (the host's proposed new
    /// state is the config itself on create).
    fn plan(type_name: &str, config: Value) -> Value {
        let schema = Violations::schema().resource_schema(type_name).unwrap().clone();
        let req = PlanRequest {
            type_name: type_name.into(),
            schema: schema.into(),
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
            schema: Violations::schema().resource_schema(type_name).unwrap().clone().into(),
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
    fn breaks_refinement_promises_a_prefix_and_returns_another() {
        let planned = plan("violations_breaks_refinement", Value::object([("input", Value::Null)]));
        let arn = planned.get_attr("arn");
        assert_eq!(arn.refinements().and_then(|r| r.prefix.as_deref()), Some("arn:"));
        assert_eq!(apply("violations_breaks_refinement", planned).get_attr("arn").as_str(), Some("x"));
    }

    #[test]
    fn nested_keeps_the_password_out_of_plan_and_state() {
        let config = Value::object([
            ("password", Value::from("hunter2")),
            ("login", Value::object([("user", Value::from("u"))])),
            ("ports", Value::list([Value::object([("port", Value::from("80"))])])),
        ]);
        let planned = plan("violations_nested", config.clone());
        assert!(planned.get_attr("password").is_null());
        assert_eq!(planned.get_attr("password_length").as_i64(), Some(7));
        assert!(planned.get_attr("login").get_attr("id").is_unknown());
        let req = ApplyRequest {
            type_name: "violations_nested".into(),
            schema: Violations::schema().resource_schema("violations_nested").unwrap().clone().into(),
            prior_state: Value::Null,
            planned_state: planned,
            config,
            planned_private: Vec::new(),
            idempotency_key: "k".into(),
        };
        let new = Violations.apply(req).unwrap().new_state;
        assert!(new.get_attr("password").is_null());
        assert_eq!(new.get_attr("login").get_attr("id").as_str(), Some("n-login"));
        assert_eq!(new.get_attr("ports").get_index(0).get_attr("id").as_str(), Some("n-port0"));
    }

    #[test]
    fn nested_plans_objects_that_are_still_unknown() {
        // Found by `cairn providers check`: an unknown `login` made the plan panic.
        let planned = plan("violations_nested", Value::object([("login", Value::unknown())]));
        assert!(planned.get_attr("login").is_unknown());
    }

    #[test]
    fn stale_on_replace_plans_a_create_with_the_last_id() {
        let planned = plan("violations_stale_on_replace", Value::object([("name", Value::from("a"))]));
        assert!(planned.get_attr("id").is_unknown());
        let made = apply("violations_stale_on_replace", planned);
        let id = made.get_attr("id").as_str().unwrap().to_owned();
        let replacement = plan("violations_stale_on_replace", Value::object([("name", Value::from("b"))]));
        assert_eq!(replacement.get_attr("id").as_str(), Some(id.as_str()));
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
