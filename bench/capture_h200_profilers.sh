#!/usr/bin/env bash
# Captures real profiler output of a training step (issue 24's "second source" for the profiler
# kinds: torch's key_averages() table, cProfile/pstats, torch.utils.bottleneck, Lightning's
# Simple/Advanced/PyTorch profilers, py-spy dumps), on a GPU host, under conditions this script
# makes, and says per file how it was made (made.tsv). Starts short jobs of its own, reads no GPU
# setting and changes none; writes only under OUT.
#
#   bench/capture_h200_profilers.sh OUT [PYSPY] [WHEELS]
#
# WHEELS: a folder of wheels (pytorch-lightning and the packages it needs that the host lacks),
# installed with --no-deps into OUT/site, never into the host's environment.
#
# The jobs (prof_job.py): a 10-layer 3x3 conv net (128 channels, 64x64 inputs, batch 64) on a
# dataset whose __getitem__ spends 0.5 ms of CPU per sample (a timed busy loop), so a batch costs
# ~32 ms of CPU to make and ~10 ms of GPU to train on:
#   starved   num_workers=0: the main thread makes every batch, the GPU waits for most of each step
#   healthy   num_workers=8, pin_memory, persistent workers: the loader keeps ahead of the GPU
#   itemsync  num_workers=8 but loss.item() and a pageable .to(device) copy of a 64 MiB host
#             tensor every step: the step waits on the host
# Runs: on the H200, 2026-12-05 (corpus h200p_*, then h200q_* with PARTS="pyspy dmon"); on the
# H100 device machine, 2026-12-05 (corpus h100n_*, PARTS=native).
set -u
out=${1:?usage: capture_h200_profilers.sh OUT [PYSPY] [WHEELS]}; pyspy=${2:-}; wheels=${3:-}
CAP_TIMEOUT=150
# shellcheck source=bench/capture_lib.sh
. "$(dirname "$0")/capture_lib.sh"

cat > "$out/prof_job.py" <<'EOF'
import argparse, cProfile, pstats, sys, time
import torch, torch.nn as nn
from torch.utils.data import DataLoader, Dataset

class Costly(Dataset):
    """0.5 ms of CPU per sample (a timed busy loop), then a random 3x64x64 image."""
    def __len__(self):
        return 1_000_000
    def __getitem__(self, i):
        end = time.perf_counter() + 0.0005
        while time.perf_counter() < end:
            pass
        return torch.randn(3, 64, 64), i % 10

def net():
    layers = [nn.Conv2d(3, 128, 3, padding=1), nn.ReLU()]
    for _ in range(9):
        layers += [nn.Conv2d(128, 128, 3, padding=1), nn.BatchNorm2d(128), nn.ReLU()]
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 10))

def loader(mode):
    w = 0 if mode == "starved" else 8
    return DataLoader(Costly(), batch_size=64, num_workers=w, pin_memory=w > 0,
                      persistent_workers=w > 0)

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["starved", "healthy", "itemsync"])
    ap.add_argument("--how", choices=["keyavg", "cprofile", "plain"], default="plain")
    ap.add_argument("--steps", type=int, default=30)
    a = ap.parse_args()
    dev = torch.device("cuda")
    model = net().to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    crit = nn.CrossEntropyLoss()
    host = torch.randn(16 << 20)  # 64 MiB in pageable memory
    it = iter(loader(a.mode))
    def step():
        x, y = next(it)
        x, y = x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)
        loss = crit(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if a.mode == "itemsync":
            host.to(dev)
            print(f"loss {loss.item():.4f}", end="\r")
    for _ in range(5):
        step()
    torch.cuda.synchronize()
    if a.how == "keyavg":
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(a.steps):
                step()
            torch.cuda.synchronize()
        print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=20))
        print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=15))
    elif a.how == "cprofile":
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(a.steps):
            step()
        torch.cuda.synchronize()
        pr.disable()
        pstats.Stats(pr, stream=sys.stdout).sort_stats("cumulative").print_stats(30)
    else:
        t0 = time.perf_counter()
        n = 0
        while True:
            step(); n += 1
            if n % 20 == 0:
                torch.cuda.synchronize()
                print(f"step {n} {64 * n / (time.perf_counter() - t0):.0f} samples/s", flush=True)

if __name__ == "__main__":
    main()
EOF

# PARTS picks what runs (default all): prof (key_averages, cProfile), bottleneck, pyspy, lightning,
# dmon (nvidia-smi dmon with every column group, 20 one-second samples, while a job runs),
# native (py-spy dump --native and --locals of the itemsync and the starved job)
parts=" ${PARTS:-prof bottleneck pyspy lightning dmon native} "
want() { case "$parts" in *" $1 "*) return 0;; esac; return 1; }

want prof && for m in starved healthy itemsync; do
  cap "keyavg_$m.txt" "torch.profiler key_averages().table() (sort by cpu_time_total, then cuda_time_total) of 30 steps of the $m job" \
    "$py" "$out/prof_job.py" "$m" --how keyavg
  cap "cprofile_$m.txt" "cProfile of 30 steps of the $m job, pstats sorted by cumulative time, 30 lines" \
    "$py" "$out/prof_job.py" "$m" --how cprofile
done

# torch.utils.bottleneck on the starved and the healthy job (its own cProfile and autograd
# profiler runs of the whole script); torch 2.11 no longer ships it (the first run on the H200,
# 2026-12-05, got "No module named torch.utils.bottleneck")
want bottleneck && for m in starved healthy; do
  cat > "$out/bn_$m.py" <<EOF
import sys, torch
sys.argv = ["prof_job.py", "$m", "--steps", "20"]
sys.path.insert(0, "$out")
import prof_job
a_mode = "$m"
dev = torch.device("cuda")
model = prof_job.net().to(dev); opt = torch.optim.SGD(model.parameters(), lr=0.01)
crit = torch.nn.CrossEntropyLoss(); it = iter(prof_job.loader(a_mode))
for _ in range(20):
    x, y = next(it); x, y = x.to(dev), y.to(dev)
    loss = crit(model(x), y); opt.zero_grad(); loss.backward(); opt.step()
torch.cuda.synchronize()
EOF
  cap "bottleneck_$m.txt" "python -m torch.utils.bottleneck on 20 steps of the $m job" \
    "$py" -m torch.utils.bottleneck "$out/bn_$m.py"
done

# py-spy dumps of the itemsync job (the starved and healthy ones are in capture_h200.sh)
# the job is started directly (not under `timeout`, whose PID py-spy would be given: the first
# run, 2026-12-05, got "Failed to find python version from target process") and killed after
if [ -n "$pyspy" ] && want pyspy; then
  (cd "$out" && exec "$py" prof_job.py itemsync > itemsync_plain.log 2>&1) &
  ipid=$!; sleep 14
  for i in 1 2 3; do
    cap "pyspy_itemsync_$i.txt" "py-spy dump of the itemsync job (loss.item() and a pageable 64 MiB copy every step), sample $i" "$pyspy" dump --pid "$ipid"
    sleep 0.7
  done
  kill "$ipid" 2>/dev/null; wait "$ipid" 2>/dev/null
fi

# Lightning's profilers, where wheels were given
if [ -n "$wheels" ] && want lightning; then
  # by name, so pip picks the one PyYAML wheel that fits the host's Python among those given
  "$py" -m pip install --no-index --no-deps --find-links "$wheels" --target "$out/site" \
    pytorch-lightning lightning-utilities torchmetrics tqdm fsspec pyyaml typing-extensions packaging \
    > "$out/pip.log" 2>&1 || true
  cat > "$out/lit_job.py" <<'EOF'
import sys, torch, torch.nn as nn
sys.path.insert(0, sys.argv[3])
import prof_job
import pytorch_lightning as pl

class Lit(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = prof_job.net()
        self.crit = nn.CrossEntropyLoss()
    def training_step(self, batch, i):
        x, y = batch
        return self.crit(self.net(x), y)
    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)

mode, prof = sys.argv[1], sys.argv[2]
w = 0 if mode == "starved" else 8
dl = torch.utils.data.DataLoader(prof_job.Costly(), batch_size=64, num_workers=w,
                                 pin_memory=w > 0, persistent_workers=w > 0)
pl.Trainer(max_steps=40, accelerator="gpu", devices=1, profiler=prof, logger=False,
           enable_checkpointing=False, enable_progress_bar=False).fit(Lit(), dl)
EOF
  for m in starved healthy; do
    for p in simple advanced pytorch; do
      cap "lightning_${p}_$m.txt" "pytorch-lightning 2.6 Trainer(profiler=\"$p\") fit of 40 steps of the $m job (stdout and stderr)" \
        env PYTHONPATH="$out/site" "$py" "$out/lit_job.py" "$m" "$p" "$out"
    done
  done
fi
# nvidia-smi dmon -s pucvmet (power/temp, utilization, clocks, violations, FB/BAR1 memory, ECC/
# PCIe replay) while the starved and the healthy job run, after 12 s of warm-up; reads only
if want dmon; then
  for m in starved healthy; do
    (cd "$out" && exec "$py" prof_job.py "$m" > "plain_$m.log" 2>&1) &
    jpid=$!; sleep 12
    cap "dmon_pucvmet_$m.txt" "nvidia-smi dmon -s pucvmet -c 20 while the $m job (plain step loop) runs, 12 s after its start" nvidia-smi dmon -s pucvmet -c 20
    kill "$jpid" 2>/dev/null; wait "$jpid" 2>/dev/null
  done
fi
# py-spy dump --native (the C/C++ frames under each Python frame) and --locals, of the itemsync
# and the starved job, three samples each, 0.7 s apart
if [ -n "$pyspy" ] && want native; then
  for m in itemsync starved; do
    (cd "$out" && exec "$py" prof_job.py "$m" > "native_$m.log" 2>&1) &
    jpid=$!; sleep 14
    for i in 1 2 3; do
      cap "pyspy_native_${m}_$i.txt" "py-spy dump --native of the $m job, sample $i" "$pyspy" dump --native --pid "$jpid"
      sleep 0.7
    done
    cap "pyspy_locals_$m.txt" "py-spy dump --locals of the $m job" "$pyspy" dump --locals --pid "$jpid"
    kill "$jpid" 2>/dev/null; wait "$jpid" 2>/dev/null
  done
fi
ls -la "$out" > "$out/listing.txt"
