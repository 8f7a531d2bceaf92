//! The `planner` command: plan, explain and compare memory plans from the shell.

fn main() -> std::process::ExitCode {
    planner_build::cli::main()
}
