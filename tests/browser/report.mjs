// Loads `gpufix report` pages in a real headless Chromium (Debian's /usr/bin/chromium, driven by
// playwright-core over CDP) and checks what a person would see: no console or page errors, no
// request leaving the file, every lane the recording has data for drawn with its data, each
// finding's band inside its window on the chart's own x scale, the page usable at 1280x800, and a
// screenshot. Run by tests/report_browser.sh, which renders the pages first:
//   node tests/browser/report.mjs MANIFEST.json
// The manifest lists {name, page, runs: [recording.json, ...]}; the expectations (lanes, windows)
// are read from the recordings themselves, never from the page.
import { chromium } from "playwright-core";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const manifestPath = process.argv[2];
if (!manifestPath) {
  console.error("usage: node report.mjs MANIFEST.json");
  process.exit(2);
}
const manifest = JSON.parse(fs.readFileSync(manifestPath, "utf8"));
const outDir = path.dirname(manifestPath);
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";

// The lanes a recording calls for (the same rule as tests/report.rs `expected_lanes`).
function expectedLanes(r) {
  const gpus = r.gpus || [];
  const lanes = [];
  if (gpus.some((g) => g.utilization_gpu)) lanes.push("gpu-util");
  if (gpus.some((g) => g.memory_used_mib)) lanes.push("gpu-memory");
  if (gpus.some((g) => g.pcie_rx_mb_s || g.pcie_tx_mb_s)) lanes.push("pcie");
  if (gpus.some((g) => g.power_w)) lanes.push("gpu-power");
  if (gpus.some((g) => g.clock_sm_mhz)) lanes.push("gpu-clock");
  if (gpus.some((g) => g.throttle_reasons)) lanes.push("throttle");
  // a lane of readings that all failed (null throughout) is left out with a note
  if ((r.processes || []).some((p) => (p.cpu_percent || []).some((v) => v !== null))) lanes.push("cpu");
  if (r.main_thread) lanes.push("thread");
  if (r.progress) lanes.push("progress");
  const n = r.node;
  if (n && (n.cpu_busy_percent || n.cpu_pressure_percent || n.io_pressure_percent)) lanes.push("node");
  return lanes;
}

let passed = 0;
let failed = 0;
function check(ok, what) {
  if (ok) {
    passed++;
  } else {
    failed++;
    console.log(`FAIL ${what}`);
  }
}

const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), "gpufix-report-chromium-"));
const started = Date.now();
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath,
  headless: true,
  viewport: { width: 1280, height: 800 },
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});
console.log(`chromium ${context.browser()?.version() ?? "(persistent context)"} started in ${Date.now() - started} ms`);

// nothing but the page's own file may load
const offFile = [];
await context.route("**/*", (route) => {
  const url = route.request().url();
  if (url.startsWith("file://")) return route.continue();
  offFile.push(url);
  return route.abort();
});

try {
  for (const item of manifest) {
    const t0 = Date.now();
    const runs = item.runs.map((p) => JSON.parse(fs.readFileSync(p, "utf8")));
    const page = await context.newPage();
    const errors = [];
    const dialogs = [];
    page.on("console", (m) => {
      if (m.type() === "error" || m.type() === "warning") errors.push(`console ${m.type()}: ${m.text()}`);
    });
    page.on("pageerror", (e) => errors.push(`page error: ${e.message}`));
    page.on("dialog", (d) => {
      dialogs.push(d.message());
      d.dismiss().catch(() => {});
    });
    const before = offFile.length;
    const tag = item.name;
    try {
      await page.goto("file://" + path.resolve(item.page));
      await page.waitForSelector("body[data-drawn]", { timeout: 15000 });
    } catch (e) {
      check(false, `${tag}: the page did not draw (${e.message.split("\n")[0]}): ${errors.join("; ")}`);
      await page.close();
      continue;
    }

    for (let r = 0; r < runs.length; r++) {
      const want = expectedLanes(runs[r]);
      const lanes = await page.$$eval(`#run-${r} .lane`, (els) => els.map((e) => e.dataset.lane));
      check(JSON.stringify(lanes) === JSON.stringify(want), `${tag} run ${r}: lanes ${lanes} != ${want}`);
      for (const id of want) {
        const s = await page.evaluate(
          ([r, id]) => {
            const u = window.gpufixCharts[`${r}:${id}`];
            const lane = document.getElementById(`lane-${r}-${id}`);
            const canvas = lane && lane.querySelector("canvas");
            if (!u || !canvas) return null;
            let drawn = 0;
            for (let i = 1; i < u.data.length; i++) for (const v of u.data[i]) if (v != null) drawn++;
            const c = canvas.getBoundingClientRect();
            return {
              plotH: u.over.getBoundingClientRect().height,
              drawn,
              points: Number(lane.dataset.points),
              series: u.series.length - 1,
              canvasW: c.width,
              canvasH: c.height,
              visible: lane.checkVisibility(),
              left: lane.getBoundingClientRect().left,
              right: lane.getBoundingClientRect().right,
            };
          },
          [r, id],
        );
        check(s !== null, `${tag} run ${r} lane ${id}: no chart or canvas`);
        if (!s) continue;
        check(s.drawn > 0 && s.drawn === s.points, `${tag} run ${r} lane ${id}: ${s.drawn} values drawn, ${s.points} in the data`);
        check(s.series > 0 && s.canvasW > 100 && s.plotH >= 40, `${tag} run ${r} lane ${id}: empty chart ${JSON.stringify(s)}`);
        check(s.visible && s.left >= 0 && s.right <= 1280, `${tag} run ${r} lane ${id}: not visible within 1280 px ${JSON.stringify(s)}`);
      }

      // each finding's band, on every lane, spans its window on that chart's x scale (±1.5 px)
      const findings = runs[r].findings || [];
      for (let i = 0; i < findings.length; i++) {
        const f = findings[i];
        const bands = await page.evaluate(
          ([r, i]) =>
            Array.from(document.querySelectorAll(`#run-${r} .lane`)).map((lane) => {
              const u = window.gpufixCharts[`${r}:${lane.dataset.lane}`];
              const band = lane.querySelector(`.u-over .band[data-index="${i}"]`);
              if (!u || !band) return { lane: lane.dataset.lane, missing: true };
              const o = u.over.getBoundingClientRect();
              const b = band.getBoundingClientRect();
              return {
                lane: lane.dataset.lane,
                from: u.posToVal(b.left - o.left, "x"),
                to: u.posToVal(b.right - o.left, "x"),
                pxPerS: o.width / (u.scales.x.max - u.scales.x.min),
                min: u.scales.x.min,
                max: u.scales.x.max,
                inside: b.left >= o.left - 0.5 && b.right <= o.right + 0.5 && b.top >= o.top - 0.5 && b.bottom <= o.bottom + 0.5,
                label: band.textContent,
                shown: band.checkVisibility(),
              };
            }),
          [r, i],
        );
        for (const b of bands) {
          const where = `${tag} run ${r} lane ${b.lane} finding ${f.rule} [${f.window}]`;
          check(!b.missing, `${where}: no band`);
          if (b.missing) continue;
          const tol = 1.5 / b.pxPerS;
          const from = Math.max(f.window[0], b.min);
          const to = Math.min(f.window[1], b.max);
          check(b.shown && b.inside, `${where}: band not shown inside the plot area`);
          check(Math.abs(b.from - from) <= tol && Math.abs(b.to - to) <= tol, `${where}: band spans [${b.from}, ${b.to}]`);
          check(b.label === f.rule, `${where}: band labelled ${JSON.stringify(b.label)}`);
        }
      }
    }

    // zooming one lane zooms the run's others (the bands follow on the next check)
    const zoom = await page.evaluate(async () => {
      const frame = () => new Promise((r) => requestAnimationFrame(() => r()));
      const keys = Object.keys(window.gpufixCharts).filter((k) => k.startsWith("0:"));
      if (keys.length < 2) return null;
      const a = window.gpufixCharts[keys[0]];
      const full = [a.scales.x.min, a.scales.x.max];
      a.setScale("x", { min: 10, max: 20 });
      await frame();
      await frame();
      const b = window.gpufixCharts[keys[keys.length - 1]];
      const z = [b.scales.x.min, b.scales.x.max];
      a.setScale("x", { min: full[0], max: full[1] });
      await frame();
      return z;
    });
    if (zoom) check(zoom[0] === 10 && zoom[1] === 20, `${tag}: zoom not shared across lanes: ${zoom}`);

    // usable at 1280x800: no horizontal scroll of the body
    const layout = await page.evaluate(() => ({
      scrollW: document.documentElement.scrollWidth,
      clientW: document.documentElement.clientWidth,
      scripts: document.querySelectorAll("script").length,
      runs: Number(document.querySelector(".runs").dataset.runs),
    }));
    check(layout.scrollW <= layout.clientW, `${tag}: the body scrolls sideways (${layout.scrollW} > ${layout.clientW})`);
    check(layout.scripts === 2 + runs.length, `${tag}: ${layout.scripts} script elements`);
    check(layout.runs === runs.length, `${tag}: ${layout.runs} runs drawn`);

    if (item.hostile) {
      const job = await page.$eval("#run-0 table.facts", (t) => t.textContent);
      check(job.includes(runs[0].job.command.split("\u2028")[0]), `${tag}: the command line is not shown as text`);
    }
    check(dialogs.length === 0, `${tag}: a dialog opened: ${dialogs}`);
    check(errors.length === 0, `${tag}: ${errors.join("; ")}`);
    check(offFile.length === before, `${tag}: requests left the file: ${offFile.slice(before)}`);

    await page.screenshot({ path: path.join(outDir, `${tag}.png`) });
    await page.screenshot({ path: path.join(outDir, `${tag}-full.png`), fullPage: true });
    await page.close();
    console.log(`${tag}: checked in ${Date.now() - t0} ms`);
  }
} finally {
  await context.close();
  fs.rmSync(userDataDir, { recursive: true, force: true });
}
console.log(`report_browser: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
