#!/usr/bin/env bash
# Captures real output of the data-pipeline and monitoring kinds users paste (issue 24's "second
# source", third take after capture_h200.sh and capture_h200_profilers.sh), on a GPU host, under
# conditions this script makes, and says per file how it was made (made.tsv). Only reads the
# GPU's settings; starts short jobs of its own; writes only under OUT.
#
#   bench/capture_h200_data.sh OUT [GPUFIX]
#
# What it makes:
#   loader_fds_*      a DataLoader whose workers pass many tensors under `ulimit -n` 64 (the
#                     file_descriptor sharing strategy runs out of descriptors), and the same
#                     under the file_system strategy (the fix torch documents)
#   loader_too_many   torch's "will create N worker processes" warning (N above the CPUs)
#   loader_killed     a DataLoader worker killed by SIGKILL, as the OOM killer does
#   lightning_*       pytorch_lightning's fit log with num_workers=0 (its "does not have many
#                     workers" warning) and with num_workers=8
#   nccl_ifname_*     a one-rank all_reduce with NCCL_SOCKET_IFNAME naming no interface, and
#                     naming the host's own
#   smi_*_{starved,healthy}  pmon, --query-compute-apps, a --query-gpu CSV over 5 s and
#                     `dmon -s um` while bench/train.py runs with num_workers 0 and 8
#   gpufix_*          with GPUFIX: `gpufix plan` of this host, and `plan --pid` of each job
set -u
out=${1:?usage: capture_h200_data.sh OUT [GPUFIX]}; gpufix=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
CAP_TIMEOUT=150
# shellcheck source=bench/capture_lib.sh
. "$(dirname "$0")/capture_lib.sh"
df -h /dev/shm > "$out/dev_shm.txt" 2>&1; nproc >> "$out/dev_shm.txt"

# DataLoader workers that pass many tensors each: every tensor crosses to the main process as a
# file descriptor (torch.multiprocessing's default file_descriptor strategy).
cat > "$out/fds.py" <<'EOF'
import sys, torch
from torch.utils.data import DataLoader, Dataset
if sys.argv[1:] == ["file_system"]:
    torch.multiprocessing.set_sharing_strategy("file_system")
class Many(Dataset):
    def __len__(self): return 4096
    def __getitem__(self, i): return [torch.zeros(64) for _ in range(64)]
n = 0
for batch in DataLoader(Many(), batch_size=None, num_workers=4, prefetch_factor=8):
    n += 1
print("batches", n)
EOF
cap loader_fds_ulimit64.txt "a DataLoader (4 workers, prefetch 8) whose items are 64 tensors each, under ulimit -n 64, default sharing strategy" \
  bash -c "ulimit -n 64 && exec $py $out/fds.py"
cap loader_fds_ulimit64_file_system.txt "the same with torch.multiprocessing.set_sharing_strategy('file_system')" \
  bash -c "ulimit -n 64 && exec $py $out/fds.py file_system"

cat > "$out/toomany.py" <<'EOF'
import os, torch
from torch.utils.data import DataLoader, TensorDataset
n = 4 * (len(os.sched_getaffinity(0)))
dl = DataLoader(TensorDataset(torch.arange(256.0)), batch_size=8, num_workers=n)
print("num_workers", n, "batches", sum(1 for _ in dl))
EOF
cap loader_too_many.txt "a DataLoader with 4x the CPUs the process may use as workers" "$py" "$out/toomany.py"

cat > "$out/killed.py" <<'EOF'
import os, signal, time, torch
from torch.utils.data import DataLoader, Dataset
class D(Dataset):
    def __len__(self): return 1000
    def __getitem__(self, i):
        if i == 40: os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(0.01); return torch.zeros(8)
for b in DataLoader(D(), batch_size=4, num_workers=2): pass
EOF
cap loader_killed.txt "a DataLoader worker that SIGKILLs itself at item 40 (as the OOM killer would)" "$py" "$out/killed.py"

# pytorch_lightning's fit log, with and without workers
cat > "$out/pl.py" <<'EOF'
import sys, torch, pytorch_lightning as pl
from torch.utils.data import DataLoader, TensorDataset
class M(pl.LightningModule):
    def __init__(self):
        super().__init__(); self.l = torch.nn.Linear(32, 1)
    def training_step(self, b, i):
        x, y = b; loss = torch.nn.functional.mse_loss(self.l(x), y); self.log("loss", loss); return loss
    def configure_optimizers(self): return torch.optim.SGD(self.parameters(), lr=0.01)
w = int(sys.argv[1])
ds = TensorDataset(torch.randn(2048, 32), torch.randn(2048, 1))
pl.Trainer(max_epochs=2, accelerator="gpu", devices=1, enable_progress_bar=False).fit(
    M(), DataLoader(ds, batch_size=64, num_workers=w, persistent_workers=w > 0))
EOF
cap lightning_workers0.txt "pytorch_lightning Trainer.fit, one GPU, DataLoader num_workers=0" "$py" "$out/pl.py" 0
cap lightning_workers8.txt "pytorch_lightning Trainer.fit, one GPU, DataLoader num_workers=8, persistent" "$py" "$out/pl.py" 8

# NCCL's socket interface: a name the host lacks, then the host's own
cat > "$out/nccl1.py" <<'EOF'
import torch, torch.distributed as dist
dist.init_process_group("nccl"); torch.cuda.set_device(0)
t = torch.ones(1 << 20, device="cuda"); dist.all_reduce(t); torch.cuda.synchronize()
print("ok", t[0].item()); dist.destroy_process_group()
EOF
torchrun=$(dirname "$py")/torchrun
ifc=$(ls /sys/class/net | grep -v '^lo$' | head -1)
cap nccl_ifname_missing.log "torchrun --nproc_per_node=1, NCCL_DEBUG=INFO, NCCL_SOCKET_IFNAME=ib0 (no such interface here)" \
  env NCCL_DEBUG=INFO NCCL_SOCKET_IFNAME=ib0 timeout 120 "$torchrun" --standalone --nproc_per_node=1 "$out/nccl1.py"
cap nccl_ifname_present.log "torchrun --nproc_per_node=1, NCCL_DEBUG=INFO, NCCL_SOCKET_IFNAME=$ifc (the host's interface)" \
  env NCCL_DEBUG=INFO NCCL_SOCKET_IFNAME="$ifc" timeout 120 "$torchrun" --standalone --nproc_per_node=1 "$out/nccl1.py"

# a starved and a healthy job, watched by nvidia-smi's process and sampling views
start_job() { # start_job NAME WORKERS
  local d="$out/job_$1"; mkdir -p "$d"
  printf 'data:\n  num_workers: %s\n  pin_memory: true\n  decode_passes: 0\n  batch_size: 128\n  image_size: 224\ntrain:\n  max_seconds: 60\n  warmup_max_s: 3\n' "$2" > "$d/config.yaml"
  (cd "$d" && exec env -u CUDA_LAUNCH_BLOCKING "$py" "$here/train.py" --config config.yaml --ready-file ready --pid-file pid --no-profile > job.log 2>&1) &
  for _ in $(seq 1 120); do [ -f "$d/ready" ] && break; sleep 0.5; done
  cat "$d/pid"
}
for j in starved:0 healthy:8; do
  name=${j%%:*}; w=${j##*:}
  pid=$(start_job "$name" "$w"); sleep 4
  cap "smi_pmon_$name.txt" "nvidia-smi pmon -c 5 while a num_workers=$w job runs" nvidia-smi pmon -c 5
  cap "smi_compute_apps_$name.csv" "nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv while a num_workers=$w job runs" \
    nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv
  cap "smi_query_loop_$name.csv" "nvidia-smi --query-gpu=timestamp,name,utilization.gpu,utilization.memory,memory.used,memory.total --format=csv -lms 1000, 5 s, while a num_workers=$w job runs" \
    timeout -s INT 5.5 nvidia-smi --query-gpu=timestamp,name,utilization.gpu,utilization.memory,memory.used,memory.total --format=csv -lms 1000
  cap "smi_dmon_um_$name.txt" "nvidia-smi dmon -s um -c 5 while a num_workers=$w job runs" nvidia-smi dmon -s um -c 5
  if [ -n "$gpufix" ]; then
    cap "gpufix_plan_pid_$name.txt" "gpufix plan --pid of the num_workers=$w job (sample 5 s)" "$gpufix" plan --pid "$pid" --sample 5s
  fi
  kill "$pid" 2>/dev/null; wait 2>/dev/null
done
if [ -n "$gpufix" ]; then
  cap gpufix_plan_host.txt "gpufix plan of this host, no job" "$gpufix" plan
  cap gpufix_audit_host.json "gpufix audit --format json of this host" "$gpufix" audit --format json
fi
rm -rf "$out"/job_*/ready
ls -la "$out" > "$out/listing.txt"
