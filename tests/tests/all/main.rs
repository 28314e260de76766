//! cairn's end-to-end tests: the real `cairn` binary with the real provider
//! components. One test binary (one link of the engine and wasmtime), one
//! module per area.

mod c;
mod cairn_test;
mod cairn_test_mocks;
mod check;
mod check_blocks;
mod commands;
mod common_resources;
mod conditions;
mod contract_violations;
mod diagnostics;
mod distribution;
mod errors;
mod failures;
mod file_permissions;
mod fmt;
mod functions;
mod go;
mod interrupts;
mod javascript;
mod lifecycle;
mod modules;
mod ordering;
mod plan_rendering;
mod planning;
mod postgres;
mod postgresql;
mod providers_new;
mod python;
mod rabbitmq;
mod recovery;
mod refactoring;
mod registry;
mod sandbox;
mod saved_plans;
mod sensitive;
mod state_commands;
mod terraform_flags;
mod terraform_state;
mod tfbridge;
mod values;
mod var_files;
mod workspaces;
mod zoo;
