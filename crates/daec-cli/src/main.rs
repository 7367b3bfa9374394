//! The `daec` binary.

use std::io::IsTerminal;

fn main() {
    let mut stdout = std::io::stdout();
    let mut stderr = std::io::stderr();
    let stderr_is_terminal = stderr.is_terminal();
    let mut io = daec_cli::Io {
        stdout: &mut stdout,
        stderr: &mut stderr,
        stderr_is_terminal,
    };
    let code = daec_cli::run(std::env::args_os().collect(), &mut io);
    std::process::exit(code);
}
