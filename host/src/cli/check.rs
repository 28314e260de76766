//! `cairn providers check FILE|NAME`: the conformance run (see
//! `engine::check`), printed step by step.

use std::path::Path;

use anyhow::{Context, Result};

use crate::engine::Engine;
use crate::engine::check::{CheckGrants, Verdict};

/// Runs `cairn providers check` with `grants`: exit code 0 when no step
/// failed, 1 when one did.
pub(super) fn run(provider: &Path, grants: &CheckGrants) -> Result<i32> {
    let (name, wasm) = component(provider)?;
    let report = Engine::new()?.check(&name, &wasm, grants)?;
    println!("Checking provider {name:?} ({})\n", provider.display());
    let mut subject = "";
    for step in &report.steps {
        if step.subject != subject {
            subject = &step.subject;
            println!("{subject}");
        }
        match &step.verdict {
            Verdict::Passed => println!("  ok    {}", step.operation),
            Verdict::Failed(why) => println!("  FAIL  {}\n        {why}", step.operation),
            Verdict::Skipped(why) => println!("  skip  {}\n        {why}", step.operation),
            Verdict::Warned(why) => println!("  warn  {}\n        {why}", step.operation),
        }
    }
    let count = |f: fn(&Verdict) -> bool| report.steps.iter().filter(|s| f(&s.verdict)).count();
    let passed = count(|v| matches!(v, Verdict::Passed));
    let skipped = count(|v| matches!(v, Verdict::Skipped(_)));
    let warned = count(|v| matches!(v, Verdict::Warned(_)));
    let failed = report.failures();
    println!("\n{passed} passed, {failed} failed, {warned} warned, {skipped} skipped.");
    Ok(if failed == 0 { 0 } else { 1 })
}

/// The provider named on the command line: a `.wasm` file, or the name of
/// a bundled provider (`local`) when no such file exists. Returns its name
/// (the file's stem) and its bytes.
pub(super) fn component(arg: &Path) -> Result<(String, std::borrow::Cow<'static, [u8]>)> {
    let text = arg.to_string_lossy();
    if !arg.exists()
        && let Some(wasm) = crate::engine::bundled(&text)
    {
        return Ok((text.into_owned(), wasm.into()));
    }
    let wasm = std::fs::read(arg).with_context(|| {
        let bundled = crate::engine::BUILTIN_PROVIDERS.join(", ");
        format!("cannot read {} (nor is it a bundled provider: {bundled})", arg.display())
    })?;
    let name = arg.file_stem().map_or_else(|| "provider".to_string(), |s| s.to_string_lossy().into_owned());
    Ok((name, wasm.into()))
}
