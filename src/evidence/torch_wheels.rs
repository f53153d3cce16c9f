//! Which GPU architectures PyTorch's OFFICIAL Linux x86_64 wheels carry, per (torch release, CUDA
//! variant): enough to see an old GPU that a newer wheel dropped (a Pascal GTX 1070 under
//! `2.8.0+cu129`, a V100 under `+cu130`, a Kepler K80 under `2.1.0+cu121`) from the versions and
//! the GPU's name alone, where the paste does not quote PyTorch's own warning.
//!
//! Read from PyTorch's own build scripts, the `TORCH_CUDA_ARCH_LIST` each CUDA version gets in
//! `manywheel/build_cuda.sh` (the script that builds the `manylinux` wheels on
//! download.pytorch.org):
//! - pytorch/builder, branch `release/1.11` (`e77e5d07`), `release/1.12` (`049415d4`),
//!   `release/1.13` (`d08f2264`), `release/2.0` (`9f0fad92`): base `3.7;5.0;6.0;7.0`, CUDA 11.x
//!   adds `7.5;8.0;8.6` (11.0 in 1.11: `7.5;8.0`), 11.8 in 2.0 also `9.0`, CUDA 10.x nothing;
//! - pytorch/builder `release/2.1` (`55d40b1b`), `release/2.2` (`af60d114`), `release/2.3`
//!   (`ba10bae9`), `release/2.4` (`4ce1afeb`), `release/2.5` (`aec5fb5d`): base
//!   `5.0;6.0;7.0;7.5;8.0;8.6`, 12.1 and 12.4 add `9.0` (12.4 on aarch64 is `9.0` alone), 11.8
//!   adds `3.7;9.0`, 11.7 adds `3.7`;
//! - pytorch/pytorch `.ci/manywheel/build_cuda.sh` (moved there from builder, which dropped it in
//!   builder#2017) at `00c7a380` (arms 12.6/12.8/12.9: the CUDA variants torch 2.8 shipped),
//!   the same arms with 13.0 added at `ce86c18d` (tinglvv/pytorch, the 2.9 cycle): 12.6
//!   `5.0;6.0;7.0;7.5;8.0;8.6;9.0`, 12.8 `7.0;7.5;8.0;8.6;9.0;10.0;12.0`, 12.9 the same with
//!   `12.0+PTX` ("removing sm_50-sm_60 … however we would like to keep sm_70", pytorch#157517),
//!   13.0 `7.5;8.0;8.6;9.0;10.0;12.0+PTX`. Comfy-Org/ComfyUI#16438 lists the same three lists for
//!   2.9's cu126, cu128 and cu130.
//!
//! Releases whose script state was not read at the release (2.6, 2.7 — whose cu128 had no sm_70,
//! EutropicAI/vs-playground#59 — and 2.10 on) have no row: nothing is inferred for them.
//!
//! A GPU runs a wheel when the wheel has a cubin of its major architecture no newer than the GPU
//! (a cubin runs on later minors of its major, CUDA Programming Guide "Binary Compatibility";
//! torch's `_check_cubins` in `torch/cuda/__init__.py` checks the major, and its
//! `_check_capability` warns of a GPU below the build's minimum, "Minimum and Maximum cuda
//! capability supported by this version of PyTorch is (7.0) - (12.0)" since 2.8), or PTX of an
//! architecture no newer than the GPU (`12.0+PTX`).
//!
//! Only an exact release tag is judged (`2.8.0+cu129`): nightlies (`.dev`), pre-releases,
//! NVIDIA's container builds (`2.5.0a0+…`), conda and source builds carry other lists, and so do
//! the Windows and aarch64 wheels (their build scripts differ: Windows 2.8.0+cu128 still ran
//! Pascal in Comfy-Org/ComfyUI#9929).

use super::cuda_compat;

/// One (releases, CUDA) cell of the table.
#[derive(Debug, PartialEq)]
pub struct Row {
    /// torch releases `(major, minor)` this list holds for.
    pub releases: &'static [(u32, u32)],
    /// The CUDA variants (`12080` for cu128).
    pub cuda: &'static [u32],
    /// The architectures with cubins, as sm numbers (70 for `7.0`).
    pub archs: &'static [u32],
    /// An architecture also shipped as PTX (`12.0+PTX`).
    pub ptx: Option<u32>,
    /// Where the list was read.
    pub source: &'static str,
}

const B111: &str = "pytorch/builder release/1.11 manywheel/build_cuda.sh";
const B112: &str = "pytorch/builder release/1.12 manywheel/build_cuda.sh";
const B113: &str = "pytorch/builder release/1.13 manywheel/build_cuda.sh";
const B20: &str = "pytorch/builder release/2.0 manywheel/build_cuda.sh";
const B21: &str = "pytorch/builder release/2.1-2.5 manywheel/build_cuda.sh";
const P28: &str = "pytorch/pytorch .ci/manywheel/build_cuda.sh, 2.8-2.9";
const P29: &str = "pytorch/pytorch .ci/manywheel/build_cuda.sh, 2.9 (CUDA 13.0)";

const OLD: &[u32] = &[37, 50, 60, 70];
const OLD11: &[u32] = &[37, 50, 60, 70, 75, 80, 86];
const MID: &[u32] = &[50, 60, 70, 75, 80, 86, 90];

/// The table (Linux x86_64 manywheel builds only).
pub const TABLE: &[Row] = &[
    Row {
        releases: &[(1, 11)],
        cuda: &[10020],
        archs: OLD,
        ptx: None,
        source: B111,
    },
    Row {
        releases: &[(1, 11)],
        cuda: &[11030, 11050],
        archs: OLD11,
        ptx: None,
        source: B111,
    },
    Row {
        releases: &[(1, 12)],
        cuda: &[10020],
        archs: OLD,
        ptx: None,
        source: B112,
    },
    Row {
        releases: &[(1, 12)],
        cuda: &[11030, 11050, 11060],
        archs: OLD11,
        ptx: None,
        source: B112,
    },
    Row {
        releases: &[(1, 13)],
        cuda: &[11060, 11070],
        archs: OLD11,
        ptx: None,
        source: B113,
    },
    Row {
        releases: &[(2, 0)],
        cuda: &[11070],
        archs: OLD11,
        ptx: None,
        source: B20,
    },
    Row {
        releases: &[(2, 0)],
        cuda: &[11080],
        archs: &[37, 50, 60, 70, 75, 80, 86, 90],
        ptx: None,
        source: B20,
    },
    Row {
        releases: &[(2, 1), (2, 2), (2, 3), (2, 4), (2, 5)],
        cuda: &[11080],
        archs: &[37, 50, 60, 70, 75, 80, 86, 90],
        ptx: None,
        source: B21,
    },
    Row {
        releases: &[(2, 1), (2, 2), (2, 3), (2, 4), (2, 5)],
        cuda: &[12010, 12040],
        archs: MID,
        ptx: None,
        source: B21,
    },
    Row {
        releases: &[(2, 8), (2, 9)],
        cuda: &[12060],
        archs: MID,
        ptx: None,
        source: P28,
    },
    Row {
        releases: &[(2, 8), (2, 9)],
        cuda: &[12080],
        archs: &[70, 75, 80, 86, 90, 100, 120],
        ptx: None,
        source: P28,
    },
    Row {
        releases: &[(2, 8), (2, 9)],
        cuda: &[12090],
        archs: &[70, 75, 80, 86, 90, 100, 120],
        ptx: Some(120),
        source: P28,
    },
    Row {
        releases: &[(2, 9)],
        cuda: &[13000],
        archs: &[75, 80, 86, 90, 100, 120],
        ptx: Some(120),
        source: P29,
    },
];

/// The release `(major, minor)` of an exact release version (`2.8.0`, `2.8`), `None` for a
/// nightly, a pre-release or a container build (`2.6.0.dev20241112`, `2.5.0a0`, `2.1.0rc1`).
fn release(version: &str) -> Option<(u32, u32)> {
    let mut parts = version.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    match (parts.next(), parts.next()) {
        (None, None) => {}
        (Some(p), None) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => {}
        _ => return None,
    }
    Some((major, minor))
}

/// The table's row for an official build written `2.8.0+cu129` (version and tag), if read.
pub fn row_for(build: &str) -> Option<&'static Row> {
    let (version, tag) = build.split_once('+')?;
    let rel = release(version)?;
    if !tag.starts_with("cu") {
        return None;
    }
    let cuda = cuda_compat::cuda_code(tag)?;
    TABLE
        .iter()
        .find(|r| r.releases.contains(&rel) && r.cuda.contains(&cuda))
}

impl Row {
    /// A GPU of compute capability `sm` (61 for 6.1) finds a cubin of its major no newer than
    /// itself, or PTX no newer than itself.
    pub fn runs(&self, sm: u32) -> bool {
        self.archs.iter().any(|&a| a / 10 == sm / 10 && a <= sm)
            || self.ptx.is_some_and(|p| p <= sm)
    }

    /// The list as PyTorch's warning writes it (`sm_70 sm_75 … sm_120 compute_120`).
    pub fn arch_names(&self) -> Vec<String> {
        let mut v: Vec<String> = self.archs.iter().map(|a| format!("sm_{a}")).collect();
        if let Some(p) = self.ptx {
            v.push(format!("compute_{p}"));
        }
        v
    }

    /// The newest CUDA variant of the same release whose wheel runs the GPU (`12060`).
    pub fn alternative(&self, build: &str, sm: u32) -> Option<u32> {
        let rel = release(build.split_once('+')?.0)?;
        TABLE
            .iter()
            .filter(|r| r.releases.contains(&rel) && r.runs(sm))
            .flat_map(|r| r.cuda.iter().copied())
            .max()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pascal_under_the_2_8_cu128_and_cu129_wheels_has_no_kernels() {
        // Comfy-Org/ComfyUI#9705: a GTX 1070 (6.1) under 2.8.0+cu129
        let r = row_for("2.8.0+cu129").expect("read");
        assert!(!r.runs(61));
        assert_eq!(r.arch_names().first().map(String::as_str), Some("sm_70"));
        assert_eq!(
            r.arch_names().last().map(String::as_str),
            Some("compute_120")
        );
        // bnsreenu/digitalsreeni-image-annotator#57: a GTX 1050 under 2.8.0+cu128
        assert!(!row_for("2.8.0+cu128").expect("read").runs(61));
        // the same release's cu126 wheel keeps sm_60, which a 6.1 GPU runs
        assert_eq!(r.alternative("2.8.0+cu129", 61), Some(12060));
        // a V100 (7.0) runs 2.8's cu128 (pytorch#157517 kept sm_70) but not 2.9's cu130
        assert!(row_for("2.8.0+cu128").expect("read").runs(70));
        assert!(!row_for("2.9.1+cu130").expect("read").runs(70));
        // Blackwell runs cu128 and, through PTX, a later 12.x GPU runs cu129
        assert!(row_for("2.8.0+cu128").expect("read").runs(120));
        assert!(row_for("2.8.0+cu129").expect("read").runs(121));
    }

    #[test]
    fn old_gpus_on_wheels_that_carry_them() {
        // vllm-project/vllm#3785: 8 Tesla P100 (6.0) under 2.1.2+cu121 (sm_60 is there)
        assert!(row_for("2.1.2+cu121").expect("read").runs(60));
        // vllm-project/vllm#10147: Tesla V100S (7.0) under 2.5.1+cu118
        assert!(row_for("2.5.1+cu118").expect("read").runs(70));
        // Kepler: a K80 (3.7) runs 2.1's cu118 but not its cu121; a K40 (3.5) no 1.11+ wheel
        assert!(row_for("2.1.0+cu118").expect("read").runs(37));
        assert!(!row_for("2.1.0+cu121").expect("read").runs(37));
        assert!(!row_for("1.12.1+cu113").expect("read").runs(35));
        // an RTX 4090 (8.9) runs the sm_86 cubins of 2.1's cu121
        assert!(row_for("2.1.0+cu121").expect("read").runs(89));
    }

    #[test]
    fn only_exact_releases_that_were_read_are_judged() {
        assert_eq!(row_for("2.6.0.dev20241112+cu121"), None);
        assert_eq!(row_for("2.5.0a0+872d972e41"), None);
        assert_eq!(row_for("2.1.0rc1+cu121"), None);
        // 2.6, 2.7 and 2.10 were not read at their release
        assert_eq!(row_for("2.7.1+cu128"), None);
        assert_eq!(row_for("2.6.0+cu124"), None);
        assert_eq!(row_for("2.10.0+cu128"), None);
        assert_eq!(row_for("2.8.0+cpu"), None);
        assert_eq!(row_for("2.8+cu128").map(|r| r.source), Some(P28));
    }
}
