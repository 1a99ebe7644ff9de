"""Plain-text views of a session for the CLI (the JSON views are the raw state)."""
import shlex
from typing import Any, Dict, List, Mapping, Optional

from .canary import ANNEX, OPTIONS
from .cluster import OsdInfo
from .views import ratios
from .space import Candidate

MiB = 1 << 20


def _fmt(v: Optional[float], spec: str) -> str:
    return '-' if v is None else format(v, spec)


def _ratio(v: Optional[float]) -> str:
    return '-' if v is None else f'{v:.2f}x'


def status_text(st: Dict[str, Any]) -> str:
    if st['state'] == 'idle':
        error = f'\nerror: {st["error"]}' if st.get('error') else ''
        return 'state: idle (no session has run)' + error
    p = st['params']
    lines = [f'state: {st["state"]} ({st["phase"]})',
             f'canary: osd.{st["osd"]} ({st["reason"]})',
             f'params: trials={p["trials"]} budget={p["budget"]} workload={p["workload"]} '
             f'duration={p["duration"]:.0f}s',
             f'progress: {st["baseline_runs_done"]} baseline run(s), '
             f'{st["trials_done"]}/{p["trials"]} trials ({st["progress"]:.0%})',
             f'message: {st["message"]}']
    if st.get('error'):
        lines.append(f'error: {st["error"]}')
    b = st.get('baseline')
    if b:
        lines.append(f'baseline ({b["runs"]} runs, median; spread = (max-min)/median): '
                     f'kv_sync_lat {b["kv_sync_lat_ms"]:.3f} ms '
                     f'(spread {b["kv_sync_lat_spread"]:.1%}), '
                     f'IOPS {_fmt(b["iops"], ".0f")} (spread {_fmt(b["iops_spread"], ".1%")}), '
                     f'write-amp {b["write_amp"]:.3f} (spread {b["write_amp_spread"]:.1%})')
    best = st.get('best')
    if best and b:
        r = ratios(best, b)
        lines.append(f'best: trial {best["index"]} ({best["kind"]}): IOPS {_ratio(r.iops)}, '
                     f'kv_sync_lat {_ratio(r.kv_sync_lat)}, write-amp {_ratio(r.write_amp)} '
                     'of baseline')
    if st.get('health'):
        lines.append('health: ' + ', '.join(st['health']))
    if st.get('other_checks'):
        lines.append('other health checks: ' + ', '.join(st['other_checks'])
                     + (' (not blocking: --force)' if p.get('force')
                        else ' (trials wait for them: no --force)'))
    if st.get('crashes'):
        lines.append(f'osd.{st["osd"]} crashed in failed trials (read each, then archive it): '
                     + '; '.join(f'ceph crash archive {i}' for i in st['crashes']))
    return '\n'.join(lines)


HISTORY_COLUMNS = ['#', 'kind', 'verdict', 'mwbn', 'wbs', 'merge', 'l0', 'base', 'mult',
                   'comp', 'kv_sync_ms', 'IOPS', 'write_amp', 'flushes', 'secs', 'score']


def history_row(t: Dict[str, Any]) -> List[str]:
    c = Candidate.from_dict(t['candidate'])
    m = t.get('measurement') or {}
    return [str(t['index']), t['kind'], t['verdict'] + ('*' if m.get('window_short') else ''),
            str(c.max_write_buffer_number), f'{c.write_buffer_size // MiB}M',
            str(c.min_write_buffer_number_to_merge), str(c.level0_file_num_compaction_trigger),
            f'{c.max_bytes_for_level_base // MiB}M', str(c.max_bytes_for_level_multiplier),
            c.compression, _fmt(m.get('kv_sync_lat_ms'), '.3f'), _fmt(m.get('iops'), '.0f'),
            _fmt(m.get('write_amp'), '.3f'), _fmt(m.get('flushes'), '.1f'),
            f'{t.get("seconds", 0):.0f}', _fmt(t.get('score'), '+.3f')]


def history_table(trials: List[Dict[str, Any]]) -> str:
    rows = [HISTORY_COLUMNS] + [history_row(t) for t in trials]
    widths = [max(len(r[i]) for r in rows) for i in range(len(HISTORY_COLUMNS))]
    out = ['  '.join(v.rjust(w) for v, w in zip(r, widths)) for r in rows]
    if any((t.get('measurement') or {}).get('window_short') for t in trials):
        out.append('* window covered fewer memtable flushes than min_flushes: '
                   'write-amp may be undercounted')
    for t in trials:
        if t.get('error'):
            out.append(f'trial {t["index"]}: {t["error"]}'
                       + (f' (crash {", ".join(t["crashes"])})' if t.get('crashes') else ''))
    return '\n'.join(out)


# `best` of a session whose canary's config someone else changed
STALE = ('measured against the options in effect when the session started, which '
         'someone else has changed: applying this string would undo that')


def reach(canary: int, osds: Mapping[int, OsdInfo]) -> Dict[str, Any]:
    """Where the best options go after the canary: the OSDs of its device class.

    A value at `osd` would reach every OSD, HDDs included, and lose to one
    already set at `osd/class:C`; the class mask reaches the OSDs of the class
    the options were measured on, and beats `osd`.  `osds`: the cluster's OSD
    map, as `Cluster.osds` reads it.
    """
    info = osds.get(canary)
    cls = info.device_class if info is not None else ''
    if cls:
        return {'mask': f'osd/class:{cls}', 'device_class': cls,
                'osds': sorted(i for i, o in osds.items() if o.device_class == cls),
                'note': ''}
    why = 'has no device class' if info is not None else 'is not in the OSD map'
    return {'mask': 'osd', 'device_class': '', 'osds': sorted(osds),
            'note': f'osd.{canary} {why}: the options go to every OSD'}


def config_set(who: str, name: str, value: str) -> str:
    """A `ceph config set` command line, safe to paste into a shell whatever the value."""
    return ' '.join(shlex.quote(a) for a in ('ceph', 'config', 'set', who, name, value))


def best_summary(best: Dict[str, Any], state: Dict[str, Any],
                 where: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """`best -f json`: the trial, and the commands that set it on the canary, then at
    `where` (a `reach`; None when the OSD map was not read: the canary only)."""
    osd = state['params']['osd']
    opts = best['options']
    r = ratios(best, state['baseline'] or {})
    if where is None:
        where = {'mask': None, 'device_class': None, 'osds': None,
                 'note': "the OSD map was not read: the canary's commands only"}
    commands = []
    for who in [f'osd.{osd}'] + ([where['mask']] if where['mask'] else []):
        commands.append(config_set(who, OPTIONS, opts))
        if state.get('annexed'):  # the annex is folded into the options string
            commands.append(config_set(who, ANNEX, ''))
    changed = list(state.get('config_changes') or [])
    if changed:
        # the string embeds the base of the start: applying it undoes the change
        commands.insert(0, f'# {STALE}; changed since: ' + '; '.join(changed))
    return {'trial': best['index'], 'kind': best['kind'], 'options': opts,
            'candidate': best['candidate'], 'measurement': best['measurement'],
            'ratios': {'iops': r.iops, 'kv_sync_lat': r.kv_sync_lat, 'write_amp': r.write_amp},
            'keeps_current': best['kind'] == 'baseline', 'canary': osd,
            'mask': where['mask'], 'device_class': where['device_class'],
            'osds': where['osds'], 'note': where['note'], 'commands': commands,
            'config_changed': changed}


def osd_list(ids: List[int]) -> str:
    """osd.0-3, osd.7: runs of consecutive ids folded."""
    runs: List[List[int]] = []
    for i in sorted(ids):
        if runs and i == runs[-1][1] + 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return ', '.join(f'osd.{a}' if a == b else f'osd.{a}-{b}' for a, b in runs) or 'none'


def best_text(b: Dict[str, Any]) -> str:
    r = b['ratios']
    head = ('the current options are the best measured: nothing beat the baseline'
            if b['keeps_current'] else f'best feasible trial: {b["trial"]}')
    lines = [
        head,
        f'ratios to baseline: IOPS {_ratio(r["iops"])}, kv_sync_lat {_ratio(r["kv_sync_lat"])}, '
        f'write-amp {_ratio(r["write_amp"])}',
        f'bluestore_rocksdb_options = {b["options"]}',
    ]
    if b['note']:
        lines.append(f'note: {b["note"]}')
    if b['mask'] is None:
        lines.append(f'to apply on the canary (osd.{b["canary"]}); it takes effect on restart:')
    else:
        n = len(b['osds'])
        target = (f'the OSDs of class {b["device_class"]}' if b['device_class']
                  else 'every OSD')
        lines.append(f'to apply on the canary (osd.{b["canary"]}) only, then on {target} '
                     f'({b["mask"]}: {n} OSD{"" if n == 1 else "s"}, {osd_list(b["osds"])}); '
                     'each takes effect on restart, and an OSD with a value of its own '
                     'keeps it:')
    return '\n'.join(lines + ['  ' + c for c in b['commands']])
