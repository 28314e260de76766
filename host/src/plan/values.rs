//! Instances of a resource block (`count`, `for_each`) and the values that
//! references to a resource see: an object for a single instance, a tuple
//! for `count`, an object keyed like `for_each`.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::addr::{AddrMap, InstanceAddr, InstanceKey, ResourceAddr};
use crate::config::{self, EvalContext, Resource};
use crate::diag::Diagnostic;
use crate::value::Value;

/// How many instances a resource block has.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Expansion {
    /// No `count` or `for_each`: one instance without a key.
    Single,
    /// `count = N`: keys 0..N.
    Count(i64),
    /// `for_each`: one instance per key, with its `each.value`.
    ForEach(BTreeMap<String, Value>),
}

impl Expansion {
    /// The keys of the instances, in order.
    pub fn instance_keys(&self) -> Vec<Option<InstanceKey>> {
        match self {
            Expansion::Single => vec![None],
            Expansion::Count(n) => (0..*n).map(|i| Some(InstanceKey::Int(i))).collect(),
            Expansion::ForEach(m) => m.keys().map(|k| Some(InstanceKey::String(k.clone()))).collect(),
        }
    }

    /// Whether an instance with this key exists.
    pub fn contains(&self, key: Option<&InstanceKey>) -> bool {
        match (self, key) {
            (Expansion::Single, None) => true,
            (Expansion::Count(n), Some(InstanceKey::Int(i))) => *i >= 0 && i < n,
            (Expansion::ForEach(m), Some(InstanceKey::String(k))) => m.contains_key(k),
            _ => false,
        }
    }
}

/// Evaluates `count` or `for_each` of a resource block (both must be known
/// when planning, as in Terraform; `config::instances` says why not).
pub fn expand(resource: &Resource, ctx: &EvalContext) -> Result<Expansion, Vec<Diagnostic>> {
    let instances = config::instances(resource, ctx)?;
    Ok(if resource.count.is_some() {
        Expansion::Count(instances.len() as i64)
    } else if resource.for_each.is_some() {
        Expansion::ForEach(
            instances
                .into_iter()
                .filter_map(|i| i.each.and_then(|(k, v)| Some((k.as_str()?.to_string(), v))))
                .collect(),
        )
    } else {
        Expansion::Single
    })
}

/// The context for evaluating one instance: `count.index` or `each.*` set.
pub fn instance_context(ctx: &EvalContext, expansion: &Expansion, key: Option<&InstanceKey>) -> EvalContext {
    let mut inst = EvalContext {
        variables: ctx.variables.clone(),
        locals: ctx.locals.clone(),
        ephemeral: ctx.ephemeral.clone(),
        ..EvalContext::new(&ctx.dir)
    };
    match (expansion, key) {
        (Expansion::Count(_), Some(InstanceKey::Int(i))) => inst.count_index = Some(*i),
        (Expansion::ForEach(m), Some(InstanceKey::String(k))) => {
            inst.each = Some((Value::string(k.clone()), m.get(k).cloned().unwrap_or_default()))
        }
        _ => {}
    }
    inst
}

/// The values of those of the locals `names` known so far: what an
/// evaluation that reads only `names` needs (see
/// [`ResourceValues::snapshot_of`] for resources).
pub fn locals_of(names: &[String], known: &BTreeMap<String, Value>) -> BTreeMap<String, Value> {
    names.iter().filter_map(|name| Some((name.clone(), known.get(name)?.clone()))).collect()
}

/// The values of resource instances known so far, and how each resource
/// block expands, so that references see the right shape.
///
/// Hash maps with a fast hash: every step of a plan or an apply looks
/// addresses up here several times, and in an ordered map each lookup
/// compares a dozen addresses string by string.
#[derive(Debug, Clone, Default)]
pub struct ResourceValues {
    expansions: AddrMap<ResourceAddr, Expansion>,
    instances: AddrMap<InstanceAddr, Value>,
    /// Each block's value as references see it, built when first asked for
    /// and dropped when the block changes: every instance that refers to a
    /// block of many instances shares one copy of it.
    built: AddrMap<ResourceAddr, Arc<Value>>,
}

impl ResourceValues {
    /// Records how a resource expands.
    pub fn declare(&mut self, addr: &ResourceAddr, expansion: &Expansion) {
        self.expansions.insert(addr.clone(), expansion.clone());
        self.built.remove(addr);
    }

    /// How a resource expands, once declared.
    pub fn expansion(&self, addr: &ResourceAddr) -> Option<&Expansion> {
        self.expansions.get(addr)
    }

    /// Records an instance's value.
    pub fn set(&mut self, addr: &InstanceAddr, value: Value) {
        self.instances.insert(addr.clone(), value);
        self.built.remove(&addr.resource);
    }

    /// An instance's value, once recorded.
    pub fn instance(&self, addr: &InstanceAddr) -> Option<&Value> {
        self.instances.get(addr)
    }

    /// The value a reference to the resource sees.
    pub fn resource_value(&mut self, addr: &ResourceAddr) -> Arc<Value> {
        if let Some(value) = self.built.get(addr) {
            return Arc::clone(value);
        }
        let value = Arc::new(self.build(addr));
        self.built.insert(addr.clone(), Arc::clone(&value));
        value
    }

    /// Assembles the resource's value from its instances' values.
    fn build(&self, addr: &ResourceAddr) -> Value {
        let instance = |key: Option<InstanceKey>| {
            self.instances.get(&InstanceAddr { resource: addr.clone(), key }).cloned().unwrap_or(Value::unknown())
        };
        match self.expansions.get(addr) {
            None | Some(Expansion::Single) => instance(None),
            Some(Expansion::Count(n)) => Value::Tuple((0..*n).map(|i| instance(Some(InstanceKey::Int(i)))).collect()),
            Some(Expansion::ForEach(m)) => {
                Value::Object(m.keys().map(|k| (k.clone(), instance(Some(InstanceKey::String(k.clone()))))).collect())
            }
        }
    }

    /// The values of those of `addrs` that are declared: what an
    /// evaluation that references only `addrs` needs.
    pub fn snapshot_of(&mut self, addrs: &[ResourceAddr]) -> BTreeMap<ResourceAddr, Arc<Value>> {
        let mut values = BTreeMap::new();
        for addr in addrs {
            if self.expansions.contains_key(addr) {
                values.insert(addr.clone(), self.resource_value(addr));
            }
        }
        values
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_values_take_the_shape_of_the_expansion() {
        let mut v = ResourceValues::default();
        let single = ResourceAddr::managed("random_id", "a");
        let counted = ResourceAddr::managed("random_id", "b");
        v.declare(&single, &Expansion::Single);
        v.declare(&counted, &Expansion::Count(2));
        v.set(&single.instance(), Value::string("x"));
        v.set(&InstanceAddr { resource: counted.clone(), key: Some(InstanceKey::Int(1)) }, Value::string("y"));
        assert_eq!(*v.resource_value(&single), Value::string("x"));
        assert_eq!(*v.resource_value(&counted), Value::Tuple(vec![Value::unknown(), Value::string("y")]));
        // A value built once is built again when an instance changes.
        v.set(&InstanceAddr { resource: counted.clone(), key: Some(InstanceKey::Int(0)) }, Value::string("z"));
        assert_eq!(*v.resource_value(&counted), Value::Tuple(vec![Value::string("z"), Value::string("y")]));
        assert!(Expansion::Count(2).contains(Some(&InstanceKey::Int(1))));
        assert!(!Expansion::Count(2).contains(Some(&InstanceKey::Int(2))));
        assert!(!Expansion::Count(2).contains(None));
    }
}
