// gpufix report: draws each run's lanes (script.run-data, JSON written by src/render/html.rs)
// with uPlot. Text is set through textContent only; nothing is fetched.
(function () {
  "use strict";
  var STATE_COLORS = ["#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#1f77b4", "#7f7f7f"];
  var PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
    "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
  // "RUN:LANE" -> the uPlot instance, for tests and the browser console
  var charts = {};
  window.gpufixCharts = charts;

  function widthOf(el) {
    return Math.max(200, Math.floor(el.getBoundingClientRect().width));
  }

  function fmt(v) {
    if (v == null) return "--";
    var a = Math.abs(v);
    return a >= 1e5 ? (v / 1000).toFixed(0) + "k" : a >= 1000 ? v.toFixed(0) : a >= 10 ? v.toFixed(1) : v.toFixed(2);
  }

  // the findings' windows as shaded bands over the plotting area, labelled with the rule id
  function placeBands(u, bands) {
    var over = u.over;
    var min = u.scales.x.min, max = u.scales.x.max;
    bands.forEach(function (b, i) {
      var el = over.querySelector('.band[data-index="' + i + '"]');
      if (!el) {
        el = document.createElement("div");
        el.className = "band";
        el.setAttribute("data-index", String(i));
        el.setAttribute("data-rule", b.rule);
        el.setAttribute("data-from", String(b.from));
        el.setAttribute("data-to", String(b.to));
        var label = document.createElement("span");
        label.textContent = b.rule;
        label.style.top = (1 + 12 * (i % 4)) + "px";
        el.appendChild(label);
        over.appendChild(el);
      }
      var from = Math.max(b.from, min), to = Math.min(b.to, max);
      if (!(to >= from)) {
        el.style.display = "none";
        return;
      }
      var x0 = u.valToPos(from, "x"), x1 = u.valToPos(to, "x");
      el.style.display = "";
      el.style.left = x0 + "px";
      el.style.width = Math.max(1, x1 - x0) + "px";
    });
  }

  // a state lane: per sample a band of colour (a sample lasts until the next); with several
  // series (one per GPU) each gets its own strip, top to bottom
  function drawStates(u, step, colors) {
    var ctx = u.ctx, xs = u.data[0];
    var n = u.data.length - 1;
    var top = u.bbox.top, h = u.bbox.height / Math.max(1, n);
    ctx.save();
    ctx.beginPath();
    ctx.rect(u.bbox.left, u.bbox.top, u.bbox.width, u.bbox.height);
    ctx.clip();
    for (var k = 1; k <= n; k++) {
      var ys = u.data[k], y0 = top + (k - 1) * h;
      for (var i = 0; i < xs.length; i++) {
        var end = i + 1 < xs.length ? xs[i + 1] : xs[i] + step;
        var x0 = u.valToPos(xs[i], "x", true), x1 = u.valToPos(end, "x", true);
        var s = ys[i];
        if (s === undefined) continue;
        ctx.fillStyle = s === null ? "#e0e0e0" : colors[s];
        ctx.fillRect(x0, y0, Math.max(1, x1 - x0), Math.max(1, h - (n > 1 ? 1 : 0)));
      }
    }
    ctx.restore();
  }

  function lane(run, key, spec, group, sync) {
    var box = document.getElementById("lane-" + key + "-" + spec.id);
    var chartEl = box.querySelector(".chart");
    var tables = spec.series.map(function (s) { return [run.times[s.t], s.v]; });
    var data = tables.length === 1 ? tables[0] : uPlot.join(tables);
    var isState = spec.kind === "state";
    var names = spec.categories ? spec.categories.map(function (c) { return c[0]; }) : run.states;
    var colors = spec.categories ? spec.categories.map(function (c) { return c[1]; }) : STATE_COLORS;
    var series = [{ label: "time", value: function (u, v) { return v == null ? "--" : v.toFixed(1) + " s"; } }];
    spec.series.forEach(function (s, i) {
      if (isState) {
        series.push({
          label: s.label, stroke: "transparent", points: { show: false },
          paths: function () { return null; },
          value: function (u, v) { return v == null ? "--" : names[v]; }
        });
      } else {
        series.push({
          label: s.label, stroke: PALETTE[i % PALETTE.length], width: 1.5,
          value: function (u, v) { return fmt(v); }
        });
      }
    });
    var xs = run.times[spec.series[0].t];
    var step = xs.length > 1 ? (xs[xs.length - 1] - xs[0]) / (xs.length - 1) : 1;
    var yScale = isState ? { range: [0, 1] } : spec.y_max != null ? { range: [0, spec.y_max] } : {
      range: function (u, min, max) { return [0, max != null && max > 0 ? max * 1.05 : 1]; }
    };
    var opts = {
      width: widthOf(chartEl),
      height: isState ? 110 : 160,
      cursor: { sync: { key: "gpufix-run-" + key }, drag: { x: true, y: false } },
      scales: {
        x: {
          time: false,
          // the whole window unless zoomed: uPlot asks with the data's extent when it autoscales
          // (at first and on double-click), and with the selection when zoomed
          range: function (u, min, max) {
            var x = u.data[0];
            return min === x[0] && max === x[x.length - 1] ? [0, run.duration] : [min, max];
          }
        },
        y: yScale
      },
      // the state lane keeps an empty y axis so that its x axis lines up with the other lanes'
      axes: [{}, isState ? { size: 60, ticks: { show: false }, grid: { show: false },
        values: function (u, vals) { return vals.map(function () { return ""; }); } }
        : { size: 60, values: function (u, vals) { return vals.map(fmt); } }],
      series: series,
      hooks: {
        draw: [function (u) {
          if (isState) drawStates(u, step, colors);
          placeBands(u, run.bands);
        }],
        setScale: [function (u, k) {
          if (k !== "x" || sync.busy) return;
          sync.busy = true;
          group.forEach(function (o) {
            if (o !== u) o.setScale("x", { min: u.scales.x.min, max: u.scales.x.max });
          });
          sync.busy = false;
        }]
      }
    };
    var u = new uPlot(opts, data, chartEl);
    charts[key + ":" + spec.id] = u;
    group.push(u);
  }

  document.querySelectorAll("script.run-data").forEach(function (el) {
    var run = JSON.parse(el.textContent);
    var key = el.getAttribute("data-run");
    var group = [], sync = { busy: false };
    run.lanes.forEach(function (spec) { lane(run, key, spec, group, sync); });
  });

  var pending = null;
  window.addEventListener("resize", function () {
    if (pending) clearTimeout(pending);
    pending = setTimeout(function () {
      Object.keys(charts).forEach(function (k) {
        var u = charts[k];
        u.setSize({ width: widthOf(u.root.parentNode), height: u.height });
      });
    }, 100);
  });
  document.body.setAttribute("data-drawn", String(Object.keys(charts).length));
})();
