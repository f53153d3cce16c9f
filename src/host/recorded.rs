//! TEMPORARY stub until the host helper's implementation is merged.
use super::*;
use std::sync::Arc;
pub struct SnapshotHost;
impl SnapshotHost {
    pub fn load(_p: &std::path::Path) -> anyhow::Result<RealHost> {
        anyhow::bail!("stub")
    }
}
use super::real::RealHost;
pub struct RecordingHost(Arc<dyn Host>);
impl RecordingHost {
    pub fn new(h: Arc<dyn Host>) -> Self {
        RecordingHost(h)
    }
    pub fn snapshot(&self) -> serde_json::Value {
        serde_json::Value::Null
    }
}
impl Host for RecordingHost {
    fn describe(&self) -> String { self.0.describe() }
    fn is_live(&self) -> bool { true }
    fn read_file(&self, path: &str) -> io::Result<Vec<u8>> { self.0.read_file(path) }
    fn read_dir(&self, path: &str) -> io::Result<Vec<String>> { self.0.read_dir(path) }
    fn metadata(&self, path: &str) -> io::Result<FileMeta> { self.0.metadata(path) }
    fn read_link(&self, path: &str) -> io::Result<String> { self.0.read_link(path) }
    fn run(&self, a: &[String], t: Duration) -> io::Result<CommandOutput> { self.0.run(a, t) }
    fn nvml(&self) -> Result<NvmlReading, String> { self.0.nvml() }
    fn nvml_sample(&self) -> Result<Vec<GpuSample>, String> { self.0.nvml_sample() }
    fn env(&self) -> BTreeMap<String, String> { self.0.env() }
    fn now(&self) -> f64 { 0.0 }
    fn sleep(&self, d: Duration) { self.0.sleep(d) }
    fn cpu_count(&self) -> usize { 2 }
}
pub fn snapshot_schema() -> serde_json::Value { serde_json::Value::Null }
