//! Asking the user for what a run needs (`-input`): the value of a
//! required variable nothing gave, as Terraform prompts for it.

use std::io::{BufRead, IsTerminal, Write};

use anyhow::{Context, Result, bail};

use crate::config::Variable;

/// Asks for `variable`'s value on the terminal. A sensitive variable is
/// read without echo, as Terraform reads it.
pub(super) fn ask_on_terminal(variable: &Variable) -> Result<Option<String>> {
    let hidden = variable.sensitive.then(NoEcho::start).transpose()?;
    let answer = ask(variable, &mut std::io::stdin().lock(), &mut std::io::stdout());
    drop(hidden);
    answer.map(Some)
}

/// Whether a run may ask at all: input allowed (`-input`, and
/// `TF_INPUT` not false, as with Terraform) and a terminal to ask on.
pub(super) fn can_ask(input: bool) -> bool {
    let env_allows = std::env::var("TF_INPUT").map_or(true, |v| !matches!(v.as_str(), "0" | "false" | "FALSE"));
    input && env_allows && std::io::stdin().is_terminal()
}

/// Asks for `variable`'s value as Terraform does (`var.NAME`, its
/// description indented, `Enter a value:`) on `output`, and reads one line
/// from `input`: the value, without its line ending.
pub(super) fn ask(variable: &Variable, input: &mut dyn BufRead, output: &mut dyn Write) -> Result<String> {
    let mut question = format!("var.{}\n", variable.name);
    if !variable.description.is_empty() {
        for line in variable.description.lines() {
            question.push_str(&format!("  {line}\n"));
        }
        question.push('\n');
    }
    question.push_str("  Enter a value: ");
    output.write_all(question.as_bytes())?;
    output.flush()?;
    let mut answer = String::new();
    let read = input.read_line(&mut answer).context("cannot read the answer")?;
    if read == 0 {
        bail!("no value was entered for var.{}: the input ended", variable.name);
    }
    writeln!(output)?;
    Ok(answer.trim_end_matches(['\n', '\r']).to_string())
}

/// The terminal's echo turned off, until dropped (through `stty`, which
/// works on the terminal it is given as standard input).
struct NoEcho;

impl NoEcho {
    fn start() -> Result<NoEcho> {
        stty("-echo").context("cannot turn off the terminal's echo to ask for a sensitive variable")?;
        Ok(NoEcho)
    }
}

impl Drop for NoEcho {
    fn drop(&mut self) {
        // The newline typed was not echoed either.
        println!();
        let _ = stty("echo");
    }
}

/// Runs `stty SETTING` on this process's terminal.
fn stty(setting: &str) -> Result<()> {
    let status = std::process::Command::new("stty").arg(setting).stdin(std::process::Stdio::inherit()).status()?;
    if !status.success() {
        bail!("stty {setting} failed: {status}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn variable(description: &str) -> Variable {
        let dir = tempfile::tempdir().unwrap();
        let text = format!("variable \"region\" {{\n  description = \"{description}\"\n}}\n");
        std::fs::write(dir.path().join("main.tf"), text).unwrap();
        let config = crate::config::load(dir.path()).unwrap();
        config.variables["region"].clone()
    }

    #[test]
    fn asks_as_terraform_does_and_reads_one_line() {
        let mut output = Vec::new();
        let answer = ask(&variable("Where it runs"), &mut &b"eu-west-1\nmore\n"[..], &mut output).unwrap();
        assert_eq!(answer, "eu-west-1");
        assert_eq!(String::from_utf8(output).unwrap(), "var.region\n  Where it runs\n\n  Enter a value: \n");
    }

    #[test]
    fn without_a_description_only_the_name_is_shown() {
        let mut output = Vec::new();
        assert_eq!(ask(&variable(""), &mut &b"x\r\n"[..], &mut output).unwrap(), "x");
        assert_eq!(String::from_utf8(output).unwrap(), "var.region\n  Enter a value: \n");
    }

    #[test]
    fn an_input_that_ends_is_an_error() {
        let err = ask(&variable(""), &mut &b""[..], &mut Vec::new()).unwrap_err();
        assert_eq!(err.to_string(), "no value was entered for var.region: the input ended");
    }
}
