//! [`TimedHost`]: the host a probe sees while the engine measures where a run's time goes
//! (the measurements themselves are [`crate::vocab::timing`]).

use crate::host::{
    CommandOutput, CudaCheck, FileMeta, GpuSample, Host, HostError, NvmlReading, NvmlSetting,
};
use crate::vocab::timing::{Wait, ms};
use std::collections::BTreeMap;
use std::io;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One NVML reading shared by every probe of an observation pass: the `nvml`, `env` and
/// `gpu.topology` probes each ask for it, and reading a GPU costs tens of milliseconds of
/// driver calls (32 ms in sequence on an H200), so the pass reads it once and every probe sees
/// the same reading.
pub type SharedNvml = std::sync::OnceLock<Result<NvmlReading, HostError>>;

/// A host that forwards every call and adds up how long each kind of call took.
pub struct TimedHost<'a> {
    inner: &'a dyn Host,
    waits: Mutex<BTreeMap<String, (u32, Duration)>>,
    nvml: Option<&'a SharedNvml>,
}

impl<'a> TimedHost<'a> {
    pub fn new(inner: &'a dyn Host) -> TimedHost<'a> {
        TimedHost {
            inner,
            waits: Mutex::new(BTreeMap::new()),
            nvml: None,
        }
    }

    /// Like [`TimedHost::new`], with the NVML reading shared through `nvml` (the first probe
    /// to ask reads it; the others wait for that reading, and the wait is timed).
    pub fn sharing(inner: &'a dyn Host, nvml: &'a SharedNvml) -> TimedHost<'a> {
        TimedHost {
            nvml: Some(nvml),
            ..TimedHost::new(inner)
        }
    }

    fn time<R>(&self, what: impl FnOnce() -> String, f: impl FnOnce() -> R) -> R {
        let t = Instant::now();
        let r = f();
        let d = t.elapsed();
        let mut w = self.waits.lock().unwrap_or_else(|e| e.into_inner());
        let e = w.entry(what()).or_insert((0, Duration::ZERO));
        e.0 += 1;
        e.1 += d;
        r
    }

    /// What was waited on, longest first.
    pub fn waits(&self) -> Vec<Wait> {
        let w = self.waits.lock().unwrap_or_else(|e| e.into_inner());
        let mut v: Vec<Wait> = w
            .iter()
            .map(|(k, (n, d))| Wait {
                what: k.clone(),
                calls: *n,
                ms: ms(*d),
            })
            .collect();
        v.sort_by(|a, b| b.ms.total_cmp(&a.ms).then_with(|| a.what.cmp(&b.what)));
        v
    }
}

fn command_name(argv: &[String]) -> String {
    // the program and its first arguments, not a script passed with -c
    let mut parts = Vec::new();
    for a in argv.iter().take(3) {
        if a.len() > 40 || a.contains('\n') {
            parts.push("…".to_string());
            break;
        }
        parts.push(a.clone());
    }
    format!("command {}", parts.join(" "))
}

impl Host for TimedHost<'_> {
    fn describe(&self) -> String {
        self.inner.describe()
    }
    fn is_live(&self) -> bool {
        self.inner.is_live()
    }
    fn can_read_again(&self) -> bool {
        self.inner.can_read_again()
    }
    fn read_file(&self, path: &str) -> io::Result<Vec<u8>> {
        self.time(|| "file reads".into(), || self.inner.read_file(path))
    }
    fn read_dir(&self, path: &str) -> io::Result<Vec<String>> {
        self.time(|| "directory listings".into(), || self.inner.read_dir(path))
    }
    fn metadata(&self, path: &str) -> io::Result<FileMeta> {
        self.time(|| "file metadata".into(), || self.inner.metadata(path))
    }
    fn read_link(&self, path: &str) -> io::Result<String> {
        self.time(|| "file metadata".into(), || self.inner.read_link(path))
    }
    fn run(&self, argv: &[String], timeout: Duration) -> io::Result<CommandOutput> {
        self.time(|| command_name(argv), || self.inner.run(argv, timeout))
    }
    fn nvml(&self) -> Result<NvmlReading, HostError> {
        match self.nvml {
            Some(cell) => self.time(
                || "NVML reading".into(),
                || cell.get_or_init(|| self.inner.nvml()).clone(),
            ),
            None => self.time(|| "NVML reading".into(), || self.inner.nvml()),
        }
    }
    fn nvml_sample(&self) -> Result<Vec<GpuSample>, HostError> {
        self.time(|| "NVML samples".into(), || self.inner.nvml_sample())
    }
    fn cuda_check(&self, deadline: Duration) -> Result<CudaCheck, HostError> {
        self.time(|| "CUDA check".into(), || self.inner.cuda_check(deadline))
    }
    fn env(&self) -> BTreeMap<String, String> {
        self.inner.env()
    }
    fn now(&self) -> f64 {
        self.inner.now()
    }
    fn sleep(&self, d: Duration) {
        self.time(|| "sampling window (sleep)".into(), || self.inner.sleep(d))
    }
    fn cpu_count(&self) -> usize {
        self.inner.cpu_count()
    }
    fn has_env(&self) -> bool {
        self.inner.has_env()
    }
    fn fs_path(&self, path: &str) -> Option<std::path::PathBuf> {
        self.inner.fs_path(path)
    }
    fn commands_see_its_kernel(&self) -> bool {
        self.inner.commands_see_its_kernel()
    }
    fn read_file_tail(&self, path: &str, max: u64) -> io::Result<(Vec<u8>, u64)> {
        self.time(
            || "file reads".into(),
            || self.inner.read_file_tail(path, max),
        )
    }
    fn run_on_files(
        &self,
        argv: &[String],
        file_flag: &str,
        files: &[String],
        timeout: Duration,
    ) -> io::Result<CommandOutput> {
        self.time(
            || command_name(argv),
            || self.inner.run_on_files(argv, file_flag, files, timeout),
        )
    }
    fn read_job_file(&self, pid: u32, path: &str, max: u64) -> io::Result<Vec<u8>> {
        self.time(
            || "file reads".into(),
            || self.inner.read_job_file(pid, path, max),
        )
    }
    fn job_file_owner(&self, path: &str) -> Option<crate::authority::Owner> {
        self.inner.job_file_owner(path)
    }
    fn run_as_job(
        &self,
        pid: u32,
        argv: &[String],
        timeout: Duration,
    ) -> io::Result<CommandOutput> {
        self.time(
            || command_name(argv),
            || self.inner.run_as_job(pid, argv, timeout),
        )
    }
    fn write_runtime(&self, path: &str, value: &str) -> io::Result<()> {
        self.inner.write_runtime(path, value)
    }
    fn nvml_set(&self, gpu: u32, setting: &NvmlSetting) -> Result<(), HostError> {
        self.inner.nvml_set(gpu, setting)
    }
    fn set_module(&self, name: &str, loaded: bool) -> Result<(), HostError> {
        self.inner.set_module(name, loaded)
    }
    fn remount(&self, mount_point: &str, options: &str) -> Result<(), HostError> {
        self.inner.remount(mount_point, options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::recorded::SnapshotHost;
    use crate::vocab::timing::{Phase, ProbeTiming, Timings, render};

    #[test]
    fn timed_host_counts_calls_by_kind() {
        let mut h = SnapshotHost::empty();
        h.set_file("/proc/modules", "nvidia 1 0 - Live 0x0\n");
        let t = TimedHost::new(&h);
        assert!(t.read_file("/proc/modules").is_ok());
        assert!(t.read_file("/nope").is_err());
        let _ = t.run(
            &["python3".into(), "-c".into(), "import x\nprint(1)".into()],
            Duration::from_secs(1),
        );
        let w = t.waits();
        let files = w.iter().find(|w| w.what == "file reads").unwrap();
        assert_eq!(files.calls, 2);
        assert!(w.iter().any(|w| w.what == "command python3 -c …"), "{w:?}");
    }

    #[test]
    fn render_names_the_probe_waited_on() {
        let t = Timings {
            total_ms: 52.0,
            phases: vec![Phase {
                name: "observe".into(),
                ms: 40.0,
            }],
            probes: vec![ProbeTiming {
                probe: "nvml {}".into(),
                start_ms: 0.1,
                ms: 39.5,
                timed_out: false,
                waits: vec![Wait {
                    what: "NVML reading".into(),
                    calls: 1,
                    ms: 39.0,
                }],
            }],
            waited_on: Some("nvml {} (39.5 ms)".into()),
            peak_rss_kib: Some(10240),
        };
        let s = render(&t);
        assert!(s.contains("observe waited on nvml {} (39.5 ms)"), "{s}");
        assert!(s.contains("39.0 ms  NVML reading (1 call)"), "{s}");
        assert!(s.contains("peak memory 10.0 MiB"), "{s}");
    }
}
