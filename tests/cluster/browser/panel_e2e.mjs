// Load the rocks_autotune panel in Debian's headless Chromium (playwright-core,
// no browser download) and report what it drew, as one JSON line on stdout.
//
//   node panel_e2e.mjs URL SCREENSHOT.png
//
// Checks nothing itself: tests/cluster/test_panel.py asserts on the report.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const [url, shot] = process.argv.slice(2);
if (!url || !shot) {
  console.error('usage: node panel_e2e.mjs URL SCREENSHOT.png');
  process.exit(2);
}
const profile = mkdtempSync(join(tmpdir(), 'rat-chromium-'));
// a fresh profile each run (playwright passes it as --user-data-dir)
const browser = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  timeout: 60000,
  viewport: { width: 1700, height: 1000 },  // wide enough for the trials table
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const report = { url, screenshot: shot, console: [], requests: [], failed: [] };
try {
  const page = await browser.newPage();
  page.on('console', (m) => { if (m.type() === 'error') report.console.push(m.text()); });
  page.on('pageerror', (e) => report.console.push('pageerror: ' + e.message));
  page.on('request', (r) => report.requests.push(r.url()));
  page.on('requestfailed', (r) => report.failed.push(r.url()));
  page.on('response', (r) => { if (r.status() >= 400) report.failed.push(r.status() + ' ' + r.url()); });
  const resp = await page.goto(url, { waitUntil: 'load', timeout: 30000 });
  report.status = resp ? resp.status() : null;
  // app.js sets data-rendered (the number of trials drawn) after each render
  await page.waitForFunction(() => document.body.dataset.rendered !== undefined, null, { timeout: 30000 });
  Object.assign(report, await page.evaluate(() => {
    // pixels of a canvas within `tol` of an #rrggbb colour: what a series drew
    function inked(canvas, hex, tol) {
      const ctx = canvas.getContext('2d');
      const { data } = ctx.getImageData(0, 0, canvas.width, canvas.height);
      const want = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
      let n = 0;
      let any = 0;
      for (let i = 0; i < data.length; i += 4) {
        if (data[i + 3] === 0) continue;
        any++;
        if (Math.abs(data[i] - want[0]) + Math.abs(data[i + 1] - want[1]) + Math.abs(data[i + 2] - want[2]) <= tol) n++;
      }
      return { painted: any, matching: n };
    }
    function chart(id, colours) {
      const c = document.querySelector('#' + id + ' canvas');
      if (!c) return { canvas: false };
      const out = { canvas: true, width: c.width, height: c.height, colours: {} };
      for (const [name, hex] of Object.entries(colours)) out.colours[name] = inked(c, hex, 60);
      out.painted = inked(c, '#000000', 0).painted;
      out.legend = Array.from(document.querySelectorAll('#' + id + ' .u-legend .u-series th'))
        .map((e) => e.textContent.trim());
      return out;
    }
    const rows = Array.from(document.querySelectorAll('#trials tbody tr'));
    return {
      rendered: Number(document.body.dataset.rendered),
      state: document.getElementById('state').textContent,
      rows: rows.length,
      row_indexes: rows.map((r) => Number(r.dataset.index)),
      header: Array.from(document.querySelectorAll('#trials thead th')).map((e) => e.textContent),
      confirm_rows: document.querySelectorAll('#confirm tbody tr').length,
      answer: document.getElementById('answer').textContent,
      headline: document.getElementById('headline').textContent,
      noise_note: document.getElementById('noise-note').textContent,
      design_note: document.getElementById('design-note').textContent,
      rounds_objective: chart('rounds-objective', { baseline: '#7f7f7f', margin: '#d62728' }),
      rounds_write_amp: chart('rounds-write-amp', { baseline: '#7f7f7f', budget: '#d62728' }),
      commands: document.getElementById('commands').textContent,
      convergence: chart('convergence', { best: '#1f77b4', feasible: '#2ca02c', infeasible: '#d62728', baseline: '#7f7f7f' }),
      tradeoff: chart('tradeoff', { budget: '#d62728', feasible: '#2ca02c', baseline: '#7f7f7f', default: '#9467bd', new_tuning: '#ff7f0e' }),
      uplot: typeof window.uPlot === 'function',
      // the last rollout: its section, and the rows of its OSDs in flight, failed or skipped
      rollout_hidden: document.getElementById('rollout-section').hidden,
      rollout_rows: Array.from(document.querySelectorAll('#rollout tbody tr'))
        .map((r) => ({ osd: Number(r.dataset.osd), status: r.dataset.status })),
      rollout_text: document.getElementById('rollout-text').textContent,
      rollout_summary: document.getElementById('rollout-summary').textContent,
    };
  }));
  await page.screenshot({ path: shot, fullPage: true });
} catch (e) {
  report.error = String(e && e.stack || e);
} finally {
  await browser.close();
  rmSync(profile, { recursive: true, force: true });
}
console.log(JSON.stringify(report));
