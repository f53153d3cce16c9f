//! The live machine (optionally with files read under `--root`).
//!
//! Files, directory listings, metadata and links map the host's absolute path under `root` when
//! one is given, so a container that mounts the host at `/host` (or a recorded tree) reads the
//! host's `/proc/modules` as `/host/proc/modules`. NVML and commands always talk to the live
//! machine: a container sees the host's GPUs through the driver, not through the mounted tree.
//!
//! Commands run through duct with an argv (never a shell), stdin from `/dev/null`, both outputs
//! captured, each in its own process group; at the deadline the whole group is killed, so a
//! script's background grandchildren do not outlive gpufix.

use super::{CommandOutput, FileMeta, Host, HostError};
use crate::vocab::nvml::{Field, GpuReading, GpuSample, NvLink, NvmlReading, ProcessMem};
use nvml_wrapper::Nvml;
use nvml_wrapper::bitmasks::device::ThrottleReasons;
use nvml_wrapper::enum_wrappers::device::{
    Clock, ComputeMode, EccCounter, MemoryError, PerformanceState, RetirementCause,
    TemperatureSensor, TemperatureThreshold,
};
use nvml_wrapper::enums::device::{SampleValue, UsedGpuMemory};
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::struct_wrappers::device::ProcessInfo;
use nvml_wrapper::structs::device::FieldId;
use nvml_wrapper::sys_exports::field_id::{
    NVML_FI_DEV_REMAPPED_COR, NVML_FI_DEV_REMAPPED_FAILURE, NVML_FI_DEV_REMAPPED_PENDING,
    NVML_FI_DEV_REMAPPED_UNC,
};
use rustix::fd::OwnedFd;
use rustix::fs::{FileType, Mode, OFlags, ResolveFlags};
use std::collections::BTreeMap;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// This machine, with file paths optionally mapped under `root`.
pub struct RealHost {
    root: Option<PathBuf>,
    /// Where a passed CUDA check is remembered ([`super::cuda_cache`]); `None`: always run it.
    cuda_cache: Option<super::cuda_cache::CudaCache>,
    /// Shared with the thread [`Host::warm_up`] may have started.
    nvml: std::sync::Arc<OnceLock<NvmlState>>,
    /// The whole reading [`Host::warm_up`] started, for the first [`Host::nvml`] call to take.
    prefetched: Prefetch<Result<NvmlReading, HostError>>,
    /// Every file read through a job ([`Host::read_job_file`]) and the owner it was read as:
    /// a fix writes it as that owner.
    job_files: std::sync::Mutex<BTreeMap<String, crate::authority::Owner>>,
}

/// How old a reading [`Host::warm_up`] took may be when the first probe asks for it: a plan
/// asks within tens of milliseconds of opening its session; a session that asks later (its
/// first pass had no NVML probe) reads afresh.
const PREFETCH_FRESH: Duration = Duration::from_secs(2);

/// A value computed on a background thread, taken once by whoever asks first while it is
/// still fresh; every later ask (or a stale or failed one) computes its own.
struct Prefetch<T> {
    rx: std::sync::Mutex<Option<std::sync::mpsc::Receiver<(Instant, T)>>>,
}

impl<T> Default for Prefetch<T> {
    fn default() -> Self {
        Prefetch {
            rx: std::sync::Mutex::new(None),
        }
    }
}

impl<T: Send + 'static> Prefetch<T> {
    /// Start computing `f` on a thread named `name` (nothing happens if it cannot start).
    fn start(&self, name: &str, f: impl FnOnce() -> T + Send + 'static) {
        let (tx, rx) = std::sync::mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let v = f();
                let _ = tx.send((Instant::now(), v));
            });
        if spawned.is_ok() {
            *self.rx.lock().unwrap_or_else(|e| e.into_inner()) = Some(rx);
        }
    }

    /// Drop the value, not waiting for it: what it read may have changed.
    fn discard(&self) {
        self.rx.lock().unwrap_or_else(|e| e.into_inner()).take();
    }

    /// The prefetched value, waiting for it, when this is the first ask and the value was
    /// finished at most `fresh` ago; `None` otherwise.
    fn take(&self, fresh: Duration) -> Option<T> {
        let rx = self.rx.lock().unwrap_or_else(|e| e.into_inner()).take()?;
        let (at, v) = rx.recv().ok()?;
        (at.elapsed() <= fresh).then_some(v)
    }
}

struct NvmlState {
    nvml: Result<Nvml, HostError>,
    init_ms: f64,
}

impl RealHost {
    pub fn new(root: Option<PathBuf>) -> RealHost {
        RealHost {
            root,
            cuda_cache: None,
            nvml: Default::default(),
            prefetched: Default::default(),
            job_files: Default::default(),
        }
    }

    /// Remember a passed native CUDA check in `cache` and reuse it while it is valid.
    pub fn with_cuda_cache(mut self, cache: Option<super::cuda_cache::CudaCache>) -> RealHost {
        self.cuda_cache = cache;
        self
    }

    /// Where a host path lives on this machine. Under a root, `..` is refused so that a path
    /// can never climb out of the mounted tree.
    pub fn map_path(&self, path: &str) -> io::Result<PathBuf> {
        let p = Path::new(path);
        let Some(root) = &self.root else {
            return Ok(p.to_path_buf());
        };
        if p.components().any(|c| c == Component::ParentDir) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "path `{path}` has a `..` component, refused under root `{}`",
                    root.display()
                ),
            ));
        }
        let mut out = root.clone();
        for c in p.components() {
            if let Component::Normal(part) = c {
                out.push(part);
            }
        }
        Ok(out)
    }

    fn nvml_state(&self) -> &NvmlState {
        self.nvml.get_or_init(init_nvml)
    }

    /// `f` on every GPU NVML counts, in index order; the first failure is the answer.
    fn each_gpu<T>(
        &self,
        f: impl Fn(u32, nvml_wrapper::Device<'_>) -> Result<T, HostError>,
    ) -> Result<Vec<T>, HostError> {
        let (nvml, _) = self.nvml_handle()?;
        let count = nvml
            .device_count()
            .map_err(|e| nvml_call("count GPUs", e))?;
        (0..count)
            .map(|i| {
                let d = nvml
                    .device_by_index(i)
                    .map_err(|e| nvml_call(&format!("open GPU {i}"), e))?;
                f(i, d)
            })
            .collect()
    }

    fn nvml_handle(&self) -> Result<(&Nvml, f64), HostError> {
        let st = self.nvml_state();
        match &st.nvml {
            Ok(n) => Ok((n, st.init_ms)),
            Err(e) => Err(e.clone()),
        }
    }
}

fn init_nvml() -> NvmlState {
    let start = Instant::now();
    let nvml = Nvml::init().map_err(init_message);
    NvmlState {
        nvml,
        init_ms: start.elapsed().as_secs_f64() * 1000.0,
    }
}

/// Largest file read from the host (or under `--root`): "input too large" beyond.
pub const MAX_HOST_FILE_BYTES: u64 = 64 << 20;

/// `/proc/self/fd/N`: a path that names an open descriptor, for std calls that want a path.
fn fd_path(fd: &OwnedFd) -> PathBuf {
    use std::os::fd::AsRawFd;
    PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()))
}

impl RealHost {
    /// Open a host path. Under `--root` it resolves inside the root (`openat2` with
    /// `RESOLVE_IN_ROOT`): an absolute or `..` link is taken relative to the root, so no link
    /// leads out of it.
    fn open_in_root(&self, path: &str, flags: OFlags) -> io::Result<OwnedFd> {
        let flags = flags | OFlags::CLOEXEC;
        let Some(root) = &self.root else {
            return Ok(rustix::fs::open(path, flags, Mode::empty())?);
        };
        let rel = self.map_path(path)?;
        let rel = rel.strip_prefix(root).unwrap_or(Path::new("."));
        let rel = if rel.as_os_str().is_empty() {
            Path::new(".")
        } else {
            rel
        };
        let dir = rustix::fs::open(
            root,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(rustix::fs::openat2(
            &dir,
            rel,
            flags,
            Mode::empty(),
            ResolveFlags::IN_ROOT | ResolveFlags::NO_MAGICLINKS,
        )?)
    }

    /// The directory holding `path` (resolved as [`Self::open_in_root`]) and the last name.
    fn parent_in_root(&self, path: &str) -> io::Result<(OwnedFd, String)> {
        let p = Path::new(path);
        let (parent, name) = match (p.parent(), p.file_name()) {
            (Some(d), Some(n)) => (d, n.to_string_lossy().into_owned()),
            _ => (Path::new("/"), ".".to_string()),
        };
        let parent = parent.to_str().unwrap_or("/");
        let parent = if parent.is_empty() { "/" } else { parent };
        Ok((
            self.open_in_root(parent, OFlags::PATH | OFlags::DIRECTORY)?,
            name,
        ))
    }
}

impl RealHost {
    /// Whose authority job `pid` carries, from its `/proc/PID/status`; in a recorded tree
    /// under `--root` that has none, the owner of `/proc/PID` (procfs shows a process's
    /// effective uid and gid as its directory's owner).
    fn job_owner(&self, pid: u32) -> io::Result<crate::authority::Owner> {
        if let Ok(b) = self.read_file(&format!("/proc/{pid}/status"))
            && let Some(o) = crate::authority::Owner::from_status(&String::from_utf8_lossy(&b))
        {
            return Ok(o);
        }
        let m = self.metadata(&format!("/proc/{pid}")).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("/proc/{pid} names no owner ({e}): the job's files are not read"),
            )
        })?;
        if m.kind != "dir" {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("/proc/{pid} is not a process directory: the job's files are not read"),
            ));
        }
        Ok(crate::authority::Owner {
            uid: m.uid,
            gid: m.gid,
            groups: Vec::new(),
        })
    }

    /// The directory a job-derived `path` resolves in, and the path inside it: the job's own
    /// root for `/proc/PID/root/…` (a job in a container), else `/` (or `--root`).
    fn job_root(&self, pid: u32, path: &str) -> io::Result<(OwnedFd, String)> {
        let dir = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let own = format!("/proc/{pid}/root");
        if let Some(rest) = path
            .strip_prefix(&own)
            .filter(|r| r.is_empty() || r.starts_with('/'))
        {
            let fd = match &self.root {
                // the kernel's own link to the job's root, opened by gpufix (not named by the job)
                None => rustix::fs::open(own.as_str(), dir, Mode::empty())?,
                Some(_) => self.open_in_root(&own, OFlags::PATH | OFlags::DIRECTORY)?,
            };
            return Ok((fd, rest.to_string()));
        }
        let top = self.root.clone().unwrap_or_else(|| PathBuf::from("/"));
        Ok((
            rustix::fs::open(&top, dir, Mode::empty())?,
            path.to_string(),
        ))
    }
}

/// Directories a helper program (`findmnt`, `dmesg`, `modprobe`, `setpriv`) is taken from when
/// gpufix's own PATH has none that passes the trust check.
const SYSTEM_BIN: [&str; 4] = ["/usr/sbin", "/usr/bin", "/sbin", "/bin"];

/// Where a program named without a `/` is run from: the first executable of that name on
/// gpufix's own PATH (root's, never a job's) that passes the trust check playbooks pass
/// ([`crate::trust::check`]: owned by root or the invoking user, nothing above it writable by
/// others). One that exists but fails the check is refused, never run.
pub fn trusted_program(name: &str) -> io::Result<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var("PATH").unwrap_or_default();
    let mut refused = None;
    for dir in path
        .split(':')
        .filter(|d| d.starts_with('/'))
        .chain(SYSTEM_BIN)
    {
        let cand = Path::new(dir).join(name);
        let Ok(m) = std::fs::metadata(&cand) else {
            continue;
        };
        if !m.is_file() || m.permissions().mode() & 0o111 == 0 {
            continue;
        }
        match crate::trust::check(&cand, "program") {
            Ok(()) => return Ok(cand),
            Err(e) => {
                refused.get_or_insert(e);
            }
        }
    }
    Err(match refused {
        Some(e) => io::Error::new(io::ErrorKind::PermissionDenied, e.message),
        None => io::Error::new(io::ErrorKind::NotFound, format!("{name}: not found")),
    })
}

/// A sentence a user can act on, rather than the wrapper's enum name.
fn init_message(e: NvmlError) -> HostError {
    let message = match e {
        NvmlError::LibloadingError(_) | NvmlError::LibraryNotFound => {
            "NVML cannot be loaded: libnvidia-ml.so.1 not found (is the NVIDIA driver installed?)"
                .to_string()
        }
        NvmlError::DriverNotLoaded => {
            "NVML cannot talk to the NVIDIA driver: the kernel module is not loaded".to_string()
        }
        NvmlError::NoPermission => {
            "NVML was refused permission to talk to the NVIDIA driver".to_string()
        }
        other => format!("NVML initialization failed: {other}"),
    };
    HostError::NvmlInit { message }
}

/// An NVML call that failed after NVML was initialised (`count GPUs`, `open GPU 3`).
fn nvml_call(what: &str, e: NvmlError) -> HostError {
    HostError::NvmlCall {
        what: what.into(),
        message: e.to_string(),
    }
}

/// Run a program that changes the host (`modprobe`, `mount`): argv, no shell, a minute at
/// most; a failure keeps its argv, status and stderr.
fn run_change(argv: Vec<String>) -> Result<(), HostError> {
    let o = run_command(&argv, Duration::from_secs(60)).map_err(|e| HostError::Spawn {
        program: argv[0].clone(),
        message: e.to_string(),
    })?;
    match o.status {
        Some(0) => Ok(()),
        status => Err(HostError::Command {
            argv,
            status,
            stderr: o.stderr.trim().to_string(),
        }),
    }
}

/// Derive one field from another read (one NVML call answers several fields).
fn fmap<T, U>(f: &Field<T>, g: impl Fn(&T) -> U) -> Field<U> {
    match f {
        Field::Ok(v) => Field::Ok(g(v)),
        Field::NotSupported => Field::NotSupported,
        Field::Error(e) => Field::Error(e.clone()),
    }
}

fn field<T>(r: Result<T, NvmlError>) -> Field<T> {
    match r {
        Ok(v) => Field::Ok(v),
        Err(NvmlError::NotSupported) => Field::NotSupported,
        Err(e) => Field::Error(e.to_string()),
    }
}

/// NVML's clocks-event reason flags by the names the playbooks use.
pub fn reason_names(r: ThrottleReasons) -> Vec<String> {
    const NAMES: [(ThrottleReasons, &str); 9] = [
        (ThrottleReasons::GPU_IDLE, "GPU_IDLE"),
        (
            ThrottleReasons::APPLICATIONS_CLOCKS_SETTING,
            "APPLICATIONS_CLOCKS_SETTING",
        ),
        (ThrottleReasons::SW_POWER_CAP, "SW_POWER_CAP"),
        (ThrottleReasons::HW_SLOWDOWN, "HW_SLOWDOWN"),
        (ThrottleReasons::SYNC_BOOST, "SYNC_BOOST"),
        (ThrottleReasons::SW_THERMAL_SLOWDOWN, "SW_THERMAL_SLOWDOWN"),
        (ThrottleReasons::HW_THERMAL_SLOWDOWN, "HW_THERMAL_SLOWDOWN"),
        (
            ThrottleReasons::HW_POWER_BRAKE_SLOWDOWN,
            "HW_POWER_BRAKE_SLOWDOWN",
        ),
        (
            ThrottleReasons::DISPLAY_CLOCK_SETTING,
            "DISPLAY_CLOCK_SETTING",
        ),
    ];
    NAMES
        .iter()
        .filter(|(flag, _)| r.contains(*flag))
        .map(|(_, n)| n.to_string())
        .collect()
}

fn pstate_name(p: PerformanceState) -> String {
    use PerformanceState::*;
    let n = match p {
        Zero => 0,
        One => 1,
        Two => 2,
        Three => 3,
        Four => 4,
        Five => 5,
        Six => 6,
        Seven => 7,
        Eight => 8,
        Nine => 9,
        Ten => 10,
        Eleven => 11,
        Twelve => 12,
        Thirteen => 13,
        Fourteen => 14,
        Fifteen => 15,
        Unknown => return "Unknown".to_string(),
    };
    format!("P{n}")
}

fn compute_mode_name(m: ComputeMode) -> String {
    match m {
        ComputeMode::Default => "Default",
        ComputeMode::ExclusiveThread => "ExclusiveThread",
        ComputeMode::Prohibited => "Prohibited",
        ComputeMode::ExclusiveProcess => "ExclusiveProcess",
    }
    .to_string()
}

fn processes(list: Vec<ProcessInfo>, kind: &str) -> Vec<ProcessMem> {
    list.into_iter()
        .map(|p| ProcessMem {
            pid: p.pid,
            used_memory: match p.used_gpu_memory {
                UsedGpuMemory::Used(b) => Some(b),
                UsedGpuMemory::Unavailable => None,
            },
            kind: kind.to_string(),
            name: None,
        })
        .collect()
}

fn sample_u64(v: &SampleValue) -> u64 {
    match *v {
        SampleValue::F64(f) => f.max(0.0) as u64,
        SampleValue::U32(u) => u64::from(u),
        SampleValue::U64(u) => u,
        SampleValue::I64(i) => i.max(0) as u64,
    }
}

/// `f` of every item, each on its own scoped thread named `name`, in the items' order; an item
/// whose thread cannot start (or that panicked) is run here instead.
fn each_on_a_thread<I: Copy + Send, R: Send>(
    name: &str,
    items: &[I],
    f: impl Fn(I) -> R + Sync,
) -> Vec<R> {
    std::thread::scope(|s| {
        let f = &f;
        let running: Vec<_> = items
            .iter()
            .map(|&item| {
                let h = std::thread::Builder::new()
                    .name(name.into())
                    .spawn_scoped(s, move || f(item));
                (item, h)
            })
            .collect();
        running
            .into_iter()
            .map(|(item, h)| match h.map(|h| h.join()) {
                Ok(Ok(r)) => r,
                _ => f(item),
            })
            .collect()
    })
}

/// One full reading of every GPU, each GPU on its own thread (a GPU's reading is milliseconds
/// of driver calls; an 8-GPU node read in sequence would wait for all of them one by one).
fn read_all(st: &NvmlState) -> Result<NvmlReading, HostError> {
    let nvml = match &st.nvml {
        Ok(n) => n,
        Err(e) => return Err(e.clone()),
    };
    let count = nvml
        .device_count()
        .map_err(|e| nvml_call("count GPUs", e))?;
    let indices: Vec<u32> = (0..count).collect();
    let gpus = each_on_a_thread("nvml-gpu", &indices, |i| {
        read_gpu(nvml, i).map_err(|e| nvml_call(&format!("open GPU {i}"), e))
    })
    .into_iter()
    .collect::<Result<Vec<_>, HostError>>()?;
    Ok(NvmlReading {
        driver_version: field(nvml.sys_driver_version()),
        cuda_driver_version: field(nvml.sys_cuda_driver_version()),
        nvml_version: field(nvml.sys_nvml_version()),
        init_ms: st.init_ms,
        gpus,
    })
}

/// Fills part of a [`GpuReading`] with values a group of NVML calls read.
type Fill = Box<dyn FnOnce(&mut GpuReading) + Send>;

/// Read one GPU. Some NVML calls cost milliseconds each on a GPU whose driver forwards them to
/// its firmware (an H200 measured 0.01-4 ms per call, 32 ms for all of them in sequence), so
/// independent groups of calls run on their own threads and their values are filled in after.
fn read_gpu(nvml: &Nvml, index: u32) -> Result<GpuReading, NvmlError> {
    let d = nvml.device_by_index(index)?;
    let groups: [fn(&nvml_wrapper::Device) -> Fill; 5] = [
        read_identity,
        read_clocks,
        read_app_clocks_power,
        read_memory_errors,
        read_links_and_use,
    ];
    let fills = each_on_a_thread("nvml-read", &groups, |read| read(&d));
    let mut g = GpuReading {
        index,
        ..GpuReading::default()
    };
    for fill in fills {
        fill(&mut g);
    }
    Ok(g)
}

fn read_identity(d: &nvml_wrapper::Device) -> Fill {
    let name = field(d.name());
    let uuid = field(d.uuid());
    let pci_bus_id = field(d.pci_info().map(|p| p.bus_id));
    let vbios = field(d.vbios_version());
    let persistence = field(d.is_in_persistent_mode());
    let compute_mode = field(d.compute_mode().map(compute_mode_name));
    let mig = field(d.mig_mode());
    Box::new(move |g| {
        g.name = name;
        g.uuid = uuid;
        g.pci_bus_id = pci_bus_id;
        g.vbios = vbios;
        g.persistence = persistence;
        g.compute_mode = compute_mode;
        g.mig_current = fmap(&mig, |m| m.current == 1);
        g.mig_pending = fmap(&mig, |m| m.pending == 1);
    })
}

fn read_clocks(d: &nvml_wrapper::Device) -> Fill {
    let clock_sm = field(d.clock_info(Clock::SM));
    let clock_sm_max = field(d.max_clock_info(Clock::SM));
    let clock_graphics = field(d.clock_info(Clock::Graphics));
    let clock_graphics_max = field(d.max_clock_info(Clock::Graphics));
    let clock_mem = field(d.clock_info(Clock::Memory));
    let clock_mem_max = field(d.max_clock_info(Clock::Memory));
    let clocks_event_reasons = field(d.current_throttle_reasons().map(reason_names));
    Box::new(move |g| {
        g.clock_sm = clock_sm;
        g.clock_sm_max = clock_sm_max;
        g.clock_graphics = clock_graphics;
        g.clock_graphics_max = clock_graphics_max;
        g.clock_mem = clock_mem;
        g.clock_mem_max = clock_mem_max;
        g.clocks_event_reasons = clocks_event_reasons;
    })
}

fn read_app_clocks_power(d: &nvml_wrapper::Device) -> Fill {
    let app_clock_graphics = field(d.applications_clock(Clock::Graphics));
    let default_app_clock_graphics = field(d.default_applications_clock(Clock::Graphics));
    let app_clock_mem = field(d.applications_clock(Clock::Memory));
    let default_app_clock_mem = field(d.default_applications_clock(Clock::Memory));
    let power_usage_mw = field(d.power_usage());
    let power_limit_mw = field(d.power_management_limit());
    let power_default_limit_mw = field(d.power_management_limit_default());
    let power_enforced_limit_mw = field(d.enforced_power_limit());
    let temperature_c = field(d.temperature(TemperatureSensor::Gpu));
    let temperature_max_operating_c = field(d.temperature_threshold(TemperatureThreshold::GpuMax));
    Box::new(move |g| {
        g.app_clock_graphics = app_clock_graphics;
        g.default_app_clock_graphics = default_app_clock_graphics;
        g.app_clock_mem = app_clock_mem;
        g.default_app_clock_mem = default_app_clock_mem;
        g.power_usage_mw = power_usage_mw;
        g.power_limit_mw = power_limit_mw;
        g.power_default_limit_mw = power_default_limit_mw;
        g.power_enforced_limit_mw = power_enforced_limit_mw;
        g.temperature_c = temperature_c;
        g.temperature_max_operating_c = temperature_max_operating_c;
    })
}

fn read_memory_errors(d: &nvml_wrapper::Device) -> Fill {
    let ecc = field(d.is_ecc_enabled());
    let ecc_uncorrected_volatile =
        field(d.total_ecc_errors(MemoryError::Uncorrected, EccCounter::Volatile));
    let ecc_uncorrected_aggregate =
        field(d.total_ecc_errors(MemoryError::Uncorrected, EccCounter::Aggregate));
    let ecc_corrected_volatile =
        field(d.total_ecc_errors(MemoryError::Corrected, EccCounter::Volatile));
    let retired_pages_pending = field(d.are_pages_pending_retired());
    let retired_pages_count = field(
        d.retired_pages(RetirementCause::MultipleSingleBitEccErrors)
            .and_then(|a| {
                d.retired_pages(RetirementCause::DoubleBitEccError)
                    .map(|b| (a.len() + b.len()) as u64)
            }),
    );
    // nvml-wrapper has no safe call for nvmlDeviceGetRemappedRows; the field-value API reads
    // the same counters.
    let ids = [
        NVML_FI_DEV_REMAPPED_COR,
        NVML_FI_DEV_REMAPPED_UNC,
        NVML_FI_DEV_REMAPPED_PENDING,
        NVML_FI_DEV_REMAPPED_FAILURE,
    ]
    .map(FieldId);
    let remapped: Vec<Field<u64>> = match d.field_values_for(&ids) {
        Ok(vals) => vals
            .into_iter()
            .map(|r| field(r.and_then(|s| s.value).map(|v| sample_u64(&v))))
            .chain(std::iter::repeat(Field::Error(
                "NVML returned fewer field values than asked".into(),
            )))
            .take(4)
            .collect(),
        Err(e) => vec![field::<u64>(Err(e)); 4],
    };
    Box::new(move |g| {
        g.ecc_enabled = fmap(&ecc, |e| e.currently_enabled);
        g.ecc_pending = fmap(&ecc, |e| e.pending_enabled);
        g.ecc_uncorrected_volatile = ecc_uncorrected_volatile;
        g.ecc_uncorrected_aggregate = ecc_uncorrected_aggregate;
        g.ecc_corrected_volatile = ecc_corrected_volatile;
        g.retired_pages_pending = retired_pages_pending;
        g.retired_pages_count = retired_pages_count;
        g.remapped_rows_correctable = fmap(&remapped[0], |v| *v as u32);
        g.remapped_rows_uncorrectable = fmap(&remapped[1], |v| *v as u32);
        g.remapped_rows_pending = fmap(&remapped[2], |v| *v != 0);
        g.remapped_rows_failure = fmap(&remapped[3], |v| *v != 0);
    })
}

fn read_links_and_use(d: &nvml_wrapper::Device) -> Fill {
    let pcie_gen = field(d.current_pcie_link_gen());
    let pcie_width = field(d.current_pcie_link_width());
    let pcie_max_gen = field(d.max_pcie_link_gen());
    let pcie_max_width = field(d.max_pcie_link_width());
    let nvlinks = read_nvlinks(d);
    let util = field(d.utilization_rates());
    let mem = field(d.memory_info());
    let pstate = field(d.performance_state().map(pstate_name));
    let processes = field(d.running_compute_processes().map(|c| {
        let mut all = processes(c, "compute");
        // Graphics contexts hold memory too; a failure to list them does not hide compute ones.
        if let Ok(gr) = d.running_graphics_processes() {
            all.extend(processes(gr, "graphics"));
        }
        all
    }));
    Box::new(move |g| {
        g.pcie_gen = pcie_gen;
        g.pcie_width = pcie_width;
        g.pcie_max_gen = pcie_max_gen;
        g.pcie_max_width = pcie_max_width;
        g.nvlinks = nvlinks;
        g.utilization_gpu = fmap(&util, |u| u.gpu);
        g.utilization_memory = fmap(&util, |u| u.memory);
        g.memory_total = fmap(&mem, |m| m.total);
        g.memory_used = fmap(&mem, |m| m.used);
        g.memory_free = fmap(&mem, |m| m.free);
        g.pstate = pstate;
        g.processes = processes;
    })
}

fn read_nvlinks(d: &nvml_wrapper::Device) -> Field<Vec<NvLink>> {
    let mut links = Vec::new();
    // NVML_NVLINK_MAX_LINKS; links past a GPU's count answer InvalidArg or NotSupported.
    for link in 0..18 {
        match d.link_wrapper_for(link).is_active() {
            Ok(active) => links.push(NvLink { link, active }),
            Err(NvmlError::NotSupported) | Err(NvmlError::InvalidArg) if link > 0 => continue,
            Err(NvmlError::NotSupported) => return Field::NotSupported,
            Err(e) if link == 0 => return Field::Error(e.to_string()),
            Err(_) => continue,
        }
    }
    if links.is_empty() {
        Field::NotSupported
    } else {
        Field::Ok(links)
    }
}

fn sample_gpu(nvml: &Nvml, index: u32) -> Result<GpuSample, NvmlError> {
    let d = nvml.device_by_index(index)?;
    let util = field(d.utilization_rates());
    Ok(GpuSample {
        index,
        utilization_gpu: fmap(&util, |u| u.gpu),
        utilization_memory: fmap(&util, |u| u.memory),
        clock_sm: field(d.clock_info(Clock::SM)),
        power_usage_mw: field(d.power_usage()),
        clocks_event_reasons: field(d.current_throttle_reasons().map(reason_names)),
        pcie_gen: field(d.current_pcie_link_gen()),
        pcie_width: field(d.current_pcie_link_width()),
        temperature_c: field(d.temperature(TemperatureSensor::Gpu)),
        memory_used: field(d.memory_info().map(|m| m.used)),
        // NVML's sample buffer is read by the window itself; only pasted text carries this
        utilization_gpu_samples: None,
    })
}

fn meta_of(m: &std::fs::Metadata) -> FileMeta {
    let ft = m.file_type();
    let kind = if ft.is_symlink() {
        "symlink"
    } else if ft.is_dir() {
        "dir"
    } else if ft.is_file() {
        "file"
    } else {
        // device nodes (/dev/nvidia0), fifos, sockets
        "other"
    };
    FileMeta {
        kind: kind.to_string(),
        mode: m.mode(),
        uid: m.uid(),
        gid: m.gid(),
        len: m.len(),
        nlink: m.nlink(),
    }
}

/// Most bytes kept of a command's stdout (and of its stderr): a probe that prints more is
/// killed and unknown ("output cap exceeded"), so `yes` cannot fill memory.
pub const MAX_COMMAND_OUTPUT: usize = 16 << 20;

/// Children this process started and is waiting for; anything else whose parent is this
/// process was adopted (we are a child subreaper) and is an escapee to sweep.
static LIVE: std::sync::Mutex<Vec<u32>> = std::sync::Mutex::new(Vec::new());

/// Whether escapees are swept: on while probes run (see [`probing`]).
static SWEEPING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// While probes run, be a child subreaper: a probe's grandchild that leaves its process group
/// (`setsid`) and outlives its parent is re-parented to gpufix, which kills it. Off again for
/// fixes, so a daemon a `command` fix starts on purpose is left alone.
pub fn probing(on: bool) {
    if !on {
        sweep_escapees();
    }
    SWEEPING.store(on, std::sync::atomic::Ordering::SeqCst);
    let me = on.then(rustix::process::getpid);
    let _ = rustix::process::set_child_subreaper(me);
}

/// Kill and reap every process adopted by this one (see `LIVE`); returns how many.
pub fn sweep_escapees() -> usize {
    if !SWEEPING.load(std::sync::atomic::Ordering::SeqCst) {
        return 0;
    }
    let me = std::process::id();
    let live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    let mut swept = 0;
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return 0;
    };
    for e in rd.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // `pid (comm) state ppid …`: comm may hold spaces and parentheses
        let Some(after) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let ppid = after
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse::<u32>().ok());
        if ppid != Some(me) || live.contains(&pid) {
            continue;
        }
        if let Some(p) = rustix::process::Pid::from_raw(pid as i32) {
            let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
            let _ = rustix::process::waitpid(Some(p), rustix::process::WaitOptions::empty());
            swept += 1;
        }
    }
    swept
}

/// Kill the process group of every command still running and sweep escapees: called when
/// gpufix exits, so a probe abandoned at its deadline does not outlive it.
pub fn kill_all_commands() {
    let live: Vec<u32> = LIVE.lock().unwrap_or_else(|e| e.into_inner()).clone();
    for pid in live {
        kill_group(pid);
    }
    sweep_escapees();
}

/// Read a pipe to its end, keeping at most `cap` bytes; sets `over` when there was more.
fn read_capped(
    mut r: impl io::Read + Send + 'static,
    cap: usize,
    over: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> std::sync::mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut out = Vec::new();
        let mut buf = vec![0u8; 64 << 10];
        loop {
            match r.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    let room = cap.saturating_sub(out.len());
                    out.extend_from_slice(&buf[..n.min(room)]);
                    if n > room {
                        over.store(true, std::sync::atomic::Ordering::Relaxed);
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        let _ = tx.send(out);
    });
    rx
}

fn kill_group(pid: u32) {
    // The child is its group's leader, so its pid is the group id.
    if let Some(pgid) = rustix::process::Pid::from_raw(pid as i32) {
        let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL);
    }
}

/// Run `argv` in its own process group, keep at most [`MAX_COMMAND_OUTPUT`] bytes of each
/// output, and kill the group at the deadline, when the output cap is reached, and once the
/// program has exited (its background children do not outlive the probe); processes that left
/// the group are swept through the subreaper.
pub fn run_command(argv: &[String], timeout: Duration) -> io::Result<CommandOutput> {
    run_command_in(argv, timeout, None)
}

/// What a command gets instead of gpufix's environment and working directory.
pub struct Confined<'a> {
    pub env: &'a [(&'a str, &'a str)],
    pub cwd: &'a Path,
}

/// [`run_command`], with the environment cleared to `confined.env` and run in `confined.cwd`
/// when given. A program named without a `/` comes from [`trusted_program`].
pub fn run_command_in(
    argv: &[String],
    timeout: Duration,
    confined: Option<&Confined>,
) -> io::Result<CommandOutput> {
    use std::process::Stdio;
    use std::sync::atomic::{AtomicBool, Ordering};
    let Some((program, args)) = argv.split_first() else {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "empty argv"));
    };
    let mut cmd = if program.contains('/') {
        std::process::Command::new(program)
    } else {
        let mut c = std::process::Command::new(trusted_program(program)?);
        c.arg0(program);
        c
    };
    if let Some(c) = confined {
        cmd.env_clear()
            .envs(c.env.iter().copied())
            .current_dir(c.cwd);
    }
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = {
        let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
        let child = cmd.spawn()?;
        live.push(child.id());
        child
    };
    let pid = child.id();
    let over = std::sync::Arc::new(AtomicBool::new(false));
    let out_rx = read_capped(
        child.stdout.take().expect("piped"),
        MAX_COMMAND_OUTPUT,
        over.clone(),
    );
    let err_rx = read_capped(
        child.stderr.take().expect("piped"),
        MAX_COMMAND_OUTPUT,
        over.clone(),
    );
    let deadline = Instant::now() + timeout;
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break Some(st),
            Ok(None) => {}
            Err(_) => break None,
        }
        if over.load(Ordering::Relaxed) || Instant::now() >= deadline {
            timed_out = !over.load(Ordering::Relaxed);
            kill_group(pid);
            let _ = child.kill();
            break child.wait().ok();
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    kill_group(pid);
    LIVE.lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|p| *p != pid);
    // Whoever still holds the pipes was killed with the group or is swept now.
    let grace = Instant::now() + Duration::from_secs(2);
    let take = |rx: std::sync::mpsc::Receiver<Vec<u8>>| loop {
        sweep_escapees();
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(v) => break v,
            Err(_) if Instant::now() < grace => {}
            Err(_) => break Vec::new(),
        }
    };
    let stdout = take(out_rx);
    let stderr = take(err_rx);
    sweep_escapees();
    if over.load(Ordering::Relaxed) {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!(
                "it printed more than the output cap of {MAX_COMMAND_OUTPUT} bytes; killed its process group"
            ),
        ));
    }
    Ok(CommandOutput {
        status: status.and_then(|s| s.code()),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        timed_out,
    })
}

impl RealHost {
    fn set_on_gpu(&self, gpu: u32, setting: &super::NvmlSetting) -> Result<(), NvmlError> {
        let (nvml, _) = self.nvml_handle().map_err(|_| NvmlError::Uninitialized)?;
        let mut d = nvml.device_by_index(gpu)?;
        match setting {
            super::NvmlSetting::Persistence { enabled } => d.set_persistent(*enabled),
            super::NvmlSetting::PowerLimit { milliwatts } => {
                d.set_power_management_limit(*milliwatts)
            }
            super::NvmlSetting::ResetApplicationClocks => d.reset_applications_clocks(),
            super::NvmlSetting::ApplicationClocks {
                memory_mhz,
                graphics_mhz,
            } => d.set_applications_clocks(*memory_mhz, *graphics_mhz),
        }
    }
}

impl Host for RealHost {
    fn fs_path(&self, path: &str) -> Option<PathBuf> {
        self.map_path(path).ok()
    }
    fn commands_see_its_kernel(&self) -> bool {
        self.root.is_none()
    }
    fn read_file_tail(&self, path: &str, max: u64) -> io::Result<(Vec<u8>, u64)> {
        use std::io::{Read, Seek, SeekFrom};
        let fd = self.open_in_root(path, OFlags::RDONLY | OFlags::NOCTTY | OFlags::NONBLOCK)?;
        let st = rustix::fs::fstat(&fd)?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{path} is not a regular file"),
            ));
        }
        let total = st.st_size.max(0) as u64;
        let mut f = std::fs::File::from(fd);
        if total > max {
            f.seek(SeekFrom::Start(total - max))?;
        }
        let mut out = Vec::with_capacity(total.min(max) as usize);
        // a file that grows while read is read to the size it had
        f.take(total.min(max)).read_to_end(&mut out)?;
        Ok((out, total))
    }
    /// Each file is opened inside the root (`open_in_root`: no link leads out of it),
    /// checked to be a regular file on the descriptor, and named to the program as
    /// `/proc/<gpufix>/fd/N`, which reopens that very file (the program runs as root, like
    /// gpufix); the descriptors stay open until the program has exited.
    fn run_on_files(
        &self,
        argv: &[String],
        file_flag: &str,
        files: &[String],
        timeout: Duration,
    ) -> io::Result<CommandOutput> {
        use std::os::fd::AsRawFd;
        let mut fds = Vec::with_capacity(files.len());
        for f in files {
            let fd = self.open_in_root(f, OFlags::RDONLY | OFlags::NOCTTY | OFlags::NONBLOCK)?;
            let st = rustix::fs::fstat(&fd)?;
            if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{f} is not a regular file"),
                ));
            }
            fds.push(fd);
        }
        let me = std::process::id();
        let mut argv = argv.to_vec();
        argv.extend(
            fds.iter()
                .map(|fd| format!("{file_flag}/proc/{me}/fd/{}", fd.as_raw_fd())),
        );
        let out = run_command(&argv, timeout);
        drop(fds);
        out
    }
    fn write_runtime(&self, path: &str, value: &str) -> io::Result<()> {
        // a change makes a reading taken before it stale
        self.prefetched.discard();
        if !(path.starts_with("/sys/") || path.starts_with("/proc/sys/")) || path.contains("/../") {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("runtime writes go under /sys or /proc/sys, not {path}"),
            ));
        }
        // as `echo VALUE > FILE` does: procfs and sysfs accept the newline; resolved inside
        // /sys or /proc/sys (under --root when given) so that no link leads elsewhere
        let base = if path.starts_with("/sys/") {
            "/sys"
        } else {
            "/proc/sys"
        };
        let rel = Path::new(&path[base.len() + 1..]);
        // /sys itself resolved inside --root: a root whose `sys` is a link to the host's /sys
        // stays inside the root (the link resolves to the root's own `sys`, or loops)
        let dir = self
            .open_in_root(base, OFlags::PATH | OFlags::DIRECTORY)
            .map_err(|e| {
                io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!("cannot open {base} inside {}: {e}", self.describe()),
                )
            })?;
        crate::safe_write::write_runtime(
            &dir,
            &self.map_path(base)?,
            rel,
            format!("{value}\n").as_bytes(),
        )
        .map_err(|e| io::Error::new(io::ErrorKind::PermissionDenied, e.to_string()))
    }
    fn nvml_set(&self, gpu: u32, setting: &super::NvmlSetting) -> Result<(), HostError> {
        // a change makes a reading taken before it stale
        self.prefetched.discard();
        self.nvml_handle()?;
        self.set_on_gpu(gpu, setting).map_err(|e| match e {
            NvmlError::NotSupported => HostError::NotSupported {
                gpu,
                message: e.to_string(),
            },
            e => HostError::Setting {
                gpu,
                message: e.to_string(),
            },
        })
    }
    fn set_module(&self, name: &str, loaded: bool) -> Result<(), HostError> {
        // a change makes a reading taken before it stale
        self.prefetched.discard();
        let mut argv = vec!["modprobe".to_string()];
        if !loaded {
            argv.push("-r".into());
        }
        argv.extend(["--".to_string(), name.to_string()]);
        run_change(argv)
    }
    fn remount(&self, mount_point: &str, options: &str) -> Result<(), HostError> {
        // a change makes a reading taken before it stale
        self.prefetched.discard();
        let argv: Vec<String> = ["mount", "-o", options, "--", mount_point]
            .iter()
            .map(|s| s.to_string())
            .collect();
        run_change(argv)
    }
    fn describe(&self) -> String {
        match &self.root {
            Some(r) => format!("root {}", r.display()),
            None => "this host".to_string(),
        }
    }

    fn is_live(&self) -> bool {
        true
    }

    fn read_file(&self, path: &str) -> io::Result<Vec<u8>> {
        use std::io::Read;
        let fd = self.open_in_root(path, OFlags::RDONLY | OFlags::NOCTTY | OFlags::NONBLOCK)?;
        let st = rustix::fs::fstat(&fd)?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{path} is not a regular file"),
            ));
        }
        let mut out = Vec::new();
        std::fs::File::from(fd)
            .take(MAX_HOST_FILE_BYTES + 1)
            .read_to_end(&mut out)?;
        if out.len() as u64 > MAX_HOST_FILE_BYTES {
            return Err(io::Error::new(
                io::ErrorKind::FileTooLarge,
                format!("{path}: input too large (over {MAX_HOST_FILE_BYTES} bytes)"),
            ));
        }
        Ok(out)
    }

    fn read_dir(&self, path: &str) -> io::Result<Vec<String>> {
        let fd = self.open_in_root(path, OFlags::RDONLY | OFlags::DIRECTORY)?;
        let mut names = Vec::new();
        for e in std::fs::read_dir(fd_path(&fd))? {
            names.push(e?.file_name().to_string_lossy().into_owned());
        }
        names.sort();
        Ok(names)
    }

    fn metadata(&self, path: &str) -> io::Result<FileMeta> {
        let (dir, name) = self.parent_in_root(path)?;
        Ok(meta_of(&std::fs::symlink_metadata(
            fd_path(&dir).join(name),
        )?))
    }

    fn read_link(&self, path: &str) -> io::Result<String> {
        let (dir, name) = self.parent_in_root(path)?;
        Ok(rustix::fs::readlinkat(&dir, name.as_str(), Vec::new())?
            .to_string_lossy()
            .into_owned())
    }

    fn run(&self, argv: &[String], timeout: Duration) -> io::Result<CommandOutput> {
        run_command(argv, timeout)
    }

    fn read_job_file(&self, pid: u32, path: &str, max: u64) -> io::Result<Vec<u8>> {
        let owner = self.job_owner(pid)?;
        // remembered before the read: whatever a fix does to it later is done as this owner
        self.job_files
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(path.to_string(), owner.clone());
        let (root, rel) = self.job_root(pid, path)?;
        Ok(crate::authority::read_in_root(
            &owner, &root, &rel, path, max,
        )?)
    }

    fn job_file_owner(&self, path: &str) -> Option<crate::authority::Owner> {
        self.job_files
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(path)
            .cloned()
    }

    /// Through util-linux `setpriv` from a trusted directory ([`trusted_program`]): it takes the
    /// owner's uid, gid and supplementary groups, sets `no_new_privs`, and empties the
    /// inheritable and bounding capability sets before it executes the program, so not even a
    /// root-owned job's interpreter keeps a capability. std's `CommandExt::uid/gid` would drop
    /// the uid too, but clears the supplementary groups (setting them needs the unstable
    /// `setgroups`) and cannot set `no_new_privs` or the bounding set without `pre_exec`, which
    /// is `unsafe`. The environment is cleared to a fixed PATH and locale, and the program runs
    /// in `/`: the job's `VIRTUAL_ENV`, `PATH`, `PYTHONPATH` and `LD_*` reach nothing.
    fn run_as_job(
        &self,
        pid: u32,
        argv: &[String],
        timeout: Duration,
    ) -> io::Result<CommandOutput> {
        let owner = self.job_owner(pid)?;
        let confined = Confined {
            env: &[
                ("PATH", "/usr/local/bin:/usr/bin:/bin"),
                ("LANG", "C.UTF-8"),
                ("HOME", "/"),
            ],
            cwd: Path::new("/"),
        };
        let me = rustix::process::geteuid().as_raw();
        if me != 0 {
            // not root: gpufix has only its user's authority; it runs a job of that same user
            // as it is, and refuses anybody else's
            if owner.uid != me {
                return Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!(
                        "gpufix runs as uid {me} and cannot run a program as the job's owner ({})",
                        owner.describe()
                    ),
                ));
            }
            return run_command_in(argv, timeout, Some(&confined));
        }
        let setpriv = trusted_program("setpriv").map_err(|e| {
            io::Error::new(
                e.kind(),
                format!(
                    "setpriv (util-linux) is needed to run the job's program as its owner: {e}"
                ),
            )
        })?;
        let groups = if owner.groups.is_empty() {
            "--clear-groups".to_string()
        } else {
            let g: Vec<String> = owner.groups.iter().map(u32::to_string).collect();
            format!("--groups={}", g.join(","))
        };
        let mut full = vec![
            setpriv.display().to_string(),
            format!("--reuid={}", owner.uid),
            format!("--regid={}", owner.gid),
            groups,
            "--no-new-privs".into(),
            "--inh-caps=-all".into(),
            "--bounding-set=-all".into(),
            "--".into(),
        ];
        full.extend(argv.iter().cloned());
        run_command_in(&full, timeout, Some(&confined))
    }

    /// Start NVML and take the whole reading in the background: a whole-host plan otherwise
    /// waits for NVML's start-up and the reading's driver calls (35 ms on an H200) after the
    /// playbooks load, where the two can overlap. The first probe to ask takes that reading
    /// (`PREFETCH_FRESH`, 2 s); every later ask reads afresh.
    fn warm_up(&self) {
        let cell = self.nvml.clone();
        self.prefetched.start("nvml-prefetch", move || {
            read_all(cell.get_or_init(init_nvml))
        });
    }

    fn cuda_check(&self, deadline: Duration) -> Result<super::CudaCheck, HostError> {
        let cached = self
            .cuda_cache
            .as_ref()
            .and_then(|c| Some((c, super::cuda_cache::machine_key(self)?)));
        if let Some((c, key)) = &cached
            && let Some(hit) = c.load(key)
        {
            return Ok(hit);
        }
        let r = super::cuda_check::run_once(deadline);
        if let Some((c, key)) = &cached {
            c.store(key, &r);
        }
        Ok(r)
    }

    fn nvml(&self) -> Result<NvmlReading, HostError> {
        match self.prefetched.take(PREFETCH_FRESH) {
            Some(r) => r,
            None => read_all(self.nvml_state()),
        }
    }

    fn nvml_pcie(&self) -> Result<Vec<super::PcieThroughput>, HostError> {
        use nvml_wrapper::enum_wrappers::device::PcieUtilCounter;
        self.each_gpu(|i, d| {
            Ok(super::PcieThroughput {
                index: i,
                rx_kb_s: field(d.pcie_throughput(PcieUtilCounter::Receive)),
                tx_kb_s: field(d.pcie_throughput(PcieUtilCounter::Send)),
            })
        })
    }

    fn nvml_pcie_bytes(&self) -> Result<Vec<super::PcieBytes>, HostError> {
        use nvml_wrapper::struct_wrappers::device::FieldValueSample;
        use nvml_wrapper::sys_exports::field_id::{
            NVML_FI_DEV_PCIE_COUNT_RX_BYTES as RX, NVML_FI_DEV_PCIE_COUNT_TX_BYTES as TX,
        };
        fn counter(v: Option<&Result<FieldValueSample, NvmlError>>) -> Field<u64> {
            let v = match v {
                Some(Ok(s)) => s.value.as_ref(),
                Some(Err(e)) => Err(e),
                None => return Field::NotSupported,
            };
            match v {
                Ok(SampleValue::U64(b)) => Field::Ok(*b),
                Ok(SampleValue::U32(b)) => Field::Ok(u64::from(*b)),
                Ok(SampleValue::I64(b)) => u64::try_from(*b)
                    .map(Field::Ok)
                    .unwrap_or_else(|_| Field::Error(format!("negative counter {b}"))),
                Ok(SampleValue::F64(_)) => Field::Error("a counter read as a float".into()),
                Err(NvmlError::NotSupported) => Field::NotSupported,
                Err(e) => Field::Error(e.to_string()),
            }
        }
        self.each_gpu(|i, d| {
            let v = d
                .field_values_for(&[FieldId(RX), FieldId(TX)])
                .map_err(|e| nvml_call(&format!("read GPU {i}'s PCIe counters"), e))?;
            Ok(super::PcieBytes {
                index: i,
                rx: counter(v.first()),
                tx: counter(v.get(1)),
            })
        })
    }

    fn nvml_sample(&self) -> Result<Vec<GpuSample>, HostError> {
        let (nvml, _) = self.nvml_handle()?;
        let count = nvml
            .device_count()
            .map_err(|e| nvml_call("count GPUs", e))?;
        (0..count)
            .map(|i| sample_gpu(nvml, i).map_err(|e| nvml_call(&format!("open GPU {i}"), e)))
            .collect()
    }

    fn env(&self) -> BTreeMap<String, String> {
        // vars() panics on a non-UTF-8 variable; a diagnosis tool must not.
        std::env::vars_os()
            .map(|(k, v)| {
                (
                    k.to_string_lossy().into_owned(),
                    v.to_string_lossy().into_owned(),
                )
            })
            .collect()
    }

    fn now(&self) -> f64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0)
    }

    fn sleep(&self, d: Duration) {
        std::thread::sleep(d);
    }

    fn cpu_count(&self) -> usize {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_on_a_thread_keeps_the_items_order() {
        let squares = each_on_a_thread("t", &[3u32, 1, 2], |x| {
            std::thread::sleep(Duration::from_millis(u64::from(x) * 10));
            x * x
        });
        assert_eq!(squares, vec![9, 1, 4]);
        assert!(each_on_a_thread("t", &[] as &[u32], |x| x).is_empty());
    }

    #[test]
    fn a_prefetched_value_is_taken_once_while_fresh() {
        let p: Prefetch<u32> = Prefetch::default();
        assert_eq!(p.take(Duration::from_secs(5)), None, "nothing started");
        p.start("t", || {
            std::thread::sleep(Duration::from_millis(30));
            7
        });
        // the first ask waits for the value, the second computes its own
        assert_eq!(p.take(Duration::from_secs(5)), Some(7));
        assert_eq!(p.take(Duration::from_secs(5)), None);
        // a host change discards a value not yet taken
        let p: Prefetch<u32> = Prefetch::default();
        p.start("t", || 7);
        p.discard();
        assert_eq!(p.take(Duration::from_secs(5)), None);
    }

    #[test]
    fn a_stale_or_failed_prefetch_is_not_used() {
        let p: Prefetch<u32> = Prefetch::default();
        p.start("t", || 7);
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(
            p.take(Duration::from_millis(10)),
            None,
            "finished 50 ms ago"
        );
        let p: Prefetch<u32> = Prefetch::default();
        p.start("t", || panic!("prefetch failed"));
        assert_eq!(p.take(Duration::from_secs(5)), None);
    }

    fn argv(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    fn alive(pid: u32) -> bool {
        // A killed child of an exited shell is reparented and reaped by init; until then it is a
        // zombie, which is as dead as we need.
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Ok(s) => !s
                .rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z'),
            Err(_) => false,
        }
    }

    #[test]
    fn deadline_kills_the_whole_process_group() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("bg.pid");
        let script = format!(
            "sleep 30 & echo $! > {}; echo started; sleep 30",
            pidfile.display()
        );
        let start = Instant::now();
        let out = run_command(&argv(&["sh", "-c", &script]), Duration::from_millis(500)).unwrap();
        let took = start.elapsed();
        assert!(out.timed_out, "{out:?}");
        assert!(took < Duration::from_secs(4), "took {took:?}");
        assert_eq!(out.stdout, "started\n");
        let bg: u32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // SIGKILL is delivered at once, but give the kernel a moment to tear the process down.
        let gone_by = Instant::now() + Duration::from_secs(2);
        while alive(bg) && Instant::now() < gone_by {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(
            !alive(bg),
            "background grandchild {bg} survived the deadline"
        );
    }

    #[test]
    fn captures_both_outputs_and_the_exit_status() {
        let out = run_command(
            &argv(&["sh", "-c", "echo out; echo err >&2; exit 3"]),
            Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!(out.status, Some(3));
        assert_eq!(out.stdout, "out\n");
        assert_eq!(out.stderr, "err\n");
        assert!(!out.timed_out);
    }

    #[test]
    fn argv_is_not_interpreted_by_a_shell() {
        let out =
            run_command(&argv(&["echo", "$HOME; rm -rf /"]), Duration::from_secs(10)).unwrap();
        assert_eq!(out.stdout, "$HOME; rm -rf /\n");
    }

    #[test]
    fn stdin_is_null() {
        let out = run_command(&argv(&["cat"]), Duration::from_secs(10)).unwrap();
        assert!(!out.timed_out);
        assert_eq!(out.stdout, "");
    }

    #[test]
    fn a_missing_program_is_not_found() {
        let err =
            run_command(&argv(&["gpufix-no-such-program"]), Duration::from_secs(5)).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn paths_map_under_the_root() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("proc")).unwrap();
        std::fs::write(dir.path().join("proc/modules"), "nvidia 1 - - Live 0x0\n").unwrap();
        std::os::unix::fs::symlink("/nonexistent-target", dir.path().join("proc/link")).unwrap();
        let h = RealHost::new(Some(dir.path().to_path_buf()));
        assert_eq!(
            h.read_file("/proc/modules").unwrap(),
            b"nvidia 1 - - Live 0x0\n"
        );
        assert_eq!(h.read_dir("/proc").unwrap(), vec!["link", "modules"]);
        assert_eq!(h.metadata("/proc").unwrap().kind, "dir");
        // The final symlink is described, not followed (its target does not even exist).
        assert_eq!(h.metadata("/proc/link").unwrap().kind, "symlink");
        assert_eq!(h.read_link("/proc/link").unwrap(), "/nonexistent-target");
        assert_eq!(h.describe(), format!("root {}", dir.path().display()));
    }

    #[test]
    fn dot_dot_cannot_escape_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let h = RealHost::new(Some(dir.path().join("inner")));
        let err = h.read_file("/../etc/passwd").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(err.to_string().contains("`..`"), "{err}");
        assert!(h.metadata("/proc/../..").is_err());
    }

    #[test]
    fn nvml_without_a_driver_says_how_to_fix_it() {
        // No NVIDIA driver on the build machines; where one exists this checks nothing.
        let h = RealHost::new(None);
        if let Err(e) = h.nvml() {
            if !Path::new("/proc/driver/nvidia").exists() {
                assert_eq!(
                    e.to_string(),
                    "NVML cannot be loaded: libnvidia-ml.so.1 not found (is the NVIDIA driver installed?)"
                );
                assert!(matches!(e, HostError::NvmlInit { .. }), "{e:?}");
            }
            // Initialised once: the second call answers the same without retrying.
            assert_eq!(h.nvml_sample().unwrap_err(), e);
        }
    }

    #[test]
    fn clocks_event_reasons_have_flag_names() {
        let r = ThrottleReasons::GPU_IDLE | ThrottleReasons::HW_SLOWDOWN;
        assert_eq!(reason_names(r), vec!["GPU_IDLE", "HW_SLOWDOWN"]);
        assert!(reason_names(ThrottleReasons::NONE).is_empty());
    }
}
