//! Write cairn providers in Rust: implement [`Provider`], call
//! [`export_provider!`] once, build for `wasm32-wasip2`, get a component.
//!
//! The SDK owns everything that touches the `cairn:provider` WIT ABI: the
//! wit-bindgen glue, the flattened wire encodings of values, types and
//! schemas, and the instance state kept between calls. A provider only sees
//! the Rust types of this crate:
//!
//! - [`Value`] — a dynamic value, with null and unknown as first-class cases;
//! - [`Schema`], [`Attr`], [`Type`], [`Block`], [`NestedBlock`] — schema
//!   builders;
//! - [`Diagnostic`] and [`Path`] — messages for the user;
//! - [`PlanRequest`]/[`PlanResponse`] and the other request/response pairs of
//!   the [`Provider`] trait, with helpers that make the usual plan one line;
//! - [`log`](mod@log) — lines into the host's log;
//! - [`files`] — permission bits of files in read-write grants, which WASI
//!   cannot set.
//!
//! ```
//! use cairn_sdk::*;
//!
//! struct Hello;
//!
//! impl Provider for Hello {
//!     fn schema() -> ProviderSchema {
//!         ProviderSchema::new().resource(
//!             "hello_greeting",
//!             Schema::new(0)
//!                 .attribute("name", Attr::string().required())
//!                 .attribute("text", Attr::string().computed()),
//!         )
//!     }
//!     fn configure(_config: Value) -> Result<Self, Vec<Diagnostic>> {
//!         Ok(Hello)
//!     }
//!     fn plan(&self, req: PlanRequest) -> Result<PlanResponse, Vec<Diagnostic>> {
//!         Ok(PlanResponse::from_proposed(&req).requires_replace(["name"]))
//!     }
//!     fn apply(&self, req: ApplyRequest) -> Result<ApplyResponse, Vec<Diagnostic>> {
//!         if req.is_delete() {
//!             return Ok(ApplyResponse::deleted());
//!         }
//!         let name = req.planned_state.get_attr("name").as_str().unwrap_or_default();
//!         let mut state = req.planned_state.clone();
//!         state.set_attr("text", format!("Hello, {name}!"));
//!         Ok(ApplyResponse::new(state))
//!     }
//! }
//!
//! cairn_sdk::export_provider!(Hello);
//! ```

#![warn(missing_docs)]

// The generated code trips lints that are not ours to fix.
#[allow(missing_docs, clippy::all, unsafe_op_in_unsafe_fn)]
pub mod bindings {
    //! The raw wit-bindgen bindings of the `provider-world` world. Provider
    //! authors should not need them; they are public because the
    //! [`export_provider!`](crate::export_provider) macro expands to code that
    //! names them from the provider's crate.
    wit_bindgen::generate!({
        path: "wit",
        world: "provider-world",
        pub_export_macro: true,
        default_bindings_module: "cairn_sdk::bindings",
        export_macro_name: "__export_provider_world",
        // Lets tests compare wire values.
        additional_derives: [PartialEq],
    });
}

// The generated code trips lints that are not ours to fix.
#[allow(missing_docs, clippy::all, unsafe_op_in_unsafe_fn)]
pub mod state_move_bindings {
    //! The raw wit-bindgen bindings of the optional `state-moves` export
    //! (added within 0.2.0), which a component has when its crate calls
    //! [`export_state_moves!`](crate::export_state_moves):
    //! [`Provider::move_state`](crate::Provider::move_state) answers it.
    //! Public for the same reason as [`bindings`](crate::bindings).
    wit_bindgen::generate!({
        path: "wit",
        world: "state-moves-world",
        pub_export_macro: true,
        default_bindings_module: "cairn_sdk::state_move_bindings",
        export_macro_name: "__export_state_moves_world",
        with: { "cairn:provider/types@0.2.0": crate::bindings::cairn::provider::types },
    });
}

// The generated code trips lints that are not ours to fix.
#[allow(missing_docs, clippy::all, unsafe_op_in_unsafe_fn)]
pub mod ephemeral_bindings {
    //! The raw wit-bindgen bindings of the optional `ephemeral-resources`
    //! export (added within 0.2.0), which a component has when its crate
    //! calls [`export_ephemeral_resources!`](crate::export_ephemeral_resources):
    //! [`Provider::open_ephemeral`](crate::Provider::open_ephemeral) and its
    //! siblings answer it. Public for the same reason as
    //! [`bindings`](crate::bindings).
    wit_bindgen::generate!({
        path: "wit",
        world: "ephemeral-resources-world",
        pub_export_macro: true,
        default_bindings_module: "cairn_sdk::ephemeral_bindings",
        export_macro_name: "__export_ephemeral_resources_world",
        with: { "cairn:provider/types@0.2.0": crate::bindings::cairn::provider::types },
    });
}

mod diag;
pub mod files;
mod glue;
pub mod heap;
pub mod log;
mod provider;
pub mod random;
mod schema;
mod value;

/// Components get the SDK's allocator (see [`heap`]): small blocks from free
/// lists, the rest from the system's. Only where there are no threads, and
/// with the `heap` feature (a default one; turn it off to install another).
#[cfg(all(feature = "heap", target_arch = "wasm32", not(target_feature = "atomics")))]
#[global_allocator]
static HEAP: heap::Heap = heap::Heap::new();

pub use diag::{Diagnostic, Path, PathStep, Severity};
pub use provider::{
    ApplyRequest, ApplyResponse, MoveRequest, OpenResponse, PlanRequest, PlanResponse, Provider, ReadRequest,
    RenewResponse,
};
pub use schema::{Attr, Block, NestedBlock, Nesting, ProviderSchema, Schema, Type};
pub use value::{Number, Refinements, Value, WireError};

/// Implementation details used by [`export_provider!`]; not a stable API.
#[doc(hidden)]
pub mod __private {
    pub use crate::glue::Glue;

    /// The bytes of `text` as an array, for a `static` custom section.
    pub const fn bytes<const N: usize>(text: &str) -> [u8; N] {
        let from = text.as_bytes();
        let mut out = [0u8; N];
        let mut i = 0;
        while i < N {
            out[i] = from[i];
            i += 1;
        }
        out
    }
}

/// Export a [`Provider`] implementation as the component's `cairn:provider`
/// interface. Call it exactly once, at the top level of the provider crate,
/// with the name the provider declares for itself:
///
/// ```text
/// cairn_sdk::export_provider!(MyProvider, name = "my");
/// cairn_sdk::export_provider!(MyProvider, name = "my", version = "1.2.3");
/// ```
///
/// The name and version (by default the crate's `CARGO_PKG_VERSION`) go
/// into the component's `cairn-provider-identity` custom section, which
/// the host reads without running any of the provider's code: `cairn
/// providers inspect` shows them, a configuration that expects another
/// provider under that name is refused, and `cairn init` chooses versions
/// by them. `export_provider!(MyProvider)` declares no identity.
///
/// The exports are only generated when compiling for `wasm32`: natively the
/// crate stays an ordinary library whose logic can be unit-tested, and
/// several providers can be linked into one test binary without their export
/// symbols clashing.
// rustfmt cannot parse the `with_types_in` form and misindents it.
#[rustfmt::skip]
#[macro_export]
macro_rules! export_provider {
    ($provider:ty) => {
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            type __CairnProviderGlue = $crate::__private::Glue<$provider>;
            $crate::bindings::__export_provider_world!(__CairnProviderGlue with_types_in $crate::bindings);
        };
    };
    ($provider:ty, name = $name:literal) => {
        $crate::export_provider!($provider, name = $name, version = env!("CARGO_PKG_VERSION"));
    };
    ($provider:ty, name = $name:literal, version = $version:expr) => {
        $crate::export_provider!($provider);
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            const IDENTITY: &str = concat!("name=", $name, "\nversion=", $version, "\n");
            // A custom section: data the host reads from the file, never code.
            #[unsafe(link_section = "cairn-provider-identity")]
            #[used]
            static CAIRN_PROVIDER_IDENTITY: [u8; IDENTITY.len()] = $crate::__private::bytes(IDENTITY);
        };
    };
}

/// Export the optional `state-moves` interface too, answered by
/// [`Provider::move_state`]: `moved` blocks may then take objects of other
/// resource types to this provider's types. Call it once, beside
/// [`export_provider!`], only in a provider that implements `move_state`:
/// without it, the host refuses such moves as Terraform does for a
/// provider without the capability ("Unsupported `moved` across resource
/// types").
///
/// ```text
/// cairn_sdk::export_provider!(MyProvider, name = "my");
/// cairn_sdk::export_state_moves!(MyProvider);
/// ```
#[rustfmt::skip]
#[macro_export]
macro_rules! export_state_moves {
    ($provider:ty) => {
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            type __CairnStateMovesGlue = $crate::__private::Glue<$provider>;
            $crate::state_move_bindings::__export_state_moves_world!(
                __CairnStateMovesGlue with_types_in $crate::state_move_bindings
            );
        };
    };
}

/// Export the optional `ephemeral-resources` interface too, answered by
/// [`Provider::open_ephemeral`], [`Provider::renew_ephemeral`] and
/// [`Provider::close_ephemeral`] for the types
/// [`ProviderSchema::ephemeral_resource`] declares: configurations may
/// then open them with `ephemeral "TYPE" "NAME" { … }` blocks. Call it
/// once, beside [`export_provider!`]; without it, the host refuses such
/// blocks, saying the provider offers no ephemeral resource types.
///
/// ```text
/// cairn_sdk::export_provider!(MyProvider, name = "my");
/// cairn_sdk::export_ephemeral_resources!(MyProvider);
/// ```
#[rustfmt::skip]
#[macro_export]
macro_rules! export_ephemeral_resources {
    ($provider:ty) => {
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            type __CairnEphemeralGlue = $crate::__private::Glue<$provider>;
            $crate::ephemeral_bindings::__export_ephemeral_resources_world!(
                __CairnEphemeralGlue with_types_in $crate::ephemeral_bindings
            );
        };
    };
}

/// The provider-author guide's examples, compiled and run as doctests so
/// that the guide cannot drift from the SDK.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
