#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpufix contributors
# SPDX-License-Identifier: MIT OR Apache-2.0
"""Ansible module wrapping the gpufix CLI: `--check` runs `gpufix audit`, a normal run
`gpufix apply --yes`. gpufix does the work; this module only builds argv and maps the JSON."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: gpufix
short_description: Find and fix why GPU training runs slowly, with gpufix
description:
  - Runs C(gpufix audit --format json) in check mode and reports the changes C(gpufix apply)
    would make, with a diff per change when C(--diff) is given.
  - Otherwise runs C(gpufix apply --yes --format json), which applies the approved fixes in a
    transaction, verifies them and rolls back on failure.
  - C(changed) is true when there is (check mode) or was (apply) at least one change, so a second
    run reports C(changed=0) once the host is fixed.
  - Manual fixes are never applied and never count as a change; failing rules are listed in
    C(findings) either way.
options:
  binary:
    description: The gpufix executable, a name on C(PATH) or a path.
    type: str
    default: gpufix
  root:
    description: Treat this directory as C(/) (a host mounted elsewhere, a fixture tree).
    type: path
  snapshot:
    description: Audit a recorded snapshot instead of the host. Check mode only.
    type: path
  config:
    description: The training job's config file, for rules about DataLoader, DDP and the like.
    type: path
  env_file:
    description: The training job's environment file.
    type: path
  values:
    description: Site values file (parameters, disabled rules, waivers).
    type: path
  playbooks:
    description: Directory of site playbooks added to the built-in ones.
    type: path
  only:
    description: Evaluate only these rules or layers.
    type: list
    elements: str
    default: []
  allow:
    description: Fix kinds that may run (C(--allow)); empty allows every kind gpufix allows by default.
    type: list
    elements: str
    default: []
  deny:
    description: Fix kinds that must not run (C(--deny)).
    type: list
    elements: str
    default: []
notes:
  - Supports check mode and diff mode.
  - The gpufix binary must be installed on the managed host.
author:
  - gpufix contributors
"""

EXAMPLES = r"""
- name: Show what gpufix would change
  gpufix:
    env_file: /etc/training/job.env
    allow: [env.unset, config.set]
  check_mode: true
  diff: true

- name: Apply safe environment fixes
  gpufix:
    env_file: /etc/training/job.env
    allow: [env.unset]
"""

RETURN = r"""
findings:
  description: Rules whose verdict is fail, unknown or blocked (check mode).
  returned: check mode
  type: list
  elements: dict
report:
  description: The full gpufix report (C(gpufix audit --format json)).
  returned: check mode
  type: dict
run:
  description: The apply run id, for C(gpufix rollback RUN).
  returned: when applied
  type: str
applied:
  description: The changes that were applied.
  returned: when applied
  type: list
  elements: dict
skipped:
  description: Changes not applied, with the reason (not allowed, manual, ...).
  returned: when applied
  type: list
  elements: dict
cmd:
  description: The argv that was run.
  returned: always
  type: list
  elements: str
"""

import json

from ansible.module_utils.basic import AnsibleModule

FINDINGS = ("fail", "unknown", "blocked")

# option name -> gpufix flag, for the inputs audit and apply share
COMMON_FLAGS = (
    ("root", "--root"),
    ("config", "--config"),
    ("env_file", "--env-file"),
    ("values", "--values"),
    ("playbooks", "--playbooks"),
)


def common_args(params):
    args = []
    for name, flag in COMMON_FLAGS:
        if params.get(name):
            args += [flag, params[name]]
    for item in params["only"]:
        args += ["--only", item]
    return args


def would_apply(change, allow, deny):
    """What `apply --yes` with these --allow/--deny would actually run of a planned change."""
    if change.get("safety") == "manual":
        return False
    kind = change.get("kind")
    if allow and kind not in allow:
        return False
    return kind not in deny


def show_value(value):
    if value is None:
        return ""
    if isinstance(value, str):
        return value if value.endswith("\n") else value + "\n"
    return json.dumps(value, indent=2, sort_keys=True) + "\n"


def change_diff(change):
    """Ansible's diff for one change: whole before/after text when gpufix provides it, the
    unified diff as `prepared` for files otherwise, before/after values for runtime state."""
    target = change.get("target", "")
    header = "%s (%s: %s)" % (target, change.get("rule", "?"), change.get("kind", "?"))
    if "before_text" in change or "after_text" in change:
        return {
            "before_header": header,
            "after_header": header,
            "before": change.get("before_text") or "",
            "after": change.get("after_text") or "",
        }
    if change.get("diff"):
        prepared = change["diff"]
        return {"prepared": prepared if prepared.endswith("\n") else prepared + "\n"}
    return {
        "before_header": header,
        "after_header": header,
        "before": show_value(change.get("before")),
        "after": show_value(change.get("after")),
    }


def run_json(module, cmd, ok_codes):
    rc, out, err = module.run_command(cmd)
    try:
        data = json.loads(out) if out.strip() else None
    except ValueError:
        data = None
    if rc not in ok_codes:
        msg = "`%s` failed (exit %d): %s" % (" ".join(cmd[:2]), rc, (err or out).strip())
        extra = {"rc": rc, "stdout": out, "stderr": err, "cmd": cmd}
        if isinstance(data, dict):
            extra["result"] = data
        module.fail_json(msg=msg, **extra)
    if not isinstance(data, dict):
        module.fail_json(
            msg="`%s` printed no JSON object" % " ".join(cmd[:2]),
            rc=rc,
            stdout=out,
            stderr=err,
            cmd=cmd,
        )
    return data


def main():
    module = AnsibleModule(
        argument_spec=dict(
            binary=dict(type="str", default="gpufix"),
            root=dict(type="path"),
            snapshot=dict(type="path"),
            config=dict(type="path"),
            env_file=dict(type="path"),
            values=dict(type="path"),
            playbooks=dict(type="path"),
            only=dict(type="list", elements="str", default=[]),
            allow=dict(type="list", elements="str", default=[]),
            deny=dict(type="list", elements="str", default=[]),
        ),
        supports_check_mode=True,
    )
    p = module.params
    binary = module.get_bin_path(p["binary"], required=True) if "/" not in p["binary"] else p["binary"]

    if module.check_mode:
        cmd = [binary, "audit", "--format", "json"] + common_args(p)
        if p["snapshot"]:
            cmd += ["--snapshot", p["snapshot"]]
        # audit exits 2 when it has findings: that is an answer, not an error.
        report = run_json(module, cmd, ok_codes=(0, 2))
        changes = [c for c in report.get("changes") or [] if would_apply(c, p["allow"], p["deny"])]
        findings = [
            {k: r.get(k) for k in ("id", "verdict", "severity", "messages", "reason") if r.get(k) is not None}
            for r in report.get("results") or []
            if r.get("verdict") in FINDINGS
        ]
        result = dict(changed=bool(changes), findings=findings, report=report, cmd=cmd)
        if module._diff:
            result["diff"] = [change_diff(c) for c in changes]
        module.exit_json(**result)

    if p["snapshot"]:
        module.fail_json(msg="`snapshot` is a recorded host and cannot be changed; use it in check mode")
    cmd = [binary, "apply", "--yes", "--format", "json"] + common_args(p)
    for kind in p["allow"]:
        cmd += ["--allow", kind]
    for kind in p["deny"]:
        cmd += ["--deny", kind]
    # apply exits 1 on error and after a rollback: the task fails with gpufix's message.
    applied = run_json(module, cmd, ok_codes=(0,))
    result = dict(
        changed=bool(applied.get("changed")),
        run=applied.get("run"),
        applied=applied.get("applied") or [],
        skipped=applied.get("skipped") or [],
        cmd=cmd,
    )
    if module._diff:
        result["diff"] = [change_diff(c) for c in result["applied"]]
    module.exit_json(**result)


if __name__ == "__main__":
    main()
