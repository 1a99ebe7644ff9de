// The rocks_autotune panel: everything is drawn from the JSON API
// (api/status, api/trials); charts with the vendored uPlot.  Text goes into
// the DOM with textContent only, never as HTML.
(function () {
  'use strict';

  const COLORS = {
    best: '#1f77b4', baseline: '#7f7f7f', feasible: '#2ca02c', infeasible: '#d62728',
    budget: '#d62728', default: '#9467bd', new_tuning: '#ff7f0e', new_tuning_lz4: '#8c564b',
  };
  const MARKER_LABELS = {
    default: 'Ceph default', new_tuning: 'New Tuning (seed)', new_tuning_lz4: 'New Tuning + LZ4',
  };
  const ACTIVE = ['running', 'stopping', 'restoring'];
  const MiB = 1 << 20;
  const charts = {};
  let last = null;  // [status, trials] of the last refresh

  const $ = (id) => document.getElementById(id);

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }

  function fmt(v, digits) {
    if (v === null || v === undefined || Number.isNaN(v)) return '-';
    return Number(v).toFixed(digits);
  }

  function pct(v) { return v === null || v === undefined ? '-' : (100 * v).toFixed(1) + '%'; }

  function when(t) { return t ? new Date(t * 1000).toLocaleString() : '-'; }

  async function getJSON(path) {
    const r = await fetch(path, { cache: 'no-store', credentials: 'same-origin' });
    if (!r.ok) throw new Error(path + ': HTTP ' + r.status);
    return r.json();
  }

  // ------------------------------------------------------------ session

  function renderSummary(st) {
    const badge = $('state');
    badge.textContent = st.state + (st.phase && st.state !== 'idle' ? ' (' + st.phase + ')' : '');
    badge.className = 'badge ' + st.state;
    // an ended session's answer, the same lines as `ceph rocks-autotune status`
    const head = $('headline');
    head.hidden = !(st.summary && st.summary.length);
    head.textContent = head.hidden ? '' : st.summary.join('\n');
    const dl = $('summary');
    dl.replaceChildren();
    const add = (k, v) => { if (v !== undefined && v !== null && v !== '') { dl.append(el('dt', k), el('dd', v)); } };
    if (st.state === 'idle') {
      add('state', 'no tuning session has run: ceph rocks-autotune start');
      add('error', st.error);
    } else {
      const p = st.params || {};
      add('canary', 'osd.' + st.osd + ' - ' + st.reason);
      add('parameters', 'trials ' + p.trials + ', budget ' + p.budget + 'x baseline write-amp, workload '
          + p.workload + ', window ' + fmt(p.duration, 0) + ' s');
      add('message', st.message);
      add('error', st.error);
      add('started', when(st.started));
      add('ended', st.ended ? when(st.ended) : null);
      add('session', st.id);
      if (st.current) add('in flight', 'trial ' + st.current.index + ' (' + st.current.kind + ')');
      if (st.health && st.health.length) add('health checks', st.health.join(', '));
      if (st.other_checks && st.other_checks.length) {
        add('other health checks', st.other_checks.join(', ')
            + (p.force ? ' (not blocking: --force)' : ' (trials wait for them: no --force)'));
      }
      if (st.crashes && st.crashes.length) {
        add('canary crashes', st.crashes.join(', ') + ' (failed trials; read, then ceph crash archive <id>)');
      }
    }
    const prog = st.progress || 0;
    $('progress-bar').style.width = (100 * prog).toFixed(1) + '%';
    $('progress-text').textContent = st.state === 'idle' ? '' :
      (st.baseline_runs_done || 0) + ' baseline run(s), ' + (st.trials_done || 0) + ' of '
      + (st.trials_planned || '?') + ' trials, ' + (st.confirm_done || 0) + ' confirmation measurement(s) ('
      + pct(prog) + ')';
  }

  // ------------------------------------------------------------ rollout

  // the last apply or revert (status `rollout`): what it does, its OSDs'
  // counts by status, and those in flight, failed or skipped (a few: every
  // OSD is `ceph rocks-autotune status --osds`)
  function renderRollout(st) {
    const ro = st.rollout;
    $('rollout-section').hidden = !ro;
    if (!ro) return;
    const dl = $('rollout-summary');
    dl.replaceChildren();
    const add = (k, v) => { if (v !== undefined && v !== null && v !== '') { dl.append(el('dt', k), el('dd', v)); } };
    add(ro.kind, ro.kind === 'apply' ? 'to ' + ro.target : 'of apply ' + ro.of);
    add('state', ro.state + ' (' + ro.phase + ')');
    add('message', ro.message);
    add('error', ro.error);
    if (ro.kind === 'apply') add('options', ro.options + ' (from ' + ro.source + ')');
    add('started', when(ro.started));
    add('ended', ro.ended ? when(ro.ended) : null);
    if (ro.current !== null && ro.current !== undefined) add('in flight', 'osd.' + ro.current);
    if (ro.health && ro.health.length) add('health checks', ro.health.join(', '));
    $('rollout-bar').style.width = (100 * (ro.progress || 0)).toFixed(1) + '%';
    const c = ro.counts;
    $('rollout-text').textContent = c.done + ' done, ' + c.restarting + ' restarting, ' + c.pending
      + ' pending, ' + c.failed + ' failed' + (c.skipped ? ', ' + c.skipped + ' skipped' : '')
      + ', of ' + ro.total + ' OSD(s) (' + pct(ro.progress) + ')';
    const table = $('rollout');
    table.hidden = !ro.notable.length;
    const head = el('tr');
    for (const h of ['OSD', 'host', 'status', 'note']) head.append(el('th', h));
    table.tHead.replaceChildren(head);
    const body = table.tBodies[0];
    body.replaceChildren();
    for (const o of ro.notable) {
      const tr = el('tr', null, o.status);
      tr.dataset.osd = o.osd;
      tr.dataset.status = o.status;
      const back = o.put_back === 'done' ? 'put back on its prior options'
        : o.put_back === 'failed' ? 'NOT put back on its prior options' : '';
      tr.append(el('td', 'osd.' + o.osd), el('td', o.host || '-'),
        el('td', o.status, 'status'), el('td', [o.error, back].filter((x) => x).join('; ')));
      body.append(tr);
    }
    $('rollout-more').textContent = ro.notable_more
      ? 'and ' + ro.notable_more + ' more in flight, failed or skipped: ceph rocks-autotune status --osds' : '';
  }

  // ------------------------------------------------------------ the answer

  const FIGURES = [['objective', null], ['kv_sync_lat', 'kv_sync latency'], ['write_amp', 'write-amp']];
  const ARM_COLORS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#9467bd', '#8c564b', '#e377c2', '#17becf',
    '#bcbd22', '#7f7f7f', '#d62728'];

  function objectiveName(key) { return key === 'op_w_lat_ms' ? 'client write latency' : 'IOPS'; }

  function ratioText(r) {
    if (!r || r.median === null || r.median === undefined) return '-';
    const open = (v) => v === null || v === undefined;
    if (open(r.low) || open(r.high)) return r.median.toFixed(2) + 'x (not enough rounds for an interval yet)';
    return r.median.toFixed(2) + 'x [' + r.low.toFixed(2) + ', ' + r.high.toFixed(2) + ']';
  }

  function confirmation(st) {
    const c = st.confirmation;
    return c && c.result ? c : null;
  }

  function renderAnswer(st) {
    const c = confirmation(st);
    const p = $('answer');
    const best = st.best;
    if (best) {
      p.textContent = best.summary.charAt(0).toUpperCase() + best.summary.slice(1) + '.';
      p.className = 'answer ' + (best.keeps_current ? 'keep' : 'recommend');
    } else {
      p.textContent = st.state === 'idle' ? '' : c ? 'Confirming: no answer until the rounds are done.'
        : 'No answer yet: the search proposes, then its best candidates are confirmed against the baseline.';
      p.className = 'answer';
    }
    const table = $('confirm');
    table.hidden = !c;
    const b = st.baseline;
    $('noise-note').textContent = [st.noise_line, st.steady_cap_line].filter(Boolean)
      .map(l => l.charAt(0).toUpperCase() + l.slice(1) + '.').join(' ');
    // split or sequential, why, and what C/R reads on a shared host (views.session_design)
    const d = st.design;
    $('design-note').textContent = d ? 'Measurement design: ' + d.design + (d.why ? ' (' + d.why + ')' : '')
      + (d.note ? '; ' + d.note : '') + '.' : '';
    $('baseline-note').textContent = b ? 'Search baseline: median of ' + b.runs + ' runs of the canary\'s own options: kv_sync '
      + fmt(b.kv_sync_lat_ms, 3) + ' ms (spread ' + pct(b.kv_sync_lat_spread) + '), IOPS ' + fmt(b.iops, 0)
      + ' (spread ' + pct(b.iops_spread) + '), write-amp ' + fmt(b.write_amp, 3) + ' (spread ' + pct(b.write_amp_spread)
      + '); spread = (max - min) / median. Write-amp budget: ' + fmt(st.budget_write_amp, 3) + '.' : '';
    if (!c) {
      $('confirm-note').textContent = '';
      return;
    }
    const r = c.result;
    const head = el('tr');
    for (const h of ['candidate', 'trial', objectiveName(c.objective), 'kv_sync latency', 'write-amp (short windows)', 'rounds',
      'objective verdict', 'steady write-amp', 'verdict']) {
      head.append(el('th', h));
    }
    table.tHead.replaceChildren(head);
    const body = table.tBodies[0];
    body.replaceChildren();
    const options = {};
    for (const a of c.arms) options[a.arm] = a.options;
    for (const a of r.arms) {
      const tr = el('tr');
      tr.className = a.verdict.replace(/ /g, '-');
      tr.title = options[a.arm] || '';
      tr.append(el('td', a.arm), el('td', a.trial));
      for (const [key] of FIGURES) tr.append(el('td', ratioText(a[key].ratio)));
      const st = a.steady;
      const seen = (v) => (v === true ? 'reached steady state' : v === false ? 'not steady' : 'not yet');
      tr.append(el('td', a.objective.rounds), el('td', a.objective_verdict || a.verdict),
        el('td', st ? (st.ratio === null ? '-' : (st.upper_bound ? '~' : '') + st.ratio.toFixed(2) + 'x')
          + ' (its window ' + seen(st.arm_seen) + ', the baseline\'s ' + seen(st.baseline_seen) + ')'
          + (st.objective == null ? '' : '; objective ' + st.objective.toFixed(2) + 'x over the same windows') : '-'),
        el('td', a.verdict + (a.why ? ': ' + a.why : '')));
      body.append(tr);
    }
    const better = c.direction === 'higher' ? 'above ' + (1 + c.margin).toFixed(2) + 'x' : 'below ' + (1 / (1 + c.margin)).toFixed(2) + 'x';
    $('confirm-note').textContent = 'Round ' + r.rounds_done + ' of ' + c.rounds + ' done. Each figure: the median over the rounds of the '
      + 'candidate\'s ratio to the baseline measured in the same round [' + Math.round(100 * c.level) + '% interval]. '
      + 'Recommended: the whole ' + objectiveName(c.objective) + ' interval ' + better + ' (margin ' + pct(c.margin)
      + ') and the whole write-amp interval within ' + c.budget.toFixed(2) + 'x. Hover a row for its options.';
  }

  // per-round ratios of one figure, a point series per candidate, its interval as a band
  function renderRounds(name, box, st, key, line, lineLabel) {
    const c = confirmation(st);
    if (!c) {
      draw(name, box, {}, [[]], 'The confirmation starts after the search.');
      return;
    }
    const arms = c.result.arms;
    const xs = [];
    for (let i = 1; i <= c.rounds; i++) xs.push(i);
    const series = [{ label: 'round' }];
    const data = [xs];
    arms.forEach((a, i) => {
      const r = a[key].ratio || {};
      const ys = xs.map(() => null);
      (r.at || []).forEach((round, j) => { ys[round - 1] = r.per_round[j]; });
      series.push(pointSeries(a.arm + ' (trial ' + a.trial + ')', ARM_COLORS[i % ARM_COLORS.length], 9));
      data.push(ys);
    });
    const opts = {
      scales: {
        x: { time: false, range: [0.5, c.rounds + 0.5] },
        y: {
          range: (u, min, max) => {
            const vals = [min, max, line, 1];
            for (const a of arms) {
              const r = a[key].ratio || {};
              if (r.low !== null && r.low !== undefined) vals.push(r.low);
              if (r.high !== null && r.high !== undefined) vals.push(r.high);
            }
            const fin = vals.filter((v) => v !== null && Number.isFinite(v));
            const lo = Math.min(...fin);
            const hi = Math.max(...fin);
            const pad = (hi - lo) * 0.1 || 0.05;
            return [lo - pad, hi + pad];
          },
        },
      },
      axes: [{ label: 'confirmation round', incrs: [1, 2, 5, 10] }, { label: 'ratio to the baseline' }],
      series: series,
      hooks: {
        draw: [(u) => {
          const ctx = u.ctx;
          const dpr = window.devicePixelRatio || 1;
          const left = u.bbox.left;
          const width = u.bbox.width;
          ctx.save();
          arms.forEach((a, i) => {
            const r = a[key].ratio || {};
            if (r.low === null || r.high === null || r.low === undefined || r.high === undefined) return;
            const y0 = u.valToPos(r.high, 'y', true);
            const y1 = u.valToPos(r.low, 'y', true);
            ctx.globalAlpha = 0.12;
            ctx.fillStyle = ARM_COLORS[i % ARM_COLORS.length];
            ctx.fillRect(left, y0, width, Math.max(1, y1 - y0));
          });
          ctx.globalAlpha = 1;
          const hline = (v, color, dash, label) => {
            const y = Math.round(u.valToPos(v, 'y', true));
            ctx.strokeStyle = color;
            ctx.fillStyle = color;
            ctx.lineWidth = 2 * dpr;
            ctx.setLineDash(dash);
            ctx.beginPath();
            ctx.moveTo(left, y);
            ctx.lineTo(left + width, y);
            ctx.stroke();
            if (label) {
              ctx.font = (11 * dpr) + 'px sans-serif';
              ctx.fillText(label, left + 4 * dpr, y - 4 * dpr);
            }
          };
          hline(1, COLORS.baseline, [], 'baseline');
          if (line !== null && line !== undefined) hline(line, COLORS.budget, [6 * dpr, 4 * dpr], lineLabel);
          ctx.restore();
        }],
      },
    };
    draw(name, box, opts, data);
  }

  function renderConfirmation(st) {
    const c = confirmation(st);
    const margin = c ? (c.direction === 'higher' ? 1 + c.margin : 1 / (1 + c.margin)) : null;
    $('rounds-objective-note').textContent = c ? 'Each candidate\'s ' + objectiveName(c.objective)
      + ' over the baseline\'s measured in the same round; the shaded band is its ' + pct(c.level)
      + ' interval (each look\'s), the dashed line the '
      + pct(c.margin) + ' margin its whole band must clear.' : 'The confirmation starts after the search.';
    renderRounds('rounds-objective', $('rounds-objective'), st, 'objective', margin,
      c ? 'margin ' + margin.toFixed(2) + 'x' : '');
    renderRounds('rounds-write-amp', $('rounds-write-amp'), st, 'write_amp', c ? c.budget : null,
      c ? 'budget ' + c.budget.toFixed(2) + 'x' : '');
  }

  function renderCommands(st) {
    const best = st.best;
    if (!best || best.keeps_current) {
      $('apply-note').textContent = st.state === 'idle' ? '' : best ? 'Nothing to apply: keep your current options.'
        : 'No answer yet.';
      $('commands').textContent = '';
      $('commands').hidden = true;
      return;
    }
    $('commands').hidden = false;
    const where = best.masks === null
      ? 'On the canary (osd.' + best.canary + '); ' + best.note + '.'
      : 'On the canary (osd.' + best.canary + ') first, then on '
        + (best.device_class ? 'the OSDs of class ' + best.device_class : 'every OSD')
        + ' (' + best.osds.map((i) => 'osd.' + i).join(', ') + ')'
        + (best.note ? '; ' + best.note : '') + '.';
    $('apply-note').textContent = 'Trial ' + best.trial + ' (' + best.arm + '), confirmed. ' + where
      + ' Each OSD loads them on restart.';
    $('commands').textContent = best.commands.join('\n');
  }

  // ------------------------------------------------------------ trials table

  const OPTION_COLS = [
    ['max_write_buffer_number', 'mwbn', (v) => v],
    ['write_buffer_size', 'write_buffer_size', (v) => (v / MiB) + ' MiB'],
    ['min_write_buffer_number_to_merge', 'merge', (v) => v],
    ['level0_file_num_compaction_trigger', 'L0 trigger', (v) => v],
    ['max_bytes_for_level_base', 'level base', (v) => (v / MiB) + ' MiB'],
    ['max_bytes_for_level_multiplier', 'multiplier', (v) => v],
    ['compression', 'compression', (v) => v],
  ];

  function renderTrials(tr, bestIndex) {
    const table = $('trials');
    const head = el('tr');
    for (const h of ['#', 'trial', 'kind', 'round', 'verdict', 'marked']) head.append(el('th', h));
    for (const [key, short] of OPTION_COLS) {
      const th = el('th', short);
      th.title = key;  // the RocksDB option name
      head.append(th);
    }
    for (const h of ['kv_sync ms', 'IOPS', 'write-amp', 'WAL MiB', 'SST MiB', 'flushes', 'secs', 'score',
      'best so far', 'note']) {
      head.append(el('th', h));
    }
    table.tHead.replaceChildren(head);
    const body = table.tBodies[0];
    body.replaceChildren();
    let short = false;
    for (const t of tr.trials) {
      const m = t.measurement || {};
      const c = t.candidate || {};
      const row = el('tr');
      row.className = t.verdict + (t.index === bestIndex && t.verdict !== 'failed' && t.kind !== 'recovery' ? ' best' : '');
      row.title = t.options || '';
      row.dataset.index = t.index;
      short = short || !!m.window_short;
      const round = t.round === null || t.round === undefined ? '-'
        : 'r' + (t.round + 1) + ':' + (t.arm === 'baseline' ? 'base' : t.arm);
      row.append(el('td', t.n), el('td', t.index), el('td', t.kind), el('td', round),
        el('td', t.verdict + (m.window_short ? '*' : '')), el('td', MARKER_LABELS[t.marker] || ''));
      for (const [key, , f] of OPTION_COLS) row.append(el('td', c[key] === undefined ? '-' : f(c[key])));
      const mib = (v) => (v === null || v === undefined ? '-' : (v / MiB).toFixed(0));
      row.append(el('td', fmt(m.kv_sync_lat_ms, 3)), el('td', fmt(m.iops, 0)),
        el('td', fmt(m.write_amp, 3)), el('td', mib(m.wal_bytes)), el('td', mib(m.sst_bytes)),
        el('td', fmt(m.flushes, 1)), el('td', fmt(t.seconds, 0)),
        el('td', fmt(t.score, 3)), el('td', fmt(t.best_so_far, 3)),
        el('td', (t.error || '') + (t.crashes && t.crashes.length ? ' (crash ' + t.crashes.join(', ') + ')' : '')));
      body.append(row);
    }
    $('trials-note').textContent = (tr.trials.length ? tr.trials.length + ' trial(s) and confirmation measurement(s) '
      + '(round rN:cK: the confirmation\'s round N, candidate cK). Hover a row for its full '
      + 'bluestore_rocksdb_options string.' : 'No trial yet.')
      + (short ? ' * the window hit its cap before it covered min_flushes memtable flushes (a confirmation window: an L0 '
        + 'compaction cycle): write-amp may be undercounted.' : '');
  }

  // ------------------------------------------------------------ charts

  function chartWidth(box) { return Math.max(320, box.clientWidth - 4); }

  function draw(name, box, opts, data, empty) {
    if (charts[name]) { charts[name].destroy(); delete charts[name]; }
    box.replaceChildren();
    if (!data[0].length) {
      box.append(el('p', empty || 'No measured trial yet.', 'empty'));
      return;
    }
    opts.width = chartWidth(box);
    opts.height = 300;
    charts[name] = new uPlot(opts, data, box);
  }

  function pointSeries(label, color, size) {
    return {
      label: label, stroke: color, fill: color, paths: () => null,
      points: { show: true, size: size || 9, stroke: color, fill: color },
      value: (u, v) => (v === null || v === undefined ? '-' : v.toFixed(3)),
    };
  }

  function searchRows(tr) { return tr.trials.filter((t) => t.kind !== 'confirm'); }

  function renderConvergence(tr) {
    const rows = searchRows(tr);
    const xs = rows.map((t) => t.n);
    const pick = (verdict) => rows.map((t) => (t.verdict === verdict && t.score !== null ? t.score : null));
    const opts = {
      title: 'best-so-far score by trial',
      scales: { x: { time: false } },
      // whole trial numbers only
      axes: [{ label: 'trial number', incrs: [1, 2, 5, 10, 20, 50, 100] },
        { label: 'score (lower is better)' }],
      series: [
        { label: 'trial' },
        { label: 'best so far', stroke: COLORS.best, width: 2, paths: uPlot.paths.stepped({ align: 1 }),
          points: { show: true, size: 5 } },
        pointSeries('baseline run', COLORS.baseline, 7),
        pointSeries('feasible', COLORS.feasible, 7),
        pointSeries('infeasible', COLORS.infeasible, 7),
      ],
    };
    draw('convergence', $('convergence'), opts,
      [xs, rows.map((t) => t.best_so_far), pick('baseline'), pick('feasible'), pick('infeasible')]);
  }

  function renderTradeoff(st, tr) {
    const yKey = $('tradeoff-y').value;
    const budget = tr.budget_write_amp;
    const pts = searchRows(tr)
      .filter((t) => t.measurement && Number.isFinite(t.measurement.write_amp) && t.measurement[yKey] !== null)
      .sort((a, b) => a.measurement.write_amp - b.measurement.write_amp);
    const xs = pts.map((t) => t.measurement.write_amp);
    const col = (pred) => pts.map((t) => (pred(t) ? t.measurement[yKey] : null));
    const bestIndex = st.best && !st.best.keeps_current ? st.best.trial : null;
    const series = [
      { label: 'write-amp' },
      pointSeries('baseline run', COLORS.baseline),
      pointSeries('feasible', COLORS.feasible),
      pointSeries('infeasible', COLORS.infeasible),
    ];
    const data = [xs, col((t) => t.verdict === 'baseline'), col((t) => t.verdict === 'feasible'),
      col((t) => t.verdict === 'infeasible')];
    for (const mk of ['default', 'new_tuning', 'new_tuning_lz4']) {
      if (pts.some((t) => t.marker === mk)) {
        const s = pointSeries(MARKER_LABELS[mk], COLORS[mk], 16);
        s.points.fill = 'rgba(0,0,0,0)';  // a ring around the trial's own dot
        s.points.width = 2;
        series.push(s);
        data.push(col((t) => t.marker === mk));
      }
    }
    if (bestIndex !== null) {
      const s = pointSeries('recommended', COLORS.best, 20);
      s.points.fill = 'rgba(0,0,0,0)';
      s.points.width = 3;
      series.push(s);
      data.push(col((t) => t.index === bestIndex && t.verdict !== 'failed'));
    }
    const opts = {
      title: (yKey === 'iops' ? 'IOPS' : 'kv_sync latency') + ' against write-amp',
      scales: {
        x: {
          time: false,
          range: (u, min, max) => {
            let lo = Math.min(min, budget || min);
            let hi = Math.max(max, budget || max);
            const pad = (hi - lo) * 0.08 || Math.abs(hi) * 0.1 || 1;
            return [lo - pad, hi + pad];
          },
        },
      },
      axes: [{ label: 'DB write amplification' },
        { label: yKey === 'iops' ? 'IOPS' : 'kv_sync latency (ms)' }],
      series: series,
      hooks: {
        draw: [(u) => {
          if (budget === null || budget === undefined) return;
          const x = Math.round(u.valToPos(budget, 'x', true));
          const ctx = u.ctx;
          const dpr = window.devicePixelRatio || 1;
          ctx.save();
          ctx.strokeStyle = COLORS.budget;
          ctx.fillStyle = COLORS.budget;
          ctx.lineWidth = 2 * dpr;
          ctx.setLineDash([6 * dpr, 4 * dpr]);
          ctx.beginPath();
          ctx.moveTo(x, u.bbox.top);
          ctx.lineTo(x, u.bbox.top + u.bbox.height);
          ctx.stroke();
          ctx.font = (11 * dpr) + 'px sans-serif';
          ctx.fillText('budget ' + budget.toFixed(3), x + 4 * dpr, u.bbox.top + 12 * dpr);
          ctx.restore();
        }],
      },
    };
    draw('tradeoff', $('tradeoff'), opts, data);
  }

  // ------------------------------------------------------------ loop

  function render(st, tr) {
    renderSummary(st);
    renderRollout(st);
    renderAnswer(st);
    renderConfirmation(st);
    renderCommands(st);
    const bestIndex = st.best && !st.best.keeps_current ? st.best.trial : null;
    renderTrials(tr, bestIndex);
    renderConvergence(tr);
    renderTradeoff(st, tr);
    $('updated').textContent = 'updated ' + new Date().toLocaleTimeString();
    document.body.dataset.rendered = String(tr.trials.length);  // for the e2e test
  }

  async function refresh() {
    let delay = 10000;
    try {
      const [st, tr] = await Promise.all([getJSON('api/status'), getJSON('api/trials')]);
      last = [st, tr];
      $('load-error').hidden = true;
      render(st, tr);
      if (!ACTIVE.includes(st.state) && !(st.rollout && st.rollout.state === 'running')) delay = 60000;
    } catch (e) {
      $('load-error').textContent = 'Cannot load the session: ' + e.message;
      $('load-error').hidden = false;
    }
    setTimeout(refresh, delay);
  }

  document.addEventListener('DOMContentLoaded', () => {
    $('tradeoff-y').addEventListener('change', () => { if (last) renderTradeoff(last[0], last[1]); });
    let resizeTimer = null;
    window.addEventListener('resize', () => {
      clearTimeout(resizeTimer);
      resizeTimer = setTimeout(() => {
        if (last) { renderConfirmation(last[0]); renderConvergence(last[1]); renderTradeoff(last[0], last[1]); }
      }, 200);
    });
    refresh();
  });
})();
