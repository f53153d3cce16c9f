#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpufix contributors
# SPDX-License-Identifier: MIT OR Apache-2.0
"""Ansible module wrapping the gpufix CLI: `--check` runs `gpufix apply --dry-run`, a normal run
`gpufix apply --yes`, both with the same filters. gpufix does the work; this module only builds
argv and maps the JSON."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: gpufix
short_description: Find and fix why GPU training runs slowly, with gpufix
description:
  - In check mode runs C(gpufix apply --dry-run --format json) with the same C(allow), C(deny)
    and C(allow_disruptive) as a real run, so the binary itself decides what would be applied;
    with C(--diff) it shows a diff per change.
  - Otherwise runs C(gpufix apply --yes --format json), which applies the approved fixes in a
    transaction, verifies them and rolls back on failure.
  - C(changed) is true when there is (check mode) or was (apply) at least one change, so a second
    run reports C(changed=0) once the host is fixed. Changes that are not applied (manual, not
    allowed, disruptive without C(allow_disruptive)) are listed in C(not_applied) and never
    count as a change.
options:
  binary:
    description: The gpufix executable, a name on C(PATH) or a path.
    type: str
    default: gpufix
  root:
    description: Treat this directory as C(/) (a host mounted elsewhere, a fixture tree). A
      directory that does not exist fails the task.
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
  allow_disruptive:
    description:
      - Also apply disruptive fixes (C(--allow-disruptive)), such as modprobe, remount,
        persistence mode, power limits and clocks. Without it they stay in C(not_applied).
    type: bool
    default: false
notes:
  - Supports check mode and diff mode.
  - Secrets stay on the host. gpufix filters everything it prints (its privacy filter) - values
    of variables other than the GPU, CUDA, NCCL, PyTorch and threading settings it judges,
    values whose names mark a secret (C(TOKEN), C(KEY), C(PASSWORD), ...) and credential-shaped
    values are shown as C(<redacted>). The whole file texts of a change (C(before_text),
    C(after_text)) are used only for the C(--diff) output and are left out of C(applied) and
    C(not_applied).
  - No option takes a secret value - files are named by their path, fixes by their kind - so
    none is C(no_log), and the invocation Ansible logs on the host (and prints at C(-vvv)) holds
    no secret; what the named files hold is filtered by gpufix as above.
  - The gpufix binary must be installed on the managed host.
author:
  - gpufix contributors (@gpufix)
"""

EXAMPLES = r"""
- name: Show what gpufix would change
  gpufix.gpufix.gpufix:
    env_file: /etc/training/job.env
    allow: [env.unset, config.set]
  check_mode: true
  diff: true

- name: Apply safe environment fixes
  gpufix.gpufix.gpufix:
    env_file: /etc/training/job.env
    allow: [env.unset]
"""

RETURN = r"""
run:
  description: The apply run id, for C(gpufix rollback RUN).
  returned: when applied
  type: str
applied:
  description:
    - The changes that were applied (check mode, the changes that would be), without the whole
      file texts (see C(--diff)).
  returned: always
  type: list
  elements: dict
not_applied:
  description: Changes not applied, each with its reason (manual, not allowed, disruptive without
    C(allow_disruptive), declined).
  returned: always
  type: list
  elements: dict
notes:
  description: gpufix's notes on the run (a rule that passes only after a restart; why the
    re-check failed).
  returned: when applied
  type: list
  elements: str
recheck_failed:
  description: Every change was made and verified, but re-checking the rules failed (gpufix
    exit 4); the task is changed and warns with the reason.
  returned: when gpufix exits 4
  type: bool
cmd:
  description: The argv that was run.
  returned: always
  type: list
  elements: str
"""

import json
import os

from ansible.module_utils.basic import AnsibleModule

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


# Whole file texts: shown only as the --diff, never returned in `applied`.
FILE_TEXTS = ("before_text", "after_text")


def public(change):
    """A change as the task returns it: without the whole file texts."""
    return dict((k, v) for k, v in change.items() if k not in FILE_TEXTS)


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
    return rc, data


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
            allow_disruptive=dict(type="bool", default=False),
        ),
        supports_check_mode=True,
    )
    p = module.params
    binary = module.get_bin_path(p["binary"], required=True) if "/" not in p["binary"] else p["binary"]

    # A mistyped root is an error, never "nothing to change" (gpufix exits 1 on it too).
    if p["root"] and not os.path.isdir(p["root"]):
        module.fail_json(msg="`root` %s is not a directory; give the directory the host's / is mounted at" % p["root"])
    if p["snapshot"] and not module.check_mode:
        module.fail_json(msg="`snapshot` is a recorded host and cannot be changed; use it in check mode")
    mode = ["--dry-run"] if module.check_mode else ["--yes"]
    cmd = [binary, "apply"] + mode + ["--format", "json"] + common_args(p)
    if p["snapshot"]:
        cmd += ["--snapshot", p["snapshot"]]
    for kind in p["allow"]:
        cmd += ["--allow", kind]
    for kind in p["deny"]:
        cmd += ["--deny", kind]
    if p["allow_disruptive"]:
        cmd += ["--allow-disruptive"]
    # apply exits 1 on error and after a rollback: the task fails with gpufix's message. Exit 4:
    # every change was made and verified but re-checking the rules failed; the host changed, so
    # the task is changed (handlers fire) with a warning carrying the re-check's reason.
    rc, out = run_json(module, cmd, ok_codes=(0, 4))
    recheck_failed = not module.check_mode and rc == 4
    if module.check_mode:
        applied = out.get("would_apply") or []
        result = dict(changed=bool(applied), applied=[public(c) for c in applied])
    else:
        applied = out.get("applied") or []
        result = dict(changed=bool(out.get("changed")), run=out.get("run"), applied=[public(c) for c in applied])
        result["notes"] = out.get("notes") or []
        if recheck_failed:
            result["changed"] = True
            result["recheck_failed"] = True
            module.warn(
                "gpufix applied and verified every change, but re-checking the rules failed: %s"
                % ("; ".join(result["notes"]) or "no reason given")
            )
    # gpufix calls them `skipped`; Ansible reserves that key for a skipped task.
    result["not_applied"] = out.get("skipped") or []
    result["cmd"] = cmd
    if module._diff:
        result["diff"] = [change_diff(c) for c in applied]
    module.exit_json(**result)


if __name__ == "__main__":
    main()
