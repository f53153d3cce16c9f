//! What gpufix keeps of the environment when it records or shows it. Snapshots are made to be
//! shared, so `gpufix snapshot` keeps only variables the playbooks are about (an allow-list of
//! prefixes) and redacts any value whose name looks like a secret.

/// Prefixes of the environment variables a snapshot keeps.
pub const ENV_ALLOW: &[&str] = &[
    "CUDA_", "NCCL_", "PYTORCH_", "TORCH_", "OMP_", "MKL_", "NVIDIA_", "CUDNN_", "CUBLAS_", "NV_",
    "TF_", "XLA_", "HIP_", "GPU_", "KMP_", "MALLOC_",
];

/// Parts of a name that mark its value secret.
const SECRET_MARKS: &[&str] = &[
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "APIKEY",
    "API_KEY",
    "ACCESS_KEY",
    "PRIVATE",
    "CREDENTIAL",
    "AUTH",
    "SESSION",
    "COOKIE",
];

/// Shown instead of a secret value.
pub const REDACTED: &str = "<redacted>";

/// Whether a variable's name says its value is a secret (`HF_TOKEN`, `WANDB_API_KEY`, …).
pub fn looks_secret(name: &str) -> bool {
    let up = name.to_ascii_uppercase();
    SECRET_MARKS.iter().any(|m| up.contains(m))
}

/// Whether a snapshot keeps a variable.
pub fn env_allowed(name: &str) -> bool {
    ENV_ALLOW.iter().any(|p| name.starts_with(p))
}

/// Keep the allowed variables, redact secret-looking values; returns (kept, dropped, redacted).
pub fn filter_env(env: &mut std::collections::BTreeMap<String, String>) -> (usize, usize, usize) {
    let before = env.len();
    env.retain(|k, _| env_allowed(k));
    let mut redacted = 0;
    for (k, v) in env.iter_mut() {
        if looks_secret(k) {
            *v = REDACTED.to_string();
            redacted += 1;
        }
    }
    (env.len(), before - env.len(), redacted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_allow_list_and_redacts_secrets() {
        let mut env: std::collections::BTreeMap<String, String> = [
            ("CUDA_VISIBLE_DEVICES", "0"),
            ("HF_TOKEN", "hf_x"),
            ("AWS_SECRET_ACCESS_KEY", "k"),
            ("NCCL_IB_AUTH_TOKEN", "t"),
            ("HOME", "/root"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(filter_env(&mut env), (2, 3, 1));
        assert_eq!(env["CUDA_VISIBLE_DEVICES"], "0");
        assert_eq!(env["NCCL_IB_AUTH_TOKEN"], REDACTED);
    }
}
