//! Modules: `module "NAME" { source = "./modules/x" … }` blocks, the
//! configurations they call, and their expansion into the one flat
//! configuration the rest of the engine works on.
//!
//! Loading ([`call`]) reads a module block and the directory its `source`
//! names: only local paths (`./` or `../`), relative to the calling
//! module's directory; a registry or git source is an error.
//!
//! Expansion ([`expand_modules`]) happens once the root module's input
//! variables are known. Each call's `count` or `for_each` is evaluated with
//! what is known before planning (variables, locals and literals). A call
//! whose argument refers to more (a resource, a data source, another
//! module's outputs) is *deferred*: the flat configuration gets a local
//! holding the argument's value (`module.m.for_each`) and an unknown
//! object for its outputs (`module.m`), and `engine::staged` plans what
//! that local depends on, evaluates it, and expands again with the value
//! *pinned* (a known value expands the call as a literal would; an unknown
//! one is Terraform's "Invalid for_each argument"). Every module instance
//! contributes:
//!
//! - its resources, with addresses in the module instance
//!   (`module.a["x"].local_file.f`) and their provider configuration
//!   resolved through the calls' `providers` maps;
//! - its input variables, locals and outputs as locals of the flat
//!   configuration named after the instance (`module.a["x"].var.name`,
//!   `module.a["x"].local.name`, `module.a["x"].output.name`), so that they
//!   are nodes of the dependency graph like any local;
//! - one local per call (`module.a`, or `module.a["x"].module.b` inside
//!   another), the object of its outputs (a list of them with `count`, a
//!   map with `for_each`): what `module.a.out` refers to.
//!
//! Every expression of a module is rewritten into this naming ([`rewrite`]),
//! so that references cross a module's boundary only through its inputs and
//! its outputs, and the evaluator, graph and planner need not know modules.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

use crate::addr::{InstanceKey, ModuleInstance};
use crate::diag::{Diagnostic, Location};
use crate::value::Value;

mod rewrite;

use rewrite::Rewriter;

use super::blocks::{literal_string, take_attribute, unsupported_block};
use super::expr::{ExprKind, Expression, Reference, Step};
use super::instances::{Instance, expand, expand_value};
use super::{
    Attribute, Block, Check, ConditionKind, Config, EvalContext, Lifecycle, Local, ReplaceTrigger, Resource, error_at,
    eval, variables,
};

/// A `module "NAME" { … }` block and the configuration it calls.
#[derive(Debug, Clone)]
pub struct ModuleCall {
    /// The block's label.
    pub name: String,
    /// `source = "./modules/x"` as written.
    pub source: String,
    /// The called module's directory, relative to the root module's.
    pub dir: PathBuf,
    /// The called module's configuration (its own module calls unexpanded).
    pub config: Box<Config>,
    /// The arguments that set the module's input variables, by name.
    pub inputs: BTreeMap<String, Attribute>,
    /// `count = …`
    pub count: Option<Expression>,
    /// `for_each = …`
    pub for_each: Option<Expression>,
    /// `providers = { local = local.other }`: the provider configurations
    /// the module sees, by its name for them.
    pub providers: Vec<ProviderPass>,
    /// `depends_on = [...]`: resources every resource of the module waits for.
    pub depends_on: Vec<(Reference, Location)>,
    /// The block header.
    pub location: Location,
}

/// One entry of a module block's `providers` map.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderPass {
    /// The name inside the module: `local` or `local.alias`.
    pub child: String,
    /// The calling module's configuration it gets: `local` or `local.other`.
    pub parent: String,
    /// Where the entry is written.
    pub location: Location,
}

/// The arguments of a module block that are not input variables.
const META_ARGUMENTS: &[&str] = &["source", "version", "count", "for_each", "providers", "depends_on"];

/// Module calls nested deeper than this are refused: a module that calls
/// itself, directly or not, would otherwise never finish loading.
const MAX_DEPTH: usize = 16;

/// Whether a local's name is one [`expand_modules`] gave to something of a
/// module (shown as it is, not as `local.NAME`).
pub(crate) fn is_scoped(name: &str) -> bool {
    name.starts_with("module.")
}

/// A traversal root that expansion qualified with its module instance,
/// `module.a.local_file` (a name no one can write), split into the
/// instance and the root as written.
pub(crate) fn scoped_root(root: &str) -> Option<(ModuleInstance, &str)> {
    let (module, inner) = root.rsplit_once('.')?;
    Some((module.parse().ok()?, inner))
}

/// Reads a module block, and loads the module it calls from `root`
/// (the root module's directory) joined with `parent_dir` (the calling
/// module's, relative to it) and its `source`.
pub(super) fn call(
    block: Block,
    root: &Path,
    parent_dir: &Path,
    depth: usize,
    diags: &mut Vec<Diagnostic>,
) -> Option<ModuleCall> {
    let [name] = block.labels.as_slice() else {
        diags.push(error_at(
            "Wrong number of labels for a module block",
            "A module block takes one label, its name: module \"NAME\" { … }.",
            &block.location,
        ));
        return None;
    };
    let name = name.clone();
    let Block { mut body, location, .. } = block;
    let Some(source_attr) = take_attribute(&mut body, "source") else {
        diags.push(error_at(
            "Missing required argument",
            format!("The module \"{name}\" needs a source: source = \"./modules/NAME\"."),
            &location,
        ));
        return None;
    };
    let source = literal_string(&source_attr, root, diags)?;
    if let Some(version) = take_attribute(&mut body, "version") {
        diags.push(error_at(
            "Unsupported argument",
            "\"version\" applies only to modules from a registry; cairn loads only local paths (./ or ../).",
            &version.location,
        ));
    }
    let dir = local_source(&source, parent_dir, &source_attr.location, diags)?;
    if depth >= MAX_DEPTH {
        diags.push(error_at(
            "Module calls nested too deeply",
            format!("Module calls are nested more than {MAX_DEPTH} deep here: a module probably calls itself."),
            &location,
        ));
        return None;
    }
    if !root.join(&dir).is_dir() {
        diags.push(error_at(
            "Module not found",
            format!("The module directory {} (source = {source:?}) does not exist.", dir.display()),
            &source_attr.location,
        ));
        return None;
    }
    let (count, for_each) = super::resource::take_count_and_for_each(&mut body, diags);
    let providers = take_attribute(&mut body, "providers").map(|a| provider_passes(&a, diags)).unwrap_or_default();
    let depends_on =
        take_attribute(&mut body, "depends_on").map(|a| super::resource::depends_on(&a, diags)).unwrap_or_default();
    for nested in &body.blocks {
        diags.push(unsupported_block(nested, "module", &[]));
    }
    let config = match super::load::load_module(root, &dir, depth + 1) {
        Ok(config) => config,
        Err(errors) => {
            diags.extend(errors);
            return None;
        }
    };
    let inputs: BTreeMap<String, Attribute> = body.attributes.into_iter().map(|a| (a.name.clone(), a)).collect();
    check_inputs(&name, &config, &inputs, &location, diags);
    Some(ModuleCall {
        name,
        source,
        dir,
        config: Box::new(config),
        inputs,
        count,
        for_each,
        providers,
        depends_on,
        location,
    })
}

/// The directory a module `source` names, relative to the root module's:
/// only local paths are supported.
fn local_source(source: &str, parent_dir: &Path, location: &Location, diags: &mut Vec<Diagnostic>) -> Option<PathBuf> {
    if !(source.starts_with("./") || source.starts_with("../")) {
        diags.push(error_at(
            "Unsupported module source",
            format!(
                "The module source {source:?} is not a local path: cairn loads modules only from local paths \
                 (./ or ../), relative to the directory of the module that calls them. Registry, git, HTTP and \
                 other remote sources are not supported; copy the module into the configuration and refer to it \
                 as \"./modules/NAME\"."
            ),
            location,
        ));
        return None;
    }
    let mut dir = PathBuf::new();
    for part in parent_dir.join(source).components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir if dir.file_name().is_some_and(|n| n != "..") => {
                dir.pop();
            }
            other => dir.push(other),
        }
    }
    Some(dir)
}

/// `providers = { local = local.other, "random.x" = random }`.
fn provider_passes(attr: &Attribute, diags: &mut Vec<Diagnostic>) -> Vec<ProviderPass> {
    let invalid = |location: &Location| {
        error_at(
            "Invalid providers argument",
            "providers takes a map of provider configurations, like providers = { local = local.other }.",
            location,
        )
    };
    let ExprKind::Object(items) = &attr.expr.kind else {
        diags.push(invalid(&attr.expr.location));
        return Vec::new();
    };
    let mut passes = Vec::new();
    for (key, value) in items {
        match (provider_name(key), provider_name(value)) {
            (Some(child), Some(parent)) => passes.push(ProviderPass { child, parent, location: key.location.clone() }),
            _ => diags.push(invalid(&key.location)),
        }
    }
    passes
}

/// `local`, `local.other` or `"local.other"` (or `null`, `null.x`), as a
/// provider configuration's name, in a module call's or a test run's
/// `providers` map.
pub(crate) fn provider_name(expr: &Expression) -> Option<String> {
    // The parser reads a bare `null` as the keyword; as a provider name it
    // is hashicorp/null's.
    let bare = |kind: &ExprKind| match kind {
        ExprKind::Variable(name) => Some(name.clone()),
        ExprKind::Literal(Value::Null) => Some("null".to_string()),
        _ => None,
    };
    match &expr.kind {
        ExprKind::Literal(Value::String(s)) => Some(s.clone()),
        ExprKind::Traversal { source, steps } => match steps.as_slice() {
            [Step::Attr(alias)] => bare(&source.kind).map(|name| format!("{name}.{alias}")),
            _ => None,
        },
        kind => bare(kind),
    }
}

/// Every argument names an input variable of the module, and every
/// variable without a default has an argument.
fn check_inputs(
    name: &str,
    config: &Config,
    inputs: &BTreeMap<String, Attribute>,
    location: &Location,
    diags: &mut Vec<Diagnostic>,
) {
    for (input, attr) in inputs {
        if !config.variables.contains_key(input) {
            let hint = super::suggest::did_you_mean(
                input,
                config.variables.keys().map(String::as_str).chain(META_ARGUMENTS.iter().copied()),
            );
            diags.push(error_at(
                "Unsupported argument",
                format!("An argument named \"{input}\" is not expected here: module \"{name}\" has no such input variable.{hint}"),
                &attr.location,
            ));
        }
    }
    for variable in config.variables.values() {
        if variable.default.is_none() && !inputs.contains_key(&variable.name) {
            diags.push(error_at(
                "Missing required argument",
                format!(
                    "The argument \"{}\" is required by module \"{name}\" (variable declared at {}), but no \
                     definition was found.",
                    variable.name, variable.location
                ),
                location,
            ));
        }
    }
}

/// Replaces the module call at `path` (from the root module down) by one that declares nothing
/// but its outputs, each the value `outputs` gives it (null when not
/// given; a value for an output the module does not declare is passed
/// over, as Terraform does): what `cairn test`'s `override_module` does.
/// Its resources, checks and nested calls are not planned, and its inputs
/// are not evaluated or validated. `false` when there is no such call.
pub fn override_call(
    config: &mut Config,
    path: &[String],
    outputs: &BTreeMap<String, Value>,
    location: &Location,
) -> bool {
    // `path` names the calls from the root module down: `module.a.module.b`
    // is the call `b` inside the module `a` calls.
    let Some((name, inner)) = path.split_first() else { return false };
    let Some(call) = config.modules.iter_mut().find(|c| &c.name == name) else { return false };
    if !inner.is_empty() {
        return override_call(&mut call.config, inner, outputs, location);
    }
    let stub_outputs = call
        .config
        .outputs
        .iter()
        .map(|(output, declared)| {
            let value = outputs.get(output).cloned().unwrap_or(Value::Null);
            let expr = Expression { kind: ExprKind::Literal(value), location: location.clone() };
            let stub = super::Output { expr, depends_on: Vec::new(), preconditions: Vec::new(), ..declared.clone() };
            (output.clone(), stub)
        })
        .collect();
    *call.config = Config { dir: call.config.dir.clone(), outputs: stub_outputs, ..Config::default() };
    call.inputs.clear();
    call.providers.clear();
    true
}

/// The value of each deferred module call's `count` or `for_each` found
/// while planning, by the call's name in the flat configuration (`module.m`,
/// `module.a["x"].module.b`).
pub type Pinned = BTreeMap<String, Value>;

/// A module call whose `count` or `for_each` refers to what only planning
/// knows, left unexpanded (see the module documentation).
#[derive(Debug, Clone)]
pub struct DeferredCall {
    /// The call's name in the flat configuration, the key of [`Pinned`]:
    /// `module.m`, `module.a["x"].module.b`.
    pub name: String,
    /// Every instance of the call: `module.m` without a key.
    pub call: ModuleInstance,
    /// The local of the flat configuration holding the argument's value:
    /// `module.m.for_each` or `module.m.count`.
    pub local: String,
    /// The call's `count`.
    pub count: Option<Expression>,
    /// The call's `for_each`.
    pub for_each: Option<Expression>,
}

impl DeferredCall {
    /// The instances `value` (the argument's value) gives the call, or
    /// Terraform's error at the argument (unknown keys, a list…).
    pub fn instances(&self, value: Value) -> Result<Vec<Instance>, Vec<Diagnostic>> {
        expand_value(self.count.as_ref(), self.for_each.as_ref(), value)
    }

    /// Terraform's error when the argument, whose value has the
    /// sensitivity `marks`, is a `for_each` sensitive as a whole (its keys
    /// would show the secret); a sensitive `count` is allowed, as there.
    pub fn check_sensitivity(&self, marks: &[crate::value::Path]) -> Result<(), Vec<Diagnostic>> {
        match &self.for_each {
            Some(for_each) if self.count.is_none() && marks.iter().any(crate::value::Path::is_root) => {
                Err(vec![super::instances::sensitive_for_each(&for_each.location)])
            }
            _ => Ok(()),
        }
    }

    /// Terraform's error when the argument (`expr`, the flat
    /// configuration's local holding it) is derived from an ephemeral
    /// value: instance keys are kept between plan and apply.
    pub fn check_ephemerality(
        &self,
        expr: &Expression,
        ephemeral: &super::ephemeral::Ephemerality,
    ) -> Result<(), Diagnostic> {
        if !ephemeral.is_ephemeral(expr) {
            return Ok(());
        }
        Err(match (&self.count, &self.for_each) {
            (Some(count), _) => {
                super::ephemeral::repetition_error(ephemeral, count, "count", "the number of resource instances")
            }
            (None, Some(for_each)) => {
                super::ephemeral::repetition_error(ephemeral, for_each, "for_each", "a resource's instance keys")
            }
            (None, None) => return Ok(()),
        })
    }
}

/// A configuration with its module calls expanded, but for the deferred ones.
#[derive(Debug, Clone)]
pub struct Expanded {
    /// The flat configuration.
    pub config: Config,
    /// The calls left for planning to decide; none once every call expands.
    pub deferred: Vec<DeferredCall>,
    /// The provider configurations the deferred calls' modules use, which
    /// a run starts although no resource of the flat configuration uses them yet.
    pub deferred_providers: BTreeSet<String>,
}

/// Terraform's error for every module call (in `config` and the modules it
/// calls) whose `count` or `for_each` is derived from an ephemeral value of
/// its caller (an ephemeral variable, a local made of one, an ephemeral
/// resource): instance keys are kept between plan and apply. Checked on the
/// module tree, before expansion evaluates the arguments, which keeps no
/// marks of what was ephemeral.
fn ephemeral_repetitions(config: &Config, diags: &mut Vec<Diagnostic>) {
    let ephemeral = super::ephemeral::Ephemerality::of(config);
    for call in &config.modules {
        if let Some(count) = call.count.as_ref().filter(|e| ephemeral.is_ephemeral(e)) {
            diags.push(super::ephemeral::repetition_error(
                &ephemeral,
                count,
                "count",
                "the number of resource instances",
            ));
        }
        if let Some(for_each) = call.for_each.as_ref().filter(|e| ephemeral.is_ephemeral(e)) {
            diags.push(super::ephemeral::repetition_error(
                &ephemeral,
                for_each,
                "for_each",
                "a resource's instance keys",
            ));
        }
        ephemeral_repetitions(&call.config, diags);
    }
}

/// Expands every module call of `config` (the root module, its root
/// variables resolved to `variables`) into one flat configuration, the
/// calls whose argument was evaluated while planning with their value in
/// `pinned`; see the module documentation. The result has no module calls.
pub fn expand_modules(
    mut config: Config,
    variables: &BTreeMap<String, Value>,
    pinned: &Pinned,
) -> Result<Expanded, Vec<Diagnostic>> {
    let mut diags = Vec::new();
    ephemeral_repetitions(&config, &mut diags);
    if !diags.is_empty() {
        return Err(diags);
    }
    let calls = std::mem::take(&mut config.modules);
    if calls.is_empty() {
        return Ok(Expanded { config, deferred: Vec::new(), deferred_providers: BTreeSet::new() });
    }
    let root = Scope { module: ModuleInstance::root(), dir: ".".into(), providers: BTreeMap::new() };
    let ctx = static_context(&config, &config.dir, variables.clone());
    let rewriter = Rewriter { scope: &root, instance: None, expansion: None };
    let mut flat =
        Config { resources: Vec::new(), locals: BTreeMap::new(), outputs: BTreeMap::new(), ..config.clone() };
    let mut expander = Expander::new(&mut flat, pinned);
    for r in &config.resources {
        expander.resource(r, &rewriter, &[]);
    }
    for local in config.locals.values() {
        let rewritten = Local { expr: rewriter.expr(&local.expr), ..local.clone() };
        expander.flat.locals.insert(local.name.clone(), rewritten);
    }
    for (name, output) in &config.outputs {
        let depends_on = output.depends_on.iter().map(|(d, l)| (rewriter.reference(d), l.clone())).collect();
        let preconditions = output.preconditions.iter().map(|c| rewriter.condition(c, &[])).collect();
        let rewritten =
            super::Output { expr: rewriter.expr(&output.expr), depends_on, preconditions, ..output.clone() };
        expander.flat.outputs.insert(name.clone(), rewritten);
    }
    // The root's checks may refer to module outputs, which are locals now.
    expander.flat.checks = config.checks.iter().map(|c| rewriter.check(c)).collect();
    // So may its provider blocks, which are then configured in the graph.
    for provider in &mut expander.flat.providers {
        provider.body = rewriter.body(&provider.body, &mut Vec::new());
        for headers in &mut provider.http_headers {
            headers.expr = rewriter.expr(&headers.expr);
        }
    }
    for call in &calls {
        expander.call(call, &root, &ctx);
    }
    let Expander { mut diags, deferred, deferred_providers, .. } = expander;
    depend_on_module_resources(&mut flat);
    // An import into a deferred call's instance is checked once it expands.
    let (waiting, imports) = std::mem::take(&mut flat.imports)
        .into_iter()
        .partition(|i| deferred.iter().any(|d| i.to.resource.module.within(&d.call)));
    flat.imports = imports;
    super::refactor::check(&flat, &mut diags);
    flat.imports.extend::<Vec<_>>(waiting);
    if diags.is_empty() { Ok(Expanded { config: flat, deferred, deferred_providers }) } else { Err(diags) }
}

/// What expansion knows of one module instance.
struct Scope {
    /// The module instance.
    module: ModuleInstance,
    /// Its directory relative to the root module's: `path.module`.
    dir: String,
    /// The root provider configuration of each provider name the module
    /// uses, as its calls' `providers` passed them (root: none, each name
    /// is its own).
    providers: BTreeMap<String, String>,
}

impl Scope {
    /// The local that stands for `kind.name` (`var.x`, `local.y`,
    /// `output.z`, `module.c`) of this module instance.
    fn name(&self, kind: &str, name: &str) -> String {
        if self.module.is_root() { format!("{kind}.{name}") } else { format!("{}.{kind}.{name}", self.module) }
    }

    /// The root provider configuration behind the module's provider
    /// `name` (`local`, `local.alias`).
    fn provider(&self, name: &str) -> Option<String> {
        if self.module.is_root() {
            return Some(name.to_string());
        }
        self.providers.get(name).cloned()
    }
}

/// The flat configuration being built, and the problems found.
struct Expander<'a> {
    flat: &'a mut Config,
    diags: Vec<Diagnostic>,
    /// The deferred calls' arguments, as planning found them.
    pinned: &'a Pinned,
    /// The calls left for planning.
    deferred: Vec<DeferredCall>,
    /// The provider configurations the deferred calls' modules use.
    deferred_providers: BTreeSet<String>,
}

impl<'a> Expander<'a> {
    fn new(flat: &'a mut Config, pinned: &'a Pinned) -> Expander<'a> {
        Expander { flat, diags: Vec::new(), pinned, deferred: Vec::new(), deferred_providers: BTreeSet::new() }
    }

    /// Adds a resource of the module instance `rewriter` is for; `extra`
    /// are the `depends_on` of the module calls around it.
    fn resource(&mut self, r: &Resource, rewriter: &Rewriter, extra: &[(Reference, Location)]) {
        let scope = rewriter.scope;
        let Some(provider) = scope.provider(&r.provider) else {
            self.diags.push(error_at(
                "Provider configuration not present",
                format!(
                    "{} uses the provider configuration {:?}, which the module block of {} does not pass: add it \
                     to its providers = {{ … }}.",
                    r.addr.clone().in_module(scope.module.clone()),
                    r.provider,
                    scope.module
                ),
                &r.location,
            ));
            return;
        };
        let mut depends_on: Vec<(Reference, Location)> =
            r.depends_on.iter().map(|(d, l)| (rewriter.reference(d), l.clone())).collect();
        depends_on.extend(extra.iter().cloned());
        let lifecycle = Lifecycle {
            replace_triggered_by: r
                .lifecycle
                .replace_triggered_by
                .iter()
                .map(|t| ReplaceTrigger {
                    resource: t.resource.clone().in_module(scope.module.clone()),
                    key: t.key.as_ref().map(|k| rewriter.expr(k)),
                    path: t.path.clone(),
                    expr: rewriter.expr(&t.expr),
                })
                .collect(),
            preconditions: r.lifecycle.preconditions.iter().map(|c| rewriter.condition(c, &[])).collect(),
            postconditions: r
                .lifecycle
                .postconditions
                .iter()
                .map(|c| rewriter.condition(c, &ConditionKind::ResourcePostcondition.bound_names()))
                .collect(),
            ..(*r.lifecycle).clone()
        };
        self.flat.resources.push(Resource {
            addr: r.addr.clone().in_module(scope.module.clone()),
            provider,
            body: rewriter.body(&r.body, &mut Vec::new()),
            depends_on,
            count: r.count.as_ref().map(|e| Box::new(rewriter.expr(e))),
            for_each: r.for_each.as_ref().map(|e| Box::new(rewriter.expr(e))),
            lifecycle: Box::new(lifecycle),
            location: r.location.clone(),
        });
    }

    /// Adds the `check` block `c` of a module instance (Terraform's
    /// `module.m.check.c`): its scoped data sources and assertions in the
    /// instance, its data sources' providers resolved as its resources'.
    fn check(&mut self, c: &Check, rewriter: &Rewriter) {
        let scope = rewriter.scope;
        let mut data = Vec::new();
        for d in &c.data {
            let Some(provider) = scope.provider(&d.provider) else {
                self.diags.push(error_at(
                    "Provider configuration not present",
                    format!(
                        "{} uses the provider configuration {:?}, which the module block of {} does not pass: add \
                         it to its providers = {{ … }}.",
                        d.addr.clone().in_module(scope.module.clone()),
                        d.provider,
                        scope.module
                    ),
                    &d.location,
                ));
                return;
            };
            data.push(Resource {
                addr: d.addr.clone().in_module(scope.module.clone()),
                provider,
                body: rewriter.body(&d.body, &mut Vec::new()),
                ..d.clone()
            });
        }
        let asserts = c.asserts.iter().map(|a| rewriter.condition(a, &[])).collect();
        self.flat.checks.push(Check { data, asserts, module: scope.module.clone(), ..c.clone() });
    }

    /// Expands the module call `call` of the module instance `parent`,
    /// whose statically known values are `ctx`.
    fn call(&mut self, call: &ModuleCall, parent: &Scope, ctx: &EvalContext) {
        let name = parent.name("module", &call.name);
        let pinned = self.pinned.get(&name);
        let instances = match pinned {
            Some(value) => expand_value(call.count.as_ref(), call.for_each.as_ref(), value.clone()),
            None => expand(call.count.as_ref(), call.for_each.as_ref(), ctx),
        };
        let instances = match instances {
            Ok(instances) => instances,
            Err(errors) if pinned.is_none() && refers_to_planned_values(&errors) => {
                return self.defer(call, parent, ctx, name);
            }
            Err(errors) => return self.diags.extend(errors),
        };
        // A pinned argument stays in the configuration, evaluated by plan
        // and apply like any local: `each.value` parts known only after
        // apply are read from it.
        let expansion = pinned.map(|_| self.argument_local(call, parent, &name));
        let mut objects = Vec::new();
        for instance in &instances {
            let Some(scope) = self.child_scope(call, parent, instance) else { continue };
            let outputs = self.instance(call, parent, &scope, instance, ctx, expansion.as_deref());
            objects.push((instance.key.clone(), outputs));
        }
        let location = &call.location;
        let value = |kind: ExprKind| Expression { kind, location: location.clone() };
        let expr = if call.count.is_some() {
            value(ExprKind::Tuple(objects.into_iter().map(|(_, o)| o).collect()))
        } else if call.for_each.is_some() {
            let entries = objects.into_iter().filter_map(|(key, o)| match key {
                Some(InstanceKey::String(k)) => Some((value(ExprKind::Literal(Value::String(k))), o)),
                _ => None,
            });
            value(ExprKind::Object(entries.collect()))
        } else {
            match objects.pop() {
                Some((_, o)) => o,
                None => value(ExprKind::Literal(Value::Null)),
            }
        };
        self.add_local(name, expr, location);
    }

    /// Adds the local `name` with `expr`, written at `location`.
    fn add_local(&mut self, name: String, expr: Expression, location: &Location) {
        let local = Local {
            name: name.clone(),
            expr,
            location: location.clone(),
            input: None,
            depends_on: Vec::new(),
            preconditions: Vec::new(),
            output_ephemeral: None,
        };
        self.flat.locals.insert(name, local);
    }

    /// Adds the local holding the `count` or `for_each` of `call` (named
    /// `name` in the flat configuration), evaluated in its caller `parent`;
    /// returns the local's name.
    fn argument_local(&mut self, call: &ModuleCall, parent: &Scope, name: &str) -> String {
        let (argument, expr) = match (&call.count, &call.for_each) {
            (Some(count), _) => ("count", count),
            (None, Some(for_each)) => ("for_each", for_each),
            (None, None) => unreachable!("only a call with count or for_each is deferred"),
        };
        let local = format!("{name}.{argument}");
        let rewriter = Rewriter { scope: parent, instance: None, expansion: None };
        self.add_local(local.clone(), rewriter.expr(expr), &expr.location);
        local
    }

    /// Leaves `call` (named `name`) for planning to expand: the local of its
    /// argument, an unknown object for its outputs, and what one instance of
    /// it would need, found in a placeholder instance expanded aside (the
    /// providers to start, the errors of its configuration whatever its keys).
    fn defer(&mut self, call: &ModuleCall, parent: &Scope, ctx: &EvalContext, name: String) {
        let local = self.argument_local(call, parent, &name);
        let unknown = Expression { kind: ExprKind::Literal(Value::unknown()), location: call.location.clone() };
        self.add_local(name.clone(), unknown, &call.location);
        let mut aside = Config { providers: self.flat.providers.clone(), ..Config::default() };
        let no_pins = Pinned::new();
        let mut placeholder = Expander::new(&mut aside, &no_pins);
        let instance = Instance {
            key: None,
            count_index: call.count.as_ref().map(|_| 0),
            each: call.for_each.as_ref().map(|_| (Value::unknown(), Value::unknown())),
        };
        if let Some(scope) = placeholder.child_scope(call, parent, &instance) {
            placeholder.instance(call, parent, &scope, &instance, ctx, None);
        }
        let Expander { diags, deferred_providers, .. } = placeholder;
        self.diags.extend(diags);
        self.deferred_providers.extend(deferred_providers);
        self.deferred_providers.extend(aside.resources.iter().map(|r| r.provider.clone()));
        self.deferred_providers.extend(aside.checks.iter().flat_map(|c| &c.data).map(|d| d.provider.clone()));
        self.deferred.push(DeferredCall {
            name,
            call: parent.module.child(&call.name, None),
            local,
            count: call.count.clone(),
            for_each: call.for_each.clone(),
        });
    }

    /// The scope of one instance of `call`, with the provider
    /// configurations it gets.
    fn child_scope(&mut self, call: &ModuleCall, parent: &Scope, instance: &Instance) -> Option<Scope> {
        let module = parent.module.child(&call.name, instance.key.clone());
        let mut providers = BTreeMap::new();
        // Without `providers`, a module (and the modules it calls) gets
        // its caller's default configurations, as in Terraform.
        for name in default_providers(&call.config) {
            if let Some(p) = parent.provider(&name) {
                providers.insert(name, p);
            }
        }
        for pass in &call.providers {
            match parent.provider(&pass.parent) {
                Some(p) if parent.module.is_root() && !self.declared_provider(&p) => {
                    self.diags.push(undeclared_provider(&pass.parent, &pass.location));
                    return None;
                }
                Some(p) => {
                    providers.insert(pass.child.clone(), p);
                }
                None => {
                    self.diags.push(undeclared_provider(&pass.parent, &pass.location));
                    return None;
                }
            }
        }
        Some(Scope { module, dir: call.dir.to_string_lossy().into_owned(), providers })
    }

    /// Whether the root module configures the provider `name`: an
    /// aliased one must have its block; a default one need not.
    fn declared_provider(&self, name: &str) -> bool {
        !name.contains('.') || self.flat.provider(name).is_some()
    }

    /// `variable` with only the validations that refer to it alone, which
    /// the module checks when it takes its input (the local standing for
    /// it); each other rule, which refers to other objects of the module
    /// (Terraform 1.9), is rewritten with `inside` for this module
    /// instance and added to the flat configuration's
    /// `module_validations`, checked once the plan has their values.
    fn split_validations(
        &mut self,
        variable: &super::Variable,
        call: &ModuleCall,
        inside: &Rewriter,
    ) -> super::Variable {
        let module = &call.config;
        let (own, cross): (Vec<_>, Vec<_>) =
            variable.validations.iter().cloned().partition(|rule| rule.refers_only_to(&variable.name));
        for rule in cross {
            let hides_message = rule.error_message.references().iter().any(|(r, _)| match r {
                Reference::Variable(name) => module.variables.get(name).is_some_and(|v| v.sensitive),
                _ => false,
            });
            let given = call.inputs.get(&variable.name).map(|attr| attr.expr.location.clone());
            let reported_at = given.unwrap_or_else(|| rule.location.clone());
            let rule = super::Validation {
                condition: inside.expr(&rule.condition),
                error_message: inside.expr(&rule.error_message),
                location: rule.location,
            };
            self.flat.module_validations.push(variables::ModuleValidation {
                variable: variable.clone(),
                rule,
                hides_message,
                reported_at,
            });
        }
        super::Variable { validations: own, ..variable.clone() }
    }

    /// Adds one module instance: its inputs, locals, outputs, resources and
    /// nested calls. Returns the object of its outputs. `expansion` is the
    /// local holding the call's pinned argument, if it has one.
    fn instance(
        &mut self,
        call: &ModuleCall,
        parent: &Scope,
        scope: &Scope,
        instance: &Instance,
        parent_ctx: &EvalContext,
        expansion: Option<&str>,
    ) -> Expression {
        let module = &call.config;
        let arguments = Rewriter { scope: parent, instance: Some(instance), expansion };
        let inside = Rewriter { scope, instance: None, expansion: None };
        let mut arg_ctx = parent_ctx.clone();
        instance.apply_to(&mut arg_ctx);
        let mut known = BTreeMap::new();
        for (name, declared) in &module.variables {
            let variable = &self.split_validations(declared, call, &inside);
            let (expr, static_value) = match call.inputs.get(name) {
                Some(attr) => (arguments.expr(&attr.expr), eval(&attr.expr, &arg_ctx).ok()),
                None => {
                    let default = variable.default.clone().unwrap_or_default();
                    (
                        Expression { kind: ExprKind::Literal(default.clone()), location: variable.location.clone() },
                        Some(default),
                    )
                }
            };
            if let Some(v) =
                static_value.and_then(|v| variables::check_input(variable, v).ok()).filter(Value::is_wholly_known)
            {
                known.insert(name.clone(), v);
            }
            let local_name = scope.name("var", name);
            let local = Local {
                name: local_name.clone(),
                expr: marked_if(variable.sensitive, expr),
                location: variable.location.clone(),
                input: Some(Box::new(variable.clone())),
                depends_on: Vec::new(),
                preconditions: Vec::new(),
                output_ephemeral: None,
            };
            self.flat.locals.insert(local_name, local);
        }
        for local in module.locals.values() {
            let name = scope.name("local", &local.name);
            let rewritten = Local { name: name.clone(), expr: inside.expr(&local.expr), ..local.clone() };
            self.flat.locals.insert(name, rewritten);
        }
        let mut outputs = Vec::new();
        for (name, output) in &module.outputs {
            let local_name = scope.name("output", name);
            let depends_on = output.depends_on.iter().map(|(d, l)| (inside.reference(d), l.clone())).collect();
            let local = Local {
                name: local_name.clone(),
                expr: marked_if(output.sensitive, inside.expr(&output.expr)),
                location: output.location.clone(),
                input: None,
                depends_on,
                preconditions: output.preconditions.iter().map(|c| inside.condition(c, &[])).collect(),
                output_ephemeral: Some(output.ephemeral),
            };
            self.flat.locals.insert(local_name.clone(), local);
            let at = |kind: ExprKind| Expression { kind, location: call.location.clone() };
            let reference = at(ExprKind::Traversal {
                source: Box::new(at(ExprKind::Variable("local".into()))),
                steps: vec![Step::Attr(local_name)],
            });
            outputs.push((at(ExprKind::Literal(Value::string(name.clone()))), reference));
        }
        let mut extra: Vec<(Reference, Location)> =
            call.depends_on.iter().map(|(d, l)| (arguments.reference(d), l.clone())).collect();
        // As in Terraform, what decides a module's instances comes before
        // everything in them (`-target` of an instance takes it along).
        if let Some(expansion) = expansion {
            extra.push((Reference::Local(expansion.to_string()), call.location.clone()));
        }
        for r in &module.resources {
            self.resource(r, &inside, &extra);
        }
        for c in &module.checks {
            self.check(c, &inside);
        }
        let ctx = static_context(module, &parent_ctx.dir, known);
        for nested in &module.modules {
            self.call(nested, scope, &ctx);
        }
        Expression { kind: ExprKind::Object(outputs), location: call.location.clone() }
    }
}

/// `sensitive(expr)` when `sensitive` (a module's variable or output
/// declared `sensitive = true`), so that the value is marked wherever it
/// goes, as Terraform marks it; else `expr`.
fn marked_if(sensitive: bool, expr: Expression) -> Expression {
    if !sensitive {
        return expr;
    }
    let location = expr.location.clone();
    Expression { kind: ExprKind::Call { name: "sensitive".into(), args: vec![expr], expand_final: false }, location }
}

/// Replaces each module call in a `depends_on` (the local of its outputs,
/// `module.a`) with every resource of every instance of it, as Terraform
/// waits for all of a module, not only what its outputs refer to.
fn depend_on_module_resources(flat: &mut Config) {
    let resources: Vec<_> = flat.resources.iter().map(|r| r.addr.clone()).collect();
    let expand = |depends_on: &mut Vec<(Reference, Location)>| {
        let mut expanded = Vec::new();
        for (reference, location) in depends_on.drain(..) {
            match &reference {
                Reference::Local(name) if let Ok(call) = name.parse::<ModuleInstance>() => expanded.extend(
                    (resources.iter().filter(|r| r.module.within(&call)))
                        .map(|r| (Reference::Resource(r.clone()), location.clone())),
                ),
                _ => expanded.push((reference, location)),
            }
        }
        *depends_on = expanded;
    };
    for r in &mut flat.resources {
        expand(&mut r.depends_on);
    }
    for local in flat.locals.values_mut() {
        expand(&mut local.depends_on);
    }
    for output in flat.outputs.values_mut() {
        expand(&mut output.depends_on);
    }
}

/// Whether `config` calls a module with `count` or `for_each`, at any
/// depth: only such a call may be deferred to planning.
pub fn has_repeated_calls(config: &Config) -> bool {
    config.modules.iter().any(|c| c.count.is_some() || c.for_each.is_some() || has_repeated_calls(&c.config))
}

/// The `*.tf` files of every module `config` calls, at any depth, in
/// call order: with the root's own, every file the configuration is read
/// from (a saved plan records their hashes).
pub fn module_files(config: &Config) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for call in &config.modules {
        files.extend(super::config_files(&config.dir.join(&call.dir)).unwrap_or_default());
        files.extend(module_files(&call.config));
    }
    files.sort();
    files.dedup();
    files
}

/// The default (unaliased) provider configurations a module and the
/// modules it calls use: those it inherits unless its call passes others.
fn default_providers(config: &Config) -> BTreeSet<String> {
    let mut names: BTreeSet<String> = config.resources.iter().map(|r| r.provider.clone()).collect();
    for call in &config.modules {
        names.extend(call.providers.iter().map(|p| p.parent.clone()));
        names.extend(default_providers(&call.config));
    }
    names.retain(|n| !n.contains('.'));
    names
}

/// Adds what the modules `config` calls require of providers
/// (`required_providers`, `trusted_keys`) to what `config` requires: there is
/// one provider of each name in a run. The calling module's entry wins.
pub(super) fn gather_requirements(config: &mut Config) {
    let mut required = BTreeMap::new();
    let mut keys = Vec::new();
    for call in &mut config.modules {
        gather_requirements(&mut call.config);
        required.extend(call.config.required_providers.clone());
        keys.extend(call.config.trusted_keys.clone());
    }
    for (name, requirement) in required {
        config.required_providers.entry(name).or_insert(requirement);
    }
    for key in keys {
        if !config.trusted_keys.iter().any(|k| k.key == key.key) {
            config.trusted_keys.push(key);
        }
    }
}

fn undeclared_provider(name: &str, location: &Location) -> Diagnostic {
    error_at(
        "Reference to undeclared provider configuration",
        format!(
            "There is no provider configuration {name:?} to pass to the module: declare it with provider \
             \"{}\" {{ alias = \"…\" }} in the calling module.",
            name.split('.').next().unwrap_or(name)
        ),
        location,
    )
}

/// Whether the errors of evaluating a module call's `count` or `for_each`
/// before planning come from referring to what only planning knows
/// (resources, data sources, module outputs, or locals and module inputs
/// that depend on them): such a call is deferred, not refused.
fn refers_to_planned_values(errors: &[Diagnostic]) -> bool {
    errors.iter().any(|d| d.summary.starts_with("Reference to undeclared"))
}

/// A context with the values of a module instance known before planning:
/// its input variables `variables` (those known), and every local that
/// depends only on them and on other such locals.
fn static_context(config: &Config, dir: &Path, variables: BTreeMap<String, Value>) -> EvalContext {
    let mut ctx = EvalContext { variables, ..EvalContext::new(dir) };
    // Each pass adds the locals whose references are all known; a local
    // that refers to a resource or module never is.
    loop {
        let mut added = false;
        for (name, local) in &config.locals {
            if ctx.locals.contains_key(name) {
                continue;
            }
            if let Ok(value) = eval(&local.expr, &ctx).and_then(|v| local.check(v))
                && value.is_wholly_known()
            {
                ctx.locals.insert(name.clone(), value);
                added = true;
            }
        }
        if !added {
            return ctx;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::write_dir;
    use super::*;

    fn expanded(files: &[(&str, &str)]) -> Result<Config, String> {
        let dir = write_dir(files);
        let config = super::super::load(dir.path()).map_err(|d| crate::diag::Diagnostics(d).to_string())?;
        expand_modules(config, &BTreeMap::new(), &Pinned::new())
            .map(|e| e.config)
            .map_err(|d| crate::diag::Diagnostics(d).to_string())
    }

    const CHILD: &str = r#"
variable "name" {}
variable "n" {
  type    = number
  default = 1
}
resource "local_file" "f" {
  count    = var.n
  filename = "${path.module}/${var.name}-${count.index}.txt"
  content  = local.greeting
}
locals {
  greeting = "hello ${var.name}"
}
output "file" {
  value = local_file.f[0].filename
}
"#;

    #[test]
    fn module_instances_are_flattened_into_the_configuration() {
        let config = expanded(&[
            (
                "main.tf",
                r#"
locals {
  names = toset(["a", "b"])
}
module "m" {
  source   = "./modules/child"
  for_each = local.names
  name     = each.key
  n        = 2
}
output "files" {
  value = [for k, m in module.m : m.file]
}
"#,
            ),
            ("modules/child/main.tf", CHILD),
        ])
        .unwrap();
        let addrs: Vec<String> = config.resources.iter().map(|r| r.addr.to_string()).collect();
        assert_eq!(addrs, [r#"module.m["a"].local_file.f"#, r#"module.m["b"].local_file.f"#]);
        let locals: Vec<&str> = config.locals.keys().map(String::as_str).collect();
        assert_eq!(
            locals,
            [
                "module.m",
                r#"module.m["a"].local.greeting"#,
                r#"module.m["a"].output.file"#,
                r#"module.m["a"].var.n"#,
                r#"module.m["a"].var.name"#,
                r#"module.m["b"].local.greeting"#,
                r#"module.m["b"].output.file"#,
                r#"module.m["b"].var.n"#,
                r#"module.m["b"].var.name"#,
                "names",
            ]
        );
        // each.key became a literal; references point into the instance.
        let name = &config.locals[r#"module.m["a"].var.name"#];
        assert_eq!(name.expr.kind, ExprKind::Literal(Value::string("a")));
        let refs: Vec<String> = config.resources[0].references().iter().map(|(r, _)| r.to_string()).collect();
        assert_eq!(
            refs,
            [r#"module.m["a"].var.name"#, "count.index", r#"module.m["a"].local.greeting"#, r#"module.m["a"].var.n"#]
        );
        let out: Vec<String> = config.outputs["files"].references().iter().map(|(r, _)| r.to_string()).collect();
        assert_eq!(out, ["module.m"]);
        let graph = crate::graph::DependencyGraph::build(&config).unwrap();
        let order: Vec<String> = graph.topo_order().iter().map(ToString::to_string).collect();
        let at = |s: &str| order.iter().position(|n| n == s).unwrap();
        assert!(at(r#"module.m["a"].local_file.f"#) < at(r#"module.m["a"].output.file"#));
        assert!(at(r#"module.m["a"].output.file"#) < at("module.m"));
        assert!(at("module.m") < at("output.files"));
    }

    #[test]
    fn providers_pass_through_module_calls() {
        let config = expanded(&[
            ("main.tf", "provider \"local\" {\n  alias = \"other\"\n}\nmodule \"m\" {\n  source    = \"./m\"\n  name      = \"x\"\n  providers = { local = local.other }\n}\nmodule \"d\" {\n  source = \"./m\"\n  name   = \"y\"\n}\n"),
            ("m/main.tf", CHILD),
        ])
        .unwrap();
        let providers: Vec<(String, &str)> =
            config.resources.iter().map(|r| (r.addr.to_string(), r.provider.as_str())).collect();
        assert_eq!(
            providers,
            [("module.m.local_file.f".to_string(), "local.other"), ("module.d.local_file.f".to_string(), "local")]
        );
    }

    #[test]
    fn a_module_count_or_for_each_from_an_ephemeral_variable_is_refused_at_any_depth() {
        let err = expanded(&[
            (
                "main.tf",
                "variable \"names\" {\n  type      = set(string)\n  ephemeral = true\n  default   = [\"a\"]\n}\nlocals {\n  names = var.names\n}\nmodule \"m\" {\n  source   = \"./m\"\n  for_each = local.names\n}\nmodule \"outer\" {\n  source = \"./outer\"\n}\n",
            ),
            ("m/main.tf", "resource \"null_resource\" \"a\" {}\n"),
            (
                "outer/main.tf",
                "variable \"n\" {\n  type      = number\n  ephemeral = true\n  default   = 1\n}\nmodule \"inner\" {\n  source = \"../m\"\n  count  = var.n\n}\n",
            ),
        ])
        .unwrap_err();
        assert!(err.contains("main.tf:11: Invalid for_each argument"), "{err}");
        assert!(err.contains("local.names has an ephemeral value"), "{err}");
        assert!(err.contains("outer/main.tf:8: Invalid count argument"), "{err}");
        assert!(err.contains("var.n has an ephemeral value"), "{err}");
    }

    #[test]
    fn the_null_provider_is_passed_by_its_bare_name() {
        // `null` parses as the keyword; in a providers map it is the
        // hashicorp/null provider's name.
        let config = expanded(&[
            ("main.tf", "provider \"null\" {\n  alias = \"x\"\n}\nmodule \"m\" {\n  source    = \"./m\"\n  providers = { null = null.x }\n}\n"),
            ("m/main.tf", "resource \"null_resource\" \"a\" {}\n"),
        ])
        .unwrap();
        let providers: Vec<&str> = config.resources.iter().map(|r| r.provider.as_str()).collect();
        assert_eq!(providers, ["null.x"]);
    }

    #[test]
    fn nested_modules_inherit_what_their_caller_got() {
        let config = expanded(&[
            (
                "main.tf",
                "provider \"local\" {\n  alias = \"other\"\n}\nmodule \"mid\" {\n  source    = \"./mid\"\n  providers = { local = local.other }\n}\nmodule \"plain\" {\n  source = \"./mid\"\n}\n",
            ),
            ("mid/main.tf", "module \"leaf\" {\n  source = \"../leaf\"\n  name   = \"x\"\n}\n"),
            ("leaf/main.tf", CHILD),
        ])
        .unwrap();
        let providers: Vec<(String, &str)> =
            config.resources.iter().map(|r| (r.addr.to_string(), r.provider.as_str())).collect();
        assert_eq!(
            providers,
            [
                ("module.mid.module.leaf.local_file.f".to_string(), "local.other"),
                ("module.plain.module.leaf.local_file.f".to_string(), "local")
            ]
        );
        assert_eq!(config.resources[0].location.to_string(), "leaf/main.tf:7");
    }

    #[test]
    fn names_bound_inside_a_module_stay_bound() {
        let config = expanded(&[
            ("main.tf", "module \"m\" {\n  source = \"./m\"\n}\n"),
            (
                "m/main.tf",
                r#"variable "rules" {
  default = ["a"]
}
resource "fake_thing" "t" {
  names = [for r in var.rules : "${path.module}/${r}"]
  dynamic "rule" {
    for_each = var.rules
    content {
      name = rule.value
    }
  }
}
"#,
            ),
        ])
        .unwrap();
        let refs: Vec<String> = config.resources[0].references().iter().map(|(r, _)| r.to_string()).collect();
        assert_eq!(refs, ["module.m.var.rules", "module.m.var.rules"]);
        let ctx = EvalContext {
            locals: [("module.m.var.rules".to_string(), Value::Tuple(vec![Value::string("a")]))].into(),
            ..EvalContext::new(".")
        };
        let names = &config.resources[0].body.attribute("names").unwrap().expr;
        assert_eq!(eval(names, &ctx).unwrap(), Value::Tuple(vec![Value::string("m/a")]));
    }

    #[test]
    fn depending_on_a_module_waits_for_all_of_it() {
        let config = expanded(&[
            (
                "main.tf",
                "module \"m\" {\n  source = \"./m\"\n  count  = 2\n  name   = \"x\"\n}\nmodule \"after\" {\n  source     = \"./m\"\n  name       = \"y\"\n  depends_on = [module.m]\n}\nresource \"fake_thing\" \"t\" {\n  depends_on = [module.m]\n}\noutput \"o\" {\n  value      = 1\n  depends_on = [module.after]\n}\n",
            ),
            ("m/main.tf", CHILD),
        ])
        .unwrap();
        let deps = |r: &Resource| r.depends_on.iter().map(|(d, _)| d.to_string()).collect::<Vec<_>>();
        let t = config.resources.iter().find(|r| r.addr.to_string() == "fake_thing.t").unwrap();
        assert_eq!(deps(t), ["module.m[0].local_file.f", "module.m[1].local_file.f"]);
        let after = config.resources.iter().find(|r| r.addr.to_string() == "module.after.local_file.f").unwrap();
        assert_eq!(deps(after), ["module.m[0].local_file.f", "module.m[1].local_file.f"]);
        let o: Vec<String> = config.outputs["o"].depends_on.iter().map(|(d, _)| d.to_string()).collect();
        assert_eq!(o, ["module.after.local_file.f"]);
        let err = expanded(&[("main.tf", "resource \"fake_thing\" \"t\" {\n  depends_on = [module.nope.x]\n}\n")])
            .unwrap_err();
        assert!(err.contains("main.tf:2: Invalid depends_on reference"), "{err}");
    }

    #[test]
    fn a_module_using_an_alias_it_is_not_passed_is_an_error() {
        let err = expanded(&[
            ("main.tf", "module \"m\" {\n  source = \"./m\"\n}\n"),
            ("m/main.tf", "resource \"local_file\" \"f\" {\n  provider = local.files\n}\n"),
        ])
        .unwrap_err();
        assert!(err.contains("m/main.tf:1: Provider configuration not present"), "{err}");
        assert!(err.contains("\"local.files\""), "{err}");
    }

    #[test]
    fn a_call_whose_argument_planning_decides_is_deferred_then_pinned() {
        let dir = write_dir(&[
            (
                "main.tf",
                "resource \"random_id\" \"r\" {}\nmodule \"m\" {\n  source   = \"./m\"\n  for_each = random_id.r.keepers\n  name     = each.value\n}\noutput \"o\" {\n  value = module.m\n}\n",
            ),
            ("m/main.tf", CHILD),
        ]);
        let config = super::super::load(dir.path()).unwrap();
        let first = expand_modules(config.clone(), &BTreeMap::new(), &Pinned::new()).unwrap();
        let [deferred] = first.deferred.as_slice() else { panic!("{:?}", first.deferred) };
        assert_eq!((deferred.name.as_str(), deferred.local.as_str()), ("module.m", "module.m.for_each"));
        assert_eq!(deferred.call.to_string(), "module.m");
        assert_eq!(first.deferred_providers, BTreeSet::from(["local".to_string()]));
        let addrs: Vec<String> = first.config.resources.iter().map(|r| r.addr.to_string()).collect();
        assert_eq!(addrs, ["random_id.r"]);
        let refs: Vec<String> =
            first.config.locals["module.m.for_each"].references().iter().map(|(r, _)| r.to_string()).collect();
        assert_eq!(refs, ["random_id.r"]);
        // Pinned with keys known and a value known only after apply: the
        // instance's input reads that value from the argument's local.
        let keys = Value::Object(
            [("a".to_string(), Value::string("x")), ("b".to_string(), Value::unknown())].into_iter().collect(),
        );
        let pinned = Pinned::from([("module.m".to_string(), keys)]);
        let second = expand_modules(config.clone(), &BTreeMap::new(), &pinned).unwrap();
        assert!(second.deferred.is_empty());
        let addrs: Vec<String> = second.config.resources.iter().map(|r| r.addr.to_string()).collect();
        assert_eq!(addrs, ["random_id.r", r#"module.m["a"].local_file.f"#, r#"module.m["b"].local_file.f"#]);
        let a = &second.config.locals[r#"module.m["a"].var.name"#].expr;
        assert_eq!(a.kind, ExprKind::Literal(Value::string("x")));
        let b = &second.config.locals[r#"module.m["b"].var.name"#];
        let refs: Vec<String> = b.references().iter().map(|(r, _)| r.to_string()).collect();
        assert_eq!(refs, ["module.m.for_each"]);
        // A pinned value that cannot expand is the argument's error.
        let pinned = Pinned::from([("module.m".to_string(), Value::Tuple(vec![]))]);
        let err = crate::diag::Diagnostics(expand_modules(config, &BTreeMap::new(), &pinned).unwrap_err()).to_string();
        assert!(err.contains("main.tf:4: Invalid for_each argument"), "{err}");
    }

    #[test]
    fn bad_calls_are_errors() {
        let err =
            expanded(&[("main.tf", "module \"m\" {\n  source = \"./m\"\n  nmae   = \"x\"\n}\n"), ("m/main.tf", CHILD)])
                .unwrap_err();
        assert!(err.contains("main.tf:3: Unsupported argument"), "{err}");
        assert!(err.contains("Did you mean \"name\"?"), "{err}");
        assert!(err.contains("main.tf:1: Missing required argument"), "{err}");
    }

    #[test]
    fn an_overridden_call_plans_nothing_and_gives_its_outputs() {
        let dir = write_dir(&[
            ("main.tf", "module \"a\" {\n  source = \"./child\"\n  name   = \"a\"\n}\n"),
            ("child/main.tf", CHILD),
        ]);
        let mut config = super::super::load(dir.path()).unwrap();
        let at = Location::new("a.tftest.hcl", 1, 1);
        assert!(!override_call(&mut config, &["b".to_string()], &BTreeMap::new(), &at));
        let outputs = BTreeMap::from([("file".to_string(), Value::string("x.txt")), ("nope".to_string(), Value::Null)]);
        assert!(override_call(&mut config, &["a".to_string()], &outputs, &at));
        let flat = expand_modules(config, &BTreeMap::new(), &Pinned::new()).unwrap().config;
        assert!(flat.resources.is_empty(), "{:?}", flat.resources);
        let output = &flat.locals["module.a.output.file"].expr;
        assert!(matches!(&output.kind, ExprKind::Literal(v) if *v == Value::string("x.txt")), "{output:?}");
        assert!(!flat.locals.contains_key("module.a.output.nope"));
    }

    #[test]
    fn remote_sources_are_refused() {
        for source in ["git::https://example.com/m.git", "hashicorp/consul/aws", "modules/x"] {
            let err = expanded(&[("main.tf", &format!("module \"m\" {{\n  source = \"{source}\"\n}}\n"))]).unwrap_err();
            assert!(err.contains("main.tf:2: Unsupported module source"), "{err}");
            assert!(err.contains("only from local paths (./ or ../)"), "{err}");
        }
    }
}
