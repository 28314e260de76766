//! Providers configured late: those whose `provider` block refers to
//! resources, data sources, ephemeral resources, locals or module outputs
//! (`graph::configured_in_graph`). Each is loaded and sandboxed before the
//! run, like any provider, but configured only when the walk reaches its
//! node ([`crate::graph::Node::Provider`]): while planning with the planned
//! values (unknown ones passed as unknown, as Terraform does), while
//! applying with the applied ones (`apply::Step::Configure`), and for a
//! destroy, or objects the walk does not reach, with the values in the state
//! ([`FromState`]), as Terraform configures a provider on its destroy path.
//!
//! The configuration itself (the block decoded against the provider's
//! schema, the sandbox's headers) is evaluated by the engine's closure
//! ([`ConfigureFn`]): this module only decides when, and with which values.
//! Nothing of a configuration is kept but in the configured provider: it
//! never reaches a plan file or the state.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, PoisonError, RwLock};

use futures_util::future::BoxFuture;

use crate::addr::{InstanceAddr, InstanceKey, Mode, ResourceAddr};
use crate::config::{Config, EvalContext};
use crate::contract::Gate;
use crate::diag::Diagnostic;
use crate::graph::{DependencyGraph, Node};
use crate::provider::{
    ApplyRequest, ApplyResponse, CallError, CallFuture, CallResult, ImportResponse, MoveRequest, MoveResponse,
    OpenResponse, PlanRequest, PlanResponse, Provider, ReadResponse, RenewResponse,
};
use crate::schema::ProviderSchema;
use crate::state::State;
use crate::value::Value;

use super::ephemeral::Session;
use super::values::{Expansion, ResourceValues, locals_of};
use super::{Providers, instance};

/// Configures a provider from its `provider` block evaluated in the given
/// context: the configured provider, or the errors (at the block, or at
/// the attribute) of evaluating it or of the provider's `configure`.
pub type ConfigureFn = Arc<dyn Fn(EvalContext) -> Configuring + Send + Sync>;

/// A configuration under way (see [`ConfigureFn`]).
pub type Configuring = BoxFuture<'static, Result<Arc<dyn Provider>, Vec<Diagnostic>>>;

/// The providers of a run configured late, by configuration name.
pub type LateProviders = BTreeMap<String, Arc<LateProvider>>;

/// A provider loaded but configured only when the walk reaches its block;
/// configured again each time (the apply's values replace the plan's). It
/// answers calls with the provider last configured, and fails them, naming
/// itself, before it is configured.
pub struct LateProvider {
    name: String,
    schema: ProviderSchema,
    configure: ConfigureFn,
    configured: RwLock<Option<Arc<dyn Provider>>>,
}

impl LateProvider {
    /// The provider `name`, of schema `schema`, that `configure` configures.
    pub fn new(name: impl Into<String>, schema: ProviderSchema, configure: ConfigureFn) -> LateProvider {
        LateProvider { name: name.into(), schema, configure, configured: RwLock::new(None) }
    }

    /// Configures the provider with its block evaluated in `ctx`; from now
    /// on calls go to that configuration.
    pub async fn configure(&self, ctx: EvalContext) -> Result<(), Vec<Diagnostic>> {
        let provider = (self.configure)(ctx).await?;
        *self.configured.write().unwrap_or_else(PoisonError::into_inner) = Some(provider);
        Ok(())
    }

    /// Whether it has been configured (in this run).
    pub fn is_configured(&self) -> bool {
        self.configured.read().unwrap_or_else(PoisonError::into_inner).is_some()
    }

    /// The provider as last configured, for a call to `operation`.
    fn current(&self, operation: &'static str) -> CallResult<Arc<dyn Provider>> {
        let configured = self.configured.read().unwrap_or_else(PoisonError::into_inner);
        configured.clone().ok_or_else(|| {
            CallError::new(
                &*self.name,
                operation,
                "was called before it was configured (its provider block refers to values it is configured with \
                 once they are planned or applied)",
            )
        })
    }
}

impl Provider for LateProvider {
    fn name(&self) -> &str {
        &self.name
    }

    fn schema(&self) -> &ProviderSchema {
        &self.schema
    }

    fn validate_resource<'a>(&'a self, type_name: &'a str, config: &'a Value) -> CallFuture<'a, Vec<Diagnostic>> {
        Box::pin(async move { self.current("validate-resource")?.validate_resource(type_name, config).await })
    }

    fn plan_resource(&self, request: PlanRequest) -> CallFuture<'_, PlanResponse> {
        Box::pin(async move { self.current("plan-resource")?.plan_resource(request).await })
    }

    fn apply_resource(&self, request: ApplyRequest) -> CallFuture<'_, ApplyResponse> {
        Box::pin(async move { self.current("apply-resource")?.apply_resource(request).await })
    }

    fn read_resource<'a>(
        &'a self,
        type_name: &'a str,
        current_state: &'a Value,
        private: &'a [u8],
    ) -> CallFuture<'a, ReadResponse> {
        Box::pin(async move { self.current("read-resource")?.read_resource(type_name, current_state, private).await })
    }

    fn import_resource<'a>(&'a self, type_name: &'a str, id: &'a str) -> CallFuture<'a, ImportResponse> {
        Box::pin(async move { self.current("import-resource")?.import_resource(type_name, id).await })
    }

    fn read_data_source<'a>(
        &'a self,
        type_name: &'a str,
        config: &'a Value,
    ) -> CallFuture<'a, (Value, Vec<Diagnostic>)> {
        Box::pin(async move { self.current("read-data-source")?.read_data_source(type_name, config).await })
    }

    fn upgrade_state<'a>(
        &'a self,
        type_name: &'a str,
        version: u64,
        raw_json: &'a str,
    ) -> CallFuture<'a, (Value, Vec<Diagnostic>)> {
        Box::pin(async move { self.current("upgrade-state")?.upgrade_state(type_name, version, raw_json).await })
    }

    fn move_resource_state(&self, request: MoveRequest) -> CallFuture<'_, Option<MoveResponse>> {
        Box::pin(async move { self.current("move-resource-state")?.move_resource_state(request).await })
    }

    fn validate_ephemeral<'a>(&'a self, type_name: &'a str, config: &'a Value) -> CallFuture<'a, Vec<Diagnostic>> {
        Box::pin(async move { self.current("ephemeral-validate")?.validate_ephemeral(type_name, config).await })
    }

    fn open_ephemeral<'a>(&'a self, type_name: &'a str, config: &'a Value) -> CallFuture<'a, OpenResponse> {
        Box::pin(async move { self.current("ephemeral-open")?.open_ephemeral(type_name, config).await })
    }

    fn renew_ephemeral<'a>(&'a self, type_name: &'a str, private: &'a [u8]) -> CallFuture<'a, RenewResponse> {
        Box::pin(async move { self.current("ephemeral-renew")?.renew_ephemeral(type_name, private).await })
    }

    fn close_ephemeral<'a>(&'a self, type_name: &'a str, private: &'a [u8]) -> CallFuture<'a, Vec<Diagnostic>> {
        Box::pin(async move { self.current("ephemeral-close")?.close_ephemeral(type_name, private).await })
    }
}

/// Configures providers from the values in the state, as Terraform does on
/// its destroy path: a destroy (plan and apply) walks no configuration, and
/// the objects a plan deletes outside the walk (orphans, deposed objects)
/// need their provider configured too. What the block refers to is
/// evaluated from the state: managed resources as stored, data sources
/// read again, ephemeral resources opened (in `session`), locals evaluated,
/// late providers among them configured first.
pub struct FromState<'a> {
    /// The configuration.
    pub config: &'a Config,
    /// Its dependency graph.
    pub graph: &'a DependencyGraph,
    /// The run's providers.
    pub providers: &'a Providers,
    /// The run's late providers.
    pub late: &'a LateProviders,
    /// Resolved input variables.
    pub variables: &'a BTreeMap<String, Value>,
    /// Where ephemeral resources are opened; the caller closes them.
    pub session: &'a Arc<Session>,
}

/// The values evaluated so far by [`FromState::configure`].
#[derive(Default)]
struct Found {
    resources: ResourceValues,
    locals: BTreeMap<String, Value>,
}

impl FromState<'_> {
    /// Configures the late provider `name` from `state`, after what its
    /// block refers to (late providers among that configured first, unless
    /// they are already).
    pub async fn configure(&self, name: &str, state: &State) -> Result<(), Vec<Diagnostic>> {
        let node = Node::Provider(name.to_string());
        let mut found = Found::default();
        // A managed resource's value is the state's: what its own
        // configuration refers to is not needed.
        let through = |n: &Node| !matches!(n, Node::Resource(a) if a.mode == Mode::Managed);
        for dependency in self.graph.dependencies_in_order(&node, through) {
            self.evaluate(&dependency, state, &mut found).await?;
        }
        let Some(late) = self.late.get(name) else { return Ok(()) };
        late.configure(self.context(&node, &mut found)).await
    }

    /// Evaluates one node from the state and what `found` holds.
    async fn evaluate(&self, node: &Node, state: &State, found: &mut Found) -> Result<(), Vec<Diagnostic>> {
        match node {
            Node::Local(name) => {
                let Some(local) = self.config.locals.get(name) else { return Ok(()) };
                let value = local.value(&self.context(node, found))?;
                found.locals.insert(name.clone(), value);
            }
            Node::Provider(name) => {
                let Some(late) = self.late.get(name) else { return Ok(()) };
                // A provider of a data source or ephemeral resource read here.
                if !late.is_configured() {
                    late.configure(self.context(node, found)).await?;
                }
            }
            Node::Resource(addr) if addr.mode == Mode::Managed => self.stored(addr, state, found).await?,
            Node::Resource(addr) => self.read_or_open(addr, node, found).await?,
            Node::Output(_) => {}
        }
        Ok(())
    }

    /// The evaluation context of `node`: variables, and the values found
    /// of what it reads.
    fn context(&self, node: &Node, found: &mut Found) -> EvalContext {
        let resources = found.resources.snapshot_of(&self.graph.resource_dependencies(node));
        EvalContext {
            variables: self.variables.clone(),
            locals: locals_of(&self.graph.local_dependencies(node), &found.locals),
            resources,
            ephemeral: self.config.ephemeral.clone(),
            ..EvalContext::new(&self.config.dir)
        }
    }

    /// The objects of the managed resource `addr` as the state holds them.
    async fn stored(&self, addr: &ResourceAddr, state: &State, found: &mut Found) -> Result<(), Vec<Diagnostic>> {
        let stored: Vec<_> = state.resources.of_resource(addr).filter(|i| !i.attributes.is_null()).collect();
        let keys: Vec<Option<InstanceKey>> = stored.iter().map(|i| i.addr.key.clone()).collect();
        found.resources.declare(addr, &expansion_of(&keys));
        for inst in stored {
            let Some(provider) = self.providers.get(&inst.provider) else { continue };
            let value = instance::decode_prior(Gate::new(provider.as_ref()), inst).await.map_err(|d| vec![d])?;
            found.resources.set(&inst.addr, value);
        }
        Ok(())
    }

    /// Reads the data source, or opens the ephemeral resource, `addr`, as
    /// its block says.
    async fn read_or_open(&self, addr: &ResourceAddr, node: &Node, found: &mut Found) -> Result<(), Vec<Diagnostic>> {
        let Some(resource) = self.config.resources.iter().find(|r| &r.addr == addr) else { return Ok(()) };
        let Some(provider) = self.providers.get(&resource.provider) else {
            let d = Diagnostic::error(format!("Provider {:?} is not available", resource.provider));
            return Err(vec![d.at(&resource.location)]);
        };
        let ctx = self.context(node, found);
        if addr.mode == Mode::Ephemeral {
            let opened = super::ephemeral::open_resource(self.session, resource, provider, &ctx).await?;
            found.resources.declare(addr, &opened.expansion);
            for (instance, value) in opened.values {
                found.resources.set(&instance, value);
            }
            return Ok(());
        }
        let gate = Gate::new(provider.as_ref());
        let schema = gate.schema_of(addr).map_err(|d| vec![d.at(&resource.location)])?;
        let expansion = super::values::expand(resource, &ctx)?;
        found.resources.declare(addr, &expansion);
        for key in expansion.instance_keys() {
            let instance = InstanceAddr { resource: addr.clone(), key };
            let inst_ctx = EvalContext {
                resources: ctx.resources.clone(),
                ..super::values::instance_context(&ctx, &expansion, instance.key.as_ref())
            };
            let config = crate::config::decode_body(&resource.body, &schema.block, &inst_ctx)?;
            let (value, _warnings) =
                gate.read_data(schema, &instance, &config).await.map_err(|e| e.into_diagnostics(&resource.location))?;
            found.resources.set(&instance, value);
        }
        Ok(())
    }
}

/// How a resource expands, as far as the keys of its stored objects tell.
pub fn expansion_of(keys: &[Option<InstanceKey>]) -> Expansion {
    let mut count = 0;
    let mut each = BTreeMap::new();
    for key in keys {
        match key {
            Some(InstanceKey::Int(i)) => count = count.max(i + 1),
            Some(InstanceKey::String(k)) => {
                each.insert(k.clone(), Value::unknown());
            }
            None => {}
        }
    }
    if !each.is_empty() {
        Expansion::ForEach(each)
    } else if count > 0 {
        Expansion::Count(count)
    } else {
        Expansion::Single
    }
}

/// The late providers some of `instances` (in the state) use that are not
/// configured yet in this run: those [`FromState`] configures before their
/// objects are planned or destroyed outside the walk.
pub fn unconfigured_for<'a>(
    late: &LateProviders,
    instances: impl Iterator<Item = &'a crate::state::InstanceState>,
) -> BTreeSet<String> {
    let used: BTreeSet<&str> = instances.map(|i| i.provider.as_str()).collect();
    late.iter().filter(|(name, p)| used.contains(name.as_str()) && !p.is_configured()).map(|(n, _)| n.clone()).collect()
}

impl super::Walk {
    /// Configures the late provider `name` (a node of the walk) with the
    /// values planned so far of what its block refers to; providers the
    /// run did not start late (in-process ones, mocks) need nothing.
    pub(super) async fn configure_provider(&self, name: &str, node: &Node, errors: &mut Vec<Diagnostic>) {
        let Some(late) = self.planner.late_providers.get(name) else { return };
        let (ctx, _) = self.context_of(node);
        if let Err(d) = late.configure(ctx).await {
            errors.extend(d);
        }
    }
}

impl super::Planner {
    /// Configures from the state ([`FromState`]) the late providers of the
    /// objects this plan takes outside the walk (everything in a destroy;
    /// orphans and deposed objects otherwise) that the walk did not
    /// configure. Returns the session of the ephemeral resources that
    /// opened, for the caller to close once those objects are planned.
    pub(super) async fn configure_late_from_state(
        &self,
        targets: &super::Targets,
        errors: &mut Vec<Diagnostic>,
    ) -> Option<Arc<Session>> {
        if self.late_providers.is_empty() || !errors.is_empty() {
            return None;
        }
        let in_scope = self
            .state
            .resources
            .iter()
            .filter(|i| i.addr.resource.mode == Mode::Managed && targets.includes_instance(&i.addr));
        let names = unconfigured_for(&self.late_providers, in_scope);
        if names.is_empty() {
            return None;
        }
        let progress = self.progress.clone();
        let session = Session::new(Arc::new(move |event| progress.emit(event)));
        let from = FromState {
            config: &self.config,
            graph: &self.graph,
            providers: &self.providers,
            late: &self.late_providers,
            variables: &self.variables,
            session: &session,
        };
        for name in names {
            if let Err(d) = from.configure(&name, &self.state).await {
                errors.extend(d);
            }
        }
        Some(session)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::schema::Attribute;
    use crate::state::InstanceState;
    use crate::testing::Fake;
    use crate::value::Type;

    /// A configuration where the provider `lazy` (another `fake`) is
    /// configured from `endpoint`, an expression over `fake_thing.a`.
    fn config(endpoint: &str) -> String {
        format!(
            r#"resource "fake_thing" "a" {{
  name = "a"
}}
provider "lazy" {{
  endpoint = {endpoint}
}}
resource "fake_thing" "b" {{
  provider = lazy
  name     = "b"
}}
"#
        )
    }

    /// `lazy`, recording the configuration of each `configure` in `seen`.
    fn lazy(ws: &crate::engine::Workspace, seen: Arc<Mutex<Vec<Value>>>) -> Arc<LateProvider> {
        let fake = Arc::new(Fake::new());
        let mut schema = fake.schema.clone();
        schema.provider.block.attributes.insert("endpoint".into(), Attribute::optional(Type::String));
        let block = schema.provider.block.clone();
        let body = ws.config.providers.iter().find(|p| p.name == "lazy").unwrap().body.clone();
        let configure: ConfigureFn = Arc::new(move |ctx: EvalContext| -> Configuring {
            let (seen, fake, block, body) = (Arc::clone(&seen), Arc::clone(&fake), block.clone(), body.clone());
            Box::pin(async move {
                let value = crate::config::decode_body(&body, &block, &ctx)?;
                seen.lock().unwrap().push(value);
                Ok(fake as Arc<dyn Provider>)
            })
        });
        Arc::new(LateProvider::new("lazy", schema, configure))
    }

    /// Plans `hcl` over `state` with `fake` and `lazy`; what `lazy` was
    /// configured with, in order.
    fn planned(hcl: &str, state: State, destroy: bool) -> (super::super::Plan, Vec<Value>) {
        let (_dir, ws) = crate::testing::workspace(hcl);
        let seen = Arc::new(Mutex::new(Vec::new()));
        let late = lazy(&ws, Arc::clone(&seen));
        let providers: Providers = [
            ("fake".to_string(), Arc::new(Fake::new()) as Arc<dyn Provider>),
            ("lazy".to_string(), Arc::clone(&late) as Arc<dyn Provider>),
        ]
        .into();
        let planner = super::super::Planner {
            config: Arc::clone(&ws.config),
            graph: Arc::clone(&ws.graph),
            providers,
            late_providers: [("lazy".to_string(), late)].into(),
            state: Arc::new(state),
            variables: BTreeMap::new(),
            options: super::super::PlanOptions { destroy, ..Default::default() },
            moves: Vec::new(),
            progress: Default::default(),
        };
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let plan = runtime.block_on(planner.plan()).unwrap_or_else(|d| panic!("{}", crate::diag::Diagnostics(d)));
        let seen = seen.lock().unwrap().clone();
        (plan, seen)
    }

    fn endpoint(config: &Value) -> &Value {
        config.get_attr("endpoint")
    }

    #[test]
    fn the_walk_configures_a_provider_with_the_planned_values_known_or_not() {
        // Known while planning: the planned name.
        let (plan, seen) = planned(&config("\"http://${fake_thing.a.name}\""), State::new(), false);
        assert_eq!(seen.iter().map(endpoint).collect::<Vec<_>>(), [&Value::string("http://a")]);
        assert_eq!(plan.change(&"fake_thing.b".parse().unwrap()).unwrap().action, super::super::Action::Create);
        // What the provider's block refers to is what its objects depend on.
        let b = plan.change(&"fake_thing.b".parse().unwrap()).unwrap();
        assert_eq!(b.dependencies, [ResourceAddr::managed("fake_thing", "a")]);
        // Unknown while planning (the id comes with the create): passed as
        // unknown, as Terraform does.
        let (_, seen) = planned(&config("fake_thing.a.id"), State::new(), false);
        assert_eq!(seen.len(), 1);
        assert!(!endpoint(&seen[0]).is_wholly_known(), "{:?}", seen[0]);
    }

    fn stored(addr: &str, provider: &str, attrs: serde_json::Value, deps: &[&str]) -> InstanceState {
        InstanceState {
            dependencies: deps.iter().map(|d| d.parse::<InstanceAddr>().unwrap().resource).collect(),
            ..InstanceState::new(addr.parse().unwrap(), provider, 0, attrs)
        }
    }

    #[test]
    fn a_destroy_and_an_orphan_configure_it_from_the_state() {
        let mut state = State::new();
        state.set(stored("fake_thing.a", "fake", serde_json::json!({"name": "a", "id": "id-a"}), &[]));
        state.set(stored("fake_thing.b", "lazy", serde_json::json!({"name": "b", "id": "id-b"}), &["fake_thing.a"]));
        // A destroy walks no configuration: the stored id, not unknown.
        let (plan, seen) = planned(&config("fake_thing.a.id"), state.clone(), true);
        assert_eq!(seen.iter().map(endpoint).collect::<Vec<_>>(), [&Value::string("id-a")]);
        assert_eq!(plan.counts(), (0, 0, 2));
        // An orphan of `lazy` whose block the configuration still has:
        // configured by the walk (its block refers to the planned `a`),
        // once.
        let mut orphan = state.clone();
        orphan.set(stored("fake_thing.c", "lazy", serde_json::json!({"name": "c", "id": "id-c"}), &["fake_thing.a"]));
        let (plan, seen) = planned(&config("fake_thing.a.id"), orphan, false);
        assert_eq!(seen.iter().map(endpoint).collect::<Vec<_>>(), [&Value::string("id-a")]);
        assert_eq!(plan.change(&"fake_thing.c".parse().unwrap()).unwrap().action, super::super::Action::Delete);
    }
}
