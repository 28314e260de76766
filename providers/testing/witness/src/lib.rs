//! The `witness` test provider: its `schema` (the first call the host makes
//! to any provider) appends a line to `witness/ran` when the operator grants
//! `./witness` read-write, so a test can tell whether any of a provider's
//! code ran. The distribution tests refuse it (tampered, unsigned, signed
//! by an untrusted key) and check that the file never appears.
//!
//! Resource `witness_mark`: `name` (required), nothing else; it exists
//! only in state.

#![warn(missing_docs)]

use cairn_sdk::{
    ApplyRequest, ApplyResponse, Attr, Diagnostic, PlanRequest, PlanResponse, Provider, ProviderSchema, Schema, Value,
};

/// The provider; it has no configuration.
pub struct Witness;

impl Provider for Witness {
    fn schema() -> ProviderSchema {
        // Best effort: without the grant (or while the host mounts it
        // read-only, during validate and plan) there is nowhere to write.
        if let Ok(mut file) = std::fs::OpenOptions::new().create(true).append(true).open("witness/ran") {
            use std::io::Write as _;
            let _ = writeln!(file, "schema");
        }
        ProviderSchema::new().resource("witness_mark", Schema::new(0).attribute("name", Attr::string().required()))
    }

    fn configure(_config: Value) -> Result<Self, Vec<Diagnostic>> {
        Ok(Witness)
    }

    fn plan(&self, req: PlanRequest) -> Result<PlanResponse, Vec<Diagnostic>> {
        Ok(PlanResponse::from_proposed(&req).requires_replace(["name"]))
    }

    fn apply(&self, req: ApplyRequest) -> Result<ApplyResponse, Vec<Diagnostic>> {
        if req.is_delete() {
            return Ok(ApplyResponse::deleted());
        }
        Ok(ApplyResponse::new(req.planned_state.clone()))
    }
}

cairn_sdk::export_provider!(Witness, name = "witness");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_is_well_formed() {
        Witness::schema().check().unwrap();
    }
}
