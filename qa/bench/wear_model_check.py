#!/usr/bin/env python3
"""How well the wear objective's model (wear_model.py) predicts a config's
steady-state write-amp from short windows.

Reads the windows qa/bench/wear_windows.py measured (one JSON line per
config, window kind and OSD: a short window after the restart, then a
steady one) and prints, per config: the steady write-amp measured (RocksDB's
WAL + flush + compaction bytes over the bytes the OSD took in, its own
clients' and its replicas', median over the OSDs whose steady window
reached steady state), and the model's prediction of it calibrated as a
session would be, on short windows only:

- `all`: on every config's short windows (the search has seen them all);
- `others`: on the other configs' short windows alone (a config the search
  has not measured, the model's real use).

Both as the write-amp and as the ratio to the first config's (the figure
the search ranks by), with each one's error, and how many pairs of steady
configs each calibration orders as the measurement does.  A config whose long window
did not reach steady state is listed with what it had written by its end:
a lower bound, no error taken.

    python3 qa/bench/wear_model_check.py qa/bench/results/wear-windows.jsonl
    python3 qa/bench/wear_model_check.py --history demo-run23-history.json
    python3 qa/bench/wear_model_check.py --sessions qa/bench/results/*-history.json
"""
import argparse
import json
import os
import sys
from statistics import median
from typing import Any, Dict, List, Sequence, Tuple

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', '..', 'src', 'pybind', 'mgr'))

from rocks_autotune import wear_model  # noqa: E402
from rocks_autotune.perf_counters import Measurement, compaction_share  # noqa: E402
from rocks_autotune.rocksdb_options import (ColumnFamily, parse_options,  # noqa: E402
                                            parse_sharding)
from rocks_autotune.space import Candidate, SearchSpace  # noqa: E402

# Tentacle's bluestore_rocksdb_cfs, the lab's sharding
SHARDING = ('m(3) p(3,0-12) O(3,0-13)=block_cache={type=binned_lru} '
            'L=min_write_buffer_number_to_merge=32 P=min_write_buffer_number_to_merge=32')


def window(row: Dict[str, Any]) -> wear_model.Window:
    c = SearchSpace.candidate_from_options(parse_options(row['options']))
    stored = float(row['client_bytes']) + float(row.get('subop_w_in_bytes') or 0)
    return wear_model.Window(c, stored, float(row['rocksdb_wal_bytes']),
                             float(row['rocksdb_flush_bytes']),
                             float(row['rocksdb_compaction_bytes']), int(row['compactions']),
                             float(row.get('db_used_bytes_end') or 0))


def measured(w: wear_model.Window) -> float:
    return (w.wal + w.flush + w.compaction) / w.client


def table(rows: Sequence[Dict[str, Any]], families: Sequence[ColumnFamily]) -> List[str]:
    configs = list(dict.fromkeys(r['config'] for r in rows))
    short = {c: [window(r) for r in rows if r['config'] == c and r['window'] == 'short']
             for c in configs}
    steady = {c: [window(r) for r in rows if r['config'] == c and r['window'] == 'steady'
                  and r.get('steady_reached')] for c in configs}
    # a long window that did not reach steady state: what RocksDB had
    # written by its end, a lower bound on its steady write-amp (the
    # compactions still to come, and the memtables' unflushed bytes, uncounted)
    long = {c: [(window(r), float(r['seconds'])) for r in rows if r['config'] == c
                and r['window'] == 'steady' and not r.get('steady_reached')] for c in configs}
    everything = wear_model.calibrate([w for ws in short.values() for w in ws], families)
    first = configs[0]
    out = ['| config | steady windows | measured steady write-amp | OSDs\' range '
           '| predicted (all) | error | predicted (others) | error | measured / ' + first
           + ' | predicted / ' + first + ' (others) | predicted / ' + first + ' (all) |',
           '|' + '---|' * 11]
    got: Dict[str, Dict[str, float]] = {}
    for c in configs:
        if not steady[c] or not short[c]:
            continue
        cand = short[c][0].candidate
        others = wear_model.calibrate(
            [w for k, ws in short.items() if k != c for w in ws], families)
        got[c] = {'measured': median(measured(w) for w in steady[c]),
                  'low': min(measured(w) for w in steady[c]),
                  'high': max(measured(w) for w in steady[c]),
                  'all': wear_model.predict(cand, everything, families),
                  'others': wear_model.predict(cand, others, families)}
    for c, g in got.items():
        base = got.get(first)
        ratio = (f'{g["measured"] / base["measured"]:.2f} | '
                 f'{g["others"] / base["others"]:.2f} | '
                 f'{g["all"] / base["all"]:.2f}' if base else '- | - | -')
        out.append(f'| {c} | {len(steady[c])} | {g["measured"]:.2f} | '
                   f'{g["low"]:.2f}-{g["high"]:.2f} | {g["all"]:.2f} | '
                   f'{g["all"] / g["measured"] - 1:+.0%} | {g["others"]:.2f} | '
                   f'{g["others"] / g["measured"] - 1:+.0%} | {ratio} |')
    for c in configs:
        if c in got or not long[c] or not short[c]:
            continue
        cand = short[c][0].candidate
        others = wear_model.calibrate(
            [w for k, ws in short.items() if k != c for w in ws], families)
        seconds = max(sec for _, sec in long[c])
        out.append(f'| {c} | 0 (not steady in {seconds:.0f}s) | '
                   f'>= {median(measured(w) for w, _ in long[c]):.2f} | - | '
                   f'{wear_model.predict(cand, everything, families):.2f} | - | '
                   f'{wear_model.predict(cand, others, families):.2f} | - | - | - | - |')
    errs = [abs(g['others'] / g['measured'] - 1) for g in got.values()]
    errs_all = [abs(g['all'] / g['measured'] - 1) for g in got.values()]
    if errs:
        # pairs of steady configs the prediction orders as the measurement does
        pairs = [(a, b) for i, a in enumerate(got.values()) for b in list(got.values())[i + 1:]]

        def agree(k: str) -> str:
            n = sum((a[k] - b[k]) * (a['measured'] - b['measured']) > 0 for a, b in pairs)
            return f'{n} of {len(pairs)}'
        out.append('')
        out.append(f'{len(errs)} configs: median absolute error {median(errs):.0%} '
                   f'(others), largest {max(errs):.0%}; {median(errs_all):.0%} (all), largest '
                   f'{max(errs_all):.0%}; pairs ordered as measured: {agree("others")} '
                   f'(others), {agree("all")} (all); calibration on all short windows: '
                   f'WAL {everything.wal:.2f} per byte, survival {everything.survive_at:.2f} '
                   f'{everything.survive_slope:+.3f} per doubling of the flush, compaction '
                   f'scale {everything.compaction:.2f} (by compression '
                   f'{_rounded(everything.compaction_by)}), compressed '
                   f'{_rounded(everything.compressed)}, '
                   f'{everything.flush_windows} flush / {everything.compaction_windows} '
                   f'compaction windows, which passed at most {_limits(rows, families):.2f} '
                   'WAL limits')
    return out


def _limits(rows: Sequence[Dict[str, Any]], families: Sequence[ColumnFamily]) -> float:
    """The most WAL limits a short window's WAL passed (_passed)."""
    return max((_passed(window(r), families,
                        int(parse_options(r['options']).get('max_total_wal_size', 0)))
                for r in rows if r['window'] == 'short'), default=0.0)


def _rounded(d: Dict[str, float]) -> Dict[str, float]:
    return {k: round(v, 2) for k, v in d.items()}


def _window(t: Dict[str, Any]) -> wear_model.Window:
    """The model's window of a trial of `history -f json` (RocksDB's counts)."""
    return wear_model.windows_of([(Candidate.from_dict(t['candidate']),
                                   Measurement.from_dict(t['measurement']))])[0]


def _searched(trials: Sequence[Dict[str, Any]], families: Sequence[ColumnFamily]
              ) -> Tuple[List[wear_model.Window], int, wear_model.Calibration]:
    """A session's windows but its steady ones, its max_total_wal_size and
    the model calibrated on them, as the session calibrated it."""
    short = wear_model.windows_of([
        (Candidate.from_dict(t['candidate']), Measurement.from_dict(t['measurement']))
        for t in trials if not t.get('steady') and t.get('measurement')])
    wal_size = max((int(parse_options(t['options']).get('max_total_wal_size', 0))
                    for t in trials), default=0)
    return short, wal_size, wear_model.calibrate(short, families, wal_size)


def _passed(w: wear_model.Window, families: Sequence[ColumnFamily], wal_size: int) -> float:
    """The WAL limits window `w`'s WAL passed: below 1, the families that
    flush only there (Tentacle's L and P) may not have flushed in it."""
    return w.wal / wear_model.wal_limit(families, w.candidate, wal_size)


def session(trials: Sequence[Dict[str, Any]], families: Sequence[ColumnFamily]) -> List[str]:
    """A session's steady-check windows against the model calibrated, as the
    session was, on its other windows (`ceph rocks-autotune history -f json`)."""
    short, wal_size, cal = _searched(trials, families)
    out = ['| window | arm | measured steady write-amp | predicted | error '
           '| compaction per byte, measured | predicted | WAL limits passed |',
           '|---|---|---|---|---|---|---|---|']
    for t in trials:
        if t.get('steady'):
            w = _window(t)
            m, p = measured(w), wear_model.parts(w.candidate, cal, families)
            out.append(f'| {t["index"]} | {t["arm"]} | {m:.3f} | {p["write_amp"]:.3f} | '
                       f'{p["write_amp"] / m - 1:+.0%} | {w.compaction / w.client:.3f} | '
                       f'{p["compaction"]:.3f} | {_passed(w, families, wal_size):.1f} |')
    passed = max((_passed(w, families, wal_size) for w in short), default=0)
    out.append(f'calibration on {cal.flush_windows} flush / {cal.compaction_windows} compaction '
               f'windows: compaction scale {cal.compaction:.2f} (by compression '
               f'{_rounded(cal.compaction_by)}), compressed {_rounded(cal.compressed)}; '
               f'its windows passed at most {passed:.2f} WAL limits')
    return out


def sessions(paths: Sequence[str], families: Sequence[ColumnFamily]) -> List[str]:
    """Per session (`history -f json` each, with a steady pair): the
    finalist's steady write-amp over the baseline's, measured and as the
    model calibrated on the search's windows predicted it, and how many of
    those windows were of options the WAL limit flushes, how many of them
    flushed, and the most WAL limits one passed (below about 0.8: the model
    never saw the flush that sets their steady bytes)."""
    out = ['| session | baseline | finalist | measured ratio | predicted | error '
           '| search windows of options the WAL limit flushes |',
           '|---|---|---|---|---|---|---|']
    errs = []
    for path in paths:
        with open(path) as f:
            trials = json.load(f)
        got = {t['arm']: t for t in trials if t.get('steady')}
        if not {'c1', 'baseline'} <= set(got):
            continue
        short, wal_size, cal = _searched(trials, families)
        c1, base = _window(got['c1']), _window(got['baseline'])
        ratio = measured(c1) / measured(base)
        pred = (wear_model.predict(c1.candidate, cal, families)
                / wear_model.predict(base.candidate, cal, families))
        limits = [(w, _passed(w, families, wal_size)) for w in short
                  if wear_model.wal_flushed(w.candidate, families, wal_size)]
        errs.append(pred / ratio - 1)
        out.append(f'| {os.path.basename(path)} | {base.candidate.compression} | '
                   f'{c1.candidate.compression} | {ratio:.2f} | {pred:.2f} | '
                   f'{pred / ratio - 1:+.0%} | {len(limits)}: '
                   f'{sum(w.flush > 0 for w, _ in limits)} flushed, at most '
                   f'{max((x for _, x in limits), default=0):.2f} WAL limits |')
    if errs:
        out.append('')
        out.append(f'{len(errs)} sessions: median absolute error '
                   f'{median(abs(e) for e in errs):.0%}, largest {max(map(abs, errs)):.0%}')
    return out


def predicted(paths: Sequence[str], options: str, families: Sequence[ColumnFamily]
              ) -> List[str]:
    """Per session: an option string's steady write-amp over the baseline's,
    as the model calibrated on that session's search windows predicts it."""
    c = SearchSpace.candidate_from_options(parse_options(options))
    out = []
    for path in paths:
        with open(path) as f:
            trials = json.load(f)
        _, _, cal = _searched(trials, families)
        base = next(Candidate.from_dict(t['candidate']) for t in trials
                    if t.get('kind') == 'baseline')
        ratio = wear_model.predict(c, cal, families) / wear_model.predict(base, cal, families)
        out.append(f'{os.path.basename(path)}: {ratio:.3f}x the baseline\'s')
    return out


def wal_steps(paths: Sequence[str], step: float = 0.015) -> List[str]:
    """Per session history: RocksDB's WAL bytes per client byte in its first
    and last windows, and where it rose by more than `step` from one window
    to the next (the trial, the client writes before it, the two figures)."""
    out = ['| session | windows | first | last | steps (trial: 4-KiB writes before, from -> to) |',
           '|---|---|---|---|---|']
    for path in paths:
        with open(path) as f:
            trials = [t for t in json.load(f) if (t.get('measurement') or {}).get(
                'rocksdb_wal_bytes') and t['measurement'].get('client_bytes')]
        per = [t['measurement']['rocksdb_wal_bytes'] / t['measurement']['client_bytes']
               for t in trials]
        if not per:
            continue
        writes, steps = 0.0, []
        for i, (t, w) in enumerate(zip(trials, per)):
            if i and w - per[i - 1] > step:
                steps.append(f"{t['index']} ({t['kind']}): {writes / 1e3:.0f}k, "
                             f'{per[i - 1]:.3f} -> {w:.3f}')
            writes += t['measurement']['client_bytes'] / 4096
        out.append(f'| {os.path.basename(path)} | {len(per)} | {per[0]:.3f} | {per[-1]:.3f} '
                   f"| {'; '.join(steps) or '-'} |")
    return out


def units(paths: Sequence[str]) -> List[str]:
    """Per session history, each steady window: its seconds, write-amp, one
    compaction (`compaction_unit`) as a share of it, and how many such its
    window counted: how far one compaction in or out moves its figure."""
    out = ['| session | trial | side | seconds | write-amp | one compaction / write-amp '
           '| compactions counted, in units |', '|---|---|---|---|---|---|---|']
    for path in paths:
        with open(path) as f:
            trials = json.load(f)
        for t in trials:
            m = Measurement.from_dict(t.get('measurement') or {'seconds': 0})
            share = compaction_share(m) if t.get('steady') else None
            if share is None or not m.compaction_unit:
                continue
            side = 'baseline' if t.get('arm') in (None, 'baseline') else t['arm']
            out.append(f"| {os.path.basename(path)} | {t['index']} | {side} | "
                       f"{m.seconds:.0f} | {m.write_amp:.3f} | {share:.3f} | "
                       f"{(m.compaction_bytes or 0) / m.compaction_unit:.1f} |")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('jsonl', nargs='+', help="wear_windows.py's windows, or with --history "
                    "a session's `history -f json` (with --sessions, several)")
    ap.add_argument('--sharding', default=SHARDING)
    ap.add_argument('--history', action='store_true')
    ap.add_argument('--sessions', action='store_true',
                    help="the finalist's steady ratio to the baseline, measured and "
                    "predicted, per session")
    ap.add_argument('--wal-steps', action='store_true',
                    help="sessions' histories: where RocksDB's WAL per client byte stepped")
    ap.add_argument('--units', action='store_true',
                    help="sessions' histories: one compaction's share of each steady window")
    ap.add_argument('--predict', metavar='OPTIONS',
                    help="with --sessions: this option string's predicted ratio instead")
    args = ap.parse_args()
    families = parse_sharding(args.sharding)
    if args.wal_steps:
        print('\n'.join(wal_steps(args.jsonl)))
        return
    if args.units:
        print('\n'.join(units(args.jsonl)))
        return
    if args.sessions and args.predict:
        print('\n'.join(predicted(args.jsonl, args.predict, families)))
        return
    if args.sessions:
        print('\n'.join(sessions(args.jsonl, families)))
        return
    args.jsonl = args.jsonl[0]
    with open(args.jsonl) as f:
        if args.history:
            print('\n'.join(session(json.load(f), families)))
            return
        rows = [json.loads(line) for line in f if line.strip()]
    print('\n'.join(table(rows, families)))


if __name__ == '__main__':
    main()
