//! The generic implementation of the exported WIT interface: decode the
//! wire request, call the [`Provider`], encode the answer.
//!
//! WIT exports are free functions, so the configured provider lives in a
//! thread-local between calls (a component instance is single-threaded).

use std::any::{Any, TypeId};
use std::cell::RefCell;
use std::marker::PhantomData;
use std::rc::Rc;
use std::sync::Arc;

use crate::bindings::cairn::provider::types as wire;
use crate::bindings::exports::cairn::provider::provider as abi;
use crate::diag::{Diagnostic, Path};
use crate::ephemeral_bindings::exports::cairn::provider::ephemeral_resources as ephemeral_abi;
use crate::provider::{ApplyRequest, MoveRequest, PlanRequest, Provider, ReadRequest};
use crate::schema::{ProviderSchema, Schema};
use crate::state_move_bindings::exports::cairn::provider::state_moves as moves_abi;
use crate::value::Value;

/// Implements the exported interface for any [`Provider`]; named by the
/// [`export_provider!`](crate::export_provider) macro.
pub struct Glue<P>(PhantomData<P>);

/// What one instance remembers between calls.
struct Instance {
    /// Which provider type this is for. A component holds one provider, but
    /// a native test binary may drive several through the glue.
    provider_type: TypeId,
    schema: Rc<ProviderSchema>,
    /// `schema`'s resource types, each shared by the requests made for it.
    resource_schemas: Vec<(String, Arc<Schema>)>,
    provider: Option<Rc<dyn Any>>,
}

thread_local! {
    static INSTANCE: RefCell<Option<Instance>> = const { RefCell::new(None) };
}

/// Run `f` on this thread's instance record for `P`, creating it (and
/// computing the schema, once) if needed.
fn with_instance<P: Provider, R>(f: impl FnOnce(&mut Instance) -> R) -> R {
    INSTANCE.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.as_ref().is_none_or(|i| i.provider_type != TypeId::of::<P>()) {
            let schema = P::schema();
            // A broken schema is a bug in the provider that no user can fix:
            // trap loudly on first use rather than confuse the host.
            if let Err(errors) = schema.check() {
                panic!("invalid provider schema:\n  {}", errors.join("\n  "));
            }
            let resource_schemas =
                schema.resources.iter().map(|(name, s)| (name.clone(), Arc::new(s.clone()))).collect();
            *slot = Some(Instance {
                provider_type: TypeId::of::<P>(),
                schema: Rc::new(schema),
                resource_schemas,
                provider: None,
            });
        }
        f(slot.as_mut().expect("just set"))
    })
}

fn schema_of<P: Provider>() -> Rc<ProviderSchema> {
    with_instance::<P, _>(|i| i.schema.clone())
}

/// The configured provider. Cloned out of the cell so that no borrow is
/// held while provider code runs.
fn provider_of<P: Provider>() -> Result<Rc<P>, Vec<Diagnostic>> {
    let any = with_instance::<P, _>(|i| i.provider.clone());
    let any = any.ok_or_else(|| {
        Diagnostic::error("Provider not configured").detail("The host called the provider before `configure`.")
    })?;
    Ok(any.downcast::<P>().expect("the instance record is keyed by provider type"))
}

/// The schema of a managed resource type, shared rather than copied: a
/// plan or apply call hands it to the provider.
fn resource_schema<P: Provider>(type_name: &str) -> Result<Arc<Schema>, Vec<Diagnostic>> {
    with_instance::<P, _>(|i| i.resource_schemas.iter().find(|(name, _)| name == type_name).map(|(_, s)| s.clone()))
        .ok_or_else(|| Diagnostic::error(format!("Unknown resource type `{type_name}`")).into())
}

fn decode(v: wire::Value, what: &str) -> Result<Value, Vec<Diagnostic>> {
    Value::from_wire_owned(v)
        .map_err(|e| Diagnostic::error(format!("Malformed {what} from the host")).detail(e.to_string()).into())
}

/// Encode with the schema's sensitive attributes marked.
fn encode(v: &Value, schema: &Schema) -> wire::Value {
    v.to_wire_marked(&|name| schema.is_sensitive(name))
}

fn diags(ds: &[Diagnostic]) -> Vec<wire::Diagnostic> {
    ds.iter().map(Diagnostic::to_wire).collect()
}

/// Split a result into its value (or `fallback` on error) and diagnostics.
fn split<T>(
    r: Result<(T, Vec<Diagnostic>), Vec<Diagnostic>>,
    fallback: impl FnOnce() -> T,
) -> (T, Vec<wire::Diagnostic>) {
    match r {
        Ok((v, ds)) => (v, diags(&ds)),
        Err(ds) => (fallback(), diags(&ds)),
    }
}

impl<P: Provider> abi::Guest for Glue<P> {
    fn schema() -> wire::ProviderSchema {
        schema_of::<P>().to_wire()
    }

    fn configure(config: wire::Value) -> Vec<wire::Diagnostic> {
        // wasi-libc resolves `./out/x` against the working directory only
        // when `chdir` is linked in; setting it links it, so paths written
        // `./out/x` reach a grant of `./out` just like `out/x` does.
        #[cfg(target_arch = "wasm32")]
        let _ = std::env::set_current_dir("/");
        let result = decode(config, "provider configuration").and_then(P::configure);
        match result {
            Ok(provider) => {
                with_instance::<P, _>(|i| i.provider = Some(Rc::new(provider)));
                Vec::new()
            }
            Err(ds) => diags(&ds),
        }
    }

    fn validate_resource(type_name: String, config: wire::Value) -> Vec<wire::Diagnostic> {
        let result = (|| {
            let provider = provider_of::<P>()?;
            resource_schema::<P>(&type_name)?;
            let config = decode(config, "configuration")?;
            Ok(provider.validate(&type_name, &config))
        })();
        diags(&result.unwrap_or_else(|ds| ds))
    }

    fn plan_resource(request: abi::PlanRequest) -> abi::PlanResponse {
        let result = (|| {
            let provider = provider_of::<P>()?;
            let schema = resource_schema::<P>(&request.type_name)?;
            let req = PlanRequest {
                prior_state: decode(request.prior_state, "prior state")?,
                proposed_new_state: decode(request.proposed_new_state, "proposed new state")?,
                config: decode(request.config, "configuration")?,
                prior_private: request.prior_private,
                schema: schema.clone(),
                type_name: request.type_name,
            };
            let resp = provider.plan(req)?;
            Ok((
                abi::PlanResponse {
                    planned_state: resp
                        .planned_state
                        .to_wire_marked(&|name| schema.is_sensitive(name) || resp.sensitive.iter().any(|s| s == name)),
                    requires_replace: resp.requires_replace.iter().map(Path::to_wire).collect(),
                    planned_private: resp.planned_private,
                    diagnostics: Vec::new(),
                },
                resp.diagnostics,
            ))
        })();
        let (mut resp, diagnostics) = split(result, || abi::PlanResponse {
            planned_state: Value::Null.to_wire(),
            requires_replace: Vec::new(),
            planned_private: Vec::new(),
            diagnostics: Vec::new(),
        });
        resp.diagnostics = diagnostics;
        resp
    }

    fn apply_resource(request: abi::ApplyRequest) -> abi::ApplyResponse {
        // On failure the object is as it was: the prior state (null for a
        // create, so nothing is recorded).
        let prior_wire = request.prior_state.clone();
        let result = (|| {
            let provider = provider_of::<P>()?;
            let schema = resource_schema::<P>(&request.type_name)?;
            let req = ApplyRequest {
                prior_state: decode(request.prior_state, "prior state")?,
                planned_state: decode(request.planned_state, "planned state")?,
                config: decode(request.config, "configuration")?,
                planned_private: request.planned_private,
                idempotency_key: request.idempotency_key,
                schema: schema.clone(),
                type_name: request.type_name,
            };
            let mut resp = provider.apply(req)?;
            // The host would reject it too; saying so here names the culprit.
            if let Some(path) = resp.new_state.find_unknown() {
                resp.diagnostics.push(
                    Diagnostic::error("Provider bug: the new state has an unknown value")
                        .detail("Apply must set every attribute to a known value.")
                        .at(path),
                );
            }
            Ok((
                abi::ApplyResponse {
                    new_state: resp
                        .new_state
                        .to_wire_marked(&|name| schema.is_sensitive(name) || resp.sensitive.iter().any(|s| s == name)),
                    private: resp.private,
                    diagnostics: Vec::new(),
                },
                resp.diagnostics,
            ))
        })();
        let (mut resp, diagnostics) = split(result, || abi::ApplyResponse {
            new_state: prior_wire,
            private: Vec::new(),
            diagnostics: Vec::new(),
        });
        resp.diagnostics = diagnostics;
        resp
    }

    fn read_resource(request: abi::ReadRequest) -> abi::ReadResponse {
        // On failure keep what the host has: an error is not "gone".
        let current_wire = request.current_state.clone();
        let private = request.private.clone();
        let result = (|| {
            let provider = provider_of::<P>()?;
            let schema = resource_schema::<P>(&request.type_name)?;
            let req = ReadRequest {
                current_state: decode(request.current_state, "current state")?,
                private: request.private,
                schema: schema.clone(),
                type_name: request.type_name,
            };
            let state = provider.read(req)?;
            Ok((state.map(|s| encode(&s, &schema)), Vec::new()))
        })();
        let (new_state, diagnostics) = split(result, || Some(current_wire));
        abi::ReadResponse { new_state, private, diagnostics }
    }

    fn import_resource(type_name: String, id: String) -> abi::ImportResponse {
        let result = (|| {
            let provider = provider_of::<P>()?;
            let schema = resource_schema::<P>(&type_name)?;
            let state = provider.import(&type_name, &id)?;
            let imported = abi::ImportedResource {
                state: encode(&state, &schema),
                type_name: type_name.clone(),
                private: Vec::new(),
            };
            Ok((vec![imported], Vec::new()))
        })();
        let (imported, diagnostics) = split(result, Vec::new);
        abi::ImportResponse { imported, diagnostics }
    }

    fn read_data_source(type_name: String, config: wire::Value) -> abi::DataResponse {
        let result = (|| {
            let provider = provider_of::<P>()?;
            let schema = schema_of::<P>()
                .data_source_schema(&type_name)
                .cloned()
                .ok_or_else(|| Diagnostic::error(format!("Unknown data source `{type_name}`")))?;
            let config = decode(config, "configuration")?;
            let state = provider.read_data_source(&type_name, config)?;
            Ok((encode(&state, &schema), Vec::new()))
        })();
        let (state, diagnostics) = split(result, || Value::Null.to_wire());
        abi::DataResponse { state, diagnostics }
    }

    fn upgrade_state(type_name: String, version: u64, raw_state: String) -> abi::UpgradeResponse {
        let result = (|| {
            let provider = provider_of::<P>()?;
            let schema = resource_schema::<P>(&type_name)?;
            let state = provider.upgrade_state(&type_name, version, &raw_state)?;
            Ok((encode(&state, &schema), Vec::new()))
        })();
        let (upgraded_state, diagnostics) = split(result, || Value::Null.to_wire());
        abi::UpgradeResponse { upgraded_state, diagnostics }
    }
}

impl<P: Provider> moves_abi::Guest for Glue<P> {
    fn move_resource_state(request: moves_abi::MoveRequest) -> moves_abi::MoveResponse {
        let result = (|| {
            let provider = provider_of::<P>()?;
            let schema = resource_schema::<P>(&request.target_type_name)?;
            let req = MoveRequest {
                source_provider_address: request.source_provider_address,
                source_type_name: request.source_type_name,
                source_schema_version: request.source_schema_version,
                source_state_json: request.source_state,
                source_private: request.source_private,
                target_type_name: request.target_type_name,
            };
            let state = provider.move_state(req)?;
            Ok((encode(&state, &schema), Vec::new()))
        })();
        let (target_state, diagnostics) = split(result, || Value::Null.to_wire());
        moves_abi::MoveResponse { target_state, target_private: Vec::new(), diagnostics }
    }
}

/// The schema of an ephemeral resource type.
fn ephemeral_schema<P: Provider>(type_name: &str) -> Result<Schema, Vec<Diagnostic>> {
    schema_of::<P>()
        .ephemeral_resource_schema(type_name)
        .cloned()
        .ok_or_else(|| Diagnostic::error(format!("Unknown ephemeral resource type `{type_name}`")).into())
}

impl<P: Provider> ephemeral_abi::Guest for Glue<P> {
    fn schemas() -> Vec<(String, wire::Schema)> {
        schema_of::<P>().ephemeral_resources.iter().map(|(n, s)| (n.clone(), s.to_wire())).collect()
    }

    fn validate(type_name: String, config: wire::Value) -> Vec<wire::Diagnostic> {
        let result = (|| {
            let provider = provider_of::<P>()?;
            ephemeral_schema::<P>(&type_name)?;
            let config = decode(config, "configuration")?;
            Ok(provider.validate_ephemeral(&type_name, &config))
        })();
        match result {
            Ok(ds) | Err(ds) => diags(&ds),
        }
    }

    fn open(type_name: String, config: wire::Value) -> ephemeral_abi::OpenResponse {
        let result = (|| {
            let provider = provider_of::<P>()?;
            let schema = ephemeral_schema::<P>(&type_name)?;
            let opened = provider.open_ephemeral(&type_name, decode(config, "configuration")?)?;
            let result = encode(&opened.result, &schema);
            Ok(((result, opened.private, opened.renew_at), opened.diagnostics))
        })();
        let ((result, private, renew_at), diagnostics) = split(result, || (Value::Null.to_wire(), Vec::new(), None));
        ephemeral_abi::OpenResponse { result, private, renew_at, diagnostics }
    }

    fn renew(type_name: String, private: Vec<u8>) -> ephemeral_abi::RenewResponse {
        let result = provider_of::<P>().and_then(|p| p.renew_ephemeral(&type_name, &private));
        match result {
            Ok(renewed) => ephemeral_abi::RenewResponse {
                private: renewed.private,
                renew_at: renewed.renew_at,
                diagnostics: vec![],
            },
            Err(ds) => ephemeral_abi::RenewResponse { private, renew_at: None, diagnostics: diags(&ds) },
        }
    }

    fn close(type_name: String, private: Vec<u8>) -> Vec<wire::Diagnostic> {
        match provider_of::<P>().and_then(|p| p.close_ephemeral(&type_name, &private)) {
            Ok(()) => Vec::new(),
            Err(ds) => diags(&ds),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bindings::exports::cairn::provider::provider::Guest;
    use crate::provider::{ApplyResponse, PlanResponse};
    use crate::schema::Attr;

    /// A provider whose configuration is remembered, to see the glue keep it.
    struct Echo {
        greeting: String,
    }

    impl Provider for Echo {
        fn schema() -> ProviderSchema {
            ProviderSchema::new().provider(Schema::new(0).attribute("greeting", Attr::string().optional())).resource(
                "echo",
                Schema::new(1)
                    .attribute("name", Attr::string().required())
                    .attribute("text", Attr::string().computed().sensitive()),
            )
        }

        fn configure(config: Value) -> Result<Self, Vec<Diagnostic>> {
            let greeting = config.get_attr("greeting").as_str().unwrap_or("hello");
            if greeting.is_empty() {
                return Err(Diagnostic::error("empty greeting").at(Path::attr("greeting")).into());
            }
            Ok(Echo { greeting: greeting.to_owned() })
        }

        fn plan(&self, req: PlanRequest) -> Result<PlanResponse, Vec<Diagnostic>> {
            Ok(PlanResponse::from_proposed(&req).requires_replace(["name"]))
        }

        fn apply(&self, req: ApplyRequest) -> Result<ApplyResponse, Vec<Diagnostic>> {
            if req.is_delete() {
                return Ok(ApplyResponse::deleted());
            }
            let name = req.planned_state.get_attr("name").as_str().unwrap_or_default().to_owned();
            if name == "fail" {
                return Err(Diagnostic::error("refused").into());
            }
            let mut state = req.planned_state.clone();
            state.set_attr("text", format!("{} {name}", self.greeting));
            Ok(ApplyResponse::new(state))
        }
    }

    type G = Glue<Echo>;

    fn obj(name: &str, text: Value) -> wire::Value {
        Value::object([("name", Value::from(name)), ("text", text)]).to_wire()
    }

    fn apply(name: &str) -> abi::ApplyResponse {
        G::apply_resource(abi::ApplyRequest {
            type_name: "echo".into(),
            prior_state: Value::Null.to_wire(),
            planned_state: obj(name, Value::unknown()),
            config: obj(name, Value::Null),
            planned_private: Vec::new(),
            idempotency_key: "k".into(),
        })
    }

    #[test]
    fn calls_before_configure_are_diagnosed() {
        INSTANCE.with(|c| *c.borrow_mut() = None);
        assert_eq!(G::schema().resources[0].0, "echo");
        let resp = apply("x");
        assert_eq!(resp.diagnostics[0].summary, "Provider not configured");
        assert!(resp.new_state.nodes.is_empty());
    }

    #[test]
    fn configure_then_plan_and_apply_through_the_wire() {
        let bad = G::configure(Value::object([("greeting", "")]).to_wire());
        assert_eq!(bad[0].summary, "empty greeting");
        assert!(G::configure(Value::object([("greeting", "hi")]).to_wire()).is_empty());

        let plan = G::plan_resource(abi::PlanRequest {
            type_name: "echo".into(),
            prior_state: Value::Null.to_wire(),
            proposed_new_state: obj("x", Value::Null),
            config: obj("x", Value::Null),
            prior_private: Vec::new(),
        });
        assert!(plan.diagnostics.is_empty());
        let planned = Value::from_wire(&plan.planned_state).unwrap();
        assert!(planned.get_attr("text").is_unknown());
        assert_eq!(plan.requires_replace, vec![vec![wire::PathStep::Attribute("name".into())]]);

        let resp = apply("x");
        assert!(resp.diagnostics.is_empty(), "{:?}", resp.diagnostics);
        let state = Value::from_wire(&resp.new_state).unwrap();
        assert_eq!(state.get_attr("text").as_str(), Some("hi x"));
        // The schema says `text` is sensitive: its node carries the mark.
        let wire::ValueNode::Object(attrs) = &resp.new_state.nodes[0].kind else { panic!() };
        let text = attrs.iter().find(|(n, _)| n == "text").unwrap().1;
        assert!(resp.new_state.nodes[text as usize].sensitive);

        let failed = apply("fail");
        assert_eq!(failed.diagnostics[0].summary, "refused");
        assert!(failed.new_state.nodes.is_empty(), "a failed create records nothing");
    }

    #[test]
    fn defaults_answer_read_import_data_and_upgrade() {
        assert!(G::configure(Value::Null.to_wire()).is_empty());
        let current = obj("x", Value::from("t"));
        let read = G::read_resource(abi::ReadRequest {
            type_name: "echo".into(),
            current_state: current.clone(),
            private: b"keep".to_vec(),
        });
        assert_eq!(
            read.new_state.as_ref().map(|v| Value::from_wire(v).unwrap()),
            Some(Value::from_wire(&current).unwrap())
        );
        assert_eq!(read.private, b"keep");
        assert!(G::import_resource("echo".into(), "x".into()).diagnostics[0].summary.contains("import"));
        assert!(G::read_data_source("nope".into(), Value::Null.to_wire()).diagnostics[0].summary.contains("nope"));
        let up = G::upgrade_state("echo".into(), 1, r#"{"name":"x","text":"t"}"#.into());
        assert!(up.diagnostics.is_empty());
        assert_eq!(Value::from_wire(&up.upgraded_state).unwrap().get_attr("text").as_str(), Some("t"));
        assert!(!G::upgrade_state("echo".into(), 0, "{}".into()).diagnostics.is_empty());
        assert!(G::validate_resource("other".into(), Value::Null.to_wire())[0].summary.contains("other"));
    }

    /// A provider with one ephemeral type, `lease`: `name`, a computed
    /// sensitive `token`, renewed every second; closing `stuck` fails.
    struct Leases;

    impl Provider for Leases {
        fn schema() -> ProviderSchema {
            ProviderSchema::new().ephemeral_resource(
                "lease",
                Schema::new(0)
                    .attribute("name", Attr::string().required())
                    .attribute("token", Attr::string().computed().sensitive()),
            )
        }

        fn configure(_: Value) -> Result<Self, Vec<Diagnostic>> {
            Ok(Leases)
        }

        fn apply(&self, _: ApplyRequest) -> Result<ApplyResponse, Vec<Diagnostic>> {
            unreachable!("no resources")
        }

        fn open_ephemeral(&self, _: &str, config: Value) -> Result<crate::OpenResponse, Vec<Diagnostic>> {
            let name = config.get_attr("name").as_str().unwrap_or_default().to_owned();
            let mut result = config;
            result.set_attr("token", format!("t-{name}"));
            Ok(crate::OpenResponse::new(result).private(name.into_bytes()).renew_at(1_000))
        }

        fn renew_ephemeral(&self, _: &str, private: &[u8]) -> Result<crate::RenewResponse, Vec<Diagnostic>> {
            Ok(crate::RenewResponse { private: [private, b"+"].concat(), renew_at: Some(2_000) })
        }

        fn close_ephemeral(&self, _: &str, private: &[u8]) -> Result<(), Vec<Diagnostic>> {
            match private {
                b"stuck" => Err(Diagnostic::error("cannot close stuck").into()),
                _ => Ok(()),
            }
        }
    }

    #[test]
    fn ephemeral_resources_open_renew_and_close_through_the_wire() {
        use crate::ephemeral_bindings::exports::cairn::provider::ephemeral_resources::Guest as _;
        type L = Glue<Leases>;
        INSTANCE.with(|c| *c.borrow_mut() = None);
        let schemas = L::schemas();
        assert_eq!(schemas.len(), 1);
        assert_eq!(schemas[0].0, "lease");
        assert!(<L as Guest>::schema().resources.is_empty(), "not among the managed resource types");
        assert!(<L as Guest>::configure(Value::Null.to_wire()).is_empty());

        let config = Value::object([("name", Value::from("db")), ("token", Value::Null)]);
        let opened = L::open("lease".into(), config.to_wire());
        assert!(opened.diagnostics.is_empty(), "{:?}", opened.diagnostics);
        let result = Value::from_wire(&opened.result).unwrap();
        assert_eq!(result.get_attr("token").as_str(), Some("t-db"));
        assert!(opened.result.nodes.iter().any(|n| n.sensitive), "the schema's sensitive token is marked");
        assert_eq!((opened.private.as_slice(), opened.renew_at), (&b"db"[..], Some(1_000)));

        let renewed = L::renew("lease".into(), opened.private);
        assert_eq!((renewed.private.as_slice(), renewed.renew_at), (&b"db+"[..], Some(2_000)));
        assert!(L::close("lease".into(), renewed.private).is_empty());
        assert_eq!(L::close("lease".into(), b"stuck".to_vec())[0].summary, "cannot close stuck");
        let unknown = L::open("nope".into(), config.to_wire());
        assert!(unknown.diagnostics[0].summary.contains("Unknown ephemeral resource type"), "{unknown:?}");
    }
}
