//! The `gpufix` binary: parse arguments, run, map errors to exit status 1.

use clap::Parser;

/// Let a closed stdout (`gpufix plan | head`) end the process quietly, as it does any Unix
/// filter, instead of a panic in the middle of printing. Rust ignores SIGPIPE by default.
#[allow(unsafe_code)]
fn default_sigpipe() {
    // SAFETY: called first in `main`, before any other thread exists; SIG_DFL is a valid
    // disposition for SIGPIPE and no handler of ours is replaced.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn main() {
    default_sigpipe();
    let cli = gpufix::cli::Cli::parse();
    let code = match gpufix::cli::run(cli) {
        Ok(status) => status.code(),
        Err(e) => {
            eprintln!("error: {e:#}");
            gpufix::session::ExitStatus::Error.code()
        }
    };
    // a probe abandoned at its deadline is still running: its process group goes with us
    gpufix::host::real::kill_all_commands();
    std::process::exit(code);
}
