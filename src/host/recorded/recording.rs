//! Recording: a live host wrapped so every answer it gives lands in a [`Snapshot`].

use super::*;

impl RecordingHost {
    pub fn new(inner: Arc<dyn Host>) -> RecordingHost {
        let snap = Snapshot::new(&format!("recorded from {}", inner.describe()));
        RecordingHost {
            inner,
            snap: Mutex::new(snap),
        }
    }

    /// What has been recorded so far (the environment and CPU count are always included).
    pub fn snapshot(&self) -> Snapshot {
        let mut s = self.snap.lock().unwrap().clone();
        if s.env.is_empty() {
            s.env = self.inner.env();
        }
        if s.cpu_count.is_none() {
            s.cpu_count = Some(self.inner.cpu_count());
        }
        s
    }

    pub fn into_snapshot(self) -> Snapshot {
        self.snapshot()
    }

    fn with<R>(&self, f: impl FnOnce(&mut Snapshot) -> R) -> R {
        f(&mut self.snap.lock().unwrap())
    }
}

impl Host for RecordingHost {
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
        let r = self.inner.read_file(path);
        let rec = match &r {
            Ok(b) => Recorded::Ok(Content::from_bytes(b)),
            Err(e) => Recorded::Err {
                error: RecordedError::from_io(e),
            },
        };
        self.with(|s| s.files.entry(path.to_string()).or_default().push(rec));
        r
    }
    /// Recorded as a read of that path, so a replay answers it the same.
    fn read_job_file(&self, pid: u32, path: &str, max: u64) -> io::Result<Vec<u8>> {
        let r = self.inner.read_job_file(pid, path, max);
        let rec = match &r {
            Ok(b) => Recorded::Ok(Content::from_bytes(b)),
            Err(e) => Recorded::Err {
                error: RecordedError::from_io(e),
            },
        };
        self.with(|s| s.files.entry(path.to_string()).or_default().push(rec));
        r
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
        let r = self.inner.run_as_job(pid, argv, timeout);
        let rec = Recorded::from_result(&r);
        self.with(|s| s.commands.entry(command_key(argv)).or_default().push(rec));
        r
    }
    fn read_dir(&self, path: &str) -> io::Result<Vec<String>> {
        let r = self.inner.read_dir(path);
        let rec = Recorded::from_result(&r);
        self.with(|s| s.dirs.entry(path.to_string()).or_default().push(rec));
        r
    }
    fn metadata(&self, path: &str) -> io::Result<FileMeta> {
        let r = self.inner.metadata(path);
        let rec = Recorded::from_result(&r);
        self.with(|s| s.metadata.entry(path.to_string()).or_default().push(rec));
        r
    }
    fn read_link(&self, path: &str) -> io::Result<String> {
        let r = self.inner.read_link(path);
        let rec = Recorded::from_result(&r);
        self.with(|s| s.links.entry(path.to_string()).or_default().push(rec));
        r
    }
    fn commands_see_its_kernel(&self) -> bool {
        self.inner.commands_see_its_kernel()
    }
    /// Recorded as the command naming the host paths, which is what a replay runs.
    fn run_on_files(
        &self,
        argv: &[String],
        file_flag: &str,
        files: &[String],
        timeout: Duration,
    ) -> io::Result<CommandOutput> {
        let r = self.inner.run_on_files(argv, file_flag, files, timeout);
        let mut key = argv.to_vec();
        key.extend(files.iter().map(|f| format!("{file_flag}{f}")));
        let rec = Recorded::from_result(&r);
        self.with(|s| s.commands.entry(command_key(&key)).or_default().push(rec));
        r
    }
    fn run(&self, argv: &[String], timeout: Duration) -> io::Result<CommandOutput> {
        let r = self.inner.run(argv, timeout);
        let rec = Recorded::from_result(&r);
        self.with(|s| s.commands.entry(command_key(argv)).or_default().push(rec));
        r
    }
    fn nvml(&self) -> Result<NvmlReading, HostError> {
        let r = self.inner.nvml();
        let rec = NvmlRecord::from_result(&r);
        self.with(|s| s.nvml.push(rec));
        r
    }
    fn nvml_sample(&self) -> Result<Vec<GpuSample>, HostError> {
        let r = self.inner.nvml_sample();
        let rec = NvmlRecord::from_result(&r);
        self.with(|s| s.nvml_samples.push(rec));
        r
    }
    fn cuda_check(&self, deadline: Duration) -> Result<CudaCheck, HostError> {
        let r = self.inner.cuda_check(deadline);
        let rec = NvmlRecord::from_result(&r);
        self.with(|s| s.cuda_checks.push(rec));
        r
    }
    fn env(&self) -> BTreeMap<String, String> {
        let e = self.inner.env();
        self.with(|s| s.env = e.clone());
        e
    }
    fn now(&self) -> f64 {
        let t = self.inner.now();
        self.with(|s| s.now.push(t));
        t
    }
    fn sleep(&self, d: Duration) {
        self.inner.sleep(d)
    }
    fn cpu_count(&self) -> usize {
        let n = self.inner.cpu_count();
        self.with(|s| s.cpu_count = Some(n));
        n
    }
}
