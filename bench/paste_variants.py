#!/usr/bin/env python3
"""Metamorphic check of the readers: every corpus artifact gpufix detects, pasted the other ways
people paste text, must still be detected, and every healthy one must stay free of findings.

    python3 bench/paste_variants.py [--gpufix BIN] [--only PREFIX] [--variants a,b] [--jobs N]

The ways (each changes only how the text is wrapped, never what it says):
  crlf     Windows line endings (a paste from a browser or a Windows terminal)
  quote    `> ` before every line (a GitHub or e-mail quote)
  indent   four spaces before every line (a Markdown code block)
  fence    a line of prose, then the text inside a ``` fence
  srun     `0: ` before every line (`srun --label`)
  kubectl  an RFC 3339 timestamp before every line (`kubectl logs --timestamps`)
  compose  `trainer-1  | ` before every line (`docker compose logs`)
  ansi     every line in colour (`\\x1b[31m…\\x1b[0m`)
  rank     `[rank0]: ` before every line (torchrun's `--local-ranks-filter`/`--tee` prefix of
           PyTorch 2.2+, which distributed tracebacks and NCCL lines carry)
  ray      `(RayWorkerWrapper pid=4165) ` before every line (Ray's worker-output prefix, as vLLM's
           and verl's multi-GPU logs carry it)
  sentences  a question above the text and a sentence below it, no fence (an issue body)
  post     a sentence, the text in a ```text fence, and a thank-you line under it
  beside_table  the text, then a healthy idle nvidia-smi table of another machine under it
           (corpus h108_smi_immich13831_gtx1660_idle_container.txt)
  beside_env    a healthy `collect_env` above the text
           (corpus h109_collectenv_pytorch165929_h100_torch290_cu128_driver550.txt)
The two `beside` ways are not run unless named (`--variants beside_table,beside_env`): a
neighbour that describes a machine can add a finding that is right for the two texts together
(a torch build beside an older GPU), so their changes are read one by one.
Prints one line per artifact and way that changed the verdict, then a table per way.
"""
import argparse, concurrent.futures as cf, json, os, subprocess, sys, tempfile
from pathlib import Path

def _neighbour(name):
    """A healthy corpus text pasted beside the artifact (read once)."""
    if name not in _NEIGHBOURS:
        p = Path(__file__).resolve().parent.parent / "tests/fixtures/corpus" / name
        _NEIGHBOURS[name] = p.read_text()
    return _NEIGHBOURS[name]


_NEIGHBOURS = {}
DEFAULT_OFF = {"beside_table", "beside_env"}

VARIANTS = {
    "crlf": lambda t: t.replace("\n", "\r\n"),
    "quote": lambda t: "".join("> " + l for l in t.splitlines(True)),
    "indent": lambda t: "".join(("    " + l) if l.strip() else l for l in t.splitlines(True)),
    "fence": lambda t: "Here is what I get:\n\n```\n" + t + ("" if t.endswith("\n") else "\n") + "```\n",
    "srun": lambda t: "".join("0: " + l for l in t.splitlines(True)),
    "kubectl": lambda t: "".join("2025-03-14T09:26:53.589793238Z " + l for l in t.splitlines(True)),
    "compose": lambda t: "".join("trainer-1  | " + l for l in t.splitlines(True)),
    "sentences": lambda t: "Hi, I get this when training:\n\n" + t + ("" if t.endswith("\n") else "\n") + "\nAny idea what is wrong? Thanks!\n",
    "post": lambda t: "I see the following output:\n\n```text\n" + t + ("" if t.endswith("\n") else "\n") + "```\n\nThanks in advance.\n",
    "beside_table": lambda t: t + ("" if t.endswith("\n") else "\n") + "\n" + _neighbour("h108_smi_immich13831_gtx1660_idle_container.txt"),
    "beside_env": lambda t: _neighbour("h109_collectenv_pytorch165929_h100_torch290_cu128_driver550.txt") + "\n" + t,
    "rank": lambda t: "".join("[rank0]: " + l for l in t.splitlines(True)),
    "ray": lambda t: "".join("(RayWorkerWrapper pid=4165) " + l for l in t.splitlines(True)),
    "ansi": lambda t: "".join("\x1b[31m" + l.rstrip("\n") + "\x1b[0m" + ("\n" if l.endswith("\n") else "") for l in t.splitlines(True)),
}


def labels(corpus, only):
    for lab in sorted(corpus.glob("*.label.yaml")):
        stem = lab.name[: -len(".label.yaml")]
        if only and not stem.startswith(only):
            continue
        fields = {}
        for line in lab.read_text().splitlines():
            if ":" in line and not line.startswith(" "):
                k, v = line.split(":", 1)
                fields[k.strip()] = v.strip()
        arts = [p for p in corpus.glob(stem + ".*") if not p.name.endswith(".label.yaml")]
        if len(arts) != 1 or fields.get("input") not in ("evidence", "nccl-log", "kernel-log"):
            continue
        exp = fields.get("expect", "[]").strip("[]")
        expect = {e.strip() for e in exp.split(",") if e.strip()}
        allow = {e.strip() for e in fields.get("allow", "[]").strip("[]").split(",") if e.strip()}
        yield stem, arts[0], fields["input"], expect, allow


def failing(binary, inp, path):
    r = subprocess.run([binary, "--no-system", "plan", f"--{inp}", str(path), "--sample", "0",
                        "--format", "json"], capture_output=True, text=True, timeout=120)
    # the corpus test's rule: exit 1 or "cannot tell what this is" is unreadable
    if r.returncode == 1 or "cannot tell what" in r.stderr:
        return None
    try:
        doc = json.loads(r.stdout)
    except json.JSONDecodeError:
        return None
    return {x["id"] for x in doc.get("results", []) if x.get("verdict") == "fail"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpufix", default="target/debug/gpufix")
    ap.add_argument("--corpus", default="tests/fixtures/corpus")
    ap.add_argument("--only", default="")
    ap.add_argument("--variants", default=",".join(v for v in VARIANTS if v not in DEFAULT_OFF))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    a = ap.parse_args()
    names = a.variants.split(",")
    work = Path(tempfile.mkdtemp())
    jobs = []
    for stem, art, inp, expect, allow in labels(Path(a.corpus), a.only):
        jobs.append((stem, art, inp, expect, allow))

    def run(job):
        stem, art, inp, expect, allow = job
        base = failing(a.gpufix, inp, art)
        if base is None:
            return stem, None, {}
        ok = expect <= base if expect else not (base - allow)
        if not ok:
            return stem, False, {}
        text = art.read_bytes().decode("utf-8", "replace")
        out = {}
        for v in names:
            p = work / f"{stem}.{v}{art.suffix}"
            p.write_text(VARIANTS[v](text), newline="")
            got = failing(a.gpufix, inp, p)
            if got is None:
                out[v] = "unreadable"
            elif expect and not expect <= got:
                out[v] = "missed " + ",".join(sorted(expect - got))
            elif not expect and (got - allow):
                out[v] = "false " + ",".join(sorted(got - allow))
            elif expect and (got - expect - allow - base):
                out[v] = "extra " + ",".join(sorted(got - expect - allow - base))
        return stem, True, out

    table = {v: [0, 0] for v in names}
    with cf.ThreadPoolExecutor(a.jobs) as ex:
        for stem, ok, out in ex.map(run, jobs):
            if not ok:
                continue
            for v in names:
                table[v][0] += 1
                if v in out:
                    table[v][1] += 1
                    print(f"{stem}\t{v}\t{out[v]}")
    print("\n| way | artifacts read right as pasted | changed by the way |")
    print("|---|---:|---:|")
    for v in names:
        print(f"| {v} | {table[v][0]} | {table[v][1]} |")


if __name__ == "__main__":
    main()
