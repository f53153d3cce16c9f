//! A host seen through what one command remembers: for the files a plan found through a job
//! that has since stopped, as whom they are read and changed; and, for `plan`'s one-line
//! glance, every GPU sample the probes took. Everything else is the inner host's.
//!
//! Why: a live host learns a job file's owner when it reads the file through the running
//! process ([`Host::read_job_file`]); once the job has stopped there is no process to learn it
//! from, and a file fix without an owner would act as root. `apply PLAN` of a plan made with
//! `--pid` wraps its host in this one with the owners the plan recorded
//! ([`crate::plan::JobFacts`]), so the job's files are still read and written with the job
//! owner's authority, never root's.

use super::{
    CommandOutput, CudaCheck, FileMeta, GpuSample, Host, HostError, NvmlReading, NvmlSetting,
};
use crate::authority::Owner;
use std::collections::BTreeMap;
use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// GPU samples as the probes took them: (the host's clock, NaN on a recorded host; the samples).
pub type Taps = Vec<(f64, Vec<GpuSample>)>;

pub struct HostView {
    inner: Arc<dyn Host>,
    owners: BTreeMap<String, Owner>,
    taps: Option<Mutex<Taps>>,
}

/// Most samples a view keeps (a 60 min window at the probes' 100 ms): beyond it, none.
const MAX_TAPS: usize = 36_000;

impl HostView {
    pub fn new(inner: Arc<dyn Host>, owners: BTreeMap<String, Owner>) -> Self {
        HostView {
            inner,
            owners,
            taps: None,
        }
    }

    /// Also keep every GPU sample read through this host.
    pub fn tapping(mut self) -> Self {
        self.taps = Some(Mutex::new(Vec::new()));
        self
    }

    /// The GPU samples read so far (empty when not tapping).
    pub fn taps(&self) -> Taps {
        self.taps
            .as_ref()
            .map(|t| t.lock().unwrap_or_else(|e| e.into_inner()).clone())
            .unwrap_or_default()
    }
}

impl Host for HostView {
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
        self.inner.read_file(path)
    }
    fn read_dir(&self, path: &str) -> io::Result<Vec<String>> {
        self.inner.read_dir(path)
    }
    fn metadata(&self, path: &str) -> io::Result<FileMeta> {
        self.inner.metadata(path)
    }
    fn read_link(&self, path: &str) -> io::Result<String> {
        self.inner.read_link(path)
    }
    fn run(&self, argv: &[String], timeout: Duration) -> io::Result<CommandOutput> {
        self.inner.run(argv, timeout)
    }
    fn nvml(&self) -> Result<NvmlReading, HostError> {
        self.inner.nvml()
    }
    fn nvml_sample(&self) -> Result<Vec<GpuSample>, HostError> {
        let r = self.inner.nvml_sample();
        if let (Some(taps), Ok(samples)) = (&self.taps, &r) {
            let mut t = taps.lock().unwrap_or_else(|e| e.into_inner());
            if t.len() < MAX_TAPS {
                // a recorded host's clock is a sequence the probes read: not consumed here
                let now = if self.inner.is_live() {
                    self.inner.now()
                } else {
                    f64::NAN
                };
                t.push((now, samples.clone()));
            }
        }
        r
    }
    fn nvml_pcie(&self) -> Result<Vec<super::PcieThroughput>, HostError> {
        self.inner.nvml_pcie()
    }
    fn nvml_pcie_bytes(&self) -> Result<Vec<super::PcieBytes>, HostError> {
        self.inner.nvml_pcie_bytes()
    }
    fn cuda_check(&self, deadline: Duration) -> Result<CudaCheck, HostError> {
        self.inner.cuda_check(deadline)
    }
    fn read_job_file(&self, pid: u32, path: &str, max: u64) -> io::Result<Vec<u8>> {
        self.inner.read_job_file(pid, path, max)
    }
    fn job_file_owner(&self, path: &str) -> Option<Owner> {
        self.owners
            .get(path)
            .cloned()
            .or_else(|| self.inner.job_file_owner(path))
    }
    fn run_as_job(
        &self,
        pid: u32,
        argv: &[String],
        timeout: Duration,
    ) -> io::Result<CommandOutput> {
        self.inner.run_as_job(pid, argv, timeout)
    }
    fn warm_up(&self) {
        self.inner.warm_up()
    }
    fn env(&self) -> BTreeMap<String, String> {
        self.inner.env()
    }
    fn now(&self) -> f64 {
        self.inner.now()
    }
    fn sleep(&self, d: Duration) {
        self.inner.sleep(d)
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
