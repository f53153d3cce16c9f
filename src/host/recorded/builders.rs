//! Builders: replace single answers of a [`SnapshotHost`] (tests and fixtures start from a
//! recorded host and degrade one answer at a time).

use super::*;

impl SnapshotHost {
    /// Make `path` read as `content` (every later call), replacing what was recorded.
    pub fn set_file(&mut self, path: &str, content: impl AsRef<[u8]>) -> &mut Self {
        self.snap.files.insert(
            path.to_string(),
            vec![Recorded::Ok(Content::from_bytes(content.as_ref()))],
        );
        self
    }

    /// Make successive reads of `path` answer these contents in order (then repeat the last).
    pub fn set_file_sequence<C: AsRef<[u8]>>(&mut self, path: &str, contents: &[C]) -> &mut Self {
        self.snap.files.insert(
            path.to_string(),
            contents
                .iter()
                .map(|c| Recorded::Ok(Content::from_bytes(c.as_ref())))
                .collect(),
        );
        self
    }

    /// Make `path` missing (not-found).
    pub fn remove_file(&mut self, path: &str) -> &mut Self {
        self.snap.files.remove(path);
        self
    }

    pub fn set_dir(&mut self, path: &str, names: &[&str]) -> &mut Self {
        let mut v: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        v.sort();
        self.snap
            .dirs
            .insert(path.to_string(), vec![Recorded::Ok(v)]);
        self
    }

    pub fn set_metadata(&mut self, path: &str, meta: FileMeta) -> &mut Self {
        self.snap
            .metadata
            .insert(path.to_string(), vec![Recorded::Ok(meta)]);
        self
    }

    pub fn set_link(&mut self, path: &str, target: &str) -> &mut Self {
        self.snap
            .links
            .insert(path.to_string(), vec![Recorded::Ok(target.to_string())]);
        self
    }

    /// Make `argv` answer `out` (every later call).
    pub fn set_command(&mut self, argv: &[&str], out: CommandOutput) -> &mut Self {
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        self.snap
            .commands
            .insert(command_key(&argv), vec![Recorded::Ok(out)]);
        self
    }

    /// Make `argv` fail to start with this error (a missing program is `not-found`).
    pub fn set_command_error(&mut self, argv: &[&str], err: io::Error) -> &mut Self {
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        self.snap.commands.insert(
            command_key(&argv),
            vec![Recorded::Err {
                error: RecordedError::from_io(&err),
            }],
        );
        self
    }

    /// Replace every recorded NVML reading with this one.
    pub fn set_nvml(&mut self, reading: Result<NvmlReading, HostError>) -> &mut Self {
        self.snap.nvml = vec![NvmlRecord::from_result(&reading)];
        self
    }

    /// Change the first recorded NVML reading and make it the only one. Panics when there is
    /// no successful reading to edit (a test helper: call `set_nvml` first).
    pub fn edit_nvml(&mut self, f: impl FnOnce(&mut NvmlReading)) -> &mut Self {
        match self.snap.nvml.first_mut() {
            Some(NvmlRecord::Ok(r)) => {
                f(r);
                let r = r.clone();
                self.snap.nvml = vec![NvmlRecord::Ok(r)];
            }
            _ => panic!("edit_nvml needs a recorded NVML reading"),
        }
        self
    }

    /// Replace the recorded sample sequence.
    pub fn set_samples(&mut self, samples: Vec<Result<Vec<GpuSample>, HostError>>) -> &mut Self {
        self.snap.nvml_samples = samples.iter().map(NvmlRecord::from_result).collect();
        self
    }

    /// Replace the recorded native CUDA check answers (`Err`: the host could not run it).
    pub fn set_cuda_check(&mut self, check: Result<CudaCheck, HostError>) -> &mut Self {
        self.snap.cuda_checks = vec![NvmlRecord::from_result(&check)];
        self
    }

    pub fn set_env(&mut self, env: BTreeMap<String, String>) -> &mut Self {
        self.snap.env = env;
        self
    }

    pub fn set_cpu_count(&mut self, n: usize) -> &mut Self {
        self.snap.cpu_count = Some(n);
        self
    }

    pub fn set_now(&mut self, times: Vec<f64>) -> &mut Self {
        self.snap.now = times;
        self
    }
}
