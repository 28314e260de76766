//! cairn: infrastructure as code with WebAssembly providers.
//!
//! Data flows through the modules in this order: `config` reads HCL,
//! `graph` orders resources, `plan` decides what to do and `contract` checks
//! every provider answer, `apply` carries the plan out, `state` records what
//! exists, and `runtime` runs providers as sandboxed WebAssembly components
//! behind the [`provider::Provider`] trait; `registry` finds each provider's
//! component. `cli` is the `cairn` command.

pub mod addr;
pub mod apply;
pub mod cli;
pub mod config;
pub mod contract;
pub mod diag;
pub mod graph;
pub mod plan;
pub mod provider;
pub mod registry;
pub mod runtime;
pub mod schema;
pub mod state;
pub mod value;

#[cfg(test)]
mod testing;
