//! The WebAssembly runtime: providers are components run by wasmtime, each
//! in its own sandbox, behind the [`Provider`](crate::provider::Provider)
//! trait.
//!
//! This module owns the generated bindings of the `cairn:provider` world and
//! the conversion of host data to and from the WIT ABI (`wire`).

mod bindings;
pub mod wire;
