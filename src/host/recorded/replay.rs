//! Replay: a [`SnapshotHost`] answers from its snapshot, and the changes fixes make (runtime
//! values, NVML settings, modules, mounts) are simulated so later reads see them.

use super::*;

impl SnapshotHost {
    pub fn load(path: &Path) -> anyhow::Result<SnapshotHost> {
        let snap = Snapshot::load(path)?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.display().to_string());
        Ok(SnapshotHost {
            name: format!("snapshot {name}"),
            snap,
            cursors: Mutex::new(BTreeMap::new()),
            changed: Mutex::new(Changed::default()),
        })
    }

    pub fn from_snapshot(snap: Snapshot) -> SnapshotHost {
        SnapshotHost {
            name: if snap.description.is_empty() {
                "snapshot".to_string()
            } else {
                format!("snapshot ({})", snap.description)
            },
            snap,
            cursors: Mutex::new(BTreeMap::new()),
            changed: Mutex::new(Changed::default()),
        }
    }

    /// An empty snapshot host (every file missing, NVML not recorded): tests build on it.
    pub fn empty() -> SnapshotHost {
        SnapshotHost::from_snapshot(Snapshot::new("in-memory test host"))
    }

    pub fn snapshot(&self) -> &Snapshot {
        &self.snap
    }

    /// Pick the answer for the next call of `key` among `n` recorded ones.
    /// A file a recorded change starts from (`/proc/modules`, `/proc/mounts`).
    fn read_for_change(&self, path: &str) -> Result<Vec<u8>, HostError> {
        self.read_file(path).map_err(|e| HostError::Io {
            path: path.into(),
            message: e.to_string(),
        })
    }

    pub(super) fn next_index(&self, table: u8, key: &str, n: usize) -> usize {
        let mut c = self.cursors.lock().unwrap();
        let i = c.entry((table, key.to_string())).or_insert(0);
        let pick = (*i).min(n.saturating_sub(1));
        *i += 1;
        pick
    }

    pub(super) fn replay<T: Clone>(
        &self,
        table: u8,
        key: &str,
        list: Option<&Vec<Recorded<T>>>,
    ) -> io::Result<T> {
        match list {
            Some(l) if !l.is_empty() => l[self.next_index(table, key, l.len())].to_result(),
            _ => Err(crate::host::not_found(NOT_RECORDED)),
        }
    }
}

impl Host for SnapshotHost {
    fn describe(&self) -> String {
        self.name.clone()
    }
    fn is_live(&self) -> bool {
        false
    }
    /// A recording replays its readings in the order the live run took them, so a second
    /// reading here is what the live run read the second time (the last one again where it
    /// holds one).
    fn can_read_again(&self) -> bool {
        true
    }
    fn read_file(&self, path: &str) -> io::Result<Vec<u8>> {
        if let Some(b) = self.changed.lock().unwrap().files.get(path) {
            return Ok(b.clone());
        }
        self.replay(FILES, path, self.snap.files.get(path))?
            .to_bytes()
    }
    fn write_runtime(&self, path: &str, value: &str) -> io::Result<()> {
        if !(path.starts_with("/sys/") || path.starts_with("/proc/sys/")) {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("runtime writes go under /sys or /proc/sys, not {path}"),
            ));
        }
        self.read_file(path)?; // only what exists can be written
        self.changed
            .lock()
            .unwrap()
            .files
            .insert(path.to_string(), format!("{value}\n").into_bytes());
        Ok(())
    }
    fn nvml_set(&self, gpu: u32, setting: &crate::host::NvmlSetting) -> Result<(), HostError> {
        let mut reading = self.nvml()?;
        let g = reading
            .gpus
            .iter_mut()
            .find(|g| g.index == gpu)
            .ok_or(HostError::NoGpu { gpu })?;
        match setting {
            crate::host::NvmlSetting::Persistence { enabled } => {
                g.persistence = crate::host::Field::Ok(*enabled)
            }
            crate::host::NvmlSetting::PowerLimit { milliwatts } => {
                g.power_limit_mw = crate::host::Field::Ok(*milliwatts);
                g.power_enforced_limit_mw = crate::host::Field::Ok(*milliwatts);
            }
            crate::host::NvmlSetting::ResetApplicationClocks => {
                g.app_clock_graphics = g.default_app_clock_graphics.clone();
                g.app_clock_mem = g.default_app_clock_mem.clone();
            }
            crate::host::NvmlSetting::ApplicationClocks {
                memory_mhz,
                graphics_mhz,
            } => {
                g.app_clock_graphics = crate::host::Field::Ok(*graphics_mhz);
                g.app_clock_mem = crate::host::Field::Ok(*memory_mhz);
            }
        }
        self.changed.lock().unwrap().nvml = Some(reading);
        Ok(())
    }
    fn set_module(&self, name: &str, loaded: bool) -> Result<(), HostError> {
        let text = String::from_utf8_lossy(&self.read_for_change("/proc/modules")?).into_owned();
        let mut lines: Vec<String> = text
            .lines()
            .filter(|l| l.split_whitespace().next() != Some(name))
            .map(str::to_string)
            .collect();
        if loaded {
            lines.insert(0, format!("{name} 16384 0 - Live 0x0000000000000000"));
        }
        let mut out = lines.join("\n");
        out.push('\n');
        self.changed
            .lock()
            .unwrap()
            .files
            .insert("/proc/modules".into(), out.into_bytes());
        Ok(())
    }
    fn remount(&self, mount_point: &str, options: &str) -> Result<(), HostError> {
        let text = String::from_utf8_lossy(&self.read_for_change("/proc/mounts")?).into_owned();
        let opts = options.strip_prefix("remount,").unwrap_or(options);
        let mut found = false;
        let lines: Vec<String> = text
            .lines()
            .map(|l| {
                let mut f: Vec<&str> = l.split_whitespace().collect();
                if f.len() >= 4 && f[1] == mount_point {
                    found = true;
                    f[3] = opts;
                    f.join(" ")
                } else {
                    l.to_string()
                }
            })
            .collect();
        if !found {
            return Err(HostError::NotMounted {
                mount_point: mount_point.into(),
            });
        }
        self.changed.lock().unwrap().files.insert(
            "/proc/mounts".into(),
            (lines.join("\n") + "\n").into_bytes(),
        );
        Ok(())
    }
    fn read_dir(&self, path: &str) -> io::Result<Vec<String>> {
        self.replay(DIRS, path, self.snap.dirs.get(path))
    }
    fn metadata(&self, path: &str) -> io::Result<FileMeta> {
        self.replay(META, path, self.snap.metadata.get(path))
    }
    fn read_link(&self, path: &str) -> io::Result<String> {
        self.replay(LINKS, path, self.snap.links.get(path))
    }
    fn run(&self, argv: &[String], _timeout: Duration) -> io::Result<CommandOutput> {
        let key = command_key(argv);
        self.replay(COMMANDS, &key, self.snap.commands.get(&key))
    }
    fn nvml(&self) -> Result<NvmlReading, HostError> {
        if let Some(r) = &self.changed.lock().unwrap().nvml {
            return Ok(r.clone());
        }
        let l = &self.snap.nvml;
        if l.is_empty() {
            return Err(HostError::NotRecorded {
                what: "NVML".into(),
            });
        }
        l[self.next_index(NVML, "", l.len())].to_result()
    }
    fn nvml_sample(&self) -> Result<Vec<GpuSample>, HostError> {
        let l = &self.snap.nvml_samples;
        if l.is_empty() {
            // A snapshot with a full reading but no samples still answers from the reading.
            return self
                .nvml()
                .map(|r| r.gpus.iter().map(|g| g.sample()).collect());
        }
        l[self.next_index(SAMPLES, "", l.len())].to_result()
    }
    fn cuda_check(&self, _deadline: Duration) -> Result<CudaCheck, HostError> {
        let l = &self.snap.cuda_checks;
        if l.is_empty() {
            return Err(HostError::NotRecorded {
                what: "the CUDA check".into(),
            });
        }
        l[self.next_index(CUDA, "", l.len())].to_result()
    }
    fn env(&self) -> BTreeMap<String, String> {
        self.snap.env.clone()
    }
    fn now(&self) -> f64 {
        let l = &self.snap.now;
        if l.is_empty() {
            return 0.0;
        }
        l[self.next_index(NOW, "", l.len())]
    }
    fn sleep(&self, _d: Duration) {}
    fn cpu_count(&self) -> usize {
        self.snap.cpu_count.unwrap_or(1)
    }
}
