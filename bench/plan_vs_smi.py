#!/usr/bin/env python3
"""`gpufix plan --sample 0s` against `nvidia-smi -q`, interleaved rounds (bench/RESULTS.md).

    python3 bench/plan_vs_smi.py NEW_GPUFIX [OLD_GPUFIX] [--rounds 10]

Each round runs `nvidia-smi -q`, then each gpufix given, once; prints the median, its ratio to
`nvidia-smi -q`, every run and every exit code. Only reads the GPU. Run each gpufix once before
(`plan --sample 0s`) so the CUDA check cache is warm for all of them.
"""
import statistics
import subprocess
import sys
import time


def main() -> None:
    args = sys.argv[1:]
    rounds = 10
    if "--rounds" in args:
        i = args.index("--rounds")
        rounds = int(args[i + 1])
        del args[i : i + 2]
    if not args:
        sys.exit(__doc__)
    cmds = {"nvidia-smi -q": ["nvidia-smi", "-q"]}
    names = ["plan (final)", "plan (ebedfd1)"] if len(args) > 1 else ["plan"]
    for name, b in zip(names, args):
        cmds[name] = [b, "plan", "--sample", "0s"]
    runs = {k: [] for k in cmds}
    for _ in range(rounds):
        for k, argv in cmds.items():
            s = time.perf_counter()
            r = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            runs[k].append((round(time.perf_counter() - s, 4), r.returncode))
    smi = statistics.median(t for t, _ in runs["nvidia-smi -q"])
    for k, v in runs.items():
        m = statistics.median(t for t, _ in v)
        print(f"{k}\tmedian {m:.4f}\tratio {m / smi:.3f}\truns {[t for t, _ in v]}\texit {[c for _, c in v]}")


if __name__ == "__main__":
    main()
