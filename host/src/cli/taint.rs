//! `cairn taint ADDR` and `cairn untaint ADDR`: mark one resource instance
//! for replacement by the next plan, or take that mark back, as
//! Terraform's commands of those names do (`-replace=ADDR` on a plan is
//! the way that shows the replacement before it happens; these stay for
//! the scripts and habits that use them).
//!
//! The instance is named exactly (`null_resource.a[1]`, not
//! `null_resource.a` for a counted resource); the state is changed under
//! its lock, through its backend, like `cairn state rm`.

use anyhow::{Context, Result};

use super::StateFlags;
use crate::addr::{InstanceAddr, Mode};
use crate::diag::{Diagnostic, Diagnostics};
use crate::state::InstanceStatus;

/// Which of the two commands runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mark {
    /// `taint`: the next plan replaces the instance.
    Taint,
    /// `untaint`: it does not any more.
    Untaint,
}

/// Marks (or unmarks) the instance at `address` in the state of `flags`'s
/// directory. With `allow_missing`, an instance the state lacks is a
/// warning and nothing is written.
pub(super) fn run(flags: &StateFlags, address: &str, mark: Mark, allow_missing: bool) -> Result<i32> {
    let addr: InstanceAddr = address.parse()?;
    if addr.resource.mode != Mode::Managed {
        return Err(error(
            "Invalid address",
            format!("{addr} is not a managed resource instance: only those can be tainted."),
        ));
    }
    let mut backend = flags.locked_backend()?;
    let mut state = backend.read()?;
    let Some(inst) = state.get_mut(&addr) else {
        if allow_missing {
            let warning = Diagnostic::warning("No such resource instance").with_detail(format!(
                "Resource instance {addr} was not found, but this is not an error because -allow-missing was set."
            ));
            eprintln!("{}\n", crate::diag::source::render(&warning));
            return Ok(0);
        }
        return Err(error(
            "No such resource instance",
            format!(
                "There is no resource instance in the state with the address {addr}. If the resource \
                 configuration has just been added, you must run \"cairn apply\" once to create the \
                 corresponding instance(s) before they can be {}.",
                if mark == Mark::Taint { "tainted" } else { "untainted" }
            ),
        ));
    };
    match mark {
        Mark::Taint => inst.status = InstanceStatus::Tainted,
        Mark::Untaint if inst.status != InstanceStatus::Tainted => {
            return Err(error(
                "Resource instance is not tainted",
                format!("Resource instance {addr} is not currently tainted, and so it cannot be untainted."),
            ));
        }
        Mark::Untaint => inst.status = InstanceStatus::Ready,
    }
    backend.write(&mut state).with_context(|| format!("{addr} was not changed in {}", backend.describe()))?;
    match mark {
        Mark::Taint => println!("Resource instance {addr} has been marked as tainted."),
        Mark::Untaint => println!("Resource instance {addr} has been successfully untainted."),
    }
    Ok(0)
}

/// An error with Terraform's summary and detail.
fn error(summary: &str, detail: String) -> anyhow::Error {
    anyhow::Error::new(Diagnostics(vec![Diagnostic::error(summary).with_detail(detail)]))
}
