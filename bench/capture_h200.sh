#!/usr/bin/env bash
# Captures real output of the kinds of text users paste (issue 24's "second source"), on a GPU
# host, under conditions this script makes, and says per file how it was made (made.tsv).
# Only reads the GPU's settings; starts short jobs of its own; writes only under OUT.
#
#   bench/capture_h200.sh OUT [PYSPY]
#
# What it makes:
#   smi_*           nvidia-smi's table, -q text/XML, -q -d sections, topo -m, --query-gpu CSV
#                   with units, dmon; the UTILIZATION section while a starved job runs
#   collect_env     python -m torch.utils.collect_env
#   oom_*           a plain too-large request, and one after fragmenting the caching allocator
#   cuda_err_*      a device-side assert, an invalid device ordinal, CUDA hidden by CUDA_VISIBLE_DEVICES
#   nccl_*          NCCL_DEBUG=INFO of a one-rank all_reduce with NCCL's env switches, and two
#                   ranks on one GPU (NCCL refuses: a real ncclInvalidUsage)
#   nccl_watchdog_* a one-rank all_reduce queued behind a long GPU sleep (the watchdog fires), and without
#   pyspy_*         py-spy dump of a starved (num_workers 0) and a healthy training job, of a job stuck
#                   in a collective, and of a step loop that calls .item() every step
#   lspci_vv, ibstat, ibv_devinfo, dcgmi_*   when those tools exist on the host
set -u
out=${1:?usage: capture_h200.sh OUT [PYSPY]}; pyspy=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/capture_lib.sh
. "$(dirname "$0")/capture_lib.sh"
cap smi_table.txt "nvidia-smi, idle GPU" nvidia-smi
cap smi_q.txt "nvidia-smi -q, idle GPU" nvidia-smi -q
cap smi_q.xml "nvidia-smi -q -x, idle GPU" nvidia-smi -q -x
for d in PERFORMANCE CLOCK POWER UTILIZATION MEMORY TEMPERATURE ECC PCIE; do
  cap "smi_q_d_$d.txt" "nvidia-smi -q -d $d, idle GPU" nvidia-smi -q -d "$d"
done
cap smi_topo.txt "nvidia-smi topo -m" nvidia-smi topo -m
cap smi_query_units.csv "nvidia-smi --query-gpu with units, idle GPU" nvidia-smi --query-gpu=index,name,utilization.gpu,utilization.memory,memory.used,memory.total,persistence_mode,power.draw,power.limit,clocks.sm,clocks.max.sm,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current --format=csv
cap smi_dmon.txt "nvidia-smi dmon -c 5, idle GPU" nvidia-smi dmon -c 5
cap collect_env.txt "python -m torch.utils.collect_env" "$py" -m torch.utils.collect_env

# CUDA errors as users meet them
cap cuda_err_device_assert.txt "an out-of-range index on the GPU (device-side assert)" \
  env CUDA_LAUNCH_BLOCKING=1 "$py" -c 'import torch; e=torch.nn.Embedding(10,4).cuda(); print(e(torch.tensor([12]).cuda()).sum().item())'
cap cuda_err_invalid_ordinal.txt "torch.device('cuda:7') on a one-GPU host" \
  "$py" -c 'import torch; torch.zeros(1, device="cuda:7")'
cap cuda_err_hidden.txt "CUDA_VISIBLE_DEVICES= (empty) then .cuda()" \
  env CUDA_VISIBLE_DEVICES= "$py" -c 'import torch; print(torch.cuda.is_available()); torch.zeros(1).cuda()'

# OOM: a plain too-large request, then one after fragmenting the caching allocator
cap oom_too_large.txt "one 400 GiB request on a 141 GB GPU" \
  "$py" -c 'import torch; torch.empty(400*2**30, dtype=torch.uint8, device="cuda")'
cat > "$out/frag.py" <<'EOF'
# Fill the GPU with 6 MiB tensors: the caching allocator serves requests of 1-10 MiB from 20 MiB
# segments, three to a segment. Free two of every three: each segment keeps one live tensor, so
# none can go back to the driver, and about two thirds of the card is reserved by PyTorch but
# unallocated in 12 MiB holes. A 1 GiB request then fails although far more than 1 GiB is free
# inside PyTorch's cache: the fragmentation that expandable_segments avoids.
import torch
blocks = []
try:
    while True:
        blocks.append(torch.empty(6 * 2**20, dtype=torch.uint8, device="cuda"))
except torch.cuda.OutOfMemoryError:
    pass
del blocks[len(blocks) - len(blocks) % 3:]  # keep whole segments only
for i in range(len(blocks)):
    if i % 3:
        blocks[i] = None
print(f"reserved {torch.cuda.memory_reserved()/2**30:.2f} GiB, allocated {torch.cuda.memory_allocated()/2**30:.2f} GiB", flush=True)
torch.empty(2**30, dtype=torch.uint8, device="cuda")
EOF
cap oom_fragmented.txt "6 MiB tensors filling the card, two of every three freed, then a 1 GiB request" "$py" "$out/frag.py"
cap oom_fragmented_summary.txt "the same, printing torch.cuda.memory_summary() at the OOM" \
  "$py" -c 'import runpy,torch
try: runpy.run_path("'"$out"'/frag.py")
except torch.cuda.OutOfMemoryError as e: print(e); print(torch.cuda.memory_summary())'

# NCCL: one rank with its switches, then two ranks on one GPU
cat > "$out/nccl1.py" <<'EOF'
import os, torch, torch.distributed as dist
dist.init_process_group("nccl")
r = dist.get_rank(); torch.cuda.set_device(0)
t = torch.ones(1 << 20, device="cuda")
dist.all_reduce(t); torch.cuda.synchronize()
print("rank", r, "ok", t[0].item())
dist.destroy_process_group()
EOF
torchrun=$(dirname "$py")/torchrun
for sw in none NCCL_P2P_DISABLE NCCL_IB_DISABLE NCCL_SHM_DISABLE; do
  e=(env NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,NET,GRAPH)
  [ "$sw" != none ] && e+=("$sw=1")
  cap "nccl_1rank_$sw.log" "torchrun --nproc_per_node=1, one all_reduce, NCCL_DEBUG=INFO, ${sw}=1" \
    "${e[@]}" "$torchrun" --standalone --nproc_per_node=1 "$out/nccl1.py"
done
cap nccl_2ranks_one_gpu.log "torchrun --nproc_per_node=2, both ranks on cuda:0 (NCCL refuses)" \
  env NCCL_DEBUG=INFO "$torchrun" --standalone --nproc_per_node=2 "$out/nccl1.py"

# A collective that times out on one rank: the all_reduce waits behind a long GPU sleep, the
# ProcessGroupNCCL watchdog (timeout 10 s) reports it; a py-spy dump while it hangs. The healthy
# twin is the same program without the sleep.
cat > "$out/watchdog.py" <<'EOF'
import sys, datetime, torch, torch.distributed as dist
dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=10))
torch.cuda.set_device(0)
t = torch.ones(1 << 20, device="cuda")
dist.all_reduce(t); torch.cuda.synchronize()
if sys.argv[1:] == ["hang"]:
    torch.cuda._sleep(10**12)
    dist.all_reduce(t)
    torch.cuda.synchronize()
print("done", flush=True)
dist.destroy_process_group()
EOF
cap nccl_watchdog_timeout.log "torchrun --nproc_per_node=1: an all_reduce queued behind a long GPU sleep, process-group timeout 10 s" \
  env TORCH_CPP_LOG_LEVEL=INFO TORCH_NCCL_ASYNC_ERROR_HANDLING=1 timeout 90 "$torchrun" --standalone --nproc_per_node=1 "$out/watchdog.py" hang
cap nccl_watchdog_healthy.log "torchrun --nproc_per_node=1: the same program without the sleep" \
  env TORCH_CPP_LOG_LEVEL=INFO "$torchrun" --standalone --nproc_per_node=1 "$out/watchdog.py"
if [ -n "$pyspy" ]; then
  (cd "$out" && exec env MASTER_ADDR=127.0.0.1 MASTER_PORT=29533 RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 timeout 60 "$py" watchdog.py hang > watchdog_direct.log 2>&1) &
  wpid=$!; sleep 6
  cap pyspy_stuck_in_collective.txt "py-spy dump of a one-rank job whose all_reduce waits behind a long GPU sleep" "$pyspy" dump --pid "$wpid"
  kill "$wpid" 2>/dev/null; wait "$wpid" 2>/dev/null
  cat > "$out/itemsync.py" <<'EOF'
import torch
m = torch.nn.Sequential(*[torch.nn.Linear(4096, 4096) for _ in range(8)]).cuda()
opt = torch.optim.SGD(m.parameters(), lr=1e-3)
x = torch.randn(512, 4096, device="cuda")
while True:
    loss = m(x).square().mean()
    opt.zero_grad(); loss.backward(); opt.step()
    print(loss.item(), end="\r")
EOF
  (cd "$out" && exec timeout 60 "$py" itemsync.py > /dev/null 2>&1) &
  ipid=$!; sleep 8
  for i in 1 2 3; do
    cap "pyspy_item_sync_$i.txt" "py-spy dump of a step loop that calls loss.item() every step (sample $i)" "$pyspy" dump --pid "$ipid"
    sleep 0.7
  done
  cap smi_q_d_PERFORMANCE_busy.txt "nvidia-smi -q -d PERFORMANCE,CLOCK,POWER while a step loop keeps the GPU busy" nvidia-smi -q -d PERFORMANCE,CLOCK,POWER
  kill "$ipid" 2>/dev/null; wait "$ipid" 2>/dev/null
fi

# a starved and a healthy job: -q -d UTILIZATION while it runs, and a py-spy dump of each
start_job() { # start_job NAME WORKERS
  local d="$out/job_$1"; mkdir -p "$d"
  printf 'data:\n  num_workers: %s\n  pin_memory: true\n  decode_passes: 0\n  batch_size: 128\n  image_size: 224\ntrain:\n  max_seconds: 40\n  warmup_max_s: 3\n' "$2" > "$d/config.yaml"
  (cd "$d" && exec env -u CUDA_LAUNCH_BLOCKING "$py" "$here/train.py" --config config.yaml --ready-file ready --pid-file pid > job.log 2>&1) &
  for _ in $(seq 1 120); do [ -f "$d/ready" ] && break; sleep 0.5; done
  cat "$d/pid"
}
for j in starved:0 healthy:8; do
  name=${j%%:*}; w=${j##*:}
  pid=$(start_job "$name" "$w"); sleep 6
  cap "smi_q_d_UTILIZATION_$name.txt" "nvidia-smi -q -d UTILIZATION while a num_workers=$w job runs" nvidia-smi -q -d UTILIZATION
  cap "smi_table_$name.txt" "nvidia-smi while a num_workers=$w job runs" nvidia-smi
  cap "smi_dmon_$name.txt" "nvidia-smi dmon -c 5 while a num_workers=$w job runs" nvidia-smi dmon -c 5
  if [ -n "$pyspy" ]; then
    for i in 1 2 3; do
      cap "pyspy_${name}_$i.txt" "py-spy dump --pid of a num_workers=$w training job (sample $i)" "$pyspy" dump --pid "$pid"
      sleep 1
    done
  fi
  kill "$pid" 2>/dev/null; wait 2>/dev/null
done

# fabric and DCGM, where present
command -v lspci >/dev/null && cap lspci_vv.txt "lspci -vv -d 10de: (NVIDIA devices)" lspci -vv -d 10de:
command -v ibstat >/dev/null && cap ibstat.txt "ibstat" ibstat
command -v ibv_devinfo >/dev/null && cap ibv_devinfo.txt "ibv_devinfo -v" ibv_devinfo -v
command -v ibdev2netdev >/dev/null && cap ibdev2netdev.txt "ibdev2netdev" ibdev2netdev
if command -v dcgmi >/dev/null; then
  cap dcgmi_discovery.txt "dcgmi discovery -l" dcgmi discovery -l
  cap dcgmi_health.txt "dcgmi health -c (default group)" dcgmi health -c
  cap dcgmi_diag_r1.txt "dcgmi diag -r 1" dcgmi diag -r 1
fi
ls -la "$out" > "$out/listing.txt"
