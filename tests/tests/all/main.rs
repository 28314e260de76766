//! cairn's end-to-end tests: the real `cairn` binary with the real provider
//! components. One test binary (one link of the engine and wasmtime), one
//! module per area.

mod commands;
mod contract_violations;
mod distribution;
mod errors;
mod failures;
mod lifecycle;
mod ordering;
mod registry;
mod sandbox;
mod values;
mod zoo;
