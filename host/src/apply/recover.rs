//! Recovery: resolving the operations an interrupted apply left pending
//! (a crash, a kill, a second Ctrl-C) by asking the provider what exists,
//! before anything is planned. Each pending operation ends in one of the
//! [`Recovered`] outcomes:
//!
//! | interrupted | the provider finds the object            | it does not                         |
//! |-------------|------------------------------------------|-------------------------------------|
//! | create      | by its idempotency key (`import`): adopted, **tainted** | said plainly: it may exist, not found |
//! | update      | by the prior object (`read`): adopted as read | recorded as gone                |
//! | delete      | by the prior object (`read`): kept as read | forgotten                          |
//!
//! Why these: a create that may have stopped half-way is exactly what
//! Terraform's "tainted" means (the object exists but may be incomplete),
//! so the next plan replaces it. An interrupted update or delete leaves an
//! object that is what the provider reads: as after Terraform's or
//! Pulumi's refresh, the read is recorded and the plan compares it with
//! the configuration, updating (or deleting) again whatever is still to do;
//! replacing a whole object because an in-place update was cut off would
//! destroy more than the interruption did.
//!
//! Finding a created object by its idempotency key is a convention
//! providers opt into (`docs/writing-providers.md`): `import` with the key
//! as the id. A provider that does not follow it answers an error, and the
//! user is told that the object may exist outside the state.
//!
//! Recovery changes the state in memory; the apply that follows commits it,
//! and a plan only shows it.

use serde::Serialize;

use crate::addr::InstanceAddr;
use crate::config::Config;
use crate::contract::{CheckedCallError, Gate};
use crate::diag::Diagnostic;
use crate::plan::{self, Providers};
use crate::schema::Schema;
use crate::state::{Attributes, InstanceState, InstanceStatus, PendingOperation, State};

/// What became of one pending operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Recovered {
    /// The object exists and is recorded as the provider read it.
    Adopted,
    /// The object a create made was found and recorded tainted: the next
    /// plan replaces it.
    AdoptedTainted,
    /// The object is gone; it is no longer in the state.
    Forgotten,
    /// The provider did not find what an interrupted create made: it may
    /// exist outside the state.
    NotFound,
    /// The provider could not be asked; the state is as it was, and the
    /// operation stays pending, to be asked about again by the next run.
    Unresolved,
}

/// One pending operation, resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct Recovery {
    /// The instance operated on.
    pub addr: InstanceAddr,
    /// The deposed object operated on, if not the current one.
    pub deposed: Option<String>,
    /// `create`, `update` or `delete`.
    pub operation: String,
    /// The idempotency key the provider was given.
    pub idempotency_key: String,
    /// What became of it.
    pub outcome: Recovered,
    /// Why, in the provider's words, for the outcomes that need it.
    pub detail: String,
}

impl Recovery {
    /// One line for people: what was interrupted and what cairn did.
    pub fn message(&self) -> String {
        let object = match &self.deposed {
            Some(key) => format!("{} (deposed object {key})", self.addr),
            None => self.addr.to_string(),
        };
        let op = &self.operation;
        let what = match self.outcome {
            Recovered::AdoptedTainted => {
                "the provider found the object it made by its idempotency key; recorded as tainted, so it will be replaced"
                    .to_string()
            }
            Recovered::Adopted => "the object exists; recorded as the provider read it".to_string(),
            Recovered::Forgotten if op == "delete" => "the object is gone; forgotten".to_string(),
            Recovered::Forgotten => "the object is gone; recorded as gone".to_string(),
            Recovered::NotFound => format!(
                "the provider did not find an object by its idempotency key {}, so the object may exist \
                 outside the state; check the real infrastructure",
                self.idempotency_key
            ),
            Recovered::Unresolved => {
                "cairn could not ask the provider, so the operation stays pending and the next run asks again"
                    .to_string()
            }
        };
        let detail = if self.detail.is_empty() { String::new() } else { format!(" ({})", self.detail) };
        format!("{object}: recovered the interrupted {op}: {what}{detail}")
    }
}

/// Resolves every pending operation of `state` by asking its provider
/// (`config` names the provider of an instance the state does not hold
/// yet) and changes `state` accordingly. Only the operations the provider
/// could not be asked about stay pending.
pub async fn recover(state: &mut State, providers: &Providers, config: &Config) -> Vec<Recovery> {
    let pending = std::mem::take(&mut state.pending);
    let mut recoveries = Vec::with_capacity(pending.len());
    for op in pending {
        let provider = provider_of(state, config, &op).and_then(|name| Some((providers.get(&name)?, name)));
        let (outcome, detail) = match provider {
            Some((provider, name)) => resolve(state, Gate::new(provider.as_ref()), &name, &op).await,
            None => (Recovered::Unresolved, "no provider for it is configured".to_string()),
        };
        match outcome {
            Recovered::Unresolved => state.pending.push(op.clone()),
            // What the interrupted create made, if anything, was not
            // found: the next create of the instance is its retry, and is
            // sent its key.
            Recovered::NotFound => state.keep_for_retry(op.clone()),
            _ => {}
        }
        recoveries.push(Recovery {
            addr: op.addr,
            deposed: op.deposed,
            operation: op.operation,
            idempotency_key: op.idempotency_key,
            outcome,
            detail,
        });
    }
    recoveries
}

/// The local name of the provider of the pending operation's instance:
/// the one the state records, else the configuration's.
fn provider_of(state: &State, config: &Config, op: &PendingOperation) -> Option<String> {
    state
        .get(&op.addr)
        .map(|i| i.provider.clone())
        .or_else(|| config.resources.iter().find(|r| r.addr == op.addr.resource).map(|r| r.provider.clone()))
}

/// Resolves one pending operation with its provider.
async fn resolve(state: &mut State, gate: Gate<'_>, provider: &str, op: &PendingOperation) -> (Recovered, String) {
    let schema = match gate.schema_of(&op.addr.resource) {
        Ok(schema) => schema,
        Err(d) => return (Recovered::Unresolved, d.summary),
    };
    let result = match (&op.deposed, op.operation.as_str()) {
        (Some(key), _) => reread_deposed(state, gate, schema, &op.addr, key).await,
        (None, "create") => find_created(state, gate, provider, schema, op).await,
        (None, _) => reread_current(state, gate, schema, &op.addr).await,
    };
    result.unwrap_or_else(|d| (Recovered::Unresolved, d.summary))
}

/// An interrupted update or delete of the current object: reads it by the
/// object the state holds; gone is forgotten, present is recorded as read.
async fn reread_current(
    state: &mut State,
    gate: Gate<'_>,
    schema: &Schema,
    addr: &InstanceAddr,
) -> Result<(Recovered, String), Diagnostic> {
    let Some(inst) = state.get(addr).filter(|i| !i.attributes.is_null()) else {
        return Ok((Recovered::Forgotten, "the state holds no object for it".to_string()));
    };
    let prior = plan::decode_prior(gate, inst).await?;
    let private = inst.private.clone();
    match gate.refresh(schema, addr, &prior, &private).await.map_err(|e| first_error(e, addr))? {
        (None, _) => {
            state.forget_current(addr);
            Ok((Recovered::Forgotten, String::new()))
        }
        (Some((current, private)), _) => {
            if let Some(inst) = state.get_mut(addr) {
                inst.attributes = Attributes::new(&current, &schema.block.implied_type());
                inst.private = private;
                inst.schema_version = schema.version;
            }
            Ok((Recovered::Adopted, String::new()))
        }
    }
}

/// An interrupted delete of a deposed object: reads it; gone is forgotten,
/// present is recorded as read (and deleted by the next apply, as every
/// deposed object is).
async fn reread_deposed(
    state: &mut State,
    gate: Gate<'_>,
    schema: &Schema,
    addr: &InstanceAddr,
    key: &str,
) -> Result<(Recovered, String), Diagnostic> {
    let Some(object) = state.get(addr).and_then(|i| i.deposed.iter().find(|d| d.key == key)) else {
        return Ok((Recovered::Forgotten, "the state holds no such deposed object".to_string()));
    };
    let prior = object
        .attributes
        .decode(&schema.block.implied_type())
        .map_err(|e| Diagnostic::error(format!("{addr}: the deposed object {key} does not match the schema: {e}")))?;
    let private = object.private.clone();
    match gate.refresh(schema, addr, &prior, &private).await.map_err(|e| first_error(e, addr))? {
        (None, _) => {
            state.forget_deposed(addr, key);
            Ok((Recovered::Forgotten, String::new()))
        }
        (Some((current, private)), _) => {
            let deposed = state.get_mut(addr).and_then(|i| i.deposed.iter_mut().find(|d| d.key == key));
            if let Some(object) = deposed {
                object.attributes = Attributes::new(&current, &schema.block.implied_type());
                object.private = private;
            }
            Ok((Recovered::Adopted, String::new()))
        }
    }
}

/// An interrupted create: asks the provider to import the object by the
/// create's idempotency key, reads it once more (as Terraform does after
/// an import) and records it tainted.
async fn find_created(
    state: &mut State,
    gate: Gate<'_>,
    provider: &str,
    schema: &Schema,
    op: &PendingOperation,
) -> Result<(Recovered, String), Diagnostic> {
    let addr = &op.addr;
    if state.get(addr).is_some_and(|i| !i.attributes.is_null()) {
        // The answer was recorded (a partial object, say); nothing is missing.
        return Ok((Recovered::Adopted, "the state already holds its object".to_string()));
    }
    let (found, private) = match gate.import(schema, addr, &op.idempotency_key).await {
        Ok((found, _warnings)) => found,
        Err(e) => return Ok((Recovered::NotFound, first_error(e, addr).summary)),
    };
    let (current, private) = match gate.refresh(schema, addr, &found, &private).await {
        Ok((Some(read), _)) => read,
        Ok((None, _)) => return Ok((Recovered::NotFound, "imported, but a read says it is gone".to_string())),
        Err(e) => return Err(first_error(e, addr)),
    };
    let attributes = Attributes::new(&current, &schema.block.implied_type());
    let mut inst = InstanceState::new(addr.clone(), provider, schema.version, attributes);
    inst.private = private;
    inst.status = InstanceStatus::Tainted;
    if let Some(old) = state.get(addr) {
        inst.deposed = old.deposed.clone();
        inst.dependencies = old.dependencies.clone();
        inst.create_before_destroy = old.create_before_destroy;
    }
    state.set(inst);
    Ok((Recovered::AdoptedTainted, String::new()))
}

/// The first error of a failed call, in one diagnostic.
fn first_error(e: CheckedCallError, addr: &InstanceAddr) -> Diagnostic {
    let diags = e.into_diagnostics(&crate::diag::Location::default());
    diags
        .into_iter()
        .find(Diagnostic::is_error)
        .unwrap_or_else(|| Diagnostic::error(format!("{addr}: the call failed")))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::testing::{self, Fake};

    const ONE: &str = "resource \"fake_thing\" \"x\" {\n  name = \"x\"\n}\n";

    fn pending(operation: &str) -> State {
        let mut state = State::new();
        state.pending.push(PendingOperation::now("fake_thing.x".parse().unwrap(), None, operation, "k1"));
        state
    }

    #[tokio::test]
    async fn a_create_the_provider_cannot_find_is_said_plainly_and_no_longer_pending() {
        let (_dir, ws) = testing::workspace(ONE);
        let providers = testing::providers(Arc::new(Fake::new()));
        let mut state = pending("create");
        let recoveries = recover(&mut state, &providers, &ws.config).await;
        assert_eq!(recoveries.len(), 1);
        assert_eq!(recoveries[0].outcome, Recovered::NotFound);
        assert!(recoveries[0].detail.contains("does not support import"), "{:?}", recoveries[0]);
        assert!(recoveries[0].message().contains("so the object may exist outside the state"));
        assert!(state.pending.is_empty() && state.resources.is_empty());
    }

    #[tokio::test]
    async fn an_operation_no_provider_can_be_asked_about_stays_pending() {
        let (_dir, ws) = testing::workspace(ONE);
        let mut state = pending("create");
        let recoveries = recover(&mut state, &Providers::new(), &ws.config).await;
        assert_eq!(recoveries[0].outcome, Recovered::Unresolved);
        assert_eq!(state.pending.len(), 1, "asked about again by the next run");
    }

    #[tokio::test]
    async fn an_update_whose_object_exists_is_adopted_as_read_not_tainted() {
        let (_dir, ws) = testing::workspace(ONE);
        let providers = testing::providers(Arc::new(Fake::new()));
        let mut state = pending("update");
        let attributes = serde_json::json!({"name": "x", "size": null, "id": "id-x"});
        state.set(InstanceState::new("fake_thing.x".parse().unwrap(), "fake", 0, attributes.clone()));
        let recoveries = recover(&mut state, &providers, &ws.config).await;
        assert_eq!(recoveries[0].outcome, Recovered::Adopted);
        let inst = state.get(&"fake_thing.x".parse().unwrap()).unwrap();
        assert_eq!((inst.status, &inst.attributes), (InstanceStatus::Ready, &attributes.into()));
        assert!(state.pending.is_empty());
    }
}
