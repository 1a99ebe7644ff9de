"""What is read of a session: the status, the search's leader, the
confirmation's answer, ratios to the baseline, and the View the module, the
panel and the reports take.

Pure functions of the persisted state; nothing here changes it, and nothing
here computes a statistic: the confirmation's figures are the session's
(confirm.py, on the serve thread), read as they were saved.
"""
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from .measurement_plan import SEQUENTIAL, SPLIT
from .perf_counters import OBJECTIVE_NAMES, write_amps
from . import power
from .paired_stats import MIN_ROUNDS
from .store import ENDED, SessionState


def best_trial(trials: List[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    """The search's leader: the feasible window with the best score (baseline
    runs count).  Single windows: the search's progress, not its answer."""
    ok = [t for t in trials
          if t['verdict'] in ('feasible', 'baseline') and t['score'] is not None]
    return min(ok, key=lambda t: t['score']) if ok else None


def answer(s: Mapping[str, Any]) -> Optional[Dict[str, Any]]:
    """The confirmation's verdict so far (None: not started)."""
    return (s.get('confirm') or {}).get('result')


def recommended_arm(result: Optional[Mapping[str, Any]]) -> Optional[Dict[str, Any]]:
    """The recommended candidate's figures in the verdict, if any."""
    if not result or not result.get('recommended'):
        return None
    return next((a for a in result['arms'] if a['arm'] == result['recommended']), None)


def arm_record(s: Mapping[str, Any], name: str) -> Dict[str, Any]:
    """A confirmed candidate as planned: its search trial, candidate, options."""
    return next(a for a in (s.get('confirm') or {}).get('arms', []) if a['arm'] == name)


def final_answer(s: Mapping[str, Any]) -> Optional[Dict[str, Any]]:
    """The confirmation's verdict once it stands: all its rounds done, or the
    session ended (stopped or aborted: over the rounds it completed)."""
    result = answer(s)
    if result is None or not (result.get('complete') or s['state'] in ENDED):
        return None
    return result


def recommended_trial(s: Mapping[str, Any]) -> Optional[Dict[str, Any]]:
    """The search trial the confirmation recommends, once its verdict stands."""
    arm = recommended_arm(final_answer(s))
    if arm is None:
        return None
    return next((t for t in s['trials'] if t['index'] == arm['trial']), None)


NO_INTERVAL = 'not enough rounds for an interval yet'


def ratio_text(fig: Mapping[str, Any]) -> str:
    """A confirmed figure: median ratio to the baseline and its interval."""
    r = fig.get('ratio') or {}
    if r.get('median') is None:
        return '-'
    if r.get('low') is None or r.get('high') is None:
        return f'{r["median"]:.2f}x ({NO_INTERVAL})'
    return f'{r["median"]:.2f}x [{r["low"]:.2f}, {r["high"]:.2f}]'


# doc/bench/split-ab-rocksdb.md: on one host a candidate moves R's OSDs too
SHARED_HOST = ('R\'s OSDs share the canary\'s host: C/R reads C\'s effect minus R\'s '
               '(C\'s own ratio and R\'s are given beside it)')


def design_text(plan: Optional[Mapping[str, Any]]) -> str:
    """How the confirmation measured (measurement_plan.py)."""
    if not plan:
        return ''
    osds = ' and '.join(f'osd.{o}' for o in plan['osds'])
    if plan['design'] == SPLIT:
        return (f' (split, on {osds}: C/R, the IOPS of its PGs over those of '
                f'{plan.get("reference_pgs", "the")} PGs without it, over the same windows'
                + ('; ' + SHARED_HOST if plan.get('shared_host') else '') + ')')
    return (f' (sequential, on {osds})' if plan['design'] == SEQUENTIAL
            else f' ({plan["design"]}, on {osds} at once)')


def session_design(s: SessionState) -> Dict[str, Any]:
    """The measurement design the session runs (its plan, chosen at start:
    session_start.design_of) and why, for `status`."""
    plan = dict(s['plan'])
    plan.setdefault('why', f'the {s["params"]["workload"]} workload writes no client '
                    'groups to split' if s.get('client') is None else '')
    plan['note'] = SHARED_HOST if plan.get('shared_host') else ''
    return plan


def groups_text(arm: Mapping[str, Any]) -> str:
    """Under the split design, the client's own gain beside C/R: C's IOPS
    ratio and R's (what C/R added), each with its interval."""
    if 'iops_c' not in arm:
        return ''
    return (f'; C\'s IOPS {ratio_text(arm["iops_c"])}, R\'s {ratio_text(arm["iops_r"])}')


def steady_text(arm: Mapping[str, Any]) -> str:
    """An arm's steady check: its write-amp ratio at steady state and
    whether each side's window reached steady state (steady_check.saw_compaction:
    a compaction and its column families' cycle of WAL bytes; '' if it had none)."""
    st = arm.get('steady')
    if not st:
        return ''
    seen = {True: 'reached steady state', False: 'not steady', None: 'not yet measured'}
    ratio = ('-' if st.get('ratio') is None else
             ('<=' if st.get('upper_bound') else '') + f'{st["ratio"]:.2f}x')
    if arm.get('predicted') is not None:
        # the wear model's prediction beside what the steady windows measured
        ratio += f' (the model predicted {arm["predicted"]:.2f}x)'
    return (f'; steady write-amp {ratio} over {len(st["pairs"])} pair(s) (its window '
            f'{seen[st.get("arm_seen")]}, the baseline\'s {seen[st.get("baseline_seen")]})'
            + steady_objective_text(st)
            + (f': {st["verdict"]}' if st.get('verdict') else ': steady check in progress'))


def steady_objective_text(st: Mapping[str, Any]) -> str:
    """The objective's ratio over the steady windows (whole windows at
    steady state, where the rounds' are short and right after a restart):
    beside the claim, not a confirmation of it."""
    if st.get('objective') is None:
        return ''
    return (f', its objective {st["objective"]:.2f}x the baseline\'s over the same '
            f'windows ({len(st["pairs"])} pair(s): a look at the sign, not an interval)')


def answer_line(result: Mapping[str, Any]) -> str:
    """One line: what the confirmation recommends, with its figures; an
    answer of keep names the arms that restarted too slowly."""
    slow = [f'{a["arm"]}: {a["why"]}' for a in result['arms']
            if a['verdict'] == 'restart too slow']
    line = _answer_line(result)
    return line + (f' ({"; ".join(slow)})' if slow and line.startswith('keep') else '')


def _answer_line(result: Mapping[str, Any]) -> str:
    arm = recommended_arm(result)
    name = OBJECTIVE_NAMES.get(result['objective'], result['objective'])
    design = design_text(result.get('measurement_plan'))
    if result.get('goal') == 'wear':
        return wear_answer_line(result, arm, name, design)
    if arm is None:
        if not result['arms']:
            return 'keep your current options: the search found no feasible candidate to confirm'
        if all(a['verdict'] == 'too few rounds' for a in result['arms']):
            return (f'keep your current options: {result["rounds_done"]} of '
                    f'{result["rounds"]} rounds measured, too few for a '
                    f'{result["level"]:.0%} interval (it takes {MIN_ROUNDS})')
        passed = [a for a in result['arms'] if a.get('objective_verdict') == 'passes']
        if passed:
            # its objective passed; its steady check said no, or did not finish (a stop)
            return (f'keep your current options: {", ".join(a["arm"] for a in passed)} '
                    f'cleared the {result["margin"]:.0%} {name} margin, but none was found '
                    f'within the {result["budget"]:.2f}x write-amp budget at steady state'
                    + steady_reasons(passed))
        return (f'keep your current options: no candidate\'s {name} cleared the '
                f'{result["margin"]:.0%} margin over '
                f'{result["rounds_done"]} of {result["rounds"]} rounds{design}'
                + seen_text(result.get('seen')))
    wa = (f'steady write-amp {"<=" if arm["steady"].get("upper_bound") else ""}'
          f'{arm["steady"]["ratio"]:.2f}x the baseline\'s '
          f'(its own steady windows, within the {result["budget"]:.2f}x budget'
          f'{steady_objective_text(arm["steady"])})')
    return (f'recommend trial {arm["trial"]} ({arm["arm"]}): {name} '
            f'{ratio_text(arm["objective"])} over {arm["objective"]["rounds"]} '
            f'rounds{design} ({result["level"]:.0%} intervals), {wa}{groups_text(arm)}'
            f'{restart_text(arm, result)}')


def steady_reasons(arms: Sequence[Mapping[str, Any]]) -> str:
    """Why each arm whose objective passed was not recommended."""
    return ' (' + '; '.join(f'{a["arm"]}: {a["verdict"]}, {a["why"]}'
                            if a['verdict'] != 'passes' else
                            f'{a["arm"]}: its steady check did not finish'
                            for a in arms) + ')'


def bytes_text(n: float) -> str:
    for unit, size in (('TiB', 2 ** 40), ('GiB', 2 ** 30), ('MiB', 2 ** 20)):
        if abs(n) >= size:
            return f'{n / size:.1f} {unit}'
    return f'{n / 2 ** 10:.1f} KiB'


def wear_answer_line(result: Mapping[str, Any], arm: Optional[Mapping[str, Any]], name: str,
                     design: str) -> str:
    """The wear objective's answer: the steady write-amp saved, in bytes a
    day, with the IOPS guard the rounds held."""
    guard = -float(result['margin'])
    want = float(result.get('wear_margin') or 0.0)
    if arm is None:
        if not result['arms']:
            return ('keep your current options: the search found no candidate predicted to '
                    f'write {want:.0%} fewer DB bytes per client byte, its {name} within '
                    f'the {guard:.0%} guard and its steady window within steady_window_limit '
                    'at the baseline\'s WAL rate (the search line says what a window needs)')
        held = [a for a in result['arms'] if a.get('objective_verdict') == 'passes']
        if held:
            return (f'keep your current options: {", ".join(a["arm"] for a in held)} held '
                    f'the {guard:.0%} {name} guard, but none was found writing {want:.0%} '
                    'fewer DB bytes per client byte at steady state' + steady_reasons(held))
        return (f'keep your current options: no candidate\'s {name} held the {guard:.0%} '
                f'guard over {result["rounds_done"]} of {result["rounds"]} rounds{design}'
                + seen_text(result.get('seen'), guard))
    st = arm['steady']
    saved = st.get('saved_per_day')
    predicted = arm.get('predicted')
    return (f'recommend trial {arm["trial"]} ({arm["arm"]}): steady write-amp '
            f'{"<=" if st.get("upper_bound") else ""}{st["ratio"]:.2f}x the baseline\'s'
            + (f' (the model predicted {predicted:.2f}x)' if predicted else '')
            + (f', {bytes_text(saved)} fewer RocksDB bytes a day on the canary at its '
               'client rate' if saved else '')
            + f'; {name} {ratio_text(arm["objective"])} over {arm["objective"]["rounds"]} '
            f'rounds{design}, within the {guard:.0%} guard ({result["level"]:.0%} intervals)'
            f'{groups_text(arm)}{restart_text(arm, result)}')


def restart_text(arm: Mapping[str, Any], result: Mapping[str, Any]) -> str:
    """How long the canary took to restart after the arm, beside the baseline."""
    took = arm.get('restart_seconds')
    if took is None:
        return ''
    base = result.get('baseline_restart_seconds')
    return (f'; restarts after it {took:.0f}s'
            + (f' (after the baseline {base:.0f}s)' if base is not None else ''))


def gain_text(g: Optional[float]) -> str:
    return '-' if g is None else f'{g:+.0%}'


def noise_line(n: Mapping[str, Any]) -> str:
    """The noise the baseline's A/A pairs measured, and what the planned
    confirmation can see at it."""
    p = n['plan']
    name = OBJECTIVE_NAMES.get(n['objective'], n['objective'])
    line = (f'noise: {name} sd {n["sd"]:.3f} per round (log-ratio) over {n["pairs"]} A/A '
            f'pair(s) of {n["window"]:.0f}-s windows, planned at {p["sd"]:.3f} (its '
            f'{power.PLAN_CONFIDENCE:.0%} upper confidence limit); ')
    d = n.get('design')
    if d is not None and d['why'] != 'as asked':
        line += (f'the confirmation takes {d["candidates"]} candidate(s) over '
                 f'{d["rounds"]} rounds ({d["why"]}); ')
    if p['detectable'] is None:
        line += f'{p["rounds"]} round(s) are too few to confirm any gain (it takes {MIN_ROUNDS})'
    elif n.get('goal') == 'wear':
        # the rounds hold the guard: what they pass is a candidate no slower
        return line + (f'{p["rounds"]} rounds pass a candidate at '
                       f'{gain_text(p["detectable"])} of the baseline\'s {name} through '
                       f'the {-p["margin"]:.0%} guard {p["power"]:.0%} of the time')
    else:
        line += (f'{p["rounds"]} rounds confirm a gain of {gain_text(p["detectable"])} '
                 f'{p["power"]:.0%} of the time')
    need = p['rounds_for_detect']
    line += (f'; {gain_text(p["detect"])} needs ' + (
        f'{need} rounds' if need is not None else f'more than {p["most_rounds"]} rounds')
             + ' (confirm_rounds, detect)')
    return line


def seen_text(seen: Optional[Mapping[str, Any]], guard: Optional[float] = None) -> str:
    """What the confirmation could not see: the gain its rounds confirm 9
    times in 10 at the noise they showed (under the wear objective's
    `guard`: how fast a candidate must be to pass it 9 times in 10)."""
    if not seen or seen.get('detectable') is None:
        return ''
    said = f'; at the noise its rounds showed (sd {seen["sd"]:.3f} per round) its {seen["rounds"]}'
    if guard is not None:
        return (f'{said} rounds pass a candidate at {gain_text(seen["detectable"])} of the '
                f'baseline through the {guard:.0%} guard {seen["power"]:.0%} of the time: '
                'one as fast as the baseline, less often')
    return (f'{said} rounds confirm a gain of {gain_text(seen["detectable"])} '
            f'{seen["power"]:.0%} of the time: a smaller one goes unseen')


def steady_cap_line(cap: Mapping[str, Any]) -> str:
    """Which candidates the search proposes, by what a steady window can
    write (Search.steady_cap)."""
    fits = (f'{cap["bytes"] / 2**20:.0f} MiB of WAL (the baseline\'s '
            f'{cap["rate"] / 2**20:.2f} MiB/s for {cap["limit"]:.0f}s, steady_window_limit)')
    if cap.get('applied') is False:
        least = cap.get('smallest')
        at = (f'; the least of the space\'s candidates drawn takes {least / 2**20:.0f} MiB, '
              f'{least / cap["rate"]:.0f}s at this rate' if least and cap['rate'] else '')
        return (f'search: every candidate, though a steady window writes about {fits}: '
                'too little for enough of the space; a candidate whose column families\' '
                'L0 cycles take more ends "write-amp unknown" (raise steady_window_limit'
                f'{at})')
    return ('search: only candidates whose write-amp a steady window can judge '
            f'(every column family\'s L0 cycle within {fits})')


def took_text(seconds: float) -> str:
    minutes = round(seconds / 60)
    return (f'{seconds:.0f} s' if seconds < 90 else f'{minutes} min' if minutes < 90
            else f'{minutes // 60} h {minutes % 60:02d} min')


def crashes_lines(st: Mapping[str, Any]) -> List[str]:
    """The canary's crashes in failed trials, to read and archive."""
    if not st.get('crashes'):
        return []
    return [f'osd.{st["osd"]} crashed in failed trials (read each, then archive it): '
            + '; '.join(f'ceph crash archive {i}' for i in st['crashes'])]


def summary_lines(st: Mapping[str, Any]) -> List[str]:
    """An ended session's answer in a few lines (`status`, the panel's
    first card): recommend or keep, the figures that decided, how long it
    took, what to run next.  The reasoning stays in `status --detail`,
    `history` and `best`.  [] while it runs."""
    if st['state'] not in ENDED:
        return []
    rec = st.get('confirmation') or {}
    result = rec.get('result')
    arm = recommended_arm(result)
    on = f'osd.{st["osd"]} (objective {st.get("objective", "iops")})'
    if result is None:
        lines = [f'state: {st["state"]}, no answer on {on}: {st.get("error") or st["message"]}']
    else:
        lines = [f'state: {st["state"]}: ' + (f'recommend trial {arm["trial"]} ({arm["arm"]}) '
                                              f'for {on}' if arm
                                              else f'keep your current options on {on}')]
        name = OBJECTIVE_NAMES.get(result['objective'], result['objective'])
        wear = result.get('goal') == 'wear'
        if arm is None:
            why = _answer_line(dict(result, measurement_plan=None))
            lines.append('  why: ' + why.split(': ', 1)[-1])
        else:
            steady = arm.get('steady') or {}
            rule = (f'within the {-float(result["margin"]):.0%} guard' if wear
                    else f'clearing the {result["margin"]:+.0%} margin')
            figures = [f'  {name}: {ratio_text(arm["objective"])} over '
                       f'{arm["objective"]["rounds"]} rounds, {rule}']
            if steady.get('ratio') is not None:
                saved = steady.get('saved_per_day')
                db = (f'  RocksDB bytes per client byte at steady state: '
                      f'{"<=" if steady.get("upper_bound") else ""}{steady["ratio"]:.2f}x '
                      'the current options\''
                      + (f' ({bytes_text(saved)} fewer a day on osd.{st["osd"]})'
                         if saved else ''))
                figures.insert(0 if wear else 1, db)
            lines += figures
            took = arm.get('restart_seconds')
            if took is not None:
                lines.append(f'  osd.{st["osd"]} restarted on it in {took:.0f} s')
    if result is not None and st.get('error'):
        lines.append(f'error: {st["error"]}')
    if st.get('started') and st.get('ended'):
        lines.append(f'took {took_text(st["ended"] - st["started"])}; osd.{st["osd"]} '
                     'runs its own options again')
    lines += crashes_lines(st)
    lines.append('next: ceph rocks-autotune apply --dry-run (the rollout plan), or best '
                 '(the commands)' if arm else 'next: nothing to apply')
    lines.append('more: ceph rocks-autotune status --detail, history, best')
    return lines


def status_of(s: SessionState, osd: int, progress: float, health: List[str],
              release_default: str, max_memtable_bytes: int) -> Dict[str, Any]:
    """The `status -f json` fields."""
    noise = s.get('noise')
    cap = s.get('steady_cap')
    out = {
        'state': s['state'], 'phase': s['phase'], 'id': s['id'], 'osd': osd,
        'reason': s['reason'], 'message': s['message'], 'error': s['error'],
        'params': s['params'], 'started': s['started'], 'ended': s['ended'],
        'objective': (s.get('settings') or {}).get('objective', 'iops'),
        'trials_done': len([t for t in s['trials'] if t['kind'] == 'candidate']),
        'baseline_runs_done': len([t for t in s['trials'] if t['verdict'] == 'baseline']),
        'confirm_done': len([t for t in s['trials'] if t['kind'] == 'confirm']),
        'progress': progress, 'baseline': s['baseline'],
        # the noise the baseline's A/A pairs measured, and the confirmation's plan at it
        'noise': noise, 'noise_line': noise_line(noise) if noise else None,
        # the search keeps to candidates whose write-amp a steady window can judge
        'steady_cap': cap, 'steady_cap_line': steady_cap_line(cap) if cap else None,
        # split or sequential, and why (measurement_plan.py)
        'design': session_design(s),
        # the answer: the confirmation's (the search's leader is only its progress)
        'best': recommended_trial(s), 'leader': best_trial(s['trials']),
        'confirmation': s.get('confirm'),
        'current': s['current'], 'health': health,
        # others' checks at the last look before a restart: they block only
        # without --force; and the canary's crashes in failed trials, to archive
        'other_checks': s.get('other_checks', []),
        'crashes': [i for t in s['trials'] for i in t.get('crashes', [])],
        # read from the cluster at start (what differs by release)
        'release_default': release_default, 'sharding': s.get('sharding', ''),
        'max_memtable_bytes': max_memtable_bytes,
        # someone else's changes to the canary's config since the start
        'config_changes': s.get('config_changes') or [],
        # the client workload's pool and objects; how many the end removed
        'client': s['client'].to_json() if s['client'] is not None else None,
        # the preconditioning of the canary's DB (its record's)
        'precondition': {k: v for k, v in (s['canaries'][str(osd)].get('precondition')
                                           or {}).items() if k != 'kv_start'} or None,
    }
    # an ended session's answer in a few lines (the text's and the panel's)
    out['summary'] = summary_lines(out)
    return out


@dataclass(frozen=True)
class View:
    """What the module, the panel and the reports read of a session: copies,
    taken by the serve thread between steps."""
    status: Dict[str, Any]  # the `status -f json` fields
    record: Dict[str, Any]  # the persisted state (trials, alerts, baseline)
    active: bool
    progress: float

    @property
    def id(self) -> str:
        return str(self.status['id'])

    @property
    def osd(self) -> int:
        return int(self.status['osd'])

    @property
    def state(self) -> str:
        return str(self.status['state'])

    @property
    def phase(self) -> str:
        return str(self.status['phase'])

    @property
    def message(self) -> str:
        return str(self.status['message'])

    @property
    def reason(self) -> str:
        return str(self.status['reason'])


@dataclass
class Ratios:
    iops: Optional[float] = None
    kv_sync_lat: Optional[float] = None
    write_amp: Optional[float] = None


def ratios(trial: Dict[str, Any], baseline: Dict[str, Any]) -> Ratios:
    """A trial's figures over the baseline's medians."""
    m = trial.get('measurement') or {}
    r = Ratios()
    if m.get('iops') and baseline.get('iops'):
        r.iops = m['iops'] / baseline['iops']
    if m.get('kv_sync_lat_ms') and baseline.get('kv_sync_lat_ms'):
        r.kv_sync_lat = m['kv_sync_lat_ms'] / baseline['kv_sync_lat_ms']
    wa, base_wa = write_amps(m, baseline)
    if wa is not None and base_wa:
        r.write_amp = wa / base_wa
    return r


ROLLOUT_STATUSES = ('pending', 'restarting', 'done', 'failed', 'skipped')


# the runs osd_list names: what a job stores names thousands of OSDs in a bounded line
OSD_RUNS = 20


def osd_list(ids: Iterable[int]) -> str:
    """osd.0-3, osd.7: runs of consecutive ids folded; past OSD_RUNS runs, a count."""
    runs: List[List[int]] = []
    for i in sorted(ids):
        if runs and i == runs[-1][1] + 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    more = sum(b - a + 1 for a, b in runs[OSD_RUNS:])
    return (', '.join(f'osd.{a}' if a == b else f'osd.{a}-{b}' for a, b in runs[:OSD_RUNS])
            + (f' and {more} more' if more else '')) or 'none'


def osds_are(ids: Sequence[int], what: str) -> List[str]:
    """'osd.3 is down', 'osd.1, osd.4 are down': one line for any number (none: no line)."""
    return [f'{osd_list(ids)} {"is" if len(ids) == 1 else "are"} {what}'] if ids else []


@dataclass
class ProgressEvent:
    """A job's event in `ceph -s` (the progress module's): its id, what it
    says, how far it is, the OSDs it names, and why it failed if it did."""
    id: str
    message: str
    progress: float
    refs: List[Tuple[str, int]]
    failure: Optional[str] = None


def rollout_status(r: Mapping[str, Any], progress: float, health: List[str]) -> Dict[str, Any]:
    """A rollout's fields in `status -f json` (`rollout`): what it does, where
    it stands, and each OSD's status in the plan's order."""
    osds = [{k: o[k] for k in ('osd', 'host', 'status', 'error', 'put_back')}
            for o in r['osds']]
    current = r['osds'][r['current']]['osd'] if r.get('current') is not None else None
    return {
        'id': r['id'], 'kind': r['kind'], 'state': r['state'], 'phase': r['phase'],
        'message': r['message'], 'error': r['error'], 'target': r['target'],
        'options': r['options'], 'source': r['source'], 'of': r['of'],
        'started': r['started'], 'ended': r['ended'], 'current': current,
        'counts': {s: len([o for o in osds if o['status'] == s]) for s in ROLLOUT_STATUSES},
        'progress': progress, 'osds': osds, 'sets': r['sets'], 'priors': r['priors'],
        'notes': r['notes'], 'checks': r.get('checks', []), 'force': r.get('force', False),
        'allow_single_copy': r.get('allow_single_copy', False), 'health': health,
    }
