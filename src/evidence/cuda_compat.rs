//! Which CUDA a driver runs, which CUDA a GPU architecture needs, and which PyTorch wheel index
//! serves a CUDA version: the facts the CUDA-runtime readers (`cuda_errors`, `collect_env`) and
//! their rules judge with.
//!
//! Sources (read 2026-12; each table cites where its numbers come from):
//! - driver → CUDA: NVIDIA, *CUDA Toolkit Release Notes*, Table 3 "CUDA Toolkit and Corresponding
//!   Driver Versions" (the minimum driver of each toolkit's GA release, Linux x86_64 and Windows),
//!   <https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html#id6>; and the CUDA
//!   Compatibility guide's minor-version compatibility floors (12.x runs on ≥ 525.60.13, 11.x on
//!   ≥ 450.80.02), <https://docs.nvidia.com/deploy/cuda-compatibility/index.html>.
//! - CUDA driver API versions are `major * 1000 + minor * 10` (`cudaDriverGetVersion`, which is
//!   what PyTorch prints as "found version 12080").
//! - architecture → first CUDA that compiles for it: the CUDA release notes of the toolkit that
//!   added each `sm_XX` (sm_80 11.0, sm_86 11.1, sm_87 11.4, sm_89/sm_90 11.8, sm_100/sm_120 12.8).
//! - wheel indexes: the `https://download.pytorch.org/whl/cuXYZ` indexes PyTorch has published.

/// (CUDA major, minor, minimum Linux driver, minimum Windows driver) of each toolkit's GA
/// release, newest first. `None`: the release notes give no Windows figure we could confirm.
const DRIVER_TABLE: &[(u32, u32, &str, Option<&str>)] = &[
    (13, 0, "580.65.06", None),
    (12, 9, "575.51.03", Some("576.02")),
    (12, 8, "570.26", Some("570.65")),
    (12, 6, "560.28.03", Some("560.76")),
    (12, 5, "555.42.02", Some("555.85")),
    (12, 4, "550.54.14", Some("551.61")),
    (12, 3, "545.23.06", Some("545.84")),
    (12, 2, "535.54.03", Some("536.25")),
    (12, 1, "530.30.02", Some("531.14")),
    (12, 0, "525.60.13", Some("527.41")),
    (11, 8, "520.61.05", Some("520.06")),
    (11, 7, "515.43.04", Some("516.01")),
    (11, 6, "510.39.01", Some("511.23")),
    (11, 5, "495.29.05", Some("496.04")),
    (11, 4, "470.42.01", Some("471.11")),
    (11, 3, "465.19.01", Some("465.89")),
    (11, 2, "460.27.03", Some("460.82")),
    (11, 1, "455.23", Some("456.38")),
    (11, 0, "450.36.06", Some("451.22")),
    (10, 2, "440.33", Some("441.22")),
    (10, 1, "418.39", Some("418.96")),
    (10, 0, "410.48", Some("411.31")),
    (9, 2, "396.26", Some("397.44")),
    (9, 1, "390.46", Some("391.29")),
    (9, 0, "384.81", Some("385.54")),
    (8, 0, "375.26", Some("376.51")),
];

/// Dotted driver version as comparable numbers (`570.26` → [570, 26, 0]).
fn ver(s: &str) -> Option<[u32; 3]> {
    let mut out = [0u32; 3];
    let mut parts = s.trim().split('.');
    for (i, slot) in out.iter_mut().enumerate() {
        match parts.next() {
            Some(p) => *slot = p.parse().ok()?,
            None if i > 0 => break,
            None => return None,
        }
    }
    Some(out)
}

/// The newest CUDA (`major * 1000 + minor * 10`) a driver of this version runs, from the
/// release notes' table; `None` for a version that does not parse, one older than the table, or
/// a Windows driver newer than the table's last confirmed Windows row (its CUDA is not known).
pub fn driver_max_cuda(driver: &str, windows: bool) -> Option<u32> {
    let d = ver(driver)?;
    if windows {
        // past the newest confirmed Windows row the answer could be a newer CUDA: say nothing
        let newest = DRIVER_TABLE.iter().find_map(|r| r.3)?;
        if d >= ver(newest)? && DRIVER_TABLE[0].3.is_none() && d[0] >= 580 {
            return None;
        }
    }
    DRIVER_TABLE.iter().find_map(|&(maj, min, linux, win)| {
        let floor = if windows { win? } else { linux };
        (d >= ver(floor)?).then_some(maj * 1000 + min * 10)
    })
}

/// `12080` → `12.8`.
pub fn cuda_code_str(code: u32) -> String {
    format!("{}.{}", code / 1000, (code % 1000) / 10)
}

/// `12.8`, `12.8.93`, `cu128` → `12080`.
pub fn cuda_code(s: &str) -> Option<u32> {
    let s = s.trim();
    if let Some(d) = s.strip_prefix("cu") {
        // cu128 → 12.8, cu92 → 9.2, cu118 → 11.8
        if d.len() < 2 || !d.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let (maj, min) = d.split_at(d.len() - 1);
        return Some(maj.parse::<u32>().ok()? * 1000 + min.parse::<u32>().ok()? * 10);
    }
    let mut it = s.split('.');
    let maj: u32 = it.next()?.parse().ok()?;
    let min: u32 = it.next()?.parse().ok()?;
    (maj < 100 && min < 100).then_some(maj * 1000 + min * 10)
}

/// The first CUDA whose compiler generates code for `sm_XX` (XX = major*10 + minor); `None` for
/// an architecture this table does not know.
pub fn arch_min_cuda(sm: u32) -> Option<u32> {
    Some(match sm {
        30..=37 => 5000,
        50..=53 => 6000,
        60..=62 => 8000,
        70 | 72 => 9000,
        75 => 10000,
        80 => 11000,
        86 => 11010,
        87 => 11040,
        89 | 90 => 11080,
        100 | 101 | 103 | 110 | 120 | 121 => 12080,
        _ => return None,
    })
}

/// The first CUDA that can build kernels a GPU of `sm_XX` runs: code for an architecture runs on
/// a later one of the same major version (sm_80 kernels on an sm_86 or sm_89 GPU), which is how
/// PyTorch judges a build (`torch/cuda/__init__.py`, `_check_cubins`: "NVIDIA GPU compute
/// architectures are backward compatible within major version", pytorch/pytorch at 17e3b6a9), so
/// this is the first CUDA of the oldest architecture of that major at or below the GPU's. A build
/// made with an older CUDA has no kernel the GPU can run, whatever its architecture list; `None`
/// for an architecture [`arch_min_cuda`] does not know.
pub fn family_min_cuda(sm: u32) -> Option<u32> {
    arch_min_cuda(sm)?;
    (sm / 10 * 10..=sm).filter_map(arch_min_cuda).min()
}

/// CUDA versions PyTorch published wheel indexes for (`https://download.pytorch.org/whl/cuXYZ`).
const WHEEL_CUDAS: &[u32] = &[
    9020, 10000, 10010, 10020, 11000, 11010, 11030, 11050, 11060, 11070, 11080, 12010, 12040,
    12060, 12080, 12090, 13000,
];

/// The wheel index for a PyTorch that runs `sm` on a driver that runs CUDA `driver_max` (when
/// known): the newest published CUDA the driver runs that still compiles for the GPU, or, the
/// driver unknown, the first that compiles for it. `None` when none fits (the driver is older
/// than the architecture's first CUDA: the driver must be upgraded first).
pub fn wheel_index(sm: Option<u32>, driver_max: Option<u32>) -> Option<String> {
    let need = sm.and_then(arch_min_cuda).unwrap_or(0);
    let pick = match driver_max {
        Some(d) => WHEEL_CUDAS
            .iter()
            .rev()
            .find(|&&c| c <= d && c >= need)
            .copied(),
        None => WHEEL_CUDAS.iter().find(|&&c| c >= need).copied(),
    }?;
    Some(format!(
        "https://download.pytorch.org/whl/cu{}{}",
        pick / 1000,
        (pick % 1000) / 10
    ))
}

/// The minimum Linux driver of a CUDA version's GA release (`12080` → `570.26`).
pub fn min_driver_for(code: u32) -> Option<&'static str> {
    DRIVER_TABLE
        .iter()
        .rev()
        .find(|&&(maj, min, _, _)| maj * 1000 + min * 10 >= code)
        .map(|r| r.2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drivers_map_to_the_release_notes_cuda() {
        assert_eq!(driver_max_cuda("570.26", false), Some(12080));
        assert_eq!(driver_max_cuda("570.133.20", false), Some(12080));
        assert_eq!(driver_max_cuda("418.67", false), Some(10010));
        assert_eq!(driver_max_cuda("450.119.03", false), Some(11000));
        assert_eq!(driver_max_cuda("580.82.07", false), Some(13000));
        assert_eq!(driver_max_cuda("535.98", true), Some(12010));
        assert_eq!(driver_max_cuda("442.92", true), Some(10020));
        assert_eq!(driver_max_cuda("340.1", false), None);
        assert_eq!(driver_max_cuda("not a version", false), None);
        // a Windows driver past the last confirmed Windows row is not guessed at
        assert_eq!(driver_max_cuda("581.15", true), None);
    }

    #[test]
    fn cuda_codes_and_wheels() {
        assert_eq!(cuda_code("12.8"), Some(12080));
        assert_eq!(cuda_code("11.3.109"), Some(11030));
        assert_eq!(cuda_code("cu130"), Some(13000));
        assert_eq!(cuda_code("cu92"), Some(9020));
        assert_eq!(cuda_code("Could not collect"), None);
        assert_eq!(cuda_code_str(12080), "12.8");
        // an RTX 5090 needs CUDA 12.8; a 12.9 driver takes the cu129 wheels
        assert_eq!(
            wheel_index(Some(120), Some(12090)).as_deref(),
            Some("https://download.pytorch.org/whl/cu129")
        );
        assert_eq!(
            wheel_index(Some(120), None).as_deref(),
            Some("https://download.pytorch.org/whl/cu128")
        );
        // an A100 on a CUDA 11.0 driver: the cu110 wheels
        assert_eq!(
            wheel_index(Some(80), Some(11000)).as_deref(),
            Some("https://download.pytorch.org/whl/cu110")
        );
        // a driver older than the architecture's first CUDA: no wheel helps
        assert_eq!(wheel_index(Some(120), Some(12040)), None);
        assert_eq!(min_driver_for(12080), Some("570.26"));
        assert_eq!(min_driver_for(12070), Some("570.26"));
    }

    #[test]
    fn a_gpu_runs_kernels_of_its_major_version() {
        // an RTX 3080 (sm_86) runs a CUDA 11.0 build's sm_80 kernels; a 4090 (sm_89) too
        assert_eq!(family_min_cuda(86), Some(11000));
        assert_eq!(family_min_cuda(89), Some(11000));
        // Hopper and Blackwell start their major versions
        assert_eq!(family_min_cuda(90), Some(11080));
        assert_eq!(family_min_cuda(100), Some(12080));
        assert_eq!(family_min_cuda(120), Some(12080));
        assert_eq!(family_min_cuda(75), Some(9000));
        assert_eq!(family_min_cuda(61), Some(8000));
        assert_eq!(family_min_cuda(99), None);
    }
}
