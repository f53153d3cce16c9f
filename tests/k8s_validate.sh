#!/usr/bin/env bash
# Validates contrib/kubernetes/*.yaml offline:
#   1. kubernetes-validate --strict (PyPI; bundles the Kubernetes OpenAPI schemas, so no cluster is
#      needed; --strict rejects unknown fields). kubectl cannot do this here: even
#      `--dry-run=client` asks an API server for its schema or group list.
#   2. a mutated copy with a misspelled field must FAIL, so step 1 is known to catch mistakes;
#   3. the properties the manifests promise: the DaemonSet's host mounts are read-only, its root
#      filesystem is read-only, seccomp RuntimeDefault, no hostPID/SYS_PTRACE unless opted in,
#      every taint tolerated, GFD or NFD node labels, a deny-all NetworkPolicy, it writes the
#      textfile and reads the journal; the Job is pinned to a node, never restarts, mounts /etc
#      read-only and only its fixes' directory read-write, keeps its journal in the hostPath it passes as --state-dir; the
#      Node Problem Detector plugin config names the wrapper and a permanent condition.
# Skips with a note when kubernetes-validate is absent (tests/ci-deps.sh installs it), unless
# K8S_VALIDATE_REQUIRED=1.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
dir=$repo/contrib/kubernetes
version=${K8S_VERSION:-1.30.0}

if ! command -v kubernetes-validate >/dev/null; then
    echo "k8s_validate: kubernetes-validate not installed; skipping (tests/ci-deps.sh installs it)"
    [[ ${K8S_VALIDATE_REQUIRED:-0} == 1 ]] && exit 1
    exit 0
fi

passed=0
failed=0
ok() { echo "ok - $1"; passed=$((passed + 1)); }
not_ok() { echo "not ok - $1"; failed=$((failed + 1)); }

for f in "$dir"/daemonset.yaml "$dir"/job.yaml; do
    if out=$(kubernetes-validate --strict -k "$version" "$f" 2>&1); then
        ok "$(basename "$f") is valid for Kubernetes $version"
    else
        not_ok "$(basename "$f") is valid for Kubernetes $version"
        echo "$out"
    fi
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sed 's/readOnlyRootFilesystem:/readOnlyRootFilesytem:/' "$dir/daemonset.yaml" >"$work/typo.yaml"
if kubernetes-validate --strict -k "$version" "$work/typo.yaml" >"$work/out" 2>&1; then
    not_ok "a misspelled field is rejected"
    cat "$work/out"
else
    ok "a misspelled field is rejected"
fi

if python3 - "$dir" <<'PY'; then ok "the manifests keep their promises"; else not_ok "the manifests keep their promises"; fi
import sys, yaml
d = sys.argv[1]
docs = {doc["kind"]: doc for doc in yaml.safe_load_all(open(d + "/daemonset.yaml"))}
ds = docs["DaemonSet"]["spec"]["template"]["spec"]
c = ds["containers"][0]
script = " ".join(c.get("command", []) + c.get("args", []))
problems = []
def want(cond, msg):
    if not cond:
        problems.append(msg)
# hostPID + SYS_PTRACE as uid 0 is host root: both off unless an admin opts in.
want(not ds.get("hostPID"), "daemonset: hostPID off by default")
caps = c["securityContext"].get("capabilities", {})
want("SYS_PTRACE" not in caps.get("add", []), "daemonset: no SYS_PTRACE by default")
want(caps.get("drop") == ["ALL"], "daemonset: drops every capability")
want(ds.get("securityContext", {}).get("seccompProfile", {}).get("type") == "RuntimeDefault",
     "daemonset: seccomp RuntimeDefault")
want(c["securityContext"].get("readOnlyRootFilesystem") is True, "daemonset: readOnlyRootFilesystem")
want(c["securityContext"].get("allowPrivilegeEscalation") is False, "daemonset: no privilege escalation")
want(ds.get("tolerations") == [{"operator": "Exists"}], "daemonset: tolerates every taint")
terms = ds["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
keys = {e["key"] for t in terms for e in t["matchExpressions"]}
want(keys == {"nvidia.com/gpu.present", "feature.node.kubernetes.io/pci-10de.present"},
     "daemonset: GFD or NFD GPU node labels")
want("gpufix audit --root /host --state-dir /host/var/lib/gpufix" in script
     and "--format prometheus --output /textfile/gpufix.prom" in script,
     "daemonset: the audit command reads the journal under the hostPath")
np = docs.get("NetworkPolicy")
want(np is not None and np["spec"]["policyTypes"] == ["Ingress", "Egress"]
     and np["spec"]["ingress"] == [] and np["spec"]["egress"] == []
     and np["spec"]["podSelector"]["matchLabels"] == {"app.kubernetes.io/name": "gpufix"},
     "networkpolicy: no traffic in or out for gpufix pods")
mounts = {m["mountPath"]: m for m in c["volumeMounts"]}
# the kernel-log rules read the host's journal and syslog files there (never the pod's dmesg)
for path in ("/host/proc", "/host/sys", "/host/etc", "/host/var/log", "/host/run/log/journal"):
    want(mounts.get(path, {}).get("readOnly") is True, "daemonset: %s read-only" % path)
want("/textfile" in mounts and not mounts["/textfile"].get("readOnly"), "daemonset: /textfile writable")
want(not any(m.get("mountPath", "").startswith("/host") and not m.get("readOnly") for m in c["volumeMounts"]),
     "daemonset: every /host mount read-only")

job = yaml.safe_load(open(d + "/job.yaml"))
js = job["spec"]["template"]["spec"]
jc = js["containers"][0]
want(js.get("restartPolicy") == "Never", "job: restartPolicy Never")
want(job["spec"].get("backoffLimit") == 0, "job: backoffLimit 0")
want(bool(js.get("nodeName")), "job: pinned with nodeName")
want(jc["args"][:2] == ["apply", "--yes"] and "--allow" in jc["args"], "job: apply --yes with --allow")
jm = {m["mountPath"]: m for m in jc["volumeMounts"]}
want(jm.get("/host/etc", {}).get("readOnly") is True, "job: /host/etc read-only")
# read-write: only what the allowed fix kinds write (the --config/--env-file directory) and the
# journal; never /etc, /proc, /sys or /dev
writable = {p for p, m in jm.items() if p.startswith("/host") and not m.get("readOnly")}
fix_dirs = {a.rsplit("/", 1)[0] for i, a in enumerate(jc["args"]) if jc["args"][i - 1] in ("--config", "--env-file")}
want(writable == fix_dirs | {"/host/var/lib/gpufix"},
     "job: read-write host mounts are exactly the fixed files' directory and the journal (%s)" % sorted(writable))
want(set(a for i, a in enumerate(jc["args"]) if jc["args"][i - 1] == "--allow") <= {"env.unset", "env.set", "config.set"},
     "job: allows only fix kinds that write --config/--env-file")
want(jm.get("/host/proc", {}).get("readOnly") is True, "job: /host/proc read-only")
args = jc["args"]
state = args[args.index("--state-dir") + 1] if "--state-dir" in args else None
vols = {v["name"]: v for v in js["volumes"]}
want(state is not None and state in jm and not jm[state].get("readOnly")
     and vols[jm[state]["name"]].get("hostPath", {}).get("path") == "/var/lib/gpufix",
     "job: --state-dir is the read-write hostPath of the host's /var/lib/gpufix")
want("--config" in args and "--env-file" in args, "job: passes --config and --env-file")
want(not js.get("hostPID"), "job: hostPID off")
want(js.get("securityContext", {}).get("seccompProfile", {}).get("type") == "RuntimeDefault",
     "job: seccomp RuntimeDefault")

import json
npd = json.load(open(d + "/npd-gpufix.json"))
want(npd.get("plugin") == "custom" and npd["pluginConfig"]["invoke_interval"]
     and npd["rules"] and all(r["path"] == "/usr/bin/gpufix-npd" for r in npd["rules"]),
     "npd: a custom plugin running gpufix-npd")
want(any(r.get("type") == "permanent" and r.get("condition") == "GPUFixUnhealthy" for r in npd["rules"]),
     "npd: a permanent rule setting the GPUFixUnhealthy condition")
for p in problems:
    print("  " + p)
sys.exit(1 if problems else 0)
PY

echo "$passed passed, $failed failed"
[[ $failed == 0 ]]
