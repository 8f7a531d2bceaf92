//! The `planner` command. Exit codes: 0 planned, 1 valid input that cannot be planned (it
//! does not fit), 2 input rejected (bad manifest, model, option or file), 3 the answer could
//! not be written to standard output (a closed pipe, a full disk).
//!
//! Nothing here uses `println!` or `eprintln!`: they panic when the stream is closed (`planner
//! plan x | head -1`), so every write goes through `output::print` or `output::eprint`,
//! which never panic.
//!
//! By concern: `args` (what clap reads), `input` (reading and planning what a command is
//! given), `output` (printing, tables as text, JSON or CSV), then one file per command.

mod args;
mod compare;
mod explain;
mod export;
mod import;
mod input;
mod output;
mod plan;

use std::process::ExitCode;
use std::sync::atomic::Ordering;

use clap::Parser as _;
use planner::Error;

use args::{Cli, Command};
use output::{STDOUT_FAILED, eprint};

/// Runs the command with the process's arguments.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let printed = e.print().is_ok();
            return if e.use_stderr() {
                ExitCode::from(2)
            } else if printed {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(3)
            };
        }
    };
    let code = match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprint(&format!("error: {e}\n"));
            ExitCode::from(if e.is_infeasible() { 1 } else { 2 })
        }
    };
    if STDOUT_FAILED.load(Ordering::Relaxed) {
        return ExitCode::from(3);
    }
    code
}

fn run(cli: Cli) -> Result<ExitCode, Error> {
    match cli.command {
        Command::Plan(args) => plan::command(args),
        Command::Explain(args) => explain::command(args),
        Command::Compare(args) => compare::command(args),
        Command::Import { model, output } => import::command(&model, output.as_deref()),
        Command::Export { target } => export::run(target),
    }
}
