//! cairn: infrastructure as code with WebAssembly providers.
//!
//! Data flows through the modules in this order: `config` reads HCL,
//! `graph` orders resources (and walks graphs in parallel), `plan` decides
//! what to do, `contract` checks every provider answer (every call goes
//! through its `Gate`), `apply` carries the plan out, `state` records what
//! exists behind its `Backend` trait, and `runtime` runs providers as
//! sandboxed WebAssembly components behind the [`provider::Provider`]
//! trait; `registry` finds each provider's component. `engine` owns a run
//! from configuration to committed state; `cli` is the `cairn` command, one
//! file per command on top of the engine.

pub mod addr;
pub mod apply;
pub mod cli;
pub mod componentize;
pub mod config;
pub mod contract;
pub mod diag;
pub mod engine;
pub mod fmt;
pub mod graph;
pub mod parallel;
pub mod plan;
pub mod provider;
pub mod registry;
pub mod release;
pub mod runtime;
pub mod scaffold;
pub mod schema;
pub mod state;
pub mod value;

#[cfg(test)]
mod testing;
