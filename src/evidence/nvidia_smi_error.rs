//! What `nvidia-smi` prints instead of a table when it cannot read the GPUs at all: the driver
//! is not loaded or not reachable, user space and kernel module disagree, or the driver sees no
//! GPU. The messages are nvidia-smi's and NVML's own (`nvmlErrorString`'s "Driver/library
//! version mismatch", nvidia-smi's "couldn't communicate with the NVIDIA driver"). A single
//! lost GPU is a GPU fault and reads as a kernel log, see [`super::kernel_log::is_gpu_lost`].

/// The line where `nvidia-smi` (or NVML) says it cannot read the GPUs.
pub fn nvidia_smi_error_line(text: &str) -> Option<&str> {
    text.lines().map(str::trim).find(|l| {
        l.starts_with(
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver",
        ) || l.starts_with("Failed to initialize NVML")
            || l.starts_with("NVML library version mismatch")
            || *l == "No devices were found"
    })
}

pub struct NvidiaSmiError;

impl super::EvidenceKind for NvidiaSmiError {
    fn name(&self) -> &'static str {
        "nvidia-smi-error"
    }
    fn doc(&self) -> &'static str {
        "nvidia-smi failing to read the GPUs (driver not loaded, library mismatch, no devices)"
    }
    fn example(&self) -> &'static str {
        "nvidia-smi"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[("error", "the line nvidia-smi printed")]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &["nvml", "nvml.sample", "gpu.usage"]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        nvidia_smi_error_line(s.head).is_some()
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, String> {
        Ok(serde_json::json!({
            "error": nvidia_smi_error_line(text).map(|l| super::clip(l, super::MAX_TEXT)),
        }))
    }
    fn host(&self, text: &str) -> Option<Result<super::HostPart, String>> {
        Some(Ok(super::HostPart::NvmlError(super::clip(
            nvidia_smi_error_line(text).unwrap_or_default(),
            super::MAX_TEXT,
        ))))
    }
    fn describes_host(&self) -> bool {
        true
    }
}
