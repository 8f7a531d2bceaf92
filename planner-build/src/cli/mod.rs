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
mod techniques;

use std::process::ExitCode;
use std::sync::atomic::Ordering;

use clap::Parser as _;
use planner::Error;

use args::{Cli, Command};
use output::{STDOUT_FAILED, eprint};

/// Exit code 3: the answer could not be written to standard output.
fn stdout_failed() -> ExitCode {
    eprint(&output::stdout_failure());
    ExitCode::from(3)
}

/// Runs the command with the process's arguments.
pub fn main() -> ExitCode {
    main_with(false)
}

/// Runs the command with the process's arguments; `stdout_closed` says that descriptor 1 was
/// closed when the process started (`planner plan m.tflite >&-`). The Rust runtime puts
/// `/dev/null` in its place before `main` runs, so only code that ran earlier can tell: the
/// `planner` binary looks from a load-time constructor. The command then ends with exit code
/// 3 as soon as it has something to print, as for any failed write to standard output.
pub fn main_with(stdout_closed: bool) -> ExitCode {
    if stdout_closed {
        output::stdout_closed_at_start();
    }
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            if e.use_stderr() {
                let _ = e.print();
                return ExitCode::from(2);
            }
            // `--help` and `--version`, printed to standard output.
            if output::stdout_closed() {
                return stdout_failed();
            }
            return match e.print() {
                Ok(()) => ExitCode::SUCCESS,
                Err(io) => {
                    output::note_stdout_error(io.to_string());
                    stdout_failed()
                }
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
        return stdout_failed();
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
