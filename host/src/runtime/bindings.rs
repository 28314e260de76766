//! The generated wasmtime bindings of the `cairn:provider` world. Exports
//! are called asynchronously (see `instance`); the host's imports are plain
//! functions that never block.
wasmtime::component::bindgen!({ world: "provider-world", path: "../wit", exports: { default: async } });
