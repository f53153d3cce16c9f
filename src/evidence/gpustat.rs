//! `gpustat` (github.com/wookayin/gpustat): the one-line-per-GPU summary people paste when
//! they say their GPU is idle. Read from the producer's own printing code,
//! `gpustat/core.py` at v1.1.1 (commit 7a3b964, `GPUStat.print_to` and
//! `GPUStatCollection.print_formatted`) and at v0.6.0 (the `%`-format string it replaced):
//!
//! - an optional header, `{hostname:{width}}  {locale time}  {driver_version}` (left out with
//!   `--no-header`); the driver version is its last word;
//! - one line per GPU: `[{index}] {name:{width}} |{temp:>3}°C, [{fan:>3} %, ]{util:>3} %`
//!   `[ (E: {enc:>3} %  D: {dec:>3} %)][,  {draw:>3}[ / {limit:>3} W]] | {used:>5} / {total:>5} MB`
//!   `[ | {processes}]`. v0.x printed the temperature as `27'C` and its power as
//!   `,  {draw} W` or `,  {draw} / {limit} W`; a value NVML does not give is `??` (a GPU too
//!   old for utilization, `?? %`); `MB` is gpustat's `MB = 1024 * 1024` bytes, i.e. MiB;
//! - the processes column: `(Not Supported)` where NVML cannot list processes, nothing where
//!   none run, or one `{user}[:{command}][/{pid}]({memory}M)` per process, the user left out
//!   with `-c` alone (`{command}[/{pid}](...M)`), `?M` where the memory is unknown;
//!   `--no-processes` drops the column and its `|`;
//! - `-f` (`--show-full-cmd`): under the GPU line, one ` ├─ {pid:>6} ({cpu:4.0f}%, {mem:>6}):
//!   {full command}` per process, the last with `└─`;
//! - with `--color` (or a terminal), ANSI colour codes around every field; `--watch` / `-i`
//!   repeats the whole block, so a GPU read more than once is several samples.
//!
//! What is read is what the table reader yields ([`SmiUsage`]): per GPU its utilization,
//! memory used and total, temperature and power where printed, and the processes with their
//! memory. Whether a job runs is decided as for the table: a listed training process, or
//! where the paste does not show what its processes are, memory held. The default output
//! names each process's user, not its command (`alice(20000M)`), so the process column counts
//! as a process list only where it shows commands (`user:command`, or a `-f` line); a lone
//! name is kept as the process's name (`python(...)` from `-c` is a training process).

use super::smi_tables::{SmiUsage, UsageGpu, UsageProcess, clean};
pub(crate) use crate::vocab::gpustat_line::strip_ansi;
use crate::vocab::gpustat_line::{GpuLine, gpu_line};

/// ` ├─  12345 (  3%,  1.2GB): python train.py` -> (pid, full command).
fn full_command_line(line: &str) -> Option<(Option<u32>, String)> {
    let l = strip_ansi(clean(line));
    let t = l.trim_start();
    let rest = t
        .strip_prefix("├─")
        .or_else(|| t.strip_prefix("└─"))?
        .trim_start();
    let (pid, rest) = rest.split_once(' ')?;
    let pid = pid.parse::<u32>().ok();
    let (_, cmd) = rest.split_once("): ")?;
    Some((pid, cmd.trim().to_string()))
}

/// `gpu-a-11.extreme         Mon Aug 22 15:23:57 2022  515.65.01` -> the driver version.
fn header_driver(line: &str) -> Option<String> {
    let l = strip_ansi(clean(line));
    let last = l.split_whitespace().last()?;
    let parts: Vec<&str> = last.split('.').collect();
    (l.split_whitespace().count() >= 3
        && (2..=3).contains(&parts.len())
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit())))
    .then(|| last.to_string())
}

/// What gpustat prints in the name column for a GPU NVML cannot reach: `GPUStatCollection.
/// new_query` (`gpustat/core.py` at 7a3b964, v1.1.1) wraps `nvmlDeviceGetHandleByIndex` and
/// `get_gpu_info` of each GPU in `try`, and turns `NVMLError_Unknown` into
/// `InvalidGPU(index, "((Unknown Error))", e)` and `NVMLError_GpuIsLost` into
/// `InvalidGPU(index, "((GPU is lost))", e)`, whose other readings are `None` (printed `??` /
/// `?`); `test_gpustat.py`'s `scenario_failing_one_gpu` is that case. These are the errors
/// `nvidia-smi` words `Unable to determine the device handle for GPU <bus id>: Unknown Error`
/// and `GPU is lost`: the GPU no longer answers the driver.
pub const UNREACHABLE_NAMES: [&str; 2] = ["((Unknown Error))", "((GPU is lost))"];

/// The name column shows gpustat's mark of a GPU NVML cannot reach ([`UNREACHABLE_NAMES`]),
/// whole or shortened from the left to `--gpuname-width` (`GPUStat.print_to` through
/// `util.shorten_left(name, width, placeholder='…')`, which keeps the name's right end).
pub fn is_unreachable_name(name: &str) -> bool {
    let n = strip_ansi(clean(name));
    let n = n.trim();
    UNREACHABLE_NAMES.iter().any(|u| {
        n == *u
            || n.strip_prefix('…')
                .is_some_and(|tail| tail.len() >= 4 && u.ends_with(tail))
    })
}

/// The indexes of the GPUs a gpustat paste shows as unreachable (see [`is_unreachable_name`]).
pub fn unreachable_gpus(u: &SmiUsage) -> Vec<u32> {
    u.gpus
        .iter()
        .filter(|g| g.name.as_deref().is_some_and(is_unreachable_name))
        .map(|g| g.index)
        .collect()
}

/// The text holds a gpustat GPU line.
pub fn looks_like_gpustat(text: &str) -> bool {
    text.lines()
        .take(2000)
        .any(|l| gpu_line(clean(l)).is_some())
}

#[derive(Debug, Default)]
struct Acc {
    last: GpuLine,
    utils: Vec<f64>,
    samples: usize,
    full_cmds: Vec<(Option<u32>, String)>,
}

pub fn parse_gpustat(text: &str) -> Result<SmiUsage, super::ParseError> {
    let mut gpus: Vec<Acc> = Vec::new();
    let mut driver = None;
    let mut lines_read = 0usize;
    let mut truncated = false;
    let mut current: Option<usize> = None;
    for l in text.lines().take(200_000) {
        if let Some(g) = gpu_line(clean(l)) {
            lines_read += 1;
            truncated = false;
            let i = match gpus.iter().position(|a| a.last.index == g.index) {
                Some(i) => i,
                None if gpus.len() < super::MAX_ITEMS => {
                    gpus.push(Acc::default());
                    gpus.len() - 1
                }
                None => continue,
            };
            let a = &mut gpus[i];
            if let Some(u) = g.util {
                a.utils.push(u);
            }
            a.samples += 1;
            a.last = g;
            // a new reading of this GPU: its full-command lines follow it again
            a.full_cmds.clear();
            current = Some(i);
            continue;
        }
        if let Some(fc) = full_command_line(l) {
            if let Some(i) = current
                && gpus[i].full_cmds.len() < super::MAX_ITEMS
            {
                gpus[i].full_cmds.push(fc);
            }
            continue;
        }
        let c = strip_ansi(clean(l));
        let t = c.trim();
        if t.is_empty() {
            continue;
        }
        current = None;
        if gpus.is_empty()
            && driver.is_none()
            && let Some(d) = header_driver(t)
        {
            driver = Some(d);
        }
        // a GPU line cut short: `[4] GeForce GTX 1080 Ti |`
        truncated = t.starts_with('[')
            && t[1..]
                .split_once(']')
                .is_some_and(|(i, _)| i.trim().parse::<u32>().is_ok());
    }
    if gpus.is_empty() {
        return Err(super::ParseError::NotThisKind(
            "no gpustat GPU line (`[0] <name> | 34°C,   0 % |  1234 / 81920 MB`) in the text",
        ));
    }
    let mut u = SmiUsage {
        format: "gpustat".into(),
        driver_version: driver,
        samples: lines_read,
        truncated,
        ..Default::default()
    };
    // the column is a process list where every GPU prints it (none says `(Not Supported)`)
    // and it shows what the processes are: a `user:command` or a `-f` full command
    let all_columns = gpus.iter().all(|a| a.last.processes.is_some());
    let mut commands_shown = false;
    for a in &mut gpus {
        let g = &a.last;
        let mut procs = g.processes.clone().unwrap_or_default();
        for (n, (pid, cmd)) in a.full_cmds.iter().enumerate() {
            let target = match pid {
                Some(p) => procs.iter_mut().find(|x| x.pid == Some(*p)),
                None => procs.get_mut(n),
            };
            if let Some(p) = target {
                p.name = super::clip(cmd, super::MAX_TEXT);
                p.command_known = true;
            }
        }
        commands_shown |= procs.iter().any(|p| p.command_known);
        for p in procs {
            if u.processes.len() >= super::MAX_ITEMS {
                break;
            }
            u.processes.push(UsageProcess {
                gpu: Some(g.index),
                pid: p.pid,
                kind: String::new(),
                name: super::clip(&p.name, super::MAX_TEXT),
                memory_mib: p.memory_mib,
                sm_pct: None,
            });
        }
        let n = a.utils.len();
        let (mean, max) = if n == 0 {
            (None, None)
        } else {
            let s: f64 = a.utils.iter().sum();
            (
                Some((s / n as f64 * 10.0).round() / 10.0),
                a.utils.iter().cloned().reduce(f64::max),
            )
        };
        u.gpus.push(UsageGpu {
            index: g.index,
            name: (!g.name.is_empty()).then(|| super::clip(&g.name, super::MAX_TEXT)),
            temperature_c: g.temperature_c,
            power_w: g.power_w,
            power_cap_w: g.power_cap_w,
            memory_used_mib: g.used_mib,
            memory_total_mib: g.total_mib,
            util_gpu: mean,
            util_gpu_max: max,
            samples: a.samples,
            ..Default::default()
        });
    }
    u.processes_listed = all_columns && commands_shown;
    Ok(u)
}

/// Fields of the value this kind yields (the table reader's, [`SmiUsage`]).
const FIELDS: &[(&str, &str)] = &[
    ("format", "gpustat"),
    (
        "driver_version",
        "the driver version of the header line, where printed",
    ),
    ("cuda_version", "never printed by gpustat (null)"),
    (
        "gpus",
        "per GPU: index, name, temperature, power and limit (--show-power), memory used and total (MiB), utilization (mean and max over --watch readings)",
    ),
    (
        "processes_listed",
        "the process column is on every GPU line and shows commands (user:command or -f lines): only then is a GPU without a training process said to run none",
    ),
    (
        "processes",
        "per process: gpu, pid (-p), name (the command, or the name printed: a user by default), memory (MiB)",
    ),
    ("samples", "GPU lines read"),
    ("truncated", "the last GPU line is cut short"),
];

/// The registry entry (see [`super::EvidenceKind`]).
pub struct GpustatKind;

impl super::EvidenceKind for GpustatKind {
    fn name(&self) -> &'static str {
        "gpustat"
    }
    fn doc(&self) -> &'static str {
        "gpustat's one line per GPU: temperature, utilization, power, memory used/total and each process's memory"
    }
    fn example(&self) -> &'static str {
        "gpustat -cp"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        FIELDS
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["nvml", "nvml.sample", "gpu.usage"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_gpustat(s.head)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        super::to_value(&parse_gpustat(text)?)
    }
    fn host(&self, text: &str) -> Option<Result<super::HostPart, super::ParseError>> {
        super::smi_tables::usage_host(parse_gpustat(text))
    }
    fn describes_host(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probes::gpu_usage::usage_value;
    use serde_json::json;

    /// gpustat's own expected outputs, `gpustat/test_gpustat.py` (v1.1.1):
    /// `MOCK_EXPECTED_OUTPUT_FULL_PROCESS`, printed with `-c -u -p -F -e --show-power -f`.
    const FULL: &str = "[0] GeForce GTX TITAN 0 | 80°C,  16 %,  76 % (E:  88 %  D:  67 %),  125 / 250 W |  8000 / 12287 MB | user1:python/48448(4000M) user2:python/153223(4000M)\n ├─  48448 (  85%,  257MB): python\n └─ 153223 (  15%,     0B): python\n[1] GeForce GTX TITAN 1 | 36°C,  53 %,   0 % (E:   0 %  D:   0 %),   ?? / 250 W |  9000 / 12189 MB | user1:torch/192453(3000M) user3:caffe/194826(6000M)\n ├─ 192453 ( 123%,   59MB): torch\n └─ 194826 (   0%, 1025MB): caffe\n[2] GeForce RTX 2       | 71°C, 100 %,  ?? % (E:  ?? %  D:  ?? %),  250 /  ?? W |     0 / 12189 MB | (Not Supported)\n";

    #[test]
    fn header_and_idle_gpus_without_processes() {
        // healthy: github.com/wookayin/gpustat/issues/130, four idle P100s (v0.x `'C`)
        let t = "gpu-a-11.extreme         Mon Aug 22 15:23:57 2022  515.65.01\n[0] Tesla P100-PCIE-16GB | 27'C,   0 % |   103 / 16384 MB |\n[1] Tesla P100-PCIE-16GB | 27'C,   0 % |   103 / 16384 MB |\n[2] Tesla P100-PCIE-16GB | 28'C,   0 % |   103 / 16384 MB |\n[3] Tesla P100-PCIE-16GB | 27'C,   2 % |   103 / 16384 MB |\n";
        assert!(looks_like_gpustat(t));
        let u = parse_gpustat(t).unwrap();
        assert_eq!(u.format, "gpustat");
        assert_eq!(u.driver_version.as_deref(), Some("515.65.01"));
        assert_eq!(u.gpus.len(), 4);
        let g = &u.gpus[3];
        assert_eq!(g.name.as_deref(), Some("Tesla P100-PCIE-16GB"));
        assert_eq!(g.temperature_c, Some(27.0));
        assert_eq!(g.util_gpu, Some(2.0));
        assert_eq!(
            (g.memory_used_mib, g.memory_total_mib),
            (Some(103.0), Some(16384.0))
        );
        assert!(u.processes.is_empty());
        // 103 MB is no job's footprint: nothing to judge
        let v = usage_value(&u, "x");
        assert_eq!(v["process_on_gpu"], json!(false));
    }

    #[test]
    fn memory_held_at_full_utilization_with_no_process_named() {
        // problem: github.com/qizhou000/VisEdit/issues/5, A100 6 keeps 10151 MB at 100 % after
        // its job died; `(null)` is no process of gpustat's grammar
        let t = "[6] NVIDIA A100 80GB PCIe | 52'C, 100 % | 10151 / 81920 MB | (null)\n";
        let u = parse_gpustat(t).unwrap();
        let g = &u.gpus[0];
        assert_eq!(g.index, 6);
        assert_eq!(g.util_gpu, Some(100.0));
        assert_eq!(g.memory_used_mib, Some(10151.0));
        assert!(u.processes.is_empty() && !u.processes_listed);
        // the held memory stands for a job, busy: no underutilization to report
        let v = usage_value(&u, "x");
        assert_eq!(v["process_on_gpu"], json!(true));
        assert_eq!(v["gpu_util"], json!(100.0));
    }

    #[test]
    fn processes_with_command_pid_and_memory() {
        // healthy: the maintainer's example in github.com/wookayin/gpustat/issues/97 (`-cp`)
        let t = "[0] GeForce GTX Titan X | 77'C,  96 % | 11848 / 12287 MB | python/52046(11821M)\n";
        let u = parse_gpustat(t).unwrap();
        assert_eq!(u.processes.len(), 1);
        let p = &u.processes[0];
        assert_eq!((p.gpu, p.pid), (Some(0), Some(52046)));
        assert_eq!(p.name, "python");
        assert_eq!(p.memory_mib, Some(11821.0));
        let v = usage_value(&u, "x");
        assert_eq!(v["process_evidence"], json!("a training process is listed"));
        assert_eq!(v["gpu_util"], json!(96.0));
        // problem: the same python process on an idle GPU is a job at 0 %
        let idle = t.replace(" 96 %", "  0 %");
        let v = usage_value(&parse_gpustat(&idle).unwrap(), "x");
        assert_eq!(v["gpu_util"], json!(0.0));
        assert_eq!(v["job_inferred"], json!(false));
    }

    #[test]
    fn users_memory_and_unknown_memory() {
        // github.com/wookayin/gpustat/issues/157 (default output: users, not commands)
        let t = "40901                       Fri Jun 30 11:52:07 2023  535.54.03\n[3] NVIDIA GeForce RTX 4090 | 57°C,  99 % | 21305 / 24564 MB | user1(15180M) gdm(4M)\n[6] NVIDIA GeForce RTX 4090 | 25°C,   0 % |    13 / 24564 MB | gdm(4M)\n";
        let u = parse_gpustat(t).unwrap();
        assert_eq!(u.processes.len(), 3);
        assert_eq!(u.processes[0].name, "user1");
        assert_eq!(u.processes[0].memory_mib, Some(15180.0));
        assert_eq!(u.processes[0].pid, None);
        // the default column names users: it is no list of what runs
        assert!(!u.processes_listed);
        let v = usage_value(&u, "x");
        assert_eq!(
            v["process_evidence"],
            json!("memory held (the paste lists no processes)")
        );
        assert_eq!(v["job_gpus"], json!(1));
        // github.com/wookayin/gpustat/issues/95: `?M`, a process whose memory NVML did not give
        let t = "[0] GeForce GTX 1080 Ti | 75°C, 100 % |  4335 / 11178 MB | jfx(?M)\n";
        let u = parse_gpustat(t).unwrap();
        assert_eq!(u.processes[0].memory_mib, None);
        assert_eq!(u.gpus[0].temperature_c, Some(75.0));
    }

    #[test]
    fn not_supported_processes_and_utilization() {
        // github.com/wookayin/gpustat/issues/122: an old GT 650M, `?? %` and `(Not Supported)`
        let t = "debianace            Tue May 24 09:21:01 2022  390.144\n[0] GeForce GT 650M  | 47'C,  ?? % |     0 /  1999 MB | (Not Supported)\n";
        let u = parse_gpustat(t).unwrap();
        assert_eq!(u.driver_version.as_deref(), Some("390.144"));
        assert_eq!(u.gpus[0].util_gpu, None);
        assert_eq!(u.gpus[0].memory_total_mib, Some(1999.0));
        assert!(!u.processes_listed);
        // github.com/wookayin/gpustat/issues/138: busy V100s whose processes NVML cannot list
        let t = "[1] Tesla V100-SXM2-32GB | 50°C,  89 % | 32374 / 32510 MB | (Not Supported)\n";
        let v = usage_value(&parse_gpustat(t).unwrap(), "x");
        assert_eq!(v["gpu_util"], json!(89.0));
    }

    #[test]
    fn fan_codec_power_and_full_commands() {
        let u = parse_gpustat(FULL).unwrap();
        assert_eq!(u.gpus.len(), 3);
        let g0 = &u.gpus[0];
        // the fan (16 %) comes before the utilization (76 %); the codec's does not count
        assert_eq!(g0.util_gpu, Some(76.0));
        assert_eq!((g0.power_w, g0.power_cap_w), (Some(125.0), Some(250.0)));
        let g1 = &u.gpus[1];
        assert_eq!((g1.power_w, g1.power_cap_w), (None, Some(250.0)));
        assert_eq!(g1.util_gpu, Some(0.0));
        let g2 = &u.gpus[2];
        assert_eq!(g2.util_gpu, None);
        assert_eq!((g2.power_w, g2.power_cap_w), (Some(250.0), None));
        // `user:command/pid(memM)` and the `-f` lines under the GPU
        assert_eq!(u.processes.len(), 4);
        assert_eq!(u.processes[1].pid, Some(153223));
        assert_eq!(u.processes[1].name, "python");
        assert_eq!(u.processes[3].name, "caffe");
        assert_eq!(u.processes[3].memory_mib, Some(6000.0));
        // GPU 2 cannot list processes: the column is not a whole list
        assert!(!u.processes_listed);
        let two = FULL.split("[2]").next().unwrap();
        assert!(parse_gpustat(two).unwrap().processes_listed);
        // v0.x's power: `,  125 W` and `,  125 / 250 W`
        let old = "[0] GeForce GTX 1080 | 60'C,  55 %,  125 W |  8000 / 8119 MB | alice(7900M)\n";
        let g = &parse_gpustat(old).unwrap().gpus[0];
        assert_eq!(
            (g.util_gpu, g.power_w, g.power_cap_w),
            (Some(55.0), Some(125.0), None)
        );
    }

    #[test]
    fn colour_codes_no_name_and_watch_readings() {
        // `--color`: blessed's SGR codes and `ESC ( B` around each field
        let t = "\u{1b}[36m[0]\u{1b}(B\u{1b}[m \u{1b}[34mGeForce GTX TITAN 0\u{1b}(B\u{1b}[m |\u{1b}[1m\u{1b}[31m 80°C\u{1b}(B\u{1b}[m, \u{1b}[1m\u{1b}[32m 76 %\u{1b}(B\u{1b}[m | \u{1b}[1m\u{1b}[33m 8000\u{1b}(B\u{1b}[m / \u{1b}[33m12287\u{1b}(B\u{1b}[m MB | \u{1b}[1m\u{1b}[30muser1\u{1b}(B\u{1b}[m(\u{1b}[33m4000M\u{1b}(B\u{1b}[m)\n";
        let u = parse_gpustat(t).unwrap();
        assert_eq!(u.gpus[0].util_gpu, Some(76.0));
        assert_eq!(u.gpus[0].memory_used_mib, Some(8000.0));
        assert_eq!(u.processes[0].memory_mib, Some(4000.0));
        // `--gpuname-width 0` (test_gpustat.py: `'[0]  80°C' in ...`)
        let t = "[0]  80°C,  76 % |  8000 / 12287 MB | user1(4000M)\n";
        let g = &parse_gpustat(t).unwrap().gpus[0];
        assert_eq!((g.name.clone(), g.util_gpu), (None, Some(76.0)));
        // `--watch`: the same GPU read twice is two samples
        let t =
            "[0] A | 40°C,  10 % |  8000 / 12287 MB |\n[0] A | 41°C,  30 % |  8000 / 12287 MB |\n";
        let u = parse_gpustat(t).unwrap();
        assert_eq!(u.gpus.len(), 1);
        assert_eq!(
            (
                u.gpus[0].util_gpu,
                u.gpus[0].util_gpu_max,
                u.gpus[0].samples
            ),
            (Some(20.0), Some(30.0), 2)
        );
        // a failing GPU (test_gpustat.py, #125) and a line cut short
        let t = "[2] ((Unknown Error)) | ??°C,  ?? % |    ?? /    ?? MB | (Not Supported)\n[3] GeForce GTX 1080 Ti |";
        let u = parse_gpustat(t).unwrap();
        assert_eq!(u.gpus[0].memory_used_mib, None);
        assert!(u.truncated);
    }

    #[test]
    fn a_gpu_nvml_cannot_reach_is_named_as_such() {
        // ZhengPeng7/BiRefNet#169 (2025-01): four RTX 3090s, GPU 1 gone while a training hangs
        let t = "amax-Super-Server           Thu Jan 30 23:23:20 2025  550.120\n\
[0] NVIDIA GeForce RTX 3090 | 62°C, 100 % | 16299 / 24576 MB | amax(16284M) gdm(4M)\n\
[1] ((Unknown Error))       |  ?°C,   ? % |     ? /     ? MB | (Not Supported)\n\
[2] NVIDIA GeForce RTX 3090 | 67°C, 100 % | 16299 / 24576 MB | amax(16284M) gdm(4M)\n";
        let u = parse_gpustat(t).unwrap();
        assert_eq!(unreachable_gpus(&u), vec![1]);
        // NVMLError_GpuIsLost, and a name shortened from the left to `--gpuname-width 10`
        assert!(is_unreachable_name("((GPU is lost))"));
        assert!(is_unreachable_name("…n Error))"));
        // healthy: every GPU named by NVML (wookayin/gpustat#95's four 1080 Tis)
        let t = "[0] GeForce GTX 1080 Ti | 80'C, 100 % | 10839 / 11178 MB | a(?M)\n\
[1] GeForce GTX 1080 Ti | 78'C, 100 % | 10839 / 11178 MB | a(?M)\n";
        assert!(unreachable_gpus(&parse_gpustat(t).unwrap()).is_empty());
        // a card's own name that merely contains the words is not the mark
        assert!(!is_unreachable_name("Unknown Error"));
        assert!(!is_unreachable_name("…"));
    }

    #[test]
    fn prose_and_other_tables_are_not_gpustat() {
        assert!(!looks_like_gpustat("[0] is the first GPU | it was slow\n"));
        assert!(!looks_like_gpustat(
            "|   0  Tesla T4            Off  | 00000000:00:04.0 Off |                    0 |\n"
        ));
        assert!(parse_gpustat("hello\n").unwrap_err().is_not_this_kind());
    }
}
