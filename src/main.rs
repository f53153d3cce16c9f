//! The `gpufix` binary: parse arguments, run, map errors to exit status 1.

use clap::Parser;

fn main() {
    let cli = gpufix::cli::Cli::parse();
    let code = match gpufix::cli::run(cli) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e:#}");
            1
        }
    };
    std::process::exit(code);
}
