"""Tests for the benchmark's GPU-free parts: the synthetic dataset (cost per item, the simulated
slow disk), the harness helpers (dotenv parsing, plan judging, A/B windows), make_results.py on a
canned results.json, the checklist script copy, and bench/run.sh end to end with stand-ins for
gpufix and the training job (set BENCH_E2E=1; about a minute).

    python3 bench/test_bench.py        (needs numpy; pyyaml for the config and end-to-end tests)
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import harness

try:
    import imagedata
    import numpy as np
except ImportError:  # pragma: no cover - reported as skips
    np = None
try:
    import yaml
except ImportError:  # pragma: no cover
    yaml = None


@unittest.skipIf(np is None, "numpy is not installed")
class DatasetTest(unittest.TestCase):
    def test_item_is_a_normalized_chw_float_image_with_a_label(self):
        src = imagedata.ImageSource(image_size=224, decode_passes=2)
        img, label = src[7]
        self.assertEqual(img.shape, (3, 224, 224))
        self.assertEqual(img.dtype, np.float32)
        self.assertTrue(img.flags["C_CONTIGUOUS"])
        self.assertTrue(0 <= label < 1000)
        self.assertLess(abs(float(img.mean())), 1.5)
        self.assertTrue(np.isfinite(img).all())

    def test_items_are_deterministic_per_index_and_differ_between_indices(self):
        a = imagedata.ImageSource(decode_passes=1)
        b = imagedata.ImageSource(decode_passes=1)
        np.testing.assert_array_equal(a[3][0], b[3][0])
        self.assertFalse(np.array_equal(a[3][0], a[4][0]))

    def test_out_of_range_index_raises(self):
        src = imagedata.ImageSource(length=5)
        with self.assertRaises(IndexError):
            src[5]

    def test_cpu_cost_per_item_is_in_the_decode_range_and_grows_with_passes(self):
        # Generous bounds: this machine may be shared and slow, the GPU host is faster.
        base = imagedata.cpu_ms_per_item(imagedata.ImageSource(decode_passes=0), items=20)
        heavy = imagedata.cpu_ms_per_item(imagedata.ImageSource(decode_passes=8), items=20)
        self.assertGreater(base, 0.05)
        self.assertLess(base, 60.0)
        self.assertGreater(heavy, base * 1.5)

    def test_simulated_slow_disk_costs_wall_time_not_cpu(self):
        fast = imagedata.ImageSource(decode_passes=0)
        slow = imagedata.ImageSource(decode_passes=0, slow_read_ms=25)
        slow[0]
        t0, c0 = time.perf_counter(), time.process_time()
        for i in range(1, 9):
            slow[i]
        wall_ms = (time.perf_counter() - t0) * 1000 / 8
        cpu_slow = (time.process_time() - c0) * 1000 / 8
        cpu_fast = imagedata.cpu_ms_per_item(fast, items=8)
        self.assertGreaterEqual(wall_ms, 25.0)
        self.assertLess(cpu_slow, cpu_fast + 10.0)

    def test_box_blur_keeps_constants_and_matches_a_direct_sum(self):
        const = np.full((3, 16, 16), 7.0, dtype=np.float32)
        np.testing.assert_allclose(imagedata.box_blur(const, 5, 1), const, rtol=1e-6)
        rng = np.random.default_rng(0)
        x = rng.random((3, 12, 10), dtype=np.float32)
        got = imagedata.box_blur(x, 3, 2)
        padded = np.pad(x, [(0, 0), (0, 0), (1, 1)], mode="edge")
        want = (padded[:, :, :-2] + padded[:, :, 1:-1] + padded[:, :, 2:]) / 3
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)

    def test_choose_passes_rounds_to_the_target_and_never_goes_negative(self):
        self.assertEqual(imagedata.choose_passes(0.8, 0.5, 2.0), 2)
        self.assertEqual(imagedata.choose_passes(0.8, 0.5, 2.1), 3)
        self.assertEqual(imagedata.choose_passes(3.0, 0.5, 2.0), 0)
        self.assertEqual(imagedata.choose_passes(0.1, 0.0, 2.0), 0)
        self.assertEqual(imagedata.choose_passes(0.0, 0.01, 100.0, max_passes=40), 40)


@unittest.skipIf(np is None or yaml is None, "numpy and pyyaml are needed to import train.py")
class TrainConfigTest(unittest.TestCase):
    def setUp(self):
        import train

        self.train = train
        self.dir = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.dir)

    def write(self, text: str) -> Path:
        p = self.dir / "c.yaml"
        p.write_text(text)
        return p

    def test_healthy_config_loads_with_its_documented_values(self):
        cfg = self.train.load_config(BENCH / "configs" / "healthy.yaml")
        self.assertEqual(cfg["data"]["num_workers"], 8)
        self.assertIs(cfg["data"]["pin_memory"], True)
        self.assertIs(cfg["data"]["persistent_workers"], True)
        self.assertIs(cfg["train"]["sync_every_step"], False)

    def test_unknown_key_is_an_error_naming_it(self):
        with self.assertRaisesRegex(self.train.ConfigError, "`data.num_worker`"):
            self.train.load_config(self.write("data:\n  num_worker: 8\n"))

    def test_wrong_type_is_an_error(self):
        with self.assertRaisesRegex(self.train.ConfigError, "`data.pin_memory`"):
            self.train.load_config(self.write("data:\n  pin_memory: 'yes'\n"))


class DotenvTest(unittest.TestCase):
    def parse(self, text: str):
        with tempfile.NamedTemporaryFile("w", suffix=".env", delete=False) as f:
            f.write(text)
        self.addCleanup(os.unlink, f.name)
        return harness.read_dotenv(Path(f.name))

    def test_comments_export_and_quotes(self):
        got = self.parse("# c\n\nexport A=1\nB=\"x y\"\nC='$(rm -rf /)'\nD=a=b\n")
        self.assertEqual(got, [("A", "1"), ("B", "x y"), ("C", "$(rm -rf /)"), ("D", "a=b")])

    def test_bad_name_and_bad_line_are_errors(self):
        with self.assertRaisesRegex(ValueError, "not a valid variable name"):
            self.parse("1A=2\n")
        with self.assertRaisesRegex(ValueError, "not NAME=VALUE"):
            self.parse("JUSTTEXT\n")


def plan(verdicts: dict) -> dict:
    return {"results": [{"id": k, "verdict": v} for k, v in verdicts.items()], "summary": {}}


class JudgePlanTest(unittest.TestCase):
    def test_expected_rule_fired_and_other_fails_are_false_findings(self):
        j = harness.judge_plan(
            plan(
                {
                    "data.workers-too-few": "fail",
                    "launch.gpu-idle-gaps": "fail",
                    "driver.persistence-off": "fail",
                    "x": "pass",
                }
            ),
            None,
            ["data.workers-too-few"],
            ["launch.gpu-idle-gaps"],
        )
        self.assertTrue(j["detected"])
        self.assertEqual(j["fired"], ["data.workers-too-few"])
        self.assertEqual(j["false_findings"], ["driver.persistence-off"])
        self.assertEqual(j["symptoms"], ["launch.gpu-idle-gaps"])

    def test_any_one_expected_id_counts(self):
        j = harness.judge_plan(
            plan({"launch.gpu-idle-gaps": "unknown", "data.dataloader-wait": "fail"}),
            None,
            ["launch.gpu-idle-gaps", "data.dataloader-wait"],
            [],
        )
        self.assertTrue(j["detected"])
        self.assertEqual(j["fired"], ["data.dataloader-wait"])
        self.assertEqual(j["expected_verdicts"], {"launch.gpu-idle-gaps": "unknown", "data.dataloader-wait": "fail"})

    def test_unknown_is_not_detection(self):
        j = harness.judge_plan(plan({"cuda.launch-blocking": "unknown"}), None, ["cuda.launch-blocking"], [])
        self.assertFalse(j["detected"])

    def test_healthy_detects_only_with_no_fail(self):
        self.assertTrue(harness.judge_plan(plan({"a": "pass", "b": "unknown"}), None, [], [])["detected"])
        j = harness.judge_plan(plan({"a": "fail"}), None, [], [])
        self.assertFalse(j["detected"])
        self.assertEqual(j["false_findings"], ["a"])

    def test_unparsable_plan_is_reported_not_raised(self):
        j = harness.judge_plan(None, "`plan.json` is empty", ["a"], [])
        self.assertFalse(j["parsed"])
        self.assertFalse(j["detected"])
        self.assertEqual(j["error"], "`plan.json` is empty")
        self.assertFalse(harness.judge_plan({"no": "results"}, None, ["a"], [])["parsed"])


class WindowTest(unittest.TestCase):
    def test_ab_means_and_slowdown(self):
        # 1000 samples/s for t in [0, 10), then 990 samples/s for t in [10, 20)
        points = [(float(t), 1000 * t) for t in range(11)] + [(10.0 + t, 10000 + 990 * t) for t in range(1, 11)]
        s = harness.ab_summary(points, [("A", 0, 10), ("B", 10, 20)])
        self.assertEqual(s["unwatched_mean"], 1000.0)
        self.assertEqual(s["watched_mean"], 990.0)
        self.assertAlmostEqual(s["slowdown_pct"], 1.0, places=3)

    @staticmethod
    def drifting_job(labels: str, cost: float):
        """A job that slows by 10 samples/s every second; a recorded (B) window costs `cost`."""
        points, windows, n, t = [], [], 0.0, 0.0
        for label in labels:
            start = t
            for _ in range(10):
                points.append((t, int(n)))
                n += (1000.0 - 10.0 * t) * ((1.0 - cost) if label == "B" else 1.0)
                t += 1.0
            points.append((t, int(n)))
            windows.append((label, start, t))
            t += 0.001
        return harness.ab_summary(points, windows)

    def test_local_slowdown_cancels_a_linear_drift(self):
        s = self.drifting_job("ABABABABABABA", 0.01)
        self.assertAlmostEqual(s["local_slowdown_pct"], 1.0, delta=0.1)
        lo, hi = s["local_ci95_pct"]
        self.assertLess(lo, s["local_slowdown_pct"])
        self.assertGreater(hi, s["local_slowdown_pct"])
        self.assertEqual(s["local_n"], 6)
        # a recorder that costs nothing shows about nothing, drift or not
        self.assertAlmostEqual(self.drifting_job("ABABABABABABA", 0.0)["local_slowdown_pct"], 0.0, delta=0.1)
        # the plain means of an unbalanced order take the drift for a cost
        self.assertGreater(self.drifting_job("ABABAB", 0.0)["slowdown_pct"], 5.0)

    def test_window_with_too_few_points_has_no_rate(self):
        self.assertIsNone(harness.window_rate([(0.0, 0), (5.0, 10)], 1, 4)["samples_per_s"])


def canned_results() -> dict:
    def fault(name, target, deg, after, fails, expect, also_ok=(), changed=True):
        exp_fired = [e for e in expect if e in fails]
        return {
            "name": name,
            "target": target,
            "overrides": [],
            "env": [],
            "expected": list(expect),
            "also_ok": list(also_ok),
            "inputs": [],
            "degraded": {"samples_per_s": deg, "gpu_util_mean": 40.0, "exit_code": 0},
            "after": None if after is None else {"samples_per_s": after, "gpu_util_mean": 99.0, "exit_code": 0},
            "plan": {
                "parsed": True,
                "exit_code": 2 if fails else 0,
                "fails": list(fails),
                "fired": exp_fired,
                "detected": bool(exp_fired) if expect else not fails,
                "false_findings": [f for f in fails if f not in expect and f not in also_ok],
                "expected_verdicts": {e: ("fail" if e in fails else "pass") for e in expect},
            },
            "apply": {"exit_code": 0, "files_changed": changed, "changed_files": ["config.yaml"] if changed else []},
            "after_plan": None,
            "note": None,
        }

    return {
        "version": 1,
        "host": {"gpu": "NVIDIA H200, 580.159.04, 143771 MiB", "cpus": 16},
        "settings": {"measure_s": 8, "quick": 0, "decode_passes": 3},
        "gpufix": {"version": "gpufix 0.1.0"},
        "faults": [
            fault("healthy", "clean", 2000.0, None, [], [], changed=False),
            fault(
                "workers0",
                "recover",
                500.0,
                1980.0,
                ["data.workers-too-few", "launch.gpu-idle-gaps"],
                ["data.workers-too-few"],
                ["launch.gpu-idle-gaps"],
            ),
            fault("workers2", "recover", 1000.0, 1600.0, ["data.workers-too-few"], ["data.workers-too-few"]),
            fault(
                "launch_blocking",
                "recover",
                1500.0,
                None,
                ["driver.persistence-off"],
                ["cuda.launch-blocking"],
                changed=False,
            ),
            fault(
                "slow_disk_simulated",
                "manual",
                700.0,
                None,
                ["data.dataloader-wait"],
                ["launch.gpu-idle-gaps", "data.dataloader-wait"],
                changed=False,
            ),
        ],
        "overhead": {
            "gpufix_plan_sample_0s": {"median_s": 0.21, "runs_s": [0.2, 0.21, 0.22], "exit_codes": [2, 2, 2]},
            "ab": {
                "windows": [
                    {"label": "A", "samples_per_s": 2000.0, "span_s": 30.0},
                    {"label": "B", "samples_per_s": 1990.0, "span_s": 30.4},
                ],
                "unwatched_mean": 2000.0,
                "watched_mean": 1990.0,
                "slowdown_pct": 0.5,
            },
            "gpu_diagnose_commands": {"lsmod": None, "iostat": None, "awk": "/usr/bin/awk"},
        },
    }


class MakeResultsTest(unittest.TestCase):
    def render(self, doc) -> str:
        d = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, d)
        (d / "results.json").write_text(json.dumps(doc))
        subprocess.run(
            [sys.executable, str(BENCH / "make_results.py"), str(d / "results.json"), "-o", str(d / "R.md")], check=True
        )
        return (d / "R.md").read_text()

    def row(self, md: str, name: str) -> list[str]:
        line = next(line for line in md.splitlines() if line.startswith(f"| {name} |"))
        return [c.strip() for c in line.strip("|").split("|")]

    def test_rows_show_rates_recovery_and_verdicts(self):
        md = self.render(canned_results())
        w0 = self.row(md, "workers0")
        self.assertEqual(w0[2], "yes: `data.workers-too-few`")
        self.assertEqual(w0[3], "none")  # the symptom rule is not a false finding
        self.assertEqual(w0[4], "2,000")
        self.assertEqual(w0[5], "500 (40% util)")
        self.assertEqual(w0[7], "99.0%")
        self.assertEqual(w0[8], "yes")
        w2 = self.row(md, "workers2")
        self.assertEqual(w2[7], "80.0%")
        self.assertEqual(w2[8], "**no**: recovered 80.0% < 95%")
        lb = self.row(md, "launch_blocking")
        self.assertEqual(lb[2], "no")
        self.assertEqual(lb[3], "`driver.persistence-off`")
        self.assertTrue(lb[8].startswith("**no**: not detected (cuda.launch-blocking=pass)"))
        sd = self.row(md, "slow_disk_simulated")
        self.assertEqual(sd[2], "yes: `data.dataloader-wait`")
        self.assertEqual(sd[8], "yes")

    def test_targets_summarize_the_issue_goals(self):
        md = self.render(canned_results())
        self.assertIn("- Every fault detected: no (3 of 4; missed: launch_blocking).", md)
        self.assertIn("- No false finding on the healthy job: yes.", md)
        self.assertIn("(config/env fixes): no (workers0 99.0%; workers2 80.0%; launch_blocking —).", md)
        self.assertIn("costs < 1% of its throughput: yes (+0.50%).", md)
        self.assertIn("missing on this host: `lsmod`, `iostat`.", md)

    def test_false_finding_on_healthy_fails_that_target(self):
        doc = canned_results()
        h = doc["faults"][0]
        h["plan"].update(
            fails=["memory.allocator-fragmentation"], false_findings=["memory.allocator-fragmentation"], detected=False
        )
        md = self.render(doc)
        self.assertIn(
            "- No false finding on the healthy job: no: false findings: `memory.allocator-fragmentation`.", md
        )
        self.assertEqual(self.row(md, "healthy")[3], "`memory.allocator-fragmentation`")

    def test_split_runs_merge_into_one_report(self):
        full = canned_results()
        faults = {k: v for k, v in full.items() if k != "overhead"}
        over = {"version": 1, "faults": [], "overhead": copy.deepcopy(full["overhead"])}
        d = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, d)
        (d / "a.json").write_text(json.dumps(faults))
        (d / "b.json").write_text(json.dumps(over))
        out = subprocess.run(
            [sys.executable, str(BENCH / "make_results.py"), str(d / "a.json"), str(d / "b.json")],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        self.assertIn("| workers0 |", out)
        self.assertIn("| mean B (watched) | 1,990.0 | |", out)


class ChecklistScriptTest(unittest.TestCase):
    def test_copy_is_the_seed_line_with_line_breaks_restored(self):
        candidates = [
            BENCH.parent / "shared" / "seed",
            BENCH.parent.parent / "shared" / "seed",
            Path("/work/shared/seed"),
        ]
        seed = next(
            (c / "000_d50e187c06fa1e0e.txt" for c in candidates if (c / "000_d50e187c06fa1e0e.txt").exists()), None
        )
        if seed is None:
            self.skipTest("the seed checklist is not beside this checkout")
        line = next(
            x
            for x in seed.read_text(encoding="utf-8").splitlines()
            if x.startswith("#!/bin/bash # save as gpu_diagnose.sh")
        )
        ours = [
            x
            for x in (BENCH / "gpu_diagnose.sh").read_text(encoding="utf-8").splitlines()
            if not x.startswith("# [bench]")
        ]
        self.assertEqual(" ".join(ours), line)


@unittest.skipUnless(os.environ.get("BENCH_E2E") == "1", "set BENCH_E2E=1 to run bench/run.sh end to end")
@unittest.skipIf(np is None or yaml is None, "numpy and pyyaml are needed")
class EndToEndTest(unittest.TestCase):
    def test_run_sh_with_stand_ins_records_every_fault(self):
        d = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, d)
        gpufix = d / "gpufix"
        gpufix.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{BENCH / "testdata" / "fake_gpufix.py"}" "$@"\n')
        gpufix.chmod(0o755)
        env = dict(os.environ, BENCH_TRAIN=str(BENCH / "testdata" / "fake_train.py"))
        p = subprocess.run(
            [
                "bash",
                str(BENCH / "run.sh"),
                "--gpufix",
                str(gpufix),
                "--out",
                str(d / "out"),
                "--work",
                str(d / "work"),
                "--quick",
                "--measure-s",
                "1",
                "--ab-window",
                "1",
                "--python",
                sys.executable,
                "--sizing",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        self.assertEqual(p.returncode, 0, p.stdout[-3000:] + p.stderr[-3000:])
        res = json.loads((d / "out" / "results.json").read_text())
        by = {f["name"]: f for f in res["faults"]}
        self.assertEqual(len(by), 8)
        self.assertEqual(by["healthy"]["plan"]["fails"], [])
        self.assertEqual(by["workers0"]["recovered_fraction"], 1.0)
        self.assertEqual(by["workers0"]["degraded_fraction"], 0.25)
        self.assertEqual(by["launch_blocking"]["after"]["env"]["CUDA_LAUNCH_BLOCKING"], None)
        self.assertEqual(by["launch_blocking"]["degraded"]["env"]["CUDA_LAUNCH_BLOCKING"], "1")
        self.assertEqual(by["fragmentation"]["after"]["env"]["PYTORCH_CUDA_ALLOC_CONF"], "expandable_segments:True")
        self.assertIsNone(by["item_sync"]["after"])
        self.assertEqual(by["slow_disk_simulated"]["plan"]["fired"], ["data.dataloader-wait"])
        self.assertIsNotNone(res["overhead"]["ab"]["unwatched_mean"])
        # the stand-in job reports 1000 samples/s alone, so 4 workers' worth is 4 ms per item
        self.assertEqual(res["sizing"]["calibration"]["target_ms"], 4.0)
        self.assertEqual(res["sizing"]["model_only"]["samples_per_s"], 1000.0)
        self.assertIn("data_only", res["sizing"])
        self.assertEqual(res["settings"]["decode_passes"], res["sizing"]["calibration"]["decode_passes"])
        for name in ("results.json", "RESULTS.md", "run.log", "artifacts.tar.gz"):
            self.assertTrue((d / "out" / name).exists(), name)
        self.assertLessEqual(len(list((d / "out").iterdir())), 8)


if __name__ == "__main__":
    unittest.main(verbosity=2)
