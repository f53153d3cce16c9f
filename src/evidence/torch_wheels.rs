//! Which GPU architectures PyTorch's OFFICIAL Linux x86_64 (and, where read, Windows) wheels
//! carry, per (torch release, CUDA variant): enough to see an old GPU that a newer wheel dropped (a Pascal GTX 1070 under
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
//! The Windows wheels (`win_amd64`) are built by other scripts, `windows/cudaNNN.bat`
//! (`set TORCH_CUDA_ARCH_LIST=…` where `BUILD_VISION` is unset), read at the same pytorch/builder
//! release branches and commits: 1.11-2.0 `3.7+PTX;5.0;6.0;6.1;7.0;7.5` for CUDA 10.x, with
//! `8.0` for 11.0 and `8.0;8.6` for 11.1-11.7, `9.0` added for 11.8; 2.1-2.5 11.8 the same, 12.1
//! and 12.4 `5.0;6.0;6.1;7.0;7.5;8.0;8.6;9.0` (the state builder#2051 removed on 2024-12-09 when
//! the scripts moved to pytorch/pytorch `.ci/pytorch/windows/`, `f2e2e63c^`, still had these and
//! 12.6 alike). After the move only a lower bound is pinned, for 2.8's cu129: every stored state
//! of `.ci/pytorch/windows/cuda129.bat` starts at `7.5` or `8.0` (pytorch/pytorch `1a1a3262`,
//! Git-Hub-Chris/PyTorch `5d932315`), torch 2.8's own `_check_capability` lists 12.9's binaries
//! from 7.0 (`CUDA_ARCHES_SUPPORTED`), and a GTX 1070 under Windows 2.8.0+cu129 had no kernel
//! while 2.8.0+cu128 ran it (Comfy-Org/ComfyUI#9929): nothing below sm_70 is judged missing, the
//! rest is not claimed. Windows cu128 of 2.8 and 2.9 is not pinned (a stored state has
//! `6.1;7.0;…;12.0`, pytorch#164470 of 2025-10-02 removed that 6.1); 2.7's and 2.10's Windows
//! lists are read off the wheels (below).
//!
//! For 2.6, 2.7, 2.10 and 2.11 no release branch or tag of pytorch/pytorch's
//! `.ci/manywheel/build_cuda.sh` could be read (the store keeps a file at the commits that
//! changed it, and the stored states of forks — poolsideai, qognitive, smedegaard — are main's
//! between releases, and their lists do not match what the released wheels carry: qognitive
//! `a695639f`'s 12.8 arm still has 5.0 and 6.0, which 2.7.0's cu128 wheel lacks). Those rows are
//! read instead from the released wheels themselves, `torch.cuda.get_arch_list()` run on the
//! wheel of download.pytorch.org, where it was published:
//! - 2.6 cu124 (Linux): `['sm_50', 'sm_60', 'sm_70', 'sm_75', 'sm_80', 'sm_86', 'sm_90']`, run by
//!   a maintainer (malfet) on the 2.6.0 release candidate, `download.pytorch.org/whl/test/cu124`
//!   (pytorch/pytorch#144071, 2025-01-02);
//! - 2.7 cu126 and cu128, Linux and Windows: nikopueringer/CorridorKey#141 (2026-03-12) downloaded
//!   each 2.7.1 wheel and printed the list: Linux cu126 `sm_50 sm_60 sm_70 sm_75 sm_80 sm_86
//!   sm_90`, cu128 `sm_75 sm_80 sm_86 sm_90 sm_100 sm_120 compute_120`; Windows cu126 the same
//!   with `sm_61`, cu128 `sm_50 sm_60 sm_61 sm_70 sm_75 sm_80 sm_86 sm_90 sm_100 sm_120` (no PTX).
//!   Linux cu128 agrees with pytorch/pytorch#147607 (tinglvv, merged 2025-03-05, in the 2.7 cycle:
//!   "dropping sm_70" from the CUDA 12.8 binary, after #146265 dropped sm_50/sm_60), with the list
//!   torch 2.7.0+cu128 itself prints under a GTX 1080 Ti (turboderp-org/exllamav2#786) and with
//!   EutropicAI/vs-playground#59 ("torch 2.7.1+cu128 not support sm_70");
//! - 2.10 cu126 and cu128, Linux and Windows: CorridorKey#141 for 2.10: cu126 as 2.7's, cu128
//!   `sm_70 sm_75 sm_80 sm_86 sm_90 sm_100 sm_120` on both (no PTX); the Linux cu128 list also
//!   by a maintainer (lakshayg) on `2.10.0+cu128` in pytorch/pytorch#182250 (2026-05-03), and it is
//!   the 12.8 arm (`7.0;7.5;8.0;8.6;9.0` and `10.0;12.0`) of pytorch/pytorch's `build_cuda.sh` at
//!   `799d09f2` (the 2.10 cycle's 12.6/12.8/12.9/13.0 arms);
//! - 2.11 cu126 and cu128 (Linux): lakshayg in pytorch/pytorch#182250 on `2.11.0+cu126` (`sm_50
//!   … sm_90`) and `2.11.0+cu128` (`['sm_75', 'sm_80', 'sm_86', 'sm_90', 'sm_100', 'sm_120']`:
//!   Volta dropped from 12.8 for 2.11, pytorch/pytorch#172352, "Deprecate sm70 … for CUDA 12.8
//!   build in PyTorch 2.11 release").
//!
//! The variants no released wheel's list was found for are read from the build script's states
//! that bracket the release (h55):
//! - 2.6's cu126 (Linux) is also read off the wheel: torch 2.6.0+cu126's own warning under an RTX
//!   5090 D on Ubuntu x86_64 lists `sm_50 … sm_90` (pytorch/pytorch#150733), the 12.6 arm
//!   `${TORCH_CUDA_ARCH_LIST};9.0` on the base `5.0;6.0;7.0;7.5;8.0;8.6`;
//! - 2.6's and 2.7's cu118 (Linux): the 11.8 arm `${TORCH_CUDA_ARCH_LIST};3.7;9.0` on that base
//!   is the same in builder release/2.1-2.5, in a 2.6-cycle state (zhulu506/pytorch_gmlake
//!   `b55eee45`: arms 11.6-12.6) and in 2.7-cycle states (qognitive `a695639f`, KDr2 `993cb2cb`,
//!   zqwenn `5d106bfa`: arms 11.8-12.8), though their 12.x arms moved between releases; 11.8 is
//!   gone in the 2.8 cycle (anyinlover `5b6adb79`: 12.6, 12.8, 12.9 only);
//! - 2.10's cu129 and cu130 (Linux): pytorch/pytorch `799d09f2`, the 2.10 cycle, whose 12.8 arm
//!   (`7.0;…;9.0;10.0;12.0`) is the list 2.10.0+cu128 prints: 12.9 `7.0;7.5;8.0;8.6;9.0;10.0;
//!   12.0+PTX`, 13.0 `7.5;8.0;8.6;9.0;10.0;12.0+PTX` on x86_64 (aarch64 `8.0;9.0;10.0;11.0;
//!   12.0+PTX`, not judged here);
//! - 2.11's cu130 (Linux): nWEIdia/pytorch `786e6569`, the 2.11 cycle (its 12.8 arm has no 7.0,
//!   as 2.11.0+cu128 prints): 13.0 `7.5;8.0;8.6;9.0;10.0;12.0+PTX` on x86_64, the arm every stored
//!   state has had since 2.9 (tinglvv `ce86c18d`, `799d09f2`, ROCm/pytorch `10b22ea5`);
//! - Windows 2.6's cu124 and cu126: `.ci/pytorch/windows/cuda124.bat` (`475876a4`) and
//!   `cuda126.bat` (`18f79c00`), both `5.0;6.0;6.1;7.0;7.5;8.0;8.6;9.0`, the list FramePack's
//!   Windows `framepack_cu126_torch26` package prints (lllyasviel/FramePack#702); Windows 2.6's
//!   and 2.7's cu118: `cuda118.bat` (`74fabf1d`) `3.7+PTX;5.0;6.0;6.1;7.0;7.5;8.0;8.6;9.0`, as
//!   builder's.
//!
//! Windows cu128 of 2.8, 2.9 and 2.11 and Windows 2.11's other lists stay unread: the stored
//! states of `cuda128.bat` (`07619f94`: `7.5;…;12.0`) and `cuda130.bat` (`525a5e5d`) cannot be
//! placed in a release. What
//! holds for every build is the CUDA toolkit's floor ([`toolkit_floor`]): nvcc 13 compiles
//! nothing below sm_75, 12.x nothing below sm_50 (Kepler removed), so a Pascal GPU has no kernel
//! in any `+cu130` build.
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
//! the aarch64 wheels; a Windows wheel is judged against its own rows only where the text shows
//! Windows (Windows 2.8.0+cu128 still ran Pascal in Comfy-Org/ComfyUI#9929).

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
    /// The wheels' platform.
    pub platform: Platform,
    /// Only the lowest architecture is pinned (`archs` holds it alone): no cubin or PTX below
    /// it, the rest not read at the release.
    pub lower_bound: bool,
}

/// The platform an official wheel was built for: its build scripts differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Platform {
    /// `manylinux` x86_64 (`manywheel/build_cuda.sh`).
    Linux,
    /// `win_amd64` (`windows/cudaNNN.bat`).
    Windows,
}

impl Platform {
    /// The name a message gives it.
    pub fn name(self) -> &'static str {
        match self {
            Platform::Linux => "Linux x86_64",
            Platform::Windows => "Windows",
        }
    }
}

const B111: &str = "pytorch/builder release/1.11 manywheel/build_cuda.sh";
const B112: &str = "pytorch/builder release/1.12 manywheel/build_cuda.sh";
const B113: &str = "pytorch/builder release/1.13 manywheel/build_cuda.sh";
const B20: &str = "pytorch/builder release/2.0 manywheel/build_cuda.sh";
const B21: &str = "pytorch/builder release/2.1-2.5 manywheel/build_cuda.sh";
const P28: &str = "pytorch/pytorch .ci/manywheel/build_cuda.sh, 2.8-2.9";
const P29: &str = "pytorch/pytorch .ci/manywheel/build_cuda.sh, 2.9 (CUDA 13.0)";
const W111: &str = "pytorch/builder release/1.11 windows/cudaNNN.bat";
const W112: &str = "pytorch/builder release/1.12 windows/cudaNNN.bat";
const W113: &str = "pytorch/builder release/1.13 windows/cudaNNN.bat";
const W20: &str = "pytorch/builder release/2.0 windows/cudaNNN.bat";
const W21: &str = "pytorch/builder release/2.1-2.5 windows/cudaNNN.bat";
const L26: &str =
    "torch.cuda.get_arch_list() of the 2.6.0+cu124 release candidate (pytorch/pytorch#144071)";
const L27: &str = "torch.cuda.get_arch_list() of the 2.7.1 Linux wheels (nikopueringer/CorridorKey#141; cu128: pytorch/pytorch#147607)";
const L210: &str =
    "torch.cuda.get_arch_list() of the 2.10 Linux wheels (CorridorKey#141, pytorch/pytorch#182250)";
const L211: &str = "torch.cuda.get_arch_list() of the 2.11.0 Linux wheels (pytorch/pytorch#182250)";
const W27: &str =
    "torch.cuda.get_arch_list() of the 2.7.1 Windows wheels (nikopueringer/CorridorKey#141)";
const W210: &str =
    "torch.cuda.get_arch_list() of the 2.10 Windows wheels (nikopueringer/CorridorKey#141)";
const W126: &str = "torch.cuda.get_arch_list() of the 2.7.1 and 2.10 Windows cu126 wheels (nikopueringer/CorridorKey#141)";
const W28: &str = "pytorch/pytorch .ci/pytorch/windows/cuda129.bat, every state read from sm_75 or sm_80; torch 2.8's CUDA_ARCHES_SUPPORTED, 12.9 from 7.0";
const L26_126: &str = "torch 2.6.0+cu126's own warning on Linux x86_64 (pytorch/pytorch#150733), the 12.6 arm `${TORCH_CUDA_ARCH_LIST};9.0` of .ci/manywheel/build_cuda.sh";
const P118: &str = "pytorch/pytorch .ci/manywheel/build_cuda.sh 11.8 arm `${TORCH_CUDA_ARCH_LIST};3.7;9.0`, unchanged from builder release/2.1 through the 2.6 (b55eee45) and 2.7 (a695639f, 993cb2cb, 5d106bfa) cycles";
const P210: &str = "pytorch/pytorch .ci/manywheel/build_cuda.sh at 799d09f2, the 2.10 cycle (its 12.8 arm is what 2.10.0+cu128 prints, pytorch/pytorch#182250)";
const P211: &str = "pytorch/pytorch .ci/manywheel/build_cuda.sh, 2.11 cycle (nWEIdia 786e6569: 12.8 without 7.0 as 2.11.0+cu128 prints, pytorch/pytorch#182250); 13.0 x86_64 arm alike since 2.9";
const W26: &str = "pytorch/pytorch .ci/pytorch/windows/cuda124.bat (475876a4) and cuda126.bat (18f79c00), the list 2.6's cu126 Windows wheel prints (lllyasviel/FramePack#702)";
const W118: &str =
    "pytorch/pytorch .ci/pytorch/windows/cuda118.bat (74fabf1d), as builder release/2.1-2.5";

const OLD: &[u32] = &[37, 50, 60, 70];
const OLD11: &[u32] = &[37, 50, 60, 70, 75, 80, 86];
const MID: &[u32] = &[50, 60, 70, 75, 80, 86, 90];
const WIN10: &[u32] = &[37, 50, 60, 61, 70, 75];
const WIN11: &[u32] = &[37, 50, 60, 61, 70, 75, 80, 86];
const WIN118: &[u32] = &[37, 50, 60, 61, 70, 75, 80, 86, 90];
const WIN12: &[u32] = &[50, 60, 61, 70, 75, 80, 86, 90];
/// 12.8 from 2.8 on without Volta (2.11's Linux cu128)
const TURING_UP: &[u32] = &[75, 80, 86, 90, 100, 120];
const VOLTA_UP: &[u32] = &[70, 75, 80, 86, 90, 100, 120];

/// The table: Linux x86_64 manywheel builds and, where read, the Windows wheels.
pub const TABLE: &[Row] = &[
    Row {
        releases: &[(1, 11)],
        cuda: &[10020],
        archs: OLD,
        ptx: None,
        source: B111,
        platform: Platform::Linux,
        lower_bound: false,
    },
    Row {
        releases: &[(1, 11)],
        cuda: &[11030, 11050],
        archs: OLD11,
        ptx: None,
        source: B111,
        platform: Platform::Linux,
        lower_bound: false,
    },
    Row {
        releases: &[(1, 12)],
        cuda: &[10020],
        archs: OLD,
        ptx: None,
        source: B112,
        platform: Platform::Linux,
        lower_bound: false,
    },
    Row {
        releases: &[(1, 12)],
        cuda: &[11030, 11050, 11060],
        archs: OLD11,
        ptx: None,
        source: B112,
        platform: Platform::Linux,
        lower_bound: false,
    },
    Row {
        releases: &[(1, 13)],
        cuda: &[11060, 11070],
        archs: OLD11,
        ptx: None,
        source: B113,
        platform: Platform::Linux,
        lower_bound: false,
    },
    Row {
        releases: &[(2, 0)],
        cuda: &[11070],
        archs: OLD11,
        ptx: None,
        source: B20,
        platform: Platform::Linux,
        lower_bound: false,
    },
    Row {
        releases: &[(2, 0)],
        cuda: &[11080],
        archs: &[37, 50, 60, 70, 75, 80, 86, 90],
        ptx: None,
        source: B20,
        platform: Platform::Linux,
        lower_bound: false,
    },
    Row {
        releases: &[(2, 1), (2, 2), (2, 3), (2, 4), (2, 5)],
        cuda: &[11080],
        archs: &[37, 50, 60, 70, 75, 80, 86, 90],
        ptx: None,
        source: B21,
        platform: Platform::Linux,
        lower_bound: false,
    },
    Row {
        releases: &[(2, 1), (2, 2), (2, 3), (2, 4), (2, 5)],
        cuda: &[12010, 12040],
        archs: MID,
        ptx: None,
        source: B21,
        platform: Platform::Linux,
        lower_bound: false,
    },
    Row {
        releases: &[(2, 6)],
        cuda: &[12040],
        archs: MID,
        ptx: None,
        source: L26,
        platform: Platform::Linux,
        lower_bound: false,
    },
    Row {
        releases: &[(2, 6)],
        cuda: &[12060],
        archs: MID,
        ptx: None,
        source: L26_126,
        platform: Platform::Linux,
        lower_bound: false,
    },
    Row {
        releases: &[(2, 6), (2, 7)],
        cuda: &[11080],
        archs: &[37, 50, 60, 70, 75, 80, 86, 90],
        ptx: None,
        source: P118,
        platform: Platform::Linux,
        lower_bound: false,
    },
    Row {
        releases: &[(2, 7)],
        cuda: &[12060],
        archs: MID,
        ptx: None,
        source: L27,
        platform: Platform::Linux,
        lower_bound: false,
    },
    Row {
        releases: &[(2, 7)],
        cuda: &[12080],
        archs: TURING_UP,
        ptx: Some(120),
        source: L27,
        platform: Platform::Linux,
        lower_bound: false,
    },
    Row {
        releases: &[(2, 10)],
        cuda: &[12060],
        archs: MID,
        ptx: None,
        source: L210,
        platform: Platform::Linux,
        lower_bound: false,
    },
    Row {
        releases: &[(2, 10)],
        cuda: &[12080],
        archs: VOLTA_UP,
        ptx: None,
        source: L210,
        platform: Platform::Linux,
        lower_bound: false,
    },
    Row {
        releases: &[(2, 10)],
        cuda: &[12090],
        archs: VOLTA_UP,
        ptx: Some(120),
        source: P210,
        platform: Platform::Linux,
        lower_bound: false,
    },
    Row {
        releases: &[(2, 10)],
        cuda: &[13000],
        archs: TURING_UP,
        ptx: Some(120),
        source: P210,
        platform: Platform::Linux,
        lower_bound: false,
    },
    Row {
        releases: &[(2, 11)],
        cuda: &[13000],
        archs: TURING_UP,
        ptx: Some(120),
        source: P211,
        platform: Platform::Linux,
        lower_bound: false,
    },
    Row {
        releases: &[(2, 11)],
        cuda: &[12060],
        archs: MID,
        ptx: None,
        source: L211,
        platform: Platform::Linux,
        lower_bound: false,
    },
    Row {
        releases: &[(2, 11)],
        cuda: &[12080],
        archs: TURING_UP,
        ptx: None,
        source: L211,
        platform: Platform::Linux,
        lower_bound: false,
    },
    Row {
        releases: &[(2, 8), (2, 9)],
        cuda: &[12060],
        archs: MID,
        ptx: None,
        source: P28,
        platform: Platform::Linux,
        lower_bound: false,
    },
    Row {
        releases: &[(2, 8), (2, 9)],
        cuda: &[12080],
        archs: &[70, 75, 80, 86, 90, 100, 120],
        ptx: None,
        source: P28,
        platform: Platform::Linux,
        lower_bound: false,
    },
    Row {
        releases: &[(2, 8), (2, 9)],
        cuda: &[12090],
        archs: &[70, 75, 80, 86, 90, 100, 120],
        ptx: Some(120),
        source: P28,
        platform: Platform::Linux,
        lower_bound: false,
    },
    Row {
        releases: &[(2, 9)],
        cuda: &[13000],
        archs: &[75, 80, 86, 90, 100, 120],
        ptx: Some(120),
        source: P29,
        platform: Platform::Linux,
        lower_bound: false,
    },
    Row {
        releases: &[(1, 11)],
        cuda: &[9020],
        archs: &[37, 50, 60, 61, 70],
        ptx: Some(37),
        source: W111,
        platform: Platform::Windows,
        lower_bound: false,
    },
    Row {
        releases: &[(1, 11)],
        cuda: &[10010, 10020],
        archs: WIN10,
        ptx: Some(37),
        source: W111,
        platform: Platform::Windows,
        lower_bound: false,
    },
    Row {
        releases: &[(1, 11)],
        cuda: &[11000],
        archs: &[37, 50, 60, 61, 70, 75, 80],
        ptx: Some(37),
        source: W111,
        platform: Platform::Windows,
        lower_bound: false,
    },
    Row {
        releases: &[(1, 11)],
        cuda: &[11010, 11020, 11030, 11050],
        archs: WIN11,
        ptx: Some(37),
        source: W111,
        platform: Platform::Windows,
        lower_bound: false,
    },
    Row {
        releases: &[(1, 12)],
        cuda: &[10020],
        archs: WIN10,
        ptx: Some(37),
        source: W112,
        platform: Platform::Windows,
        lower_bound: false,
    },
    Row {
        releases: &[(1, 12)],
        cuda: &[11030, 11050, 11060],
        archs: WIN11,
        ptx: Some(37),
        source: W112,
        platform: Platform::Windows,
        lower_bound: false,
    },
    Row {
        releases: &[(1, 13)],
        cuda: &[10020],
        archs: WIN10,
        ptx: Some(37),
        source: W113,
        platform: Platform::Windows,
        lower_bound: false,
    },
    Row {
        releases: &[(1, 13)],
        cuda: &[11030, 11050, 11060, 11070],
        archs: WIN11,
        ptx: Some(37),
        source: W113,
        platform: Platform::Windows,
        lower_bound: false,
    },
    Row {
        releases: &[(2, 0)],
        cuda: &[11060, 11070],
        archs: WIN11,
        ptx: Some(37),
        source: W20,
        platform: Platform::Windows,
        lower_bound: false,
    },
    Row {
        releases: &[(2, 0)],
        cuda: &[11080],
        archs: WIN118,
        ptx: Some(37),
        source: W20,
        platform: Platform::Windows,
        lower_bound: false,
    },
    Row {
        releases: &[(2, 1), (2, 2), (2, 3), (2, 4), (2, 5)],
        cuda: &[11080],
        archs: WIN118,
        ptx: Some(37),
        source: W21,
        platform: Platform::Windows,
        lower_bound: false,
    },
    Row {
        releases: &[(2, 1), (2, 2), (2, 3), (2, 4), (2, 5)],
        cuda: &[12010],
        archs: WIN12,
        ptx: None,
        source: W21,
        platform: Platform::Windows,
        lower_bound: false,
    },
    Row {
        releases: &[(2, 4), (2, 5)],
        cuda: &[12040],
        archs: WIN12,
        ptx: None,
        source: W21,
        platform: Platform::Windows,
        lower_bound: false,
    },
    Row {
        releases: &[(2, 6)],
        cuda: &[12040, 12060],
        archs: WIN12,
        ptx: None,
        source: W26,
        platform: Platform::Windows,
        lower_bound: false,
    },
    Row {
        releases: &[(2, 6), (2, 7)],
        cuda: &[11080],
        archs: WIN118,
        ptx: Some(37),
        source: W118,
        platform: Platform::Windows,
        lower_bound: false,
    },
    Row {
        releases: &[(2, 7), (2, 10)],
        cuda: &[12060],
        archs: WIN12,
        ptx: None,
        source: W126,
        platform: Platform::Windows,
        lower_bound: false,
    },
    Row {
        releases: &[(2, 7)],
        cuda: &[12080],
        archs: &[50, 60, 61, 70, 75, 80, 86, 90, 100, 120],
        ptx: None,
        source: W27,
        platform: Platform::Windows,
        lower_bound: false,
    },
    Row {
        releases: &[(2, 10)],
        cuda: &[12080],
        archs: VOLTA_UP,
        ptx: None,
        source: W210,
        platform: Platform::Windows,
        lower_bound: false,
    },
    Row {
        releases: &[(2, 8)],
        cuda: &[12090],
        archs: &[70],
        ptx: None,
        source: W28,
        platform: Platform::Windows,
        lower_bound: true,
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

/// The table's row for an official Linux x86_64 build written `2.8.0+cu129` (version and
/// tag), if read.
pub fn row_for(build: &str) -> Option<&'static Row> {
    row_on(build, Platform::Linux)
}

/// The table's row for an official build of `platform` written `2.8.0+cu129`, if read.
pub fn row_on(build: &str, platform: Platform) -> Option<&'static Row> {
    let (version, tag) = build.split_once('+')?;
    let rel = release(version)?;
    if !tag.starts_with("cu") {
        return None;
    }
    let cuda = cuda_compat::cuda_code(tag)?;
    TABLE
        .iter()
        .find(|r| r.platform == platform && r.releases.contains(&rel) && r.cuda.contains(&cuda))
}

/// The lowest architecture any build made with CUDA `cuda` (`13000`) can carry, cubin or PTX,
/// on every platform and for every release, nightly or source build: what that CUDA's `nvcc`
/// still compiles (NVIDIA's CUDA Toolkit release notes: 11.0 removed sm_30/sm_32, 12.0 removed
/// Kepler sm_35/sm_37, 13.0 removed offline compilation for Maxwell, Pascal and Volta, sm_50 to
/// sm_72; pytorch/pytorch `.ci/manywheel/build_env_setup.py`: "CUDA 13.x dropped sm_50/60/70
/// … nvcc 13 rejects … 'compute_50'"), with where that is said.
pub fn toolkit_floor(cuda: u32) -> Option<(u32, &'static str)> {
    match cuda {
        13000.. => Some((
            75,
            "CUDA Toolkit 13.0 release notes: nvcc 13 dropped Maxwell, Pascal and Volta",
        )),
        12000.. => Some((
            50,
            "CUDA Toolkit 12.0 release notes: nvcc 12 dropped Kepler",
        )),
        11000.. => Some((
            35,
            "CUDA Toolkit 11.0 release notes: nvcc 11 dropped sm_30 and sm_32",
        )),
        _ => None,
    }
}

impl Row {
    /// A GPU of compute capability `sm` (61 for 6.1) finds a cubin of its major no newer than
    /// itself, or PTX no newer than itself.
    pub fn runs(&self, sm: u32) -> bool {
        if self.lower_bound {
            return self.archs.first().is_none_or(|&a| a <= sm);
        }
        self.archs.iter().any(|&a| a / 10 == sm / 10 && a <= sm)
            || self.ptx.is_some_and(|p| p <= sm)
    }

    /// The list as PyTorch's warning writes it (`sm_70 sm_75 … sm_120 compute_120`).
    pub fn arch_names(&self) -> Vec<String> {
        if self.lower_bound {
            return self
                .archs
                .first()
                .map(|a| vec![format!("no architecture below sm_{a}")])
                .unwrap_or_default();
        }
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
            .filter(|r| r.platform == self.platform && r.releases.contains(&rel) && r.runs(sm))
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
        // variants no list was found for
        assert_eq!(row_for("2.11.0+cu129"), None);
        assert_eq!(row_on("2.11.0+cu128", Platform::Windows), None);
        assert_eq!(row_on("2.11.0+cu130", Platform::Windows), None);
        assert_eq!(row_for("2.8.0+cpu"), None);
        assert_eq!(row_for("2.8+cu128").map(|r| r.source), Some(P28));
    }

    #[test]
    fn windows_wheels_have_their_own_lists() {
        // pytorch/pytorch#51858: a GTX 1050 Ti (6.1) under Windows 2.0.1+cu117 (6.1 in the list)
        let r = row_on("2.0.1+cu117", Platform::Windows).expect("read");
        assert!(r.runs(61));
        assert_eq!(r.source, W20);
        // builder release/2.1-2.5 windows/cuda121.bat has 6.1 too, and no 3.7 (Kepler K80 out)
        let r = row_on("2.5.1+cu121", Platform::Windows).expect("read");
        assert!(r.runs(61) && !r.runs(37));
        assert!(
            row_on("2.5.1+cu118", Platform::Windows)
                .expect("read")
                .runs(37)
        );
        // cu124 was a Windows variant of 2.4 and 2.5 only
        assert_eq!(row_on("2.3.1+cu124", Platform::Windows), None);
        // the Linux table is not the Windows one and back
        assert_ne!(
            row_for("2.1.2+cu121"),
            row_on("2.1.2+cu121", Platform::Windows)
        );
        assert_eq!(row_on("2.9.1+cu130", Platform::Windows), None);
    }

    #[test]
    fn windows_2_8_cu129_pins_only_its_floor() {
        // Comfy-Org/ComfyUI#9705 and #9929: a GTX 1070 (6.1) under Windows 2.8.0+cu129
        let r = row_on("2.8.0+cu129", Platform::Windows).expect("read");
        assert!(r.lower_bound);
        assert!(!r.runs(61));
        assert_eq!(
            r.arch_names(),
            vec!["no architecture below sm_70".to_string()]
        );
        // above the floor nothing is claimed: a V100, a 4090, a 5090 are taken to run it
        assert!(r.runs(70) && r.runs(89) && r.runs(120));
        // no Windows variant of 2.8 is known to keep Pascal: no alternative is named
        assert_eq!(r.alternative("2.8.0+cu129", 61), None);
        // Windows cu128 of 2.8 is not pinned (it ran Pascal in ComfyUI#9929)
        assert_eq!(row_on("2.8.0+cu128", Platform::Windows), None);
    }

    #[test]
    fn releases_read_off_their_wheels_2_6_2_7_2_10_2_11() {
        // turboderp-org/exllamav2#786: a GTX 1080 Ti (6.1) and a P100 (6.0) under 2.7.0+cu128,
        // whose list starts at sm_75; the same release's cu126 keeps sm_60
        let r = row_for("2.7.0+cu128").expect("read");
        assert!(!r.runs(61) && !r.runs(60) && !r.runs(70));
        assert_eq!(r.arch_names().first().map(String::as_str), Some("sm_75"));
        assert_eq!(
            r.arch_names().last().map(String::as_str),
            Some("compute_120")
        );
        assert_eq!(r.alternative("2.7.0+cu128", 61), Some(12060));
        // vllm-project/vllm#19906: two RTX 5080 (12.0) under 2.7.0+cu128 run it
        assert!(r.runs(120));
        // vllm-project/vllm#19542: a GTX 1080 Ti under 2.7.0+cu126 runs its sm_60 cubins
        assert!(row_for("2.7.0+cu126").expect("read").runs(61));
        // pytorch/pytorch#144071: a V100 (7.0) under 2.6.0+cu124; vllm-project/vllm#16905: an
        // H100 PCIe under it; an RTX 50xx has nothing there
        let r = row_for("2.6.0+cu124").expect("read");
        assert!(r.runs(70) && r.runs(90) && !r.runs(120));
        // pytorch/pytorch#182250: V100s under 2.11.0+cu128 (no sm_70), which 2.10's cu128 and
        // 2.11's cu126 still carry
        let r = row_for("2.11.0+cu128").expect("read");
        assert!(!r.runs(70));
        assert_eq!(r.alternative("2.11.0+cu128", 70), Some(12060));
        assert!(row_for("2.10.0+cu128").expect("read").runs(70));
        assert!(row_for("2.11.0+cu126").expect("read").runs(70));
        // 2.10's cu128 has no PTX: a Pascal card has nothing; a 5090 runs its sm_120
        let r = row_for("2.10.0+cu128").expect("read");
        assert!(!r.runs(61) && r.runs(120));
        assert_eq!(r.arch_names().last().map(String::as_str), Some("sm_120"));
        // autowarefoundation/auto_e2e#27: an RTX 5080 under 2.11.0+cu128
        assert!(row_for("2.11.0+cu128").expect("read").runs(120));
    }

    #[test]
    fn windows_2_7_and_2_10_wheels_read_off_the_wheels() {
        // nikopueringer/CorridorKey#141: Windows 2.7.1's cu128 keeps sm_61 (Linux's does not),
        // 2.10's cu128 starts at sm_70
        let w = row_on("2.7.1+cu128", Platform::Windows).expect("read");
        assert!(w.runs(61) && w.runs(120) && w.ptx.is_none());
        assert!(!row_for("2.7.1+cu128").expect("read").runs(61));
        let w = row_on("2.10.0+cu128", Platform::Windows).expect("read");
        assert!(!w.runs(61) && w.runs(70));
        assert_eq!(w.alternative("2.10.0+cu128", 61), Some(12060));
        // h33's GenVDM#5: a GTX 1070 (6.1) under Windows 2.7.0+cu126 runs it
        assert!(
            row_on("2.7.0+cu126", Platform::Windows)
                .expect("read")
                .runs(61)
        );
        // visualbruno/ComfyUI-Direct3D-S2#8: an RTX 3080 (8.6) under Windows 2.7.1+cu128
        assert!(
            row_on("2.7.1+cu128", Platform::Windows)
                .expect("read")
                .runs(86)
        );
    }

    #[test]
    fn linux_2_6_cu126_is_the_12_6_arm() {
        // pytorch/pytorch#150733: an RTX 5090 D (12.0) under 2.6.0+cu126, whose warning lists
        // sm_50 … sm_90; a GTX 1080 (6.1) runs its sm_60 cubins
        let r = row_for("2.6.0+cu126").expect("read");
        assert_eq!(r.source, L26_126);
        assert!(!r.runs(120) && r.runs(61) && r.runs(90));
        assert_eq!(r.arch_names().last().map(String::as_str), Some("sm_90"));
    }

    #[test]
    fn linux_cu118_of_2_6_and_2_7_keep_kepler_k80() {
        // the 11.8 arm `…;3.7;9.0`: a Tesla K80 (3.7) has a cubin, which 2.6's cu126 lacks; an
        // RTX 5090 has nothing (h55's DeepPrep-like cu118 lists stop at sm_90)
        for b in ["2.6.0+cu118", "2.7.1+cu118"] {
            let r = row_for(b).expect("read");
            assert_eq!(r.source, P118);
            assert!(r.runs(37) && r.runs(61) && !r.runs(120) && !r.runs(100));
        }
        assert!(!row_for("2.6.0+cu126").expect("read").runs(37));
        // 2.8 has no cu118
        assert_eq!(row_for("2.8.0+cu118"), None);
    }

    #[test]
    fn linux_2_10_cu129_and_cu130() {
        // build_cuda.sh at 799d09f2: 12.9 keeps sm_70 with 12.0+PTX, 13.0 starts at sm_75
        let r = row_for("2.10.0+cu129").expect("read");
        assert_eq!(r.source, P210);
        assert!(r.runs(70) && r.runs(121) && !r.runs(61));
        let r = row_for("2.10.0+cu130").expect("read");
        assert!(!r.runs(70) && r.runs(75) && r.runs(100) && r.runs(103));
        // DGX Spark's GB10 (12.1) and Jetson Thor (11.0) through the 12.0 cubin / PTX rules:
        // 12.1 runs the sm_120 cubin; 11.0 has no cubin of its major and PTX 12.0 is newer
        assert!(r.runs(121) && !r.runs(110));
        assert_eq!(
            r.arch_names().last().map(String::as_str),
            Some("compute_120")
        );
        // a V100 under 2.10's cu130 has 2.10's cu129 to go to
        assert_eq!(r.alternative("2.10.0+cu130", 70), Some(12090));
    }

    #[test]
    fn linux_2_11_cu130() {
        // the 2.11 cycle's 13.0 arm `7.5;8.0;8.6;9.0;10.0;12.0+PTX`
        let r = row_for("2.11.0+cu130").expect("read");
        assert_eq!(r.source, P211);
        assert!(!r.runs(70) && !r.runs(61) && r.runs(75) && r.runs(120));
        // a Pascal card has 2.11's cu126
        assert_eq!(r.alternative("2.11.0+cu130", 61), Some(12060));
    }

    #[test]
    fn windows_2_6_and_cu118_lists() {
        // lllyasviel/FramePack#702 and #805: RTX 5080/5070 Ti (12.0) under the Windows 2.6 cu126
        // wheel (sm_50 sm_60 sm_61 … sm_90); a GTX 1070 (6.1) runs it
        let r = row_on("2.6.0+cu126", Platform::Windows).expect("read");
        assert_eq!(r.source, W26);
        assert!(!r.runs(120) && r.runs(61));
        assert_eq!(row_on("2.6.0+cu124", Platform::Windows), Some(r));
        // cuda118.bat: `3.7+PTX;5.0;6.0;6.1;…;9.0`
        let r = row_on("2.7.1+cu118", Platform::Windows).expect("read");
        assert_eq!(r.source, W118);
        assert_eq!(
            r.arch_names().last().map(String::as_str),
            Some("compute_37")
        );
        assert!(r.runs(37) && r.runs(61));
    }

    #[test]
    fn the_toolkit_floor_holds_for_every_build() {
        // Comfy-Org/ComfyUI#10468: a GTX 1080 (6.1) under Windows 2.10.0+cu130
        assert_eq!(toolkit_floor(13000).map(|f| f.0), Some(75));
        assert_eq!(toolkit_floor(12060).map(|f| f.0), Some(50));
        assert_eq!(toolkit_floor(11080).map(|f| f.0), Some(35));
        assert_eq!(toolkit_floor(10020), None);
    }
}
