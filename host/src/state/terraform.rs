//! Terraform's state (format version 4, what Terraform 0.12 to 1.11
//! write), read into cairn's: what `cairn state migrate` writes through the
//! configured backend, so that a directory Terraform applied is planned by
//! cairn as the same objects rather than created again.
//!
//! Every managed resource instance comes over with its address (module
//! path, `count` index or `for_each` key), its attributes checked against
//! the cairn provider's schema (a schema version older than the
//! provider's is kept as it is, for the plan's `upgrade-state`), its
//! status (tainted), deposed objects, dependencies, sensitive paths and
//! `create_before_destroy`; outputs come with their types and
//! sensitivity; the lineage and serial stay Terraform's, so that the
//! state's history goes on. Data sources are not kept: cairn reads them
//! again on every plan. Provider-private bytes are not kept either: they
//! are the format of Terraform's provider, which a cairn provider does
//! not read.
//!
//! Anything that cannot come over whole is refused by name, and nothing
//! is converted: a provider cairn does not have, attributes that do not fit
//! the schema, a newer schema version than the provider's.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value as Json;

use super::{Attributes, DeposedObject, InstanceState, InstanceStatus, OutputState, State};
use crate::addr::{InstanceAddr, ResourceAddr};
use crate::schema::Schema;
use crate::value::{self, Path, PathStep};

/// The only format of Terraform's state this reads.
pub const TERRAFORM_STATE_VERSION: u64 = 4;

/// The file Terraform's local backend keeps its state in.
pub const TERRAFORM_STATE_FILE: &str = "terraform.tfstate";

/// For each managed resource of Terraform's state, the local name of the
/// cairn provider that manages it and that provider's schema of its type,
/// or why there is none.
pub type ProviderOf<'a> = dyn Fn(&TfResource) -> Result<(String, Schema), String> + 'a;

/// Terraform's state file, as far as migrating reads it.
#[derive(Deserialize)]
pub struct TerraformState {
    /// The format: [`TERRAFORM_STATE_VERSION`].
    pub version: u64,
    /// The Terraform that wrote it, for messages.
    #[serde(default)]
    pub terraform_version: String,
    /// Increases with every write.
    #[serde(default)]
    pub serial: u64,
    /// The UUID fixed when the state was created.
    #[serde(default)]
    pub lineage: String,
    #[serde(default)]
    outputs: BTreeMap<String, TfOutput>,
    /// Every resource, with its instances.
    #[serde(default)]
    pub resources: Vec<TfResource>,
}

#[derive(Deserialize)]
struct TfOutput {
    value: Json,
    #[serde(rename = "type")]
    ty: Json,
    #[serde(default)]
    sensitive: bool,
}

/// One resource of Terraform's state: a block's instances.
#[derive(Deserialize)]
pub struct TfResource {
    /// The module instance path (`module.a`, `module.b["k"]`), empty for
    /// the root module.
    #[serde(default)]
    pub module: String,
    /// `managed` or `data`.
    pub mode: String,
    /// The resource type.
    #[serde(rename = "type")]
    pub type_name: String,
    /// The block's name.
    pub name: String,
    /// The provider configuration, as Terraform names it:
    /// `provider["registry.terraform.io/hashicorp/random"]`, with a
    /// module path before it and an alias after it when there are.
    pub provider: String,
    #[serde(default)]
    instances: Vec<TfInstance>,
}

#[derive(Deserialize)]
struct TfInstance {
    #[serde(default)]
    index_key: Option<Json>,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    deposed: Option<String>,
    #[serde(default)]
    schema_version: u64,
    #[serde(default)]
    attributes: Option<Json>,
    #[serde(default)]
    sensitive_attributes: Vec<Vec<TfPathStep>>,
    #[serde(default)]
    dependencies: Vec<String>,
    #[serde(default)]
    create_before_destroy: bool,
}

/// One step of a path in Terraform's `sensitive_attributes`.
#[derive(Deserialize)]
struct TfPathStep {
    #[serde(rename = "type")]
    kind: String,
    value: Json,
}

impl TfResource {
    /// Whether this is a managed resource (not a data source).
    pub fn is_managed(&self) -> bool {
        self.mode == "managed"
    }

    /// The block's address in cairn's form (`module.a.random_id.x`).
    pub fn address(&self) -> Result<ResourceAddr, String> {
        let text = match self.module.is_empty() {
            true => format!("{}.{}", self.type_name, self.name),
            false => format!("{}.{}.{}", self.module, self.type_name, self.name),
        };
        text.parse::<ResourceAddr>().map_err(|e| format!("{text}: {e}"))
    }

    /// The provider's type name in Terraform's provider address: `random`
    /// for `provider["registry.terraform.io/hashicorp/random"]`,
    /// `terraform` for the built-in `terraform.io/builtin/terraform`.
    pub fn provider_type(&self) -> &str {
        let inside = self.provider.split("provider[\"").nth(1).and_then(|rest| rest.split('"').next());
        inside.and_then(|source| source.rsplit('/').next()).unwrap_or(&self.provider)
    }

    /// How many instances (deposed objects included) it holds.
    pub fn instance_count(&self) -> usize {
        self.instances.len()
    }
}

impl TerraformState {
    /// Reads Terraform's state file text; `what` names it in errors.
    pub fn parse(what: &str, text: &[u8]) -> Result<TerraformState, String> {
        let state: TerraformState =
            serde_json::from_slice(text).map_err(|e| format!("{what} is not a Terraform state file: {e}"))?;
        if state.version != TERRAFORM_STATE_VERSION {
            return Err(format!(
                "{what} has state format version {} (written by Terraform {}); cairn reads version \
                 {TERRAFORM_STATE_VERSION}, which Terraform 0.12 and later write: run `terraform apply` with a \
                 newer Terraform first",
                state.version, state.terraform_version
            ));
        }
        Ok(state)
    }

    /// How many managed resource instances it holds.
    pub fn managed_instances(&self) -> usize {
        self.resources.iter().filter(|r| r.is_managed()).map(TfResource::instance_count).sum()
    }

    /// cairn's state for the same objects. `provider_of` gives, for each
    /// managed resource, the local name of the cairn provider that manages
    /// it and that provider's schema for its type, or says why there is
    /// none. Every problem is reported, one per line; on any, nothing is
    /// returned.
    pub fn into_state(self, provider_of: &ProviderOf<'_>) -> Result<State, Vec<String>> {
        let mut state = State::new();
        state.lineage = self.lineage.clone();
        state.serial = self.serial;
        let mut problems = Vec::new();
        for resource in self.resources.iter().filter(|r| r.is_managed()) {
            if let Err(e) = convert_resource(resource, provider_of, &mut state) {
                problems.push(e);
            }
        }
        for (name, output) in &self.outputs {
            match convert_output(output) {
                Ok(o) => {
                    state.outputs.insert(name.clone(), o);
                }
                Err(e) => problems.push(format!("output \"{name}\": {e}")),
            }
        }
        if problems.is_empty() { Ok(state) } else { Err(problems) }
    }
}

/// Adds a managed resource's instances to `state`.
fn convert_resource(resource: &TfResource, provider_of: &ProviderOf<'_>, state: &mut State) -> Result<(), String> {
    let addr = resource.address()?;
    let (provider, schema) = provider_of(resource).map_err(|e| format!("{addr}: {e}"))?;
    // Current objects first, so that a deposed object finds its instance.
    let (deposed, current): (Vec<&TfInstance>, Vec<&TfInstance>) =
        resource.instances.iter().partition(|i| i.deposed.is_some());
    for inst in current.into_iter().chain(deposed) {
        let at = instance_addr(&addr, inst.index_key.as_ref())?;
        let attributes = convert_attributes(&schema, inst).map_err(|e| format!("{at}: {e}"))?;
        let entry = state.get_mut(&at);
        match (&inst.deposed, entry) {
            (Some(key), Some(existing)) => {
                existing.deposed.push(DeposedObject { key: key.clone(), attributes, private: Vec::new() });
            }
            (Some(key), None) => {
                // Only the deposed object is left: an instance with null
                // attributes holds it, as cairn's own states do.
                let mut holder = instance(&at, &provider, inst, Attributes::null())?;
                holder.deposed.push(DeposedObject { key: key.clone(), attributes, private: Vec::new() });
                state.set(holder);
            }
            (None, _) => state.set(instance(&at, &provider, inst, attributes)?),
        }
    }
    Ok(())
}

/// The instance `at` for `inst`, with `attributes`.
fn instance(
    at: &InstanceAddr,
    provider: &str,
    inst: &TfInstance,
    attributes: Attributes,
) -> Result<InstanceState, String> {
    let dependencies = inst
        .dependencies
        .iter()
        .map(|d| d.parse::<ResourceAddr>().map_err(|e| format!("{at}: the dependency {d}: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    let sensitive_attributes = inst
        .sensitive_attributes
        .iter()
        .map(|p| sensitive_path(p))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{at}: {e}"))?;
    Ok(InstanceState {
        status: match inst.status.as_deref() {
            Some("tainted") => InstanceStatus::Tainted,
            _ => InstanceStatus::Ready,
        },
        dependencies,
        create_before_destroy: inst.create_before_destroy,
        sensitive_attributes,
        ..InstanceState::new(at.clone(), provider, inst.schema_version, attributes)
    })
}

/// The address of the instance with Terraform's `index_key` (a number for
/// `count`, a string for `for_each`).
fn instance_addr(addr: &ResourceAddr, key: Option<&Json>) -> Result<InstanceAddr, String> {
    let text = match key {
        None => addr.to_string(),
        Some(Json::Number(n)) => format!("{addr}[{n}]"),
        Some(Json::String(s)) => format!("{addr}[{}]", Json::String(s.clone())),
        Some(other) => return Err(format!("{addr}: an instance key {other} is neither a number nor a string")),
    };
    text.parse::<InstanceAddr>().map_err(|e| format!("{text}: {e}"))
}

/// The attributes of an instance as cairn stores them: read with the
/// schema's type when the object is in the provider's current schema
/// version, so that one that does not fit is refused now; kept as they
/// are when older, for the plan to upgrade.
fn convert_attributes(schema: &Schema, inst: &TfInstance) -> Result<Attributes, String> {
    let json = inst.attributes.clone().unwrap_or(Json::Null);
    if inst.schema_version > schema.version {
        return Err(format!(
            "its attributes are in schema version {} of the resource type, newer than the version {} of cairn's \
             provider, which cannot read them",
            inst.schema_version, schema.version
        ));
    }
    if inst.schema_version < schema.version {
        return Ok(Attributes::from_json(&json));
    }
    let ty = schema.block.implied_type();
    let object = value::from_json(&json, &ty)
        .map_err(|e| format!("its attributes do not fit the schema of cairn's provider: {e}"))?;
    Ok(Attributes::new(&object, &ty))
}

/// A path of Terraform's `sensitive_attributes` as cairn's [`Path`].
fn sensitive_path(steps: &[TfPathStep]) -> Result<Path, String> {
    let mut out = Vec::with_capacity(steps.len());
    for step in steps {
        // An index is a typed value (`{"value": 0, "type": "number"}`).
        let index = step.value.get("value").unwrap_or(&step.value);
        out.push(match (step.kind.as_str(), index) {
            ("get_attr", Json::String(name)) => PathStep::Attr(name.clone()),
            ("index", Json::String(key)) => PathStep::Key(key.clone()),
            ("index", Json::Number(n)) if n.as_u64().is_some() => PathStep::Index(n.as_u64().unwrap_or_default()),
            _ => return Err(format!("a sensitive path has a step cairn does not read: {} {}", step.kind, step.value)),
        });
    }
    Ok(Path::from_steps(out))
}

/// A root output, with the type Terraform recorded.
fn convert_output(output: &TfOutput) -> Result<OutputState, String> {
    let ty = value::type_from_json(&output.ty)?;
    let v = value::from_json(&output.value, &ty).map_err(|e| e.to_string())?;
    Ok(OutputState::new(&v, output.sensitive))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{Attribute, Block};
    use crate::value::{Type, Value};

    /// What `terraform apply` wrote for a `terraform_data` with `count = 2`
    /// in a module, one of them tainted, and a deposed object.
    const STATE: &str = r#"{
      "version": 4, "terraform_version": "1.11.4", "serial": 7, "lineage": "9e1b6f2c-0000-4000-8000-000000000001",
      "outputs": {"pw": {"value": "s3cret", "type": "string", "sensitive": true}},
      "resources": [
        {"mode": "data", "type": "terraform_remote_state", "name": "x", "provider": "provider[\"terraform.io/builtin/terraform\"]",
         "instances": [{"schema_version": 0, "attributes": {"backend": "local"}}]},
        {"module": "module.app", "mode": "managed", "type": "terraform_data", "name": "d", "each": "list",
         "provider": "provider[\"terraform.io/builtin/terraform\"]",
         "instances": [
           {"index_key": 0, "schema_version": 0,
            "attributes": {"id": "a", "input": {"value": "x", "type": "string"}, "output": {"value": "x", "type": "string"}, "triggers_replace": null},
            "sensitive_attributes": [[{"type": "get_attr", "value": "input"}]],
            "dependencies": ["module.app.terraform_data.base"]},
           {"index_key": 1, "status": "tainted", "schema_version": 0,
            "attributes": {"id": "b", "input": null, "output": null, "triggers_replace": null}},
           {"index_key": 1, "deposed": "00000001", "schema_version": 0,
            "attributes": {"id": "old", "input": null, "output": null, "triggers_replace": null}}
         ]}
      ]
    }"#;

    fn schema() -> Schema {
        let mut block = Block::default();
        block.attributes.insert("id".into(), Attribute::computed(Type::String));
        block.attributes.insert("input".into(), Attribute::optional(Type::Dynamic));
        block.attributes.insert("output".into(), Attribute::computed(Type::Dynamic));
        block.attributes.insert("triggers_replace".into(), Attribute::optional(Type::Dynamic));
        Schema { version: 0, block }
    }

    fn terraform(r: &TfResource) -> Result<(String, Schema), String> {
        match r.provider_type() {
            "terraform" => Ok(("terraform".into(), schema())),
            other => Err(format!("no provider {other}")),
        }
    }

    #[test]
    fn every_managed_instance_comes_over_with_its_address_status_and_deposed_objects() {
        let state =
            TerraformState::parse("terraform.tfstate", STATE.as_bytes()).unwrap().into_state(&terraform).unwrap();
        assert_eq!((state.lineage.as_str(), state.serial), ("9e1b6f2c-0000-4000-8000-000000000001", 7));
        let addrs: Vec<String> = state.resources.iter().map(|i| i.addr.to_string()).collect();
        assert_eq!(addrs, ["module.app.terraform_data.d[0]", "module.app.terraform_data.d[1]"]);
        let first = state.get(&"module.app.terraform_data.d[0]".parse().unwrap()).unwrap();
        assert_eq!(first.provider, "terraform");
        let v = first.attributes.decode(&schema().block.implied_type()).unwrap();
        assert_eq!(v.get_attr("input"), &Value::string("x"));
        assert_eq!(first.sensitive_attributes, [Path::root().attr("input")]);
        assert_eq!(first.dependencies, ["module.app.terraform_data.base".parse::<ResourceAddr>().unwrap()]);
        let second = state.get(&"module.app.terraform_data.d[1]".parse().unwrap()).unwrap();
        assert_eq!(second.status, InstanceStatus::Tainted);
        assert_eq!(second.deposed.len(), 1);
        assert_eq!(second.deposed[0].key, "00000001");
        assert!(state.outputs["pw"].sensitive);
    }

    #[test]
    fn a_resource_cairn_cannot_manage_is_refused_by_name() {
        let mut tf = TerraformState::parse("t", STATE.as_bytes()).unwrap();
        tf.resources[1].provider = "provider[\"registry.terraform.io/hashicorp/aws\"]".into();
        let errors = tf.into_state(&terraform).unwrap_err();
        assert_eq!(errors, ["module.app.terraform_data.d: no provider aws"]);

        let misfit = STATE.replace(r#""id": "a""#, r#""id": {"nested": true}"#);
        let errors = TerraformState::parse("t", misfit.as_bytes()).unwrap().into_state(&terraform).unwrap_err();
        assert!(errors[0].starts_with("module.app.terraform_data.d[0]: its attributes do not fit"), "{errors:?}");
    }

    #[test]
    fn another_format_is_refused_with_what_to_do() {
        let err = TerraformState::parse("terraform.tfstate", br#"{"version": 3, "terraform_version": "0.11.14"}"#)
            .err()
            .unwrap();
        assert!(err.contains("format version 3 (written by Terraform 0.11.14)"), "{err}");
    }
}
