import os, sys, time
c = os.fork()
if c == 0:
    import torch
    x = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    torch.cuda.synchronize()
    if os.fork() == 0:
        time.sleep(40); os._exit(0)
    os._exit(0)
print(c, flush=True)
time.sleep(45)
