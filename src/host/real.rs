//! TEMPORARY stub until the host helper's implementation is merged.
use super::*;
use std::path::PathBuf;
pub struct RealHost {
    root: Option<PathBuf>,
}
impl RealHost {
    pub fn new(root: Option<PathBuf>) -> Self {
        RealHost { root }
    }
    fn p(&self, path: &str) -> PathBuf {
        match &self.root {
            Some(r) => r.join(path.trim_start_matches('/')),
            None => PathBuf::from(path),
        }
    }
}
impl Host for RealHost {
    fn describe(&self) -> String {
        "this host".into()
    }
    fn is_live(&self) -> bool {
        true
    }
    fn read_file(&self, path: &str) -> io::Result<Vec<u8>> {
        std::fs::read(self.p(path))
    }
    fn read_dir(&self, path: &str) -> io::Result<Vec<String>> {
        let mut v: Vec<String> = std::fs::read_dir(self.p(path))?.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().to_string()).collect();
        v.sort();
        Ok(v)
    }
    fn metadata(&self, _path: &str) -> io::Result<FileMeta> {
        Err(not_found("stub"))
    }
    fn read_link(&self, _path: &str) -> io::Result<String> {
        Err(not_found("stub"))
    }
    fn run(&self, _argv: &[String], _timeout: Duration) -> io::Result<CommandOutput> {
        Err(not_found("stub"))
    }
    fn nvml(&self) -> Result<NvmlReading, String> {
        Err("NVML cannot be loaded: stub".into())
    }
    fn nvml_sample(&self) -> Result<Vec<GpuSample>, String> {
        Err("stub".into())
    }
    fn env(&self) -> BTreeMap<String, String> {
        std::env::vars().collect()
    }
    fn now(&self) -> f64 {
        0.0
    }
    fn sleep(&self, d: Duration) {
        std::thread::sleep(d)
    }
    fn cpu_count(&self) -> usize {
        2
    }
}
