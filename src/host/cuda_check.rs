//! The native CUDA check: what the driver itself answers when a process asks it for work.
//!
//! Loads the driver library (`libcuda.so.1`) at run time, calls `cuInit`, and on every GPU CUDA
//! can see (it honours `CUDA_VISIBLE_DEVICES`) retains the primary context (the one PyTorch and
//! the CUDA runtime use), allocates two buffers, copies a pattern in, launches a tiny kernel from
//! PTX embedded in this binary (the driver JIT-compiles it for the GPU at hand), copies the
//! result back and compares it with what the kernel must compute. No Python, no framework: on a
//! healthy host it takes tens to a few hundred milliseconds, where importing torch takes seconds.
//!
//! A driver call can hang (a GPU in a bad state, a wedged kernel module) or crash, and a CUDA
//! context holds well over 100 MB of the process's memory, so the `gpufix` binary runs the check
//! in a short-lived child of itself ([`isolate_in`]): the child is killed with its process group
//! at the deadline, a crash is a failed check, and the driver's memory never stays in a
//! long-running `gpufix record`. The library alone (tests) runs it in a thread and stops waiting
//! at the deadline; that thread is left behind (nothing can safely interrupt a driver call).
//!
//! This is the only module with `unsafe` code: calling C functions through `libloading`. Each
//! block says why it is sound. The rest of gpufix keeps `unsafe_code = "deny"`.
#![allow(unsafe_code)]

use libloading::Library;
use serde::{Deserialize, Serialize};
use std::ffi::{CStr, c_char, c_int, c_uint, c_void};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// What the check found. `ok` is true only when every visible GPU computed the right result.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CudaCheck {
    pub ok: bool,
    /// `cuDriverGetVersion`: the CUDA version the driver supports, as `major * 1000 + minor * 10`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver_api_version: Option<i32>,
    /// Devices CUDA reports (after `CUDA_VISIBLE_DEVICES`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_count: Option<u32>,
    #[serde(default)]
    pub devices: Vec<CudaDeviceCheck>,
    /// The first failure, as a sentence with the step, the CUresult name and its message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The CUresult name of the first failure (`CUDA_ERROR_NO_DEVICE`), when a CUDA call failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_name: Option<String>,
    /// Time `cuInit` took, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init_ms: Option<f64>,
    /// The deadline passed before the driver answered.
    #[serde(default)]
    pub timed_out: bool,
    /// Wall time of the whole check, in milliseconds.
    pub ms: f64,
    /// Set when this is a passed check remembered from an earlier run on the same boot and
    /// driver ([`super::cuda_cache`]): how many seconds ago it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_age_s: Option<f64>,
}

/// One GPU's part of the check.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CudaDeviceCheck {
    /// CUDA's ordinal (after `CUDA_VISIBLE_DEVICES`).
    pub index: u32,
    pub name: String,
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_name: Option<String>,
    /// Time to retain (create) the primary context, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_ms: Option<f64>,
    pub ms: f64,
}

/// Elements the kernel processes (two blocks of 128 threads).
const N: u32 = 256;
/// The kernel computes `out[i] = in[i] * 3 + i`; [`expected`] is the same in Rust.
const KERNEL: &str = "gpufix_check";

/// PTX for `out[i] = in[i] * 3 + i`, written by hand. The header is filled in by [`ptx`]: an old
/// ISA version first (PTX 6.0 for sm_50, which drivers from CUDA 9 on accept and newer drivers
/// JIT for any later GPU), then a newer one for drivers that no longer take the old target.
const PTX_BODY: &str = r#"
.visible .entry gpufix_check(
    .param .u64 p_in,
    .param .u64 p_out,
    .param .u32 p_n
)
{
    .reg .pred  %p<2>;
    .reg .b32   %r<9>;
    .reg .b64   %rd<8>;

    ld.param.u64        %rd1, [p_in];
    ld.param.u64        %rd2, [p_out];
    ld.param.u32        %r1, [p_n];
    mov.u32             %r2, %ctaid.x;
    mov.u32             %r3, %ntid.x;
    mov.u32             %r4, %tid.x;
    mad.lo.u32          %r5, %r2, %r3, %r4;
    setp.ge.u32         %p1, %r5, %r1;
    @%p1 bra            DONE;
    cvta.to.global.u64  %rd3, %rd1;
    cvta.to.global.u64  %rd4, %rd2;
    mul.wide.u32        %rd5, %r5, 4;
    add.s64             %rd6, %rd3, %rd5;
    ld.global.u32       %r6, [%rd6];
    mul.lo.u32          %r7, %r6, 3;
    add.u32             %r8, %r7, %r5;
    add.s64             %rd7, %rd4, %rd5;
    st.global.u32       [%rd7], %r8;
DONE:
    ret;
}
"#;

/// (PTX ISA version, target) pairs tried in order.
const PTX_TARGETS: &[(&str, &str)] = &[("6.0", "sm_50"), ("8.0", "sm_75")];

fn ptx(version: &str, target: &str) -> String {
    format!(".version {version}\n.target {target}\n.address_size 64\n{PTX_BODY}\0")
}

fn input() -> Vec<u32> {
    (0..N).map(|i| i.wrapping_mul(2_654_435_761) >> 8).collect()
}

fn expected(input: &[u32]) -> Vec<u32> {
    input
        .iter()
        .enumerate()
        .map(|(i, x)| x.wrapping_mul(3).wrapping_add(i as u32))
        .collect()
}

/// The check, run at most once per process (the driver's state is per process too, and two
/// rules asking for it should not pay twice); later calls answer the first result.
pub fn run_once(deadline: Duration) -> CudaCheck {
    static ONCE: std::sync::Mutex<Option<CudaCheck>> = std::sync::Mutex::new(None);
    let mut g = ONCE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(c) = &*g {
        return c.clone();
    }
    let c = run(deadline);
    *g = Some(c.clone());
    c
}

/// The binary that runs the check in a child process, when set ([`isolate_in`]).
static CHILD_EXE: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

/// The argument with which the `gpufix` binary runs the check and prints it as JSON
/// ([`child_main`]); not a command a person types.
pub const CHILD_ARG: &str = "--internal-cuda-check";

/// Run every later check in a child process of `exe` (the `gpufix` binary calls this at start
/// with its own path). The driver's context, its memory (libcuda maps well over 100 MB once a
/// context exists) and a hung or crashing driver call then stay in a short-lived child: the
/// child is killed, with its process group, at the deadline, and a `gpufix record` watching a
/// job for hours keeps its own footprint small. Without it (the library in tests), the check
/// runs in a thread of this process.
pub fn isolate_in(exe: std::path::PathBuf) {
    let _ = CHILD_EXE.set(exe);
}

/// The child's side of [`isolate_in`]: run the check and print it as one line of JSON. The
/// parent keeps the deadline.
pub fn child_main() -> i32 {
    let c = check();
    match serde_json::to_string(&c) {
        Ok(j) => {
            println!("{j}");
            0
        }
        Err(_) => 1,
    }
}

/// Run the check under `deadline`. Never blocks longer than the deadline (plus thread or
/// process start).
pub fn run(deadline: Duration) -> CudaCheck {
    match CHILD_EXE.get() {
        Some(exe) => run_child(exe, deadline),
        None => run_in_thread(deadline),
    }
}

fn run_child(exe: &std::path::Path, deadline: Duration) -> CudaCheck {
    let started = Instant::now();
    let argv = [exe.display().to_string(), CHILD_ARG.to_string()];
    let out = match super::real::run_command(&argv, deadline) {
        Ok(o) => o,
        Err(e) => {
            return failed(
                started,
                format!("cannot start the CUDA check ({}): {e}", exe.display()),
            );
        }
    };
    if out.timed_out {
        return timed_out(started, deadline);
    }
    let line = out.stdout.lines().rev().find(|l| l.starts_with('{'));
    match (out.status, line.map(serde_json::from_str::<CudaCheck>)) {
        (Some(0), Some(Ok(mut c))) => {
            c.ms = ms(started);
            c
        }
        (status, _) => {
            let why = match status {
                Some(code) => format!("exited with status {code}"),
                None => "was killed by a signal (a crash in the driver library?)".to_string(),
            };
            let err = out.stderr.lines().rev().find(|l| !l.trim().is_empty());
            failed(
                started,
                format!(
                    "the CUDA check process {why}{}",
                    err.map(|e| format!(": {}", e.trim())).unwrap_or_default()
                ),
            )
        }
    }
}

fn timed_out(started: Instant, deadline: Duration) -> CudaCheck {
    CudaCheck {
        timed_out: true,
        ..failed(
            started,
            format!(
                "the CUDA driver did not answer within {:.1}s (a hung GPU or driver? check the kernel log for Xid errors)",
                deadline.as_secs_f64()
            ),
        )
    }
}

fn run_in_thread(deadline: Duration) -> CudaCheck {
    let started = Instant::now();
    let (tx, rx) = mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("cuda check".into())
        .spawn(move || {
            let out = check();
            let _ = tx.send(out);
        });
    if let Err(e) = spawned {
        return failed(started, format!("cannot start the CUDA check thread: {e}"));
    }
    match rx.recv_timeout(deadline) {
        Ok(mut c) => {
            c.ms = ms(started);
            c
        }
        Err(_) => timed_out(started, deadline),
    }
}

fn ms(started: Instant) -> f64 {
    (started.elapsed().as_secs_f64() * 1000.0 * 10.0).round() / 10.0
}

fn failed(started: Instant, error: String) -> CudaCheck {
    CudaCheck {
        ok: false,
        driver_api_version: None,
        device_count: None,
        devices: Vec::new(),
        error: Some(error),
        error_name: None,
        init_ms: None,
        timed_out: false,
        ms: ms(started),
        cached_age_s: None,
    }
}

type CuResult = c_int;
type CuDevice = c_int;
type CuContext = *mut c_void;
type CuModule = *mut c_void;
type CuFunction = *mut c_void;
type CuDevicePtr = u64;

const CUDA_SUCCESS: CuResult = 0;
const CU_JIT_ERROR_LOG_BUFFER: c_int = 5;
const CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES: c_int = 6;

/// The driver API entry points the check uses, resolved once from the loaded library. The
/// function pointer types are those of `cuda.h` (stable ABI since CUDA 4; the `_v2` names are
/// the 64-bit-pointer versions every driver since CUDA 3.2 exports).
struct Api {
    init: unsafe extern "C" fn(c_uint) -> CuResult,
    driver_get_version: unsafe extern "C" fn(*mut c_int) -> CuResult,
    device_get_count: unsafe extern "C" fn(*mut c_int) -> CuResult,
    device_get: unsafe extern "C" fn(*mut CuDevice, c_int) -> CuResult,
    device_get_name: unsafe extern "C" fn(*mut c_char, c_int, CuDevice) -> CuResult,
    primary_ctx_retain: unsafe extern "C" fn(*mut CuContext, CuDevice) -> CuResult,
    primary_ctx_release: unsafe extern "C" fn(CuDevice) -> CuResult,
    ctx_set_current: unsafe extern "C" fn(CuContext) -> CuResult,
    ctx_synchronize: unsafe extern "C" fn() -> CuResult,
    module_load_data_ex: unsafe extern "C" fn(
        *mut CuModule,
        *const c_void,
        c_uint,
        *mut c_int,
        *mut *mut c_void,
    ) -> CuResult,
    module_get_function: unsafe extern "C" fn(*mut CuFunction, CuModule, *const c_char) -> CuResult,
    module_unload: unsafe extern "C" fn(CuModule) -> CuResult,
    mem_alloc: unsafe extern "C" fn(*mut CuDevicePtr, usize) -> CuResult,
    mem_free: unsafe extern "C" fn(CuDevicePtr) -> CuResult,
    memcpy_htod: unsafe extern "C" fn(CuDevicePtr, *const c_void, usize) -> CuResult,
    memcpy_dtoh: unsafe extern "C" fn(*mut c_void, CuDevicePtr, usize) -> CuResult,
    #[allow(clippy::type_complexity)]
    launch_kernel: unsafe extern "C" fn(
        CuFunction,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        *mut c_void,
        *mut *mut c_void,
        *mut *mut c_void,
    ) -> CuResult,
    get_error_name: unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult,
    get_error_string: unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult,
}

/// A failed driver call: the step, the CUresult name and the driver's message.
struct CuError {
    step: String,
    name: Option<String>,
    message: String,
}

impl CuError {
    fn sentence(&self) -> String {
        match &self.name {
            Some(n) => format!("{}: {n} ({})", self.step, self.message),
            None => format!("{}: {}", self.step, self.message),
        }
    }
}

impl Api {
    /// Resolve every symbol; the error is the name of the first that is missing.
    fn load(lib: &Library) -> Result<Api, &'static str> {
        macro_rules! sym {
            ($($name:literal),+) => {{
                let mut found = None;
                $(
                    if found.is_none() {
                        // SAFETY: the symbol is a function of the CUDA driver API, and the type
                        // it is read as (inferred from the `Api` field it is stored in) is the
                        // signature `cuda.h` declares for that name. The pointer is only called
                        // while `lib` is loaded: `Api` and `lib` live together in `check`.
                        found = unsafe { lib.get(concat!($name, "\0").as_bytes()) }
                            .ok()
                            .map(|s: libloading::Symbol<_>| *s);
                    }
                )+
                match found {
                    Some(f) => f,
                    None => return Err([$($name),+][0]),
                }
            }};
        }
        Ok(Api {
            init: sym!("cuInit"),
            driver_get_version: sym!("cuDriverGetVersion"),
            device_get_count: sym!("cuDeviceGetCount"),
            device_get: sym!("cuDeviceGet"),
            device_get_name: sym!("cuDeviceGetName"),
            primary_ctx_retain: sym!("cuDevicePrimaryCtxRetain"),
            primary_ctx_release: sym!("cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"),
            ctx_set_current: sym!("cuCtxSetCurrent"),
            ctx_synchronize: sym!("cuCtxSynchronize"),
            module_load_data_ex: sym!("cuModuleLoadDataEx"),
            module_get_function: sym!("cuModuleGetFunction"),
            module_unload: sym!("cuModuleUnload"),
            mem_alloc: sym!("cuMemAlloc_v2"),
            mem_free: sym!("cuMemFree_v2"),
            memcpy_htod: sym!("cuMemcpyHtoD_v2"),
            memcpy_dtoh: sym!("cuMemcpyDtoH_v2"),
            launch_kernel: sym!("cuLaunchKernel"),
            get_error_name: sym!("cuGetErrorName"),
            get_error_string: sym!("cuGetErrorString"),
        })
    }

    /// Turn a CUresult into `Ok` or a [`CuError`] with the driver's own name and message.
    fn check(&self, step: &str, r: CuResult) -> Result<(), CuError> {
        if r == CUDA_SUCCESS {
            return Ok(());
        }
        let text = |f: unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult| {
            let mut p: *const c_char = std::ptr::null();
            // SAFETY: cuGetErrorName/String write a pointer to a static, NUL-terminated string
            // owned by the driver (or leave it null and return an error for an unknown code);
            // it is read at once and copied.
            let rc = unsafe { f(r, &mut p) };
            if rc != CUDA_SUCCESS || p.is_null() {
                return None;
            }
            // SAFETY: non-null, NUL-terminated, static (see above).
            Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
        };
        Err(CuError {
            step: step.to_string(),
            name: Some(text(self.get_error_name).unwrap_or_else(|| format!("CUresult {r}"))),
            message: text(self.get_error_string).unwrap_or_else(|| "no message".to_string()),
        })
    }
}

/// The check itself (runs in its own thread).
fn check() -> CudaCheck {
    let started = Instant::now();
    // SAFETY: loading the NVIDIA driver library runs its initialisers; that is what every CUDA
    // program does at start. The name is a bare soname, so the dynamic linker's trusted search
    // path is used (not the working directory).
    let lib = match unsafe { Library::new("libcuda.so.1") } {
        Ok(l) => l,
        Err(e) => {
            return failed(
                started,
                format!("cannot load libcuda.so.1 (is the NVIDIA driver installed?): {e}"),
            );
        }
    };
    let api = match Api::load(&lib) {
        Ok(a) => a,
        Err(missing) => {
            return failed(
                started,
                format!("libcuda.so.1 has no `{missing}` (a driver older than CUDA 11?)"),
            );
        }
    };
    let mut out = failed(started, String::new());
    out.error = None;
    let fail = |mut out: CudaCheck, e: CuError| {
        out.ok = false;
        out.error = Some(e.sentence());
        out.error_name = e.name;
        out
    };
    let t = Instant::now();
    // SAFETY: cuInit(0) takes no pointers; flags must be 0.
    let r = api.check("cuInit", unsafe { (api.init)(0) });
    out.init_ms = Some(ms(t));
    if let Err(e) = r {
        return fail(out, e);
    }
    let mut v: c_int = 0;
    // SAFETY: writes one int through a valid pointer.
    if api
        .check("cuDriverGetVersion", unsafe {
            (api.driver_get_version)(&mut v)
        })
        .is_ok()
    {
        out.driver_api_version = Some(v);
    }
    let mut count: c_int = 0;
    // SAFETY: writes one int through a valid pointer.
    if let Err(e) = api.check("cuDeviceGetCount", unsafe {
        (api.device_get_count)(&mut count)
    }) {
        return fail(out, e);
    }
    out.device_count = Some(count.max(0) as u32);
    if count <= 0 {
        out.error =
            Some("CUDA sees no GPU (cuDeviceGetCount = 0; check CUDA_VISIBLE_DEVICES)".into());
        return out;
    }
    for i in 0..count {
        let t = Instant::now();
        let mut name = String::new();
        let mut context_ms = None;
        let r = device(&api, i, &mut name, &mut context_ms);
        let mut d = CudaDeviceCheck {
            index: i as u32,
            name,
            ok: r.is_ok(),
            error: None,
            error_name: None,
            context_ms,
            ms: ms(t),
        };
        if let Err(e) = r {
            d.error = Some(e.sentence());
            d.error_name.clone_from(&e.name);
            if out.error.is_none() {
                out.error = Some(format!("GPU {i}: {}", e.sentence()));
                out.error_name = e.name;
            }
        }
        out.devices.push(d);
    }
    out.ok = out.error.is_none();
    out.ms = ms(started);
    // `lib` is dropped here, after every call; the driver keeps its own state until exit.
    drop(lib);
    out
}

/// Context, module, buffers, launch, copy back, compare, clean up, on one device.
fn device(
    api: &Api,
    ordinal: c_int,
    name: &mut String,
    context_ms: &mut Option<f64>,
) -> Result<(), CuError> {
    let mut dev: CuDevice = 0;
    // SAFETY: writes one CUdevice through a valid pointer.
    api.check("cuDeviceGet", unsafe {
        (api.device_get)(&mut dev, ordinal)
    })?;
    let mut buf = [0 as c_char; 256];
    // SAFETY: the driver writes at most `len` bytes, NUL-terminated, into `buf`.
    if api
        .check("cuDeviceGetName", unsafe {
            (api.device_get_name)(buf.as_mut_ptr(), buf.len() as c_int, dev)
        })
        .is_ok()
    {
        // SAFETY: NUL-terminated within `buf` (the driver truncates to `len`); the last byte
        // is forced to NUL in case it did not.
        buf[255] = 0;
        *name = unsafe { CStr::from_ptr(buf.as_ptr()) }
            .to_string_lossy()
            .into_owned();
    }
    let mut ctx: CuContext = std::ptr::null_mut();
    let t = Instant::now();
    // SAFETY: writes one context handle through a valid pointer.
    api.check("cuDevicePrimaryCtxRetain", unsafe {
        (api.primary_ctx_retain)(&mut ctx, dev)
    })?;
    *context_ms = Some(ms(t));
    let r = with_context(api, ctx);
    // SAFETY: releases the retain above, exactly once; the context is no longer used.
    let _ = unsafe { (api.primary_ctx_release)(dev) };
    r
}

fn with_context(api: &Api, ctx: CuContext) -> Result<(), CuError> {
    // SAFETY: `ctx` is the primary context just retained; it is made current on this thread.
    api.check("cuCtxSetCurrent", unsafe { (api.ctx_set_current)(ctx) })?;
    let (module, log) = load_module(api)?;
    let r = with_module(api, module).map_err(|mut e| {
        if !log.is_empty() {
            e.message = format!("{}; JIT log: {log}", e.message);
        }
        e
    });
    // SAFETY: the module loaded above, unloaded once, after its last use.
    let _ = unsafe { (api.module_unload)(module) };
    r
}

/// JIT-compile the embedded PTX, trying each ISA version in turn.
fn load_module(api: &Api) -> Result<(CuModule, String), CuError> {
    let mut last = None;
    for (version, target) in PTX_TARGETS {
        let image = ptx(version, target);
        let mut log = vec![0u8; 4096];
        let mut opts = [CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES];
        let mut vals = [
            log.as_mut_ptr().cast::<c_void>(),
            // the size option's value is passed in the pointer itself, as cuda.h documents
            log.len() as *mut c_void,
        ];
        let mut module: CuModule = std::ptr::null_mut();
        // SAFETY: `image` is a NUL-terminated PTX string alive for the call; `opts` and `vals`
        // are two entries each, as the count says; the log buffer is `log.len()` bytes and lives
        // past the call; `module` is a valid out-pointer.
        let rc = unsafe {
            (api.module_load_data_ex)(
                &mut module,
                image.as_ptr().cast(),
                opts.len() as c_uint,
                opts.as_mut_ptr(),
                vals.as_mut_ptr(),
            )
        };
        let text = String::from_utf8_lossy(&log[..log.iter().position(|b| *b == 0).unwrap_or(0)])
            .trim()
            .to_string();
        match api.check(&format!("cuModuleLoadDataEx (PTX {version}, {target})"), rc) {
            Ok(()) => return Ok((module, String::new())),
            Err(mut e) => {
                if !text.is_empty() {
                    e.message = format!("{}; JIT log: {}", e.message, clip(&text, 300));
                }
                last = Some(e);
            }
        }
    }
    Err(last.expect("at least one PTX target"))
}

fn clip(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

fn with_module(api: &Api, module: CuModule) -> Result<(), CuError> {
    let mut func: CuFunction = std::ptr::null_mut();
    let name = format!("{KERNEL}\0");
    // SAFETY: valid module, NUL-terminated name, valid out-pointer.
    api.check("cuModuleGetFunction", unsafe {
        (api.module_get_function)(&mut func, module, name.as_ptr().cast())
    })?;
    let bytes = N as usize * 4;
    let mut d_in: CuDevicePtr = 0;
    let mut d_out: CuDevicePtr = 0;
    // SAFETY: valid out-pointer; size in bytes.
    api.check("cuMemAlloc", unsafe { (api.mem_alloc)(&mut d_in, bytes) })?;
    // SAFETY: as above.
    let r = api
        .check("cuMemAlloc", unsafe { (api.mem_alloc)(&mut d_out, bytes) })
        .and_then(|()| run_kernel(api, func, d_in, d_out));
    // SAFETY: free what was allocated above (0 is never a valid allocation, so skipped).
    unsafe {
        let _ = (api.mem_free)(d_in);
        if d_out != 0 {
            let _ = (api.mem_free)(d_out);
        }
    }
    r
}

fn run_kernel(
    api: &Api,
    func: CuFunction,
    d_in: CuDevicePtr,
    d_out: CuDevicePtr,
) -> Result<(), CuError> {
    let host_in = input();
    let bytes = host_in.len() * 4;
    // SAFETY: copies `bytes` bytes from a live host buffer of that size into a device
    // allocation of the same size.
    api.check("cuMemcpyHtoD", unsafe {
        (api.memcpy_htod)(d_in, host_in.as_ptr().cast(), bytes)
    })?;
    let (mut a, mut b, mut n) = (d_in, d_out, N);
    let mut params = [
        (&mut a as *mut CuDevicePtr).cast::<c_void>(),
        (&mut b as *mut CuDevicePtr).cast::<c_void>(),
        (&mut n as *mut u32).cast::<c_void>(),
    ];
    // SAFETY: `params` holds one pointer per kernel parameter (u64, u64, u32), each pointing at
    // a live value of that type; the grid covers N threads; the default stream; no extras.
    api.check("cuLaunchKernel", unsafe {
        (api.launch_kernel)(
            func,
            N.div_ceil(128),
            1,
            1,
            128,
            1,
            1,
            0,
            std::ptr::null_mut(),
            params.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    })?;
    // SAFETY: no pointers.
    api.check("cuCtxSynchronize", unsafe { (api.ctx_synchronize)() })?;
    let mut host_out = vec![0u32; N as usize];
    // SAFETY: copies `bytes` bytes into a live host buffer of that size.
    api.check("cuMemcpyDtoH", unsafe {
        (api.memcpy_dtoh)(host_out.as_mut_ptr().cast(), d_out, bytes)
    })?;
    let want = expected(&host_in);
    if let Some(i) = (0..want.len()).find(|&i| host_out[i] != want[i]) {
        return Err(CuError {
            step: "kernel result".into(),
            name: None,
            message: format!(
                "element {i} is {} where {} was expected (the GPU computed a wrong result)",
                host_out[i], want[i]
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(body: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("check");
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        (d, p)
    }

    /// The check in a child process: its JSON answer is the check; a child that hangs is
    /// killed at the deadline, one that crashes or prints nothing is a failed check saying so.
    #[test]
    fn a_child_check_answers_hangs_or_crashes_as_a_verdict() {
        let (_d, ok) = script(
            r#"echo 'cuInit noise on stdout'; echo '{"ok":true,"driver_api_version":13000,"device_count":1,"devices":[],"timed_out":false,"ms":0}'"#,
        );
        let c = run_child(&ok, Duration::from_secs(10));
        assert!(c.ok, "{c:?}");
        assert_eq!(c.driver_api_version, Some(13000));

        let (_d, hang) = script("sleep 30");
        let t = Instant::now();
        let c = run_child(&hang, Duration::from_millis(300));
        assert!(c.timed_out && !c.ok, "{c:?}");
        assert!(t.elapsed() < Duration::from_secs(10));

        let (_d, crash) = script("echo 'cuInit: bad' >&2; kill -SEGV $$");
        let c = run_child(&crash, Duration::from_secs(10));
        assert!(!c.ok && !c.timed_out);
        let e = c.error.unwrap();
        assert!(
            e.contains("killed by a signal") && e.contains("cuInit: bad"),
            "{e}"
        );

        let (_d, silent) = script("exit 3");
        let e = run_child(&silent, Duration::from_secs(10)).error.unwrap();
        assert!(e.contains("exited with status 3"), "{e}");
    }

    #[test]
    fn ptx_headers_are_well_formed() {
        for (v, t) in PTX_TARGETS {
            let p = ptx(v, t);
            assert!(p.starts_with(&format!(".version {v}\n.target {t}\n")));
            assert!(p.ends_with('\0'));
            assert_eq!(p.matches('\0').count(), 1);
            assert!(p.contains(".entry gpufix_check("));
        }
    }

    #[test]
    fn expected_result_is_what_the_kernel_computes() {
        let i = input();
        let e = expected(&i);
        assert_eq!(e[0], i[0] * 3);
        assert_eq!(e[5], i[5].wrapping_mul(3) + 5);
        // the pattern is not trivially zero, so a kernel that did nothing cannot pass
        assert!(i.iter().filter(|x| **x != 0).count() > 200);
        assert_ne!(e, vec![0; N as usize]);
    }

    /// Without a driver the check fails with a sentence, promptly; with one it must pass.
    #[test]
    fn the_check_answers_within_its_deadline() {
        let t = Instant::now();
        let c = run(Duration::from_secs(60));
        assert!(t.elapsed() < Duration::from_secs(60));
        if c.ok {
            assert!(c.driver_api_version.unwrap_or(0) >= 9000, "{c:?}");
            assert!(!c.devices.is_empty() && c.devices.iter().all(|d| d.ok));
        } else {
            let e = c.error.unwrap();
            assert!(!e.is_empty());
            eprintln!("no working CUDA here: {e}");
        }
    }

    #[test]
    fn a_zero_deadline_reports_a_timeout_not_a_hang() {
        let c = run(Duration::ZERO);
        // a machine without a driver may answer within zero time; anything else is a timeout
        if c.timed_out {
            assert!(!c.ok);
            assert!(c.error.unwrap().contains("did not answer within 0.0s"));
        }
    }
}
