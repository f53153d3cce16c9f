#!/usr/bin/env bash
# bench/mixed_h200.sh GPUFIX OUTDIR: mixed pastes made on a GPU host, read back by gpufix.
# The host's own outputs are concatenated the ways people paste them (a table then `-q`, `-q`
# then a table, a table then `dmon` then a `--query-gpu` loop), and each paste is planned as
# `--evidence`, beside `gpufix plan` of the live host. Reads only: nothing here changes a GPU
# setting (nvidia-smi is run only to print).
set -uo pipefail
B=$(readlink -f "$1")
R=$2
mkdir -p "$R"
exec > >(tee "$R/log.txt") 2>&1
echo "== host"; date -u; nvidia-smi -L
nvidia-smi > "$R/table.txt"
nvidia-smi -q > "$R/q.txt"
nvidia-smi -q -d PERFORMANCE,CLOCK,POWER,TEMPERATURE > "$R/q_sections.txt"
nvidia-smi dmon -c 3 > "$R/dmon.txt"
timeout 3 nvidia-smi --query-gpu=timestamp,name,utilization.gpu,memory.used,memory.total --format=csv -lms 500 > "$R/csv.txt"
cat "$R/table.txt" "$R/q_sections.txt" > "$R/paste_table_then_q.txt"
cat "$R/q_sections.txt" "$R/table.txt" > "$R/paste_q_then_table.txt"
{ cat "$R/table.txt"; echo; cat "$R/dmon.txt"; echo; cat "$R/csv.txt"; } > "$R/paste_table_dmon_csv.txt"
{ echo "Here is what the node shows:"; echo; cat "$R/table.txt"; echo; echo "and the full query:"; echo; cat "$R/q.txt"; echo; echo "Thanks!"; } > "$R/paste_post_table_q.txt"
echo "== live plan"
"$B" plan --sample 0 --format json > "$R/plan_live.json"; echo "rc=$?"
for p in table q q_sections dmon csv paste_table_then_q paste_q_then_table paste_table_dmon_csv paste_post_table_q; do
  echo "== $p"
  "$B" --no-system plan --evidence "$R/$p.txt" --sample 0 --format json > "$R/plan_$p.json" 2> "$R/plan_$p.err"; echo "rc=$?"
  "$B" --no-system plan --evidence "$R/$p.txt" --sample 0 2>&1 | grep -E "^note|rules:" 
done
python3 - "$R" <<'PY'
import json, sys, os
R = sys.argv[1]
def verdicts(name):
    try:
        d = json.load(open(os.path.join(R, f"plan_{name}.json")))
    except Exception as e:
        return {}
    return {r["id"]: r["verdict"] for r in d["results"]}
names = ["table", "q_sections", "paste_table_then_q", "paste_q_then_table", "paste_table_dmon_csv", "paste_post_table_q"]
v = {n: verdicts(n) for n in names}
judged = lambda n: sorted(k for k, x in v[n].items() if x in ("pass", "fail"))
for n in names:
    print(f"{n}: {len(judged(n))} rules judged; fail: {sorted(k for k,x in v[n].items() if x=='fail')}")
both = set(judged("table")) | set(judged("q_sections"))
for n in ["paste_table_then_q", "paste_q_then_table"]:
    lost = sorted(both - set(judged(n)))
    print(f"{n}: judged by table or sections alone but not by the paste: {lost}")
PY
