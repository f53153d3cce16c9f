#!/usr/bin/env python3
"""Record a running job's /proc tree as a gpufix snapshot (`--snapshot FILE` replays it).

    proc_record.py PID --window 5 -o tree.snapshot.json [--pyspy PATH]

Reads, for PID and every descendant: stat (at the start and the end of the window), the stat
of each thread (same), cmdline, environ, status, io, comm, the task list, each task's
children, the cwd link; the config-looking files its argv names (resolved against its cwd,
at most 256 KiB each) and the python script; GPU utilization and memory every 200 ms over
the window (nvidia-smi). With --pyspy, also `py-spy dump` of PID into the snapshot's
commands. The result is the snapshot format of `gpufix snapshot` (schemas/snapshot.schema.json).
"""

import argparse
import datetime
import json
import os
import subprocess
import sys
import time

MAX_FILE = 256 * 1024


def read(path):
    try:
        with open(path, "rb") as f:
            b = f.read(MAX_FILE)
    except OSError as e:
        return {"error": {"kind": "not-found" if isinstance(e, FileNotFoundError) else ("permission-denied" if isinstance(e, PermissionError) else "other"), "message": str(e)}}
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        return {"hex": b.hex()}


def listdir(path):
    try:
        return sorted(os.listdir(path))
    except OSError:
        return None


def descendants(pid):
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        for t in listdir(f"/proc/{p}/task") or []:
            c = read(f"/proc/{p}/task/{t}/children")
            if isinstance(c, str):
                todo.extend(int(x) for x in c.split())
    return out


def gpu_sample():
    try:
        r = subprocess.run(
            ["nvidia-smi", "--query-gpu=index,utilization.gpu,utilization.memory,memory.used,clocks.sm,power.draw,temperature.gpu",
             "--format=csv,noheader,nounits"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    rows = []
    for line in r.stdout.strip().splitlines():
        f = [x.strip() for x in line.split(",")]
        try:
            rows.append({"index": int(f[0]), "util": float(f[1]), "mem_util": float(f[2]), "mem_used_mib": float(f[3]),
                         "clock_sm": float(f[4]), "power_w": float(f[5]) if f[5] not in ("[N/A]", "N/A") else None,
                         "temp": float(f[6])})
        except (ValueError, IndexError):
            pass
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("pid", type=int)
    ap.add_argument("--window", type=float, default=5.0)
    ap.add_argument("-o", "--out", required=True)
    ap.add_argument("--pyspy")
    ap.add_argument("--description", default="")
    a = ap.parse_args()
    files, dirs, links, commands = {}, {}, {}, {}

    def rec(path):
        files.setdefault(path, []).append(read(path))

    def recdir(path):
        d = listdir(path)
        dirs.setdefault(path, []).append(d if d is not None else {"error": {"kind": "not-found", "message": "gone"}})
        return d or []

    pids = descendants(a.pid)
    now = []
    # once-only files
    for p in pids:
        for f in ("cmdline", "environ", "status", "io", "comm"):
            rec(f"/proc/{p}/{f}")
        try:
            links[f"/proc/{p}/cwd"] = [os.readlink(f"/proc/{p}/cwd")]
        except OSError:
            pass
        for t in recdir(f"/proc/{p}/task"):
            rec(f"/proc/{p}/task/{t}/children")
            rec(f"/proc/{p}/task/{t}/comm")
    # the files argv names
    for p in pids:
        argv = (files[f"/proc/{p}/cmdline"][0] if isinstance(files[f"/proc/{p}/cmdline"][0], str) else "").split("\0")
        cwd = links.get(f"/proc/{p}/cwd", ["/"])[0]
        for arg in argv:
            cand = arg.split("=", 1)[-1]
            if not cand or len(cand) > 4096:
                continue
            path = cand if cand.startswith("/") else os.path.join(cwd, cand)
            try:  # a job in a container: its files are under its own root
                if os.readlink(f"/proc/{p}/ns/mnt") != os.readlink("/proc/self/ns/mnt"):
                    path = f"/proc/{p}/root" + path
            except OSError:
                pass
            if os.path.isfile(path) and path not in files and not path.startswith("/proc"):
                if os.path.getsize(path) <= MAX_FILE and not os.access(path, os.X_OK) or path.endswith(".py"):
                    rec(path)
    # what config discovery may also read: the sources and configs beside the script and
    # under the cwd (imported modules, configs named by a path in the script), two levels deep
    # at most, 64 files; and the mount namespaces, so a job in a container is recorded as one
    # (its files then under /proc/PID/root)
    for p in [a.pid, "self"]:
        try:
            links[f"/proc/{p}/ns/mnt"] = [os.readlink(f"/proc/{p}/ns/mnt")]
        except OSError:
            pass
    extra = 0
    for p in pids[:1]:
        cwd = links.get(f"/proc/{p}/cwd", ["/"])[0]
        in_ct = links.get(f"/proc/{p}/ns/mnt") != links.get("/proc/self/ns/mnt")
        prefix = f"/proc/{p}/root" if in_ct else ""
        roots = {cwd} | {os.path.dirname(k[len(prefix):]) for k in files if k.endswith(".py")}
        for top in sorted(r for r in roots if r and r != "/"):
            for dirpath, dirnames, names in os.walk(prefix + top):
                if dirpath[len(prefix + top):].count("/") >= 2:
                    dirnames[:] = []
                dirnames[:] = [d for d in dirnames if not d.startswith(".") and d != "__pycache__"]
                for n in sorted(names):
                    path = os.path.join(dirpath, n)
                    if extra < 64 and n.endswith((".py", ".yaml", ".yml", ".json", ".toml")) \
                            and path not in files and not os.path.islink(path) \
                            and os.path.getsize(path) <= MAX_FILE:
                        rec(path)
                        extra += 1
    samples = []

    def stats():
        for p in pids:
            rec(f"/proc/{p}/stat")
            for t in listdir(f"/proc/{p}/task") or []:
                rec(f"/proc/{p}/task/{t}/stat")

    now.append(time.time())
    stats()
    end = time.time() + a.window
    while time.time() < end:
        s = gpu_sample()
        if s:
            samples.append({"t": time.time(), "gpus": s})
        time.sleep(0.2)
    now.append(time.time())
    stats()
    if a.pyspy:
        for i in range(3):
            r = subprocess.run([a.pyspy, "dump", "--pid", str(a.pid)], capture_output=True, text=True, timeout=30)
            commands.setdefault(f"py-spy dump --pid {a.pid}", []).append(
                {"status": r.returncode, "stdout": r.stdout, "stderr": r.stderr, "timed_out": False})
    snap = {
        "version": 1,
        "gpufix_version": "bench/proc_record.py",
        "recorded_at": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        "description": a.description,
        "files": files,
        "dirs": dirs,
        "links": links,
        "commands": commands,
        "cpu_count": os.cpu_count(),
        "now": now,
    }
    with open(a.out, "w") as f:
        json.dump({"snapshot": snap, "gpu_samples": samples}, f)
    util = [g["util"] for s in samples for g in s["gpus"] if g["index"] == 0]
    print(f"recorded pid {a.pid}: {len(pids)} processes, GPU0 util mean {sum(util)/max(1,len(util)):.1f}% over {len(util)} samples",
          file=sys.stderr)


if __name__ == "__main__":
    main()
