//! `cairn import ADDR ID`: adopt an existing object into the state, as
//! Terraform's command does (the configuration must declare `ADDR`; the
//! state is written at once, without a plan). An `import` block does the
//! same through plan and apply.

use anyhow::Result;

use super::{Common, InputFlags, LockFlags};
use crate::addr::InstanceAddr;
use crate::engine::Engine;

/// Runs `cairn import`, locking the state as `lock` says and asking for
/// missing variables as `input` allows.
pub(super) fn run(common: &Common, addr: &str, id: &str, lock: &LockFlags, input: &InputFlags) -> Result<i32> {
    let addr: InstanceAddr = addr.parse()?;
    let ws = common.workspace_asking(input)?;
    let engine = Engine::new()?;
    let colors = common.colors();
    println!("{addr}: Importing from ID {}...", crate::value::quote(id));
    let imported = engine.import(&ws, &addr, id, lock.locking())?;
    let shown = imported.object.get_attr("id");
    let id_note = shown.as_str().map(|i| format!(" [id={i}]")).unwrap_or_default();
    println!("{addr}: Import prepared!{id_note}");
    println!(
        "\n{}\n\nThe object is now in the state at {addr} and will henceforth be managed by cairn.",
        colors.green("Import successful!")
    );
    Ok(0)
}
