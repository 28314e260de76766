//! `cairn force-unlock LOCK_ID`: releases the state's lock that another run
//! holds, as Terraform's command does, after asking (unless `-force`). The
//! lock ID is the one the "locked" error of a run shows.
//!
//! A PostgreSQL lock is released by ending the database session that holds
//! it; the run that held it then writes nothing more. A local state's lock
//! belongs to the operating system and to the process holding it, and no
//! other process can release it: the command says which process to stop.

use std::io::{BufRead, Write};

use anyhow::Result;

use super::Common;

/// Runs `cairn force-unlock`.
pub(super) fn run(common: &Common, lock_id: &str, force: bool) -> Result<i32> {
    let ws = common.workspace()?;
    let mut backend = ws.backend()?;
    if !force && !confirm()? {
        println!("force-unlock cancelled.");
        return Ok(1);
    }
    if let Err(e) = backend.force_unlock(lock_id) {
        eprintln!("Failed to unlock state: {e}");
        return Ok(1);
    }
    println!(
        "cairn state has been successfully unlocked!\n\nThe state has been unlocked, and cairn commands should now be able to\nobtain a new lock on the state."
    );
    Ok(0)
}

/// Asks the operator to type `yes`.
fn confirm() -> Result<bool> {
    print!(
        "Do you really want to force-unlock?\n  cairn will remove the lock on the state.\n  This will allow local cairn commands to modify this state, even though it\n  may still be in use. Only 'yes' will be accepted to confirm.\n\n  Enter a value: "
    );
    std::io::stdout().flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(answer.trim() == "yes")
}
