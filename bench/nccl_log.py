"""Write an NCCL_DEBUG=INFO log from a one-process NCCL group (one all_reduce on one GPU).

Used on the GPU machine to record a real NCCL log for gpufix's nccl.log probe fixtures.
Run with NCCL_DEBUG=INFO (and NCCL_NVLS_ENABLE=0); NCCL prints its log on stdout/stderr.
"""
import os

import torch
import torch.distributed as dist

os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29517")
dist.init_process_group("nccl", rank=0, world_size=1)
t = torch.ones(1 << 20, device="cuda")
dist.all_reduce(t)
torch.cuda.synchronize()
print("all_reduce ok", float(t[0]))
dist.destroy_process_group()
