//! Resource and instance addresses: `local_file.site`, `data.local_file.t`,
//! `random_id.x[2]`, `local_file.pages["index"]`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Whether a resource is managed (`resource` block) or read (`data` block).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mode {
    /// A `resource` block: an object cairn creates, updates and deletes.
    Managed,
    /// A `data` block: an object cairn only reads.
    Data,
}

/// A resource block's address: mode, type and name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ResourceAddr {
    /// Managed or data.
    pub mode: Mode,
    /// The resource type, e.g. `local_file`.
    pub type_name: String,
    /// The name given in configuration.
    pub name: String,
}

/// The key of one instance of a resource with `count` or `for_each`.
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

impl ResourceAddr {
    /// A managed resource's address.
    pub fn managed(type_name: &str, name: &str) -> ResourceAddr {
        ResourceAddr { mode: Mode::Managed, type_name: type_name.to_string(), name: name.to_string() }
    }

    /// A data resource's address.
    pub fn data(type_name: &str, name: &str) -> ResourceAddr {
        ResourceAddr { mode: Mode::Data, type_name: type_name.to_string(), name: name.to_string() }
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
        if self.mode == Mode::Data {
            f.write_str("data.")?;
        }
        write!(f, "{}.{}", self.type_name, self.name)
    }
}

impl fmt::Display for InstanceAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.resource)?;
        match &self.key {
            None => Ok(()),
            Some(InstanceKey::Int(i)) => write!(f, "[{i}]"),
            Some(InstanceKey::String(s)) => write!(f, "[{}]", crate::value::quote(s)),
        }
    }
}

/// An address that could not be parsed.
#[derive(Debug, thiserror::Error)]
#[error("{0:?} is not a resource instance address (expected TYPE.NAME, data.TYPE.NAME, or either followed by [KEY])")]
pub struct ParseAddrError(String);

impl FromStr for InstanceAddr {
    type Err = ParseAddrError;

    fn from_str(s: &str) -> Result<InstanceAddr, ParseAddrError> {
        let err = || ParseAddrError(s.to_string());
        let (base, key) = match s.find('[') {
            Some(open) if s.ends_with(']') => (&s[..open], Some(&s[open + 1..s.len() - 1])),
            Some(_) => return Err(err()),
            None => (s, None),
        };
        let parts: Vec<&str> = base.split('.').collect();
        let (mode, type_name, name) = match parts.as_slice() {
            ["data", t, n] => (Mode::Data, *t, *n),
            [t, n] => (Mode::Managed, *t, *n),
            _ => return Err(err()),
        };
        if !is_identifier(type_name) || !is_identifier(name) {
            return Err(err());
        }
        let key = match key {
            None => None,
            Some(k) if k.starts_with('"') && k.ends_with('"') && k.len() >= 2 => {
                Some(InstanceKey::String(serde_json::from_str(k).map_err(|_| err())?))
            }
            Some(k) => Some(InstanceKey::Int(k.parse().map_err(|_| err())?)),
        };
        Ok(InstanceAddr {
            resource: ResourceAddr { mode, type_name: type_name.to_string(), name: name.to_string() },
            key,
        })
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
    fn rejects_nonsense() {
        for s in ["", "a", "a.b.c", "1x.y", "a.b[", "a.b[x]"] {
            assert!(s.parse::<InstanceAddr>().is_err(), "{s}");
        }
    }
}
