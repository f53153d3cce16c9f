"""Training job for the gpufix benchmark: a ResNet-style conv net on a CPU-costly synthetic dataset.

Reads a YAML config (`train.py CONFIG` or `--config CONFIG`), trains for a warm-up, optionally
records a torch.profiler trace, then measures samples/s over a window of steps or seconds and
prints one JSON line last. Every fault the benchmark injects is a config key or an environment
variable that torch itself reads (CUDA_LAUNCH_BLOCKING, PYTORCH_CUDA_ALLOC_CONF), so gpufix sees
exactly what a user's job would show.

Phases: start -> warm-up -> [profile, then a short settle so the loader queue the export let
fill up drains] -> memory evidence -> ready file -> measured window -> final memory evidence ->
JSON. The ready file tells the harness that the measured window has begun.

Modes (`--mode`): `train` (the job), `data_only` (iterate the DataLoader, no GPU work: the data
pipeline's capacity) and `model_only` (train on one batch kept on the GPU: the GPU's capacity).
The healthy job is GPU-bound when model_only samples/s is well below data_only samples/s.
"""

from __future__ import annotations

import argparse
import copy
import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from imagedata import ImageSource  # numpy-only module beside this file

DEFAULTS: dict = {
    "data": {
        "num_workers": 8,
        "pin_memory": True,
        "persistent_workers": True,
        "batch_size": 128,
        "prefetch_factor": 4,
        "slow_read_ms": 0.0,
        "decode_passes": 2,
        "image_size": 224,
        "length": 10_000_000,
    },
    "train": {
        "steps": 100_000,
        "max_seconds": 12.0,
        "warmup_steps": 15,
        "warmup_max_s": 6.0,
        "settle_max_s": 2.0,
        "drain_max_s": 8.0,
        "sync_every_step": False,
        "model_width": 64,
        "model_blocks": [3, 4, 23, 3],
        "num_classes": 1000,
        "lr": 0.01,
        "channels_last": True,
        "bf16": True,
        "cudnn_benchmark": True,
        "profile": False,
        "profile_steps": 5,
        "trace_out": "trace.json.gz",
        "memory_summary_out": "",
        "fragment": False,
        "fragment_base_mb": 1024,
        "fragment_step_mb": 160,
        "fragment_cycle": 16,
        "seed": 0,
    },
}

UTIL_PERIOD_S = 0.2


class ConfigError(Exception):
    pass


def merge(defaults: dict, given: dict, prefix: str = "") -> dict:
    """Defaults overlaid with the config; an unknown key is an error (a typo must not pass)."""
    out = copy.deepcopy(defaults)
    for key, value in (given or {}).items():
        path = f"{prefix}{key}"
        if key not in defaults:
            raise ConfigError(f"unknown config key `{path}`")
        if isinstance(defaults[key], dict):
            if not isinstance(value, dict):
                raise ConfigError(f"config key `{path}` must be a mapping, got {value!r}")
            out[key] = merge(defaults[key], value, path + ".")
        else:
            out[key] = value
    return out


# `training: {loader: {workers: 2, pin_memory: true}, max_seconds: 20}`: another layout for the
# same settings, so the `--pid` bench shows gpufix finding a setting where it lives.
OTHER_LAYOUT_NAMES = {"workers": "num_workers", "pin": "pin_memory", "batch": "batch_size"}


def from_other_layout(given: dict) -> dict:
    training = given.pop("training", None)
    if not isinstance(training, dict):
        return given
    data = given.setdefault("data", {})
    for key, value in (training.pop("loader", None) or {}).items():
        data[OTHER_LAYOUT_NAMES.get(key, key)] = value
    given.setdefault("train", {}).update(training)
    return given


def load_config(path: Path) -> dict:
    with open(path, encoding="utf-8") as f:
        given = yaml.safe_load(f) or {}
    if not isinstance(given, dict):
        raise ConfigError(f"config `{path}` must be a mapping at the top")
    cfg = merge(DEFAULTS, from_other_layout(given))
    d, t = cfg["data"], cfg["train"]
    for key in ("num_workers", "batch_size", "prefetch_factor", "decode_passes", "image_size"):
        if not isinstance(d[key], int) or isinstance(d[key], bool) or d[key] < 0:
            raise ConfigError(f"config key `data.{key}` must be a non-negative integer, got {d[key]!r}")
    for key in ("pin_memory", "persistent_workers"):
        if not isinstance(d[key], bool):
            raise ConfigError(f"config key `data.{key}` must be true or false, got {d[key]!r}")
    for key in ("sync_every_step", "profile", "fragment", "channels_last", "bf16", "cudnn_benchmark"):
        if not isinstance(t[key], bool):
            raise ConfigError(f"config key `train.{key}` must be true or false, got {t[key]!r}")
    if d["batch_size"] < 1:
        raise ConfigError(f"config key `data.batch_size` must be >= 1, got {d['batch_size']}")
    return cfg


def write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


class UtilSampler:
    """GPU utilization (%) every 200 ms in a background thread: NVML if importable, else nvidia-smi."""

    def __init__(self, device_index: int, pci_bus_id: str | None) -> None:
        self.samples: list[float] = []
        self.source = "none"
        self.error: str | None = None
        self._stop = threading.Event()
        self._read = None
        try:
            import pynvml

            pynvml.nvmlInit()
            try:
                handle = pynvml.nvmlDeviceGetHandleByPciBusId(pci_bus_id) if pci_bus_id else None
            except Exception:
                handle = None
            if handle is None:
                handle = pynvml.nvmlDeviceGetHandleByIndex(device_index)
            self._read = lambda: float(pynvml.nvmlDeviceGetUtilizationRates(handle).gpu)
            self.source = "nvml"
        except Exception as e:  # no pynvml, or NVML refused: fall back to the CLI
            self.error = f"nvml: {e}"
            if shutil.which("nvidia-smi"):
                ident = pci_bus_id or str(device_index)
                cmd = ["nvidia-smi", f"--id={ident}", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits"]
                self._read = lambda: float(
                    subprocess.run(cmd, capture_output=True, text=True, timeout=5, check=True).stdout.split()[0]
                )
                self.source = "nvidia-smi"
        self._thread = threading.Thread(target=self._loop, name="util-sampler", daemon=True)

    def _loop(self) -> None:
        while not self._stop.is_set():
            t0 = time.monotonic()
            try:
                self.samples.append(self._read())
            except Exception as e:
                self.error = str(e)
            self._stop.wait(max(0.0, UTIL_PERIOD_S - (time.monotonic() - t0)))

    def start(self) -> None:
        if self._read is not None:
            self._thread.start()

    def stop(self) -> float | None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)
        return sum(self.samples) / len(self.samples) if self.samples else None


def build_model(torch, nn, width: int, blocks: list[int], num_classes: int):
    """ResNet-style bottleneck net (width 64, blocks [3,4,23,3] is ResNet-101's shape)."""

    class Bottleneck(nn.Module):
        def __init__(self, cin: int, mid: int, cout: int, stride: int) -> None:
            super().__init__()
            self.body = nn.Sequential(
                nn.Conv2d(cin, mid, 1, bias=False),
                nn.BatchNorm2d(mid),
                nn.ReLU(inplace=True),
                nn.Conv2d(mid, mid, 3, stride=stride, padding=1, bias=False),
                nn.BatchNorm2d(mid),
                nn.ReLU(inplace=True),
                nn.Conv2d(mid, cout, 1, bias=False),
                nn.BatchNorm2d(cout),
            )
            self.short = (
                nn.Identity()
                if stride == 1 and cin == cout
                else nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))
            )
            self.relu = nn.ReLU(inplace=True)

        def forward(self, x):
            return self.relu(self.body(x) + self.short(x))

    layers: list = [
        nn.Conv2d(3, width, 7, stride=2, padding=3, bias=False),
        nn.BatchNorm2d(width),
        nn.ReLU(inplace=True),
        nn.MaxPool2d(3, stride=2, padding=1),
    ]
    cin = width
    for stage, n in enumerate(blocks):
        mid = width * 2**stage
        cout = mid * 4
        for i in range(n):
            layers.append(Bottleneck(cin, mid, cout, 2 if (i == 0 and stage > 0) else 1))
            cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, num_classes)]
    return nn.Sequential(*layers)


def memory_numbers(torch) -> dict:
    s = torch.cuda.memory_stats()
    reserved = s.get("reserved_bytes.all.current", 0)
    peak = s.get("allocated_bytes.all.peak", 0)
    return {
        "reserved_bytes": reserved,
        "allocated_bytes": s.get("allocated_bytes.all.current", 0),
        "allocated_peak_bytes": peak,
        "inactive_split_bytes": s.get("inactive_split_bytes.all.current", 0),
        "segments": s.get("segment.all.current", 0),
        # share of reserved memory that even the peak of live tensors never used
        "unused_at_peak_fraction": round((reserved - peak) / reserved, 4) if reserved else None,
    }


def write_memory_evidence(torch, path: Path, when: str) -> None:
    """torch.cuda.memory_summary() text, then every torch.cuda.memory_stats() number as `key: value`."""
    lines = [
        "# gpufix benchmark memory evidence",
        f"# written: {when}",
        "# torch.cuda.memory_summary()",
        torch.cuda.memory_summary(),
        "# torch.cuda.memory_stats()",
    ]
    lines += [f"{k}: {v}" for k, v in sorted(torch.cuda.memory_stats().items())]
    write_atomic(path, ("\n".join(lines) + "\n").encode())


def export_trace(prof, path: Path) -> None:
    tmp_json = path.with_name(path.name + ".tmp.json")
    prof.export_chrome_trace(str(tmp_json))
    if path.name.endswith(".gz"):
        tmp_gz = path.with_name(path.name + ".tmp")
        with open(tmp_json, "rb") as fin, gzip.open(tmp_gz, "wb", compresslevel=3) as fout:
            shutil.copyfileobj(fin, fout)
        os.remove(tmp_json)
        os.replace(tmp_gz, path)
    else:
        os.replace(tmp_json, path)


def resolve(base: Path, value: str) -> Path | None:
    if not value:
        return None
    p = Path(value)
    return p if p.is_absolute() else base / p


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("config_pos", nargs="?", metavar="CONFIG")
    ap.add_argument("--config", dest="config_opt")
    ap.add_argument("--pid-file", type=Path, help="write this process's pid here at start")
    ap.add_argument("--ready-file", type=Path, help="create this file when the measured window begins")
    ap.add_argument("--json-out", type=Path, help="also write the final JSON here")
    ap.add_argument("--progress-out", type=Path, help="append `unix_time samples` after each measured step")
    ap.add_argument(
        "--out-dir", type=Path, help="where relative output paths in the config go (default: the config's folder)"
    )
    ap.add_argument("--mode", choices=["train", "data_only", "model_only"], default="train")
    ap.add_argument("--no-profile", action="store_true", help="skip the trace even where the config asks for one")
    args = ap.parse_args(argv)

    if args.pid_file:
        write_atomic(args.pid_file, f"{os.getpid()}\n".encode())
    config_path = args.config_opt or args.config_pos
    if not config_path:
        ap.error("a config file is required (CONFIG or --config)")
    config_path = Path(config_path)
    try:
        cfg = load_config(config_path)
    except (ConfigError, OSError, yaml.YAMLError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    d, t = cfg["data"], cfg["train"]
    out_dir = args.out_dir or config_path.resolve().parent
    out_dir.mkdir(parents=True, exist_ok=True)
    trace_out = resolve(out_dir, t["trace_out"]) if t["profile"] and not args.no_profile else None
    memory_out = resolve(out_dir, t["memory_summary_out"])

    stop = {"signal": None}

    def on_signal(signum, _frame):
        stop["signal"] = signal.Signals(signum).name

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    import torch
    import torch.nn.functional as F
    from torch import nn
    from torch.utils.data import DataLoader

    if not torch.cuda.is_available():
        print("error: torch sees no CUDA device", file=sys.stderr)
        return 1

    torch.manual_seed(t["seed"])
    src = ImageSource(
        length=d["length"],
        image_size=d["image_size"],
        decode_passes=d["decode_passes"],
        slow_read_ms=float(d["slow_read_ms"]),
        num_classes=t["num_classes"],
        seed=t["seed"],
    )
    nw = d["num_workers"]
    loader_kw = {"batch_size": d["batch_size"], "num_workers": nw, "pin_memory": d["pin_memory"], "drop_last": True}
    if nw > 0:
        # torch refuses these two without workers; a config may still carry them
        loader_kw["persistent_workers"] = d["persistent_workers"]
        loader_kw["prefetch_factor"] = d["prefetch_factor"]
    effective = {
        "num_workers": nw,
        "pin_memory": d["pin_memory"],
        "persistent_workers": bool(nw and d["persistent_workers"]),
    }

    # ImageSource is a map-style dataset as it is (numpy items; default_collate makes tensors).
    # Workers fork before CUDA starts in this process, and decode while the model builds.
    batches = iter(DataLoader(src, **loader_kw)) if args.mode != "model_only" else None

    device = torch.device("cuda")
    torch.backends.cudnn.benchmark = t["cudnn_benchmark"]
    props = torch.cuda.get_device_properties(device)
    pci = None
    if all(hasattr(props, a) for a in ("pci_domain_id", "pci_bus_id", "pci_device_id")):
        pci = f"{props.pci_domain_id:08x}:{props.pci_bus_id:02x}:{props.pci_device_id:02x}.0"
    mem_fmt = torch.channels_last if t["channels_last"] else torch.contiguous_format

    model = build_model(torch, nn, t["model_width"], list(t["model_blocks"]), t["num_classes"]).to(
        device, memory_format=mem_fmt
    )
    opt = torch.optim.SGD(model.parameters(), lr=t["lr"], momentum=0.9)
    loss_sum = torch.zeros((), device=device)
    host_loss = 0.0
    fixed_batch = None
    if args.mode == "model_only":
        g = torch.Generator(device="cpu").manual_seed(t["seed"])
        x0 = torch.randn(d["batch_size"], 3, d["image_size"], d["image_size"], generator=g)
        y0 = torch.randint(0, t["num_classes"], (d["batch_size"],), generator=g)
        fixed_batch = (x0.to(device).contiguous(memory_format=mem_fmt), y0.to(device))
    state = {"step": 0}

    def fragment_chunk():
        """Odd-sized chunk, a little larger each step of a cycle: no cached block fits it."""
        k = state["step"] % max(1, int(t["fragment_cycle"]))
        nbytes = (int(t["fragment_base_mb"]) + k * int(t["fragment_step_mb"]) + 1) * 2**20 + 12_345
        return torch.empty(nbytes, dtype=torch.uint8, device=device)

    def step() -> int:
        nonlocal loss_sum, host_loss
        if args.mode == "data_only":
            x, _y = next(batches)
            state["step"] += 1
            return x.shape[0]
        chunk = fragment_chunk() if t["fragment"] else None
        if fixed_batch is not None:
            x, y = fixed_batch
        else:
            x, y = next(batches)
            x = x.to(device, non_blocking=True).contiguous(memory_format=mem_fmt)
            y = y.to(device, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=t["bf16"]):
            loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if t["sync_every_step"]:
            host_loss = loss.item()  # the injected fault: a host sync every step
        else:
            loss_sum += loss.detach()
        del chunk
        state["step"] += 1
        return x.shape[0]

    def run_for(max_steps: int, max_s: float, min_steps: int) -> int:
        t0 = time.monotonic()
        n = 0
        while n < max_steps and stop["signal"] is None:
            if n >= min_steps and time.monotonic() - t0 >= max_s:
                break
            step()
            n += 1
        return n

    timings: dict = {}
    t_start = time.monotonic()
    warm = run_for(int(t["warmup_steps"]), float(t["warmup_max_s"]), min(3, int(t["warmup_steps"])))
    torch.cuda.synchronize()
    timings["warmup_s"] = round(time.monotonic() - t_start, 3)
    # cudnn's autotuning (first steps) leaves large workspace blocks cached; drop them so the
    # memory evidence shows the steady state of training, not the tuning
    torch.cuda.empty_cache()

    # steady state before profiling: the loader's prefetch queue (workers x prefetch_factor
    # batches) filled during the slow first steps; until it drains, a starved pipeline looks fed
    queued = nw * int(loader_kw.get("prefetch_factor") or 2)
    if trace_out is not None and args.mode != "data_only" and queued and stop["signal"] is None:
        run_for(queued + 2, float(t["drain_max_s"]), 0)
        timings["drain_steps"] = queued + 2

    trace_written = None
    if trace_out is not None and args.mode != "data_only" and stop["signal"] is None:
        from torch.profiler import ProfilerActivity, profile, schedule

        n_active = max(1, int(t["profile_steps"]))
        trace_out.unlink(missing_ok=True)
        t0 = time.monotonic()
        with profile(
            activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
            schedule=schedule(wait=0, warmup=1, active=n_active, repeat=1),
            on_trace_ready=lambda p: export_trace(p, trace_out),
        ) as prof:
            for _ in range(1 + n_active):
                step()
                prof.step()  # closes a `ProfilerStep#N` annotation
        torch.cuda.synchronize()
        trace_written = str(trace_out) if trace_out.exists() else None
        timings["profile_s"] = round(time.monotonic() - t0, 3)
    if trace_written or t["fragment"]:
        # settle: the loader queue filled while the trace was exported, so drain it; and the
        # fragmentation pattern needs a full cycle of sizes again after empty_cache()
        cycle = int(t["fragment_cycle"]) if t["fragment"] else 1
        run_for(max(int(t["warmup_steps"]), cycle), float(t["settle_max_s"]), cycle)

    memory: dict = {}
    if args.mode != "data_only":
        # fresh peak counters, then one full cycle of the job's allocation pattern (one step for
        # a job without one), so the evidence holds the steady state's peak -- as a summary taken
        # mid-training would -- and not only the step right after the reset
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        cycle_steps = max(1, int(t["fragment_cycle"])) if t["fragment"] else 1
        for _ in range(cycle_steps):
            step()
        torch.cuda.synchronize()
        memory["ready"] = memory_numbers(torch)
        if memory_out is not None:
            write_memory_evidence(
                torch,
                memory_out,
                f"ready, after step {state['step']} (peak counters reset {cycle_steps} step(s) before)",
            )

    progress = open(args.progress_out, "a", buffering=1, encoding="utf-8") if args.progress_out else None
    sampler = UtilSampler(torch.cuda.current_device(), pci)
    torch.cuda.synchronize()
    if args.ready_file:
        write_atomic(args.ready_file, f"{time.time():.3f}\n".encode())
    sampler.start()
    t0 = time.monotonic()
    samples = 0
    steps = 0
    stopped_by = "steps"
    while steps < int(t["steps"]):
        if stop["signal"] is not None:
            stopped_by = "signal"
            break
        if time.monotonic() - t0 >= float(t["max_seconds"]):
            stopped_by = "time"
            break
        samples += step()
        steps += 1
        if progress is not None:
            progress.write(f"{time.time():.4f} {samples}\n")
    torch.cuda.synchronize()
    elapsed = time.monotonic() - t0
    util = sampler.stop()
    if progress is not None:
        progress.close()

    if args.mode != "data_only":
        memory["end"] = memory_numbers(torch)
        if memory_out is not None:
            write_memory_evidence(torch, memory_out, f"end, after step {state['step']}")
    final_loss = host_loss if t["sync_every_step"] else (loss_sum.item() / max(1, state["step"]))

    result = {
        "samples_per_s": round(samples / elapsed, 2) if elapsed > 0 else 0.0,
        "gpu_util_mean": round(util, 2) if util is not None else None,
        "gpu_util_samples": len(sampler.samples),
        "gpu_util_source": sampler.source,
        "steps": steps,
        "samples": samples,
        "measured_s": round(elapsed, 3),
        "warmup_steps": warm,
        "stopped_by": stopped_by,
        "mode": args.mode,
        "config": cfg,
        "effective": effective,
        "env": {k: os.environ.get(k) for k in ("CUDA_LAUNCH_BLOCKING", "PYTORCH_CUDA_ALLOC_CONF")},
        "memory": memory,
        "trace": trace_written,
        "timings": timings,
        "loss": round(float(final_loss), 4),
        "device": props.name,
        "torch": torch.__version__,
        "pid": os.getpid(),
    }
    if sampler.error and util is None:
        result["gpu_util_error"] = sampler.error
    line = json.dumps(result, sort_keys=True)
    if args.json_out:
        write_atomic(args.json_out, (line + "\n").encode())
    print(line, flush=True)
    batches = None  # stops the workers now rather than at interpreter teardown
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
