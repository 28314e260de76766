//! The generated wasmtime bindings of the `cairn:provider` world.
wasmtime::component::bindgen!({ world: "provider-world", path: "../wit" });
