//! The `gpufix` binary: parse arguments, run, map errors to exit status 1.
//!
//! A usage error (an unknown flag, a bad value) exits 1 like any other error, never clap's
//! default 2, which is gpufix's "findings": a typo in a scheduler's audit arguments must not read
//! as a sick node. With `--format nagios` it is the plugin's UNKNOWN (3) with a status line on
//! stdout, as monitoring expects.

use clap::error::ErrorKind;
use gpufix::host::cuda_check;
use gpufix::session::ExitStatus;

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
    // the native CUDA check runs in a child of this binary (`host::cuda_check::isolate_in`)
    if std::env::args_os().nth(1).as_deref() == Some(cuda_check::CHILD_ARG.as_ref()) {
        std::process::exit(cuda_check::child_main());
    }
    // (/proc/self/exe: this very binary, even if its file was replaced by an upgrade since)
    cuda_check::isolate_in("/proc/self/exe".into());
    let cli = match gpufix::cli::parse_from(std::env::args_os().collect()) {
        Ok(cli) => cli,
        Err(e) => std::process::exit(usage_error(&e)),
    };
    if records(&cli) {
        fewer_malloc_arenas();
        yield_to_the_job();
    }
    let code = match gpufix::cli::run(cli) {
        Ok(status) => status.code(),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitStatus::Error.code()
        }
    };
    // a probe abandoned at its deadline is still running: its process group goes with us
    gpufix::host::real::kill_all_commands();
    std::process::exit(code);
}

/// Whether this run keeps sampling beside a job for its whole window (`record`, `plan --record`).
fn records(cli: &gpufix::cli::Cli) -> bool {
    use gpufix::cli::Command;
    match &cli.command {
        Command::Record(_) => true,
        Command::Plan(p) => p.record.is_some(),
        _ => false,
    }
}

/// A recorder lives beside the job for its whole window, on a few threads that rarely allocate
/// (a sampler, the plan, NVML's own): glibc would give each its own malloc arena, each with
/// its own resident heap. Two arenas cost them nothing measurable and keep the recorder's
/// memory down (issue 26 asks < 50 MB RSS; bench/RESULTS.md has the split).
#[allow(unsafe_code)]
fn fewer_malloc_arenas() {
    #[cfg(target_env = "gnu")]
    // SAFETY: called from `main` before any thread of ours exists; mallopt only sets a limit
    // glibc reads when a thread first allocates.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}

/// A recorder shares the node's CPUs with the job it watches, whose DataLoader workers may keep
/// every core busy: at nice 10 the scheduler gives the job's threads about ten times the
/// recorder's share of a contended core, and the recorder's samples (timestamped, 200 ms apart)
/// lose nothing but a little punctuality. Threads started later inherit it.
#[allow(unsafe_code)]
fn yield_to_the_job() {
    // SAFETY: setpriority only changes this process's nice value; called before any thread of
    // ours exists. A failure (a seccomp filter, say) leaves the priority as it was.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, 10);
    }
}

/// Prints a clap error (or the help and version it asks for) and returns the exit status.
fn usage_error(e: &clap::Error) -> i32 {
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        let _ = e.print();
        return ExitStatus::Clean.code();
    }
    if nagios_requested(std::env::args_os().skip(1)) {
        let first = e
            .to_string()
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("invalid arguments")
            .trim_start_matches("error: ")
            .replace('|', "/");
        println!("GPUFIX UNKNOWN - usage error: {first}");
        let _ = e.print();
        return ExitStatus::Unknown.code();
    }
    let _ = e.print();
    ExitStatus::Error.code()
}

/// `--format nagios` or `--format=nagios` anywhere before `--`, unless the subcommand is one
/// that does not write nagios (`gpufix list --format nagios` is a plain usage error, 1): a
/// monitoring system runs `audit`, or a misspelt subcommand, which must read as UNKNOWN.
fn nagios_requested(args: impl Iterator<Item = std::ffi::OsString>) -> bool {
    let hoisted =
        gpufix::cli::hoist_leading_options(std::iter::once("gpufix".into()).chain(args).collect());
    let args: Vec<String> = hoisted
        .iter()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .take_while(|a| a != "--")
        .collect();
    let other_subcommand = args.first().is_some_and(|a| {
        a != "audit"
            && <gpufix::cli::Cli as clap::CommandFactory>::command()
                .find_subcommand(a)
                .is_some()
    });
    !other_subcommand
        && (args.iter().any(|a| a == "--format=nagios")
            || args
                .windows(2)
                .any(|w| w[0] == "--format" && w[1] == "nagios"))
}
