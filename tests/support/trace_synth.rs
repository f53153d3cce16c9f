//! Writes synthetic traces shaped like the ones `torch.profiler` (Kineto) exports: the same
//! categories, names, argument keys and nesting, on a made-up timeline. Used by the fixtures,
//! the tests and the `trace_throughput` bench; not a model of any real job.
//!
//! Test support, not shipped: the library's trace tests, tests/cli.rs and the `trace_throughput`
//! bench include this file with `#[path]`.

use std::io::{self, Write};

#[derive(Debug, Clone)]
pub struct Spec {
    pub steps: u32,
    /// Host time inside DataLoader `__next__` per step, during which the GPU has no work.
    pub dataloader_us: f64,
    /// `_MultiProcessingDataLoaderIter` (workers) instead of `_SingleProcessDataLoaderIter`.
    pub multiprocess: bool,
    pub kernels_per_step: u32,
    pub kernel_us: f64,
    /// GPU gap between consecutive kernels (launch overhead the GPU sees).
    pub gap_us: f64,
    pub pageable_copies_per_step: u32,
    pub pinned_copies_per_step: u32,
    pub copy_bytes: u64,
    /// `.item()` calls per step, each a `aten::item` → `aten::_local_scalar_dense` →
    /// `cudaStreamSynchronize` nest.
    pub item_calls_per_step: u32,
    pub nccl_kernels_per_step: u32,
}

/// `num_workers=0`, pageable batches, a `.item()` per step: the GPU waits on the host.
pub fn starved() -> Spec {
    Spec {
        steps: 5,
        dataloader_us: 30_000.0,
        multiprocess: false,
        kernels_per_step: 40,
        kernel_us: 200.0,
        gap_us: 4.0,
        pageable_copies_per_step: 2,
        pinned_copies_per_step: 0,
        copy_bytes: 4 << 20,
        item_calls_per_step: 1,
        nccl_kernels_per_step: 0,
    }
}

/// Workers, pinned memory, long kernels, an all-reduce per step: the GPU stays busy.
pub fn well_fed() -> Spec {
    Spec {
        steps: 5,
        dataloader_us: 40.0,
        multiprocess: true,
        kernels_per_step: 60,
        kernel_us: 400.0,
        gap_us: 3.0,
        pageable_copies_per_step: 0,
        pinned_copies_per_step: 2,
        copy_bytes: 4 << 20,
        item_calls_per_step: 0,
        nccl_kernels_per_step: 2,
    }
}

const KERNELS: [&str; 4] = [
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
    "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul>)",
    "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)",
    "void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8>(cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8::Params)",
];
const OPS: [&str; 4] = ["aten::linear", "aten::gelu", "aten::layer_norm", "aten::mm"];
const NCCL: &str = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
const PID: u32 = 2_718_281;

struct W<'a, T: Write> {
    out: &'a mut T,
    first: bool,
    corr: u64,
    ext: u64,
}

impl<T: Write> W<'_, T> {
    fn sep(&mut self) -> io::Result<()> {
        if self.first {
            self.first = false;
            Ok(())
        } else {
            self.out.write_all(b",\n")
        }
    }
    fn host(&mut self, cat: &str, name: &str, ts: f64, dur: f64) -> io::Result<()> {
        self.sep()?;
        self.ext += 1;
        write!(
            self.out,
            r#"  {{"ph": "X", "cat": "{cat}", "name": "{name}", "pid": {PID}, "tid": {PID}, "ts": {ts:.3}, "dur": {dur:.3}, "args": {{"External id": {ext}, "Record function id": 0, "Ev Idx": {ext}}}}}"#,
            ext = self.ext
        )
    }
    /// A runtime call plus the GPU activity it launched, linked the way Kineto links them.
    fn launch(
        &mut self,
        runtime: &str,
        cpu_ts: f64,
        gpu: (&str, &str, f64, f64, u32),
        bytes: Option<u64>,
    ) -> io::Result<()> {
        let (cat, name, gts, gdur, stream) = gpu;
        self.corr += 1;
        let c = self.corr;
        self.sep()?;
        write!(
            self.out,
            r#"  {{"ph": "X", "cat": "cuda_runtime", "name": "{runtime}", "pid": {PID}, "tid": {PID}, "ts": {cpu_ts:.3}, "dur": 4.100, "args": {{"External id": {e}, "cbid": 211, "correlation": {c}}}}}"#,
            e = self.ext
        )?;
        self.sep()?;
        match bytes {
            Some(b) => write!(
                self.out,
                r#"  {{"ph": "X", "cat": "{cat}", "name": "{name}", "pid": 0, "tid": {stream}, "ts": {gts:.3}, "dur": {gdur:.3}, "args": {{"External id": {e}, "device": 0, "context": 1, "stream": {stream}, "correlation": {c}, "bytes": {b}, "memory bandwidth (GB/s)": 12.5}}}}"#,
                e = self.ext
            )?,
            None => write!(
                self.out,
                r#"  {{"ph": "X", "cat": "{cat}", "name": "{name}", "pid": 0, "tid": {stream}, "ts": {gts:.3}, "dur": {gdur:.3}, "args": {{"External id": {e}, "queued": 0, "device": 0, "context": 1, "stream": {stream}, "correlation": {c}, "registers per thread": 128, "shared memory": 65536, "blocks per SM": 1.5, "warps per SM": 12.0, "grid": [132, 1, 1], "block": [384, 1, 1], "est. achieved occupancy %": 19}}}}"#,
                e = self.ext
            )?,
        }
        self.sep()?;
        write!(
            self.out,
            r#"  {{"ph": "f", "id": {c}, "pid": 0, "tid": {stream}, "ts": {gts:.3}, "cat": "ac2g", "name": "ac2g", "bp": "e"}}"#
        )
    }
}

/// Writes a whole trace with `spec.steps` profiled steps; returns the bytes written.
pub fn write<T: Write>(out: &mut T, spec: &Spec) -> io::Result<u64> {
    let mut counted = Counter { inner: out, n: 0 };
    write_counted(&mut counted, spec)?;
    Ok(counted.n)
}

struct Counter<'a, T: Write> {
    inner: &'a mut T,
    n: u64,
}

impl<T: Write> Write for Counter<'_, T> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let k = self.inner.write(buf)?;
        self.n += k as u64;
        Ok(k)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

fn write_counted<T: Write>(out: &mut T, spec: &Spec) -> io::Result<()> {
    out.write_all(
        br#"{
  "schemaVersion": 1,
  "deviceProperties": [{"id": 0, "name": "NVIDIA H200", "totalGlobalMem": 150754820096, "computeMajor": 9, "computeMinor": 0, "maxThreadsPerBlock": 1024, "numSms": 132}],
  "cupti_version": 24, "cuda_runtime_version": 12080, "cuda_driver_version": 13000,
  "record_shapes": 0, "with_stack": 0, "profile_memory": 0,
  "traceEvents": [
"#,
    )?;
    let mut w = W {
        out,
        first: true,
        corr: 1000,
        ext: 0,
    };
    let iter = if spec.multiprocess {
        "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"
    } else {
        "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"
    };
    let mut t = 3_152_081_460.0_f64; // host clock, microseconds
    let mut gpu_free = t; // when the GPU's queue runs dry
    for step in 0..spec.steps {
        let step_start = t;
        let mut body = Vec::new();
        let mut sub = W {
            out: &mut body,
            first: true,
            corr: w.corr,
            ext: w.ext,
        };
        // Fetch the batch: the GPU has nothing to do meanwhile unless work is queued.
        let dl_start = t + 6.0;
        sub.host("user_annotation", iter, dl_start, spec.dataloader_us)?;
        t = dl_start + spec.dataloader_us + 2.0;
        let copies = spec.pageable_copies_per_step + spec.pinned_copies_per_step;
        for i in 0..copies {
            let name = if i < spec.pageable_copies_per_step {
                "Memcpy HtoD (Pageable -> Device)"
            } else {
                "Memcpy HtoD (Pinned -> Device)"
            };
            sub.host("cpu_op", "aten::copy_", t, 30.0)?;
            let g = gpu_free.max(t + 3.0);
            sub.launch(
                "cudaMemcpyAsync",
                t + 1.0,
                ("gpu_memcpy", name, g, 25.0, 7),
                Some(spec.copy_bytes),
            )?;
            gpu_free = g + 25.0;
            t += 32.0;
        }
        for i in 0..spec.kernels_per_step {
            let k = (i as usize) % KERNELS.len();
            sub.host("cpu_op", OPS[k], t, 9.0)?;
            let g = gpu_free.max(t + 5.0);
            sub.launch(
                "cudaLaunchKernel",
                t + 2.0,
                ("kernel", KERNELS[k], g, spec.kernel_us, 7),
                None,
            )?;
            gpu_free = g + spec.kernel_us + spec.gap_us;
            t += 11.0;
        }
        for _ in 0..spec.nccl_kernels_per_step {
            sub.host("cpu_op", "c10d::allreduce_", t, 8.0)?;
            let g = gpu_free.max(t + 5.0);
            sub.launch(
                "cudaLaunchKernel",
                t + 2.0,
                ("kernel", NCCL, g, spec.kernel_us, 20),
                None,
            )?;
            gpu_free = g + spec.kernel_us + spec.gap_us;
            t += 10.0;
        }
        for _ in 0..spec.item_calls_per_step {
            // `.item()` waits for everything queued so far.
            let wait_end = gpu_free.max(t + 10.0) + 4.0;
            sub.host("cpu_op", "aten::item", t, wait_end - t)?;
            sub.host(
                "cpu_op",
                "aten::_local_scalar_dense",
                t + 1.0,
                wait_end - t - 2.0,
            )?;
            sub.host(
                "cuda_runtime",
                "cudaStreamSynchronize",
                t + 3.0,
                wait_end - t - 5.0,
            )?;
            t = wait_end;
        }
        // The optimizer step and the next `prof.step()` keep the host near the GPU.
        t = t.max(gpu_free - 50.0) + 20.0;
        w.corr = sub.corr;
        w.ext = sub.ext;
        w.host(
            "user_annotation",
            &format!("ProfilerStep#{}", step + 2),
            step_start,
            t - step_start,
        )?;
        w.out.write_all(b",\n")?;
        w.out.write_all(&body)?;
        t += 1.0;
    }
    w.out.write_all(
        b"\n  ],\n  \"traceName\": \"synthetic.pt.trace.json\",\n  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": 1759300000000000000\n}\n",
    )
}
