//! `cairn validate`: the configuration against the provider schemas.

use anyhow::Result;

use super::Common;
use crate::engine::Engine;

/// Runs `cairn validate`.
pub(super) fn run(common: &Common) -> Result<i32> {
    let ws = common.workspace()?;
    Engine::new()?.validate(&ws)?;
    println!("{} The configuration is valid.", common.colors().green("Success!"));
    Ok(0)
}
