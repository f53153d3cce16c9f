//! The `gpufix` binary: parse arguments, run, map errors to exit status 1.

use clap::Parser;

fn main() {
    let cli = gpufix::cli::Cli::parse();
    let code = match gpufix::cli::run(cli) {
        Ok(status) => status.code(),
        Err(e) => {
            eprintln!("error: {e:#}");
            gpufix::session::ExitStatus::Error.code()
        }
    };
    std::process::exit(code);
}
