//! Addresses: resources and their instances, possibly inside modules.
//! `local_file.site`, `data.local_file.t`, `random_id.x[2]`,
//! `local_file.pages["index"]`, `module.a["x"].module.b.local_file.f`.
//!
//! A [`ModuleInstance`] is the path of module calls (each with its instance
//! key) from the root; the root module's path is empty, so the address of a
//! resource outside any module reads and serialises as it always has.

use std::fmt;
use std::str::FromStr;

use internment::ArcIntern;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Whether a resource is managed (`resource` block) or read (`data` block).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mode {
    /// A `resource` block: an object cairn creates, updates and deletes.
    Managed,
    /// A `data` block: an object cairn only reads.
    Data,
    /// An `ephemeral` block (Terraform 1.10): an object a provider opens
    /// for the length of one plan or apply and closes again; never stored.
    Ephemeral,
}

/// One step of a module path: `module.NAME` or `module.NAME[KEY]`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ModuleStep {
    /// The module call's name (the `module` block's label).
    pub name: String,
    /// The instance key, when the call has `count` or `for_each`.
    pub key: Option<InstanceKey>,
}

/// A module instance: the module calls from the root to it. Empty for the
/// root module.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ModuleInstance(pub Vec<ModuleStep>);

impl ModuleInstance {
    /// The root module.
    pub fn root() -> ModuleInstance {
        ModuleInstance(Vec::new())
    }

    /// Whether this is the root module.
    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// The instance of the call `name` (with `key`) inside this one.
    pub fn child(&self, name: &str, key: Option<InstanceKey>) -> ModuleInstance {
        let mut steps = self.0.clone();
        steps.push(ModuleStep { name: name.to_string(), key });
        ModuleInstance(steps)
    }

    /// Whether this instance is `target` or inside it, where a step of
    /// `target` without a key stands for every instance of that call (as
    /// `-target=module.a` targets `module.a["x"]`).
    pub fn within(&self, target: &ModuleInstance) -> bool {
        self.0.len() >= target.0.len()
            && self.0.iter().zip(&target.0).all(|(s, t)| s.name == t.name && (t.key.is_none() || s.key == t.key))
    }
}

impl ModuleInstance {
    /// Where moving the module `from` to `to` sends this instance, if it is
    /// `from` or inside it. Without a key on either last step, `from` is
    /// the whole call: each of its instances keeps its key.
    pub fn moved(&self, from: &ModuleInstance, to: &ModuleInstance) -> Option<ModuleInstance> {
        let (Some(from_last), Some(to_last)) = (from.0.last(), to.0.last()) else { return None };
        let whole_call = from_last.key.is_none() && to_last.key.is_none();
        let n = from.0.len();
        let here = self.0.get(..n)?;
        let matches = here[..n - 1] == from.0[..n - 1]
            && here[n - 1].name == from_last.name
            && (whole_call || here[n - 1].key == from_last.key);
        if !matches {
            return None;
        }
        let mut steps = to.0.clone();
        if whole_call {
            steps[n - 1].key = here[n - 1].key.clone();
        }
        steps.extend(self.0[n..].iter().cloned());
        Some(ModuleInstance(steps))
    }
}

impl fmt::Display for ModuleInstance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, step) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            write!(f, "module.{}", step.name)?;
            if let Some(key) = &step.key {
                write!(f, "{key}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Display for InstanceKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InstanceKey::Int(i) => write!(f, "[{i}]"),
            InstanceKey::String(s) => write!(f, "[{}]", crate::value::quote(s)),
        }
    }
}

/// A resource block's address: module, mode, type and name (read through
/// [`ResourceParts`]).
///
/// Addresses are interned: every equal address in the process shares one
/// copy, so that the many places holding one (the configuration, the
/// state and its dependency lists, the graph, the plan) each hold a
/// pointer, a clone allocates nothing, and equality and hashing look at
/// the pointer alone. Order is still the parts' order (module, mode, type,
/// name), which is what plans and state files are sorted by. A copy is
/// freed with its last user.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct ResourceAddr(ArcIntern<ResourceParts>);

/// What a [`ResourceAddr`] is made of.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ResourceParts {
    /// The module instance it is declared in (empty for the root module).
    pub module: ModuleInstance,
    /// Managed or data.
    pub mode: Mode,
    /// The resource type, e.g. `local_file`.
    pub type_name: String,
    /// The name given in configuration.
    pub name: String,
}

impl std::ops::Deref for ResourceAddr {
    type Target = ResourceParts;

    fn deref(&self) -> &ResourceParts {
        &self.0
    }
}

impl Ord for ResourceAddr {
    fn cmp(&self, other: &ResourceAddr) -> std::cmp::Ordering {
        if self == other { std::cmp::Ordering::Equal } else { (*self.0).cmp(&*other.0) }
    }
}

impl PartialOrd for ResourceAddr {
    fn partial_cmp(&self, other: &ResourceAddr) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Debug for ResourceAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceAddr")
            .field("module", &self.module)
            .field("mode", &self.mode)
            .field("type_name", &self.type_name)
            .field("name", &self.name)
            .finish()
    }
}

/// A hash map keyed by addresses (or anything else hashable), with a fast
/// hash rather than a DoS-resistant one: its keys come from the
/// configuration and the state. The engine's hottest lookups are by
/// address, and in an ordered map each compares a dozen addresses string
/// by string.
pub type AddrMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

/// A hash set of addresses, hashed as [`AddrMap`]'s keys are.
pub type AddrSet<K> = std::collections::HashSet<K, foldhash::fast::RandomState>;

/// An [`AddrMap`] that is walked in the order its keys were first inserted,
/// for maps whose walk must be the same from run to run (an apply graph
/// numbers its steps as it walks them).
pub type AddrIndexMap<K, V> = indexmap::IndexMap<K, V, foldhash::fast::RandomState>;

/// The key of one instance of a resource or module with `count` or `for_each`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum InstanceKey {
    /// `[2]`
    Int(i64),
    /// `["index"]`
    String(String),
}

/// One resource instance's address.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct InstanceAddr {
    /// The resource it belongs to.
    pub resource: ResourceAddr,
    /// Its key, when the resource has several instances.
    pub key: Option<InstanceKey>,
}

thread_local! {
    /// The addresses this thread made lately, by the hash of their parts.
    /// Every evaluation of a reference makes the address it names, and
    /// interning one (two strings, a hash and a lookup in a map all
    /// threads share) was 3% of a plan; found here, it is a hash and a
    /// comparison. A hash two addresses share keeps the later one.
    static RECENT_ADDRS: std::cell::RefCell<std::collections::HashMap<u64, ResourceAddr, foldhash::fast::FixedState>> =
        std::cell::RefCell::default();
}

/// How many addresses [`RECENT_ADDRS`] keeps before it starts over: more
/// than a large configuration's resources, and a few megabytes at most.
const RECENT_ADDRS_KEPT: usize = 1 << 17;

impl ResourceAddr {
    /// The address of the resource `type_name.name` of `mode` in `module`.
    pub fn new(module: ModuleInstance, mode: Mode, type_name: &str, name: &str) -> ResourceAddr {
        use std::hash::BuildHasher;
        let hash = foldhash::fast::FixedState::default().hash_one((&module, mode, type_name, name));
        RECENT_ADDRS.with_borrow_mut(|recent| {
            if let Some(addr) = recent.get(&hash)
                && addr.mode == mode
                && addr.type_name == type_name
                && addr.name == name
                && addr.module == module
            {
                return addr.clone();
            }
            let addr = ResourceAddr(ArcIntern::new(ResourceParts {
                module,
                mode,
                type_name: type_name.to_string(),
                name: name.to_string(),
            }));
            if recent.len() >= RECENT_ADDRS_KEPT {
                recent.clear();
            }
            recent.insert(hash, addr.clone());
            addr
        })
    }

    /// A managed resource's address in the root module.
    pub fn managed(type_name: &str, name: &str) -> ResourceAddr {
        ResourceAddr::new(ModuleInstance::root(), Mode::Managed, type_name, name)
    }

    /// A data resource's address in the root module.
    pub fn data(type_name: &str, name: &str) -> ResourceAddr {
        ResourceAddr::new(ModuleInstance::root(), Mode::Data, type_name, name)
    }

    /// The same resource declared in module instance `module`.
    pub fn in_module(self, module: ModuleInstance) -> ResourceAddr {
        ResourceAddr::new(module, self.mode, &self.type_name, &self.name)
    }

    /// The address of the resource's only instance (no count or for_each).
    pub fn instance(&self) -> InstanceAddr {
        InstanceAddr { resource: self.clone(), key: None }
    }

    /// The provider a resource type belongs to by default: the type name up
    /// to the first underscore (`local_file` → `local`), as in Terraform.
    pub fn implied_provider(&self) -> &str {
        self.type_name.split('_').next().unwrap_or(&self.type_name)
    }
}

impl fmt::Display for ResourceAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.module.is_root() {
            write!(f, "{}.", self.module)?;
        }
        match self.mode {
            Mode::Data => f.write_str("data.")?,
            Mode::Ephemeral => f.write_str("ephemeral.")?,
            Mode::Managed => {}
        }
        write!(f, "{}.{}", self.type_name, self.name)
    }
}

impl InstanceAddr {
    /// The name and key as a block label shows them in plans: `f`,
    /// `pages["index"]`, without type, mode or module.
    pub fn label(&self) -> String {
        match &self.key {
            Some(key) => format!("{}{key}", self.resource.name),
            None => self.resource.name.clone(),
        }
    }
}

impl fmt::Display for InstanceAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.resource)?;
        match &self.key {
            None => Ok(()),
            Some(key) => write!(f, "{key}"),
        }
    }
}

/// An address that could not be parsed.
#[derive(Debug, thiserror::Error)]
#[error(
    "{0:?} is not a resource instance address (expected TYPE.NAME, data.TYPE.NAME, or either followed by [KEY], \
     each optionally after module.NAME or module.NAME[KEY] steps)"
)]
pub struct ParseAddrError(String);

/// The dot-separated parts of an address, each with the key after it:
/// `module.a["x.y"].b` is `[("module", None), ("a", Some("x.y")), ("b", None)]`.
/// Dots inside a quoted key do not split.
fn split_parts(s: &str) -> Option<Vec<Part<'_>>> {
    let mut parts = Vec::new();
    let mut rest = s;
    loop {
        let end = rest.find(['.', '[']).unwrap_or(rest.len());
        let name = &rest[..end];
        rest = &rest[end..];
        let key = if rest.starts_with('[') {
            let close = key_end(rest)?;
            let key = parse_key(&rest[1..close])?;
            rest = &rest[close + 1..];
            Some(key)
        } else {
            None
        };
        parts.push((name, key));
        if rest.is_empty() {
            return Some(parts);
        }
        rest = rest.strip_prefix('.')?;
    }
}

/// The index of the `]` closing the key that `s` starts with (`[…]`).
fn key_end(s: &str) -> Option<usize> {
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in s.char_indices().skip(1) {
        match c {
            _ if escaped => escaped = false,
            '\\' if in_string => escaped = true,
            '"' => in_string = !in_string,
            ']' if !in_string => return Some(i),
            _ => {}
        }
    }
    None
}

/// `"index"` or `2`, as written between brackets.
fn parse_key(k: &str) -> Option<InstanceKey> {
    if k.starts_with('"') && k.ends_with('"') && k.len() >= 2 {
        serde_json::from_str(k).ok().map(InstanceKey::String)
    } else {
        k.parse().ok().map(InstanceKey::Int)
    }
}

/// One dot-separated part of an address and the key after it.
type Part<'a> = (&'a str, Option<InstanceKey>);

/// The module path at the start of `parts`, and what follows it.
fn module_prefix<'a, 'p>(mut parts: &'p [Part<'a>]) -> Option<(ModuleInstance, &'p [Part<'a>])> {
    let mut module = ModuleInstance::root();
    while let [("module", None), (name, key), rest @ ..] = parts {
        if !is_identifier(name) {
            return None;
        }
        module = module.child(name, key.clone());
        parts = rest;
    }
    Some((module, parts))
}

impl FromStr for ModuleInstance {
    type Err = ParseAddrError;

    /// Parses `module.a`, `module.a["x"].module.b`, or the empty string (the root).
    fn from_str(s: &str) -> Result<ModuleInstance, ParseAddrError> {
        if s.is_empty() {
            return Ok(ModuleInstance::root());
        }
        let err = || ParseAddrError(s.to_string());
        let parts = split_parts(s).ok_or_else(err)?;
        match module_prefix(&parts) {
            Some((module, [])) => Ok(module),
            _ => Err(err()),
        }
    }
}

impl FromStr for InstanceAddr {
    type Err = ParseAddrError;

    fn from_str(s: &str) -> Result<InstanceAddr, ParseAddrError> {
        let err = || ParseAddrError(s.to_string());
        let parts = split_parts(s).ok_or_else(err)?;
        let (module, rest) = module_prefix(&parts).ok_or_else(err)?;
        let (mode, type_name, name, key) = match rest {
            [("data", None), (t, None), (n, key)] => (Mode::Data, *t, *n, key.clone()),
            [("ephemeral", None), (t, None), (n, key)] => (Mode::Ephemeral, *t, *n, key.clone()),
            [(t, None), (n, key)] => (Mode::Managed, *t, *n, key.clone()),
            _ => return Err(err()),
        };
        if !is_identifier(type_name) || !is_identifier(name) {
            return Err(err());
        }
        Ok(InstanceAddr { resource: ResourceAddr::new(module, mode, type_name, name), key })
    }
}

impl FromStr for ResourceAddr {
    type Err = ParseAddrError;

    /// Parses `TYPE.NAME` or `data.TYPE.NAME`; an instance key, if any, is
    /// dropped (older state files recorded dependencies that way).
    fn from_str(s: &str) -> Result<ResourceAddr, ParseAddrError> {
        s.parse::<InstanceAddr>().map(|a| a.resource)
    }
}

impl Serialize for ResourceAddr {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for ResourceAddr {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ResourceAddr, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// Whether `s` is an HCL identifier (letters, digits, `_`, `-`; not starting with a digit).
pub fn is_identifier(s: &str) -> bool {
    s.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '-')
}

impl Serialize for InstanceAddr {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for InstanceAddr {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<InstanceAddr, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_displays() {
        for s in ["local_file.site", "data.local_file.t", "random_id.x[2]", r#"local_file.pages["index"]"#] {
            let a: InstanceAddr = s.parse().unwrap();
            assert_eq!(a.to_string(), s);
        }
        let a: InstanceAddr = "data.local_file.t".parse().unwrap();
        assert_eq!(a.resource.mode, Mode::Data);
        assert_eq!(a.resource.implied_provider(), "local");
    }

    #[test]
    fn module_addresses_round_trip() {
        for s in [
            "module.a.local_file.x",
            r#"module.a["x"].module.b.local_file.f"#,
            r#"module.a[1].data.local_file.t["k.y"]"#,
            r#"module.a["dot.ted]"].random_id.x[0]"#,
        ] {
            let a: InstanceAddr = s.parse().unwrap();
            assert_eq!(a.to_string(), s);
            let json = serde_json::to_string(&a).unwrap();
            assert_eq!(serde_json::from_str::<InstanceAddr>(&json).unwrap(), a);
        }
        let a: InstanceAddr = r#"module.a["x"].module.b.local_file.f"#.parse().unwrap();
        assert_eq!(a.resource.module.0.len(), 2);
        assert_eq!(a.resource.module.0[0].key, Some(InstanceKey::String("x".into())));
        assert_eq!(a.resource.module.to_string(), r#"module.a["x"].module.b"#);
        let m: ModuleInstance = r#"module.a[2].module.b"#.parse().unwrap();
        assert_eq!(m, ModuleInstance::root().child("a", Some(InstanceKey::Int(2))).child("b", None));
        assert!("".parse::<ModuleInstance>().unwrap().is_root());
        let inner: ModuleInstance = r#"module.a["x"].module.b"#.parse().unwrap();
        assert!(inner.within(&"module.a".parse().unwrap()));
        assert!(inner.within(&r#"module.a["x"]"#.parse().unwrap()));
        assert!(!inner.within(&r#"module.a["y"]"#.parse().unwrap()));
        assert!(!inner.within(&"module.b".parse().unwrap()));
    }

    #[test]
    fn interned_addresses_are_equal_by_value_and_ordered_by_their_parts() {
        use std::hash::BuildHasher;
        let hash = |a: &ResourceAddr| foldhash::fast::FixedState::default().hash_one(a);
        let a = ResourceAddr::managed("null_resource", "a");
        let parsed: ResourceAddr = "null_resource.a".parse().unwrap();
        assert_eq!(a, parsed, "built apart, the same address is one copy");
        assert_eq!(hash(&a), hash(&parsed));
        assert_ne!(a, ResourceAddr::data("null_resource", "a"));
        // Module, then mode, then type, then name, as the state and plans sort.
        let mut sorted: Vec<ResourceAddr> =
            ["module.m.a_t.a", "data.a_t.a", "b_t.a", "a_t.b", "a_t.a"].iter().map(|s| s.parse().unwrap()).collect();
        sorted.sort();
        let shown: Vec<String> = sorted.iter().map(ToString::to_string).collect();
        assert_eq!(shown, ["a_t.a", "a_t.b", "b_t.a", "data.a_t.a", "module.m.a_t.a"]);
        assert_eq!(a.clone().in_module("module.m".parse().unwrap()).to_string(), "module.m.null_resource.a");
    }

    #[test]
    fn rejects_nonsense() {
        for s in ["", "a", "a.b.c", "1x.y", "a.b[", "a.b[x]", "module.a", "module.a.b", "module..x.y", "module.a.x.y.z"]
        {
            assert!(s.parse::<InstanceAddr>().is_err(), "{s}");
        }
    }
}
