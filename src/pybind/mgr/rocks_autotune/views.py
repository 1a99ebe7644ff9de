"""What the module, the panel and the reports read of a session (status, leader, answer,
View): pure functions of the persisted state that compute no statistic."""
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any, Dict, List, Optional, Tuple

from .confirm import READS_SLOWER, ArmResult, ConfirmRecord, RoundsNoise, Verdict
from .measurement_plan import SPLIT, MeasurementPlan
from .perf_counters import OBJECTIVE_NAMES
from . import power
from .paired_stats import MIN_ROUNDS, Ratios
from .rollout_record import RolloutOsd, RolloutRecord
from .session_settings import WEAR
from .steady_check import SteadyVerdict
from .store import ENDED, SessionState
from .trial import Trial
from .window import SteadyCap


def best_trial(trials: List[Trial]) -> Optional[Trial]:
    """The search's leader (its progress, not its answer): the best feasible or baseline window."""
    ok = [(t.score, t) for t in trials
          if t.verdict in ('feasible', 'baseline') and t.score is not None]
    return min(ok, key=lambda st: st[0])[1] if ok else None


def answer(s: SessionState) -> Optional[Verdict]:
    """The confirmation's verdict so far (None: not started)."""
    return None if s.confirm is None else s.confirm.result


def final_answer(s: SessionState) -> Optional[Verdict]:
    """The confirmation's verdict once it stands: all rounds done, or the session ended."""
    result = answer(s)
    return result if result is not None and (result.complete or s.state in ENDED) else None


def recommended_trial(s: SessionState) -> Optional[Trial]:
    """The search trial the confirmation recommends, once its verdict stands."""
    result = final_answer(s)
    arm = result.chosen if result else None
    return next((t for t in s.trials if t.index == arm.trial), None) if arm else None


def ratio_text(r: Ratios) -> str:
    """A confirmed figure: median ratio to the baseline and its interval."""
    if r.median is None:
        return '-'
    if r.low is None or r.high is None:
        return f'{r.median:.2f}x (not enough rounds for an interval yet)'
    return f'{r.median:.2f}x [{r.low:.2f}, {r.high:.2f}]'


# doc/bench/split-ab-rocksdb.md: on one host a candidate moves R's OSDs too
SHARED_HOST = ('R\'s OSDs share the canary\'s host: C/R reads C\'s effect minus R\'s '
               '(C\'s own ratio and R\'s are given beside it)')


def design_text(plan: MeasurementPlan, osd: int) -> str:
    """How the confirmation measured on canary `osd`."""
    if plan.design == SPLIT:
        return (f' (split, on osd.{osd}: C/R, the IOPS of its PGs over those of '
                f'{plan.reference_pgs} PGs without it, over the same windows'
                + ('; ' + SHARED_HOST if plan.shared_host else '') + ')')
    return f' (sequential, on osd.{osd})'


def design_why(s: SessionState) -> str:
    """Why the session measures as it does (session_start.design_of)."""
    no_split = f'the {s.params.workload} workload writes no client groups to split'
    return s.plan.why if s.plan.why is not None else no_split if s.client is None else ''


def session_design(s: SessionState) -> Dict[str, Any]:
    """The session's measurement design and why, for `status -f json`."""
    return dict(s.plan.to_json(), why=design_why(s),
                note=SHARED_HOST if s.plan.shared_host else '')


def groups_text(arm: ArmResult) -> str:
    """Under the split design, C's IOPS ratio and R's beside their C/R."""
    if arm.iops_c is None or arm.iops_r is None:
        return ''
    return f'; C\'s IOPS {ratio_text(arm.iops_c.ratio)}, R\'s {ratio_text(arm.iops_r.ratio)}'


def steady_text(arm: ArmResult) -> str:
    """An arm's steady check ('' if none): its steady write-amp, and whether each side got there."""
    st = arm.steady
    if st is None:
        return ''
    seen = {True: 'reached steady state', False: 'not steady', None: 'not yet measured'}
    ratio = '-' if st.ratio is None else steady_ratio(st)
    if arm.predicted is not None:  # the wear model's, beside what was measured
        ratio += f' (the model predicted {arm.predicted:.2f}x)'
    return (f'; steady write-amp {ratio} over {len(st.pairs)} pair(s) (its window '
            f'{seen[st.seen("arm")]}, the baseline\'s {seen[st.seen("baseline")]})'
            + steady_objective_text(st)
            + (f': {st.verdict}' if st.verdict else ': steady check in progress'))


def reads_text(arm: ArmResult, seen: Optional[RoundsNoise] = None,
               of: str = 'the baseline\'s') -> str:
    """An arm's read probes over the rounds: latency over `of`'s (mean judged,
    p99 shown), and the slowdown the rounds show at the noise `seen`."""
    if arm.reads is None or arm.reads_p99 is None:
        return 'reads not measured'
    shows = ('' if seen is None or seen.detectable is None else
             f'; at their noise (sd {seen.sd:.2f} a round) the rounds show reads '
             f'{1 + seen.detectable:.2f}x slower {seen.power:.0%} of the time')
    return (f'read latency {ratio_text(arm.reads.ratio)} {of} (p99 '
            f'{ratio_text(arm.reads_p99.ratio)}) over {arm.reads.rounds} rounds{shows}')


def steady_ratio(st: SteadyVerdict) -> str:
    """A steady write-amp ratio ('~': the baseline's window saw no steady state)."""
    edges = (f' ({st.low:.2f}-{st.high:.2f}x with a compaction in or out)'
             if st.low is not None and st.high is not None else '')
    return f'{"~" if st.upper_bound else ""}{st.ratio:.2f}x{edges}'


def steady_objective_text(st: SteadyVerdict) -> str:
    """The objective's ratio over the steady windows: beside the rounds' claim, not judged."""
    if st.objective is None:
        return ''
    return (f', its objective {st.objective:.2f}x the baseline\'s over the same '
            f'windows ({len(st.pairs)} pair(s): a look at the sign, not an interval)')


def answer_line(rec: ConfirmRecord, osd: int) -> str:
    """What the confirmation on canary `osd` recommends, with its figures (a keep names
    arms slow to restart); `rec` has its verdict."""
    result = rec.result
    assert result is not None  # Confirmation.update sets it at the plan
    arm = result.chosen
    name = OBJECTIVE_NAMES.get(rec.objective, rec.objective)
    design = design_text(rec.measurement_plan, osd)
    if arm is None:
        slow = [f'{a.arm}: {a.why}' for a in result.arms if a.verdict == 'restart too slow']
        return ('keep your current options: ' + _keep_why(rec, result, name, design)
                + (f' ({"; ".join(slow)})' if slow else ''))
    claim = f'{name} {ratio_text(arm.objective.ratio)} over {arm.objective.rounds} rounds{design}'
    tail = f'{groups_text(arm)}{restart_text(arm, result)}'
    st = arm.steady
    assert st is not None  # recommended by its steady check
    head = f'recommend trial {arm.trial} ({arm.arm}): '
    if rec.goal != WEAR:
        return (f'{head}{claim} ({rec.level:.0%} intervals), steady write-amp '
                f'{steady_ratio(st)} the baseline\'s (its own steady windows, within the '
                f'{rec.budget:.2f}x budget{steady_objective_text(st)}), '
                f'{reads_text(arm, result.reads_seen)}{tail}')
    saved = st.saved_per_day
    return (f'{head}steady write-amp {steady_ratio(st)} the baseline\'s'
            + (f' (the model predicted {arm.predicted:.2f}x)' if arm.predicted else '')
            + (f', {bytes_text(saved)} fewer RocksDB bytes a day on the canary at its '
               'client rate' if saved else '') + f', {reads_text(arm, result.reads_seen)}'
            + f'; {claim}, within the {-rec.margin:.0%} guard '
            f'({rec.level:.0%} intervals){tail}')


def _keep_why(rec: ConfirmRecord, result: Verdict, name: str, design: str) -> str:
    """Why no candidate is recommended (wear: the guard, not the margin)."""
    wear = rec.goal == WEAR
    guard = -rec.margin
    want = rec.wear_margin or 0.0
    if not result.arms and not wear:
        return 'the search found no feasible candidate to confirm'
    if not result.arms:
        return (f'the search found no candidate predicted to write {want:.0%} fewer DB bytes '
                f'per client byte, its {name} within the {guard:.0%} guard and its steady '
                'window within steady_window_limit at the baseline\'s WAL rate (the search '
                'line says what a window needs)'
                + (f'; {rec.none_why}' if rec.none_why else ''))
    if not wear and all(a.verdict == 'too few rounds' for a in result.arms):
        return (f'{result.rounds_done} of {rec.rounds} rounds measured, too few for '
                f'a {rec.level:.0%} interval (it takes {MIN_ROUNDS})')
    verb, pct, rule = (('held', f'{guard:.0%}', 'guard') if wear
                       else ('cleared', f'{rec.margin:.0%}', 'margin'))
    passed = [a for a in result.arms if a.objective_verdict in ('passes', READS_SLOWER)]
    if passed:
        # its objective passed; its reads or its steady check said no, or the
        # check did not finish (a stop)
        return (f'{", ".join(a.arm for a in passed)} {verb} the {pct} {name} {rule}, but '
                'none was found ' + (f'writing {want:.0%} fewer DB bytes per client byte' if wear
                                     else f'within the {rec.budget:.2f}x write-amp budget')
                + ' at steady state with reads no slower (' + '; '.join(
                    f'{a.arm}: {a.verdict}, {a.why}' if a.verdict != 'passes'
                    else f'{a.arm}: its steady check did not finish' for a in passed) + ')')
    return (f'no candidate\'s {name} {verb} the {pct} {rule} over {result.rounds_done} of '
            f'{rec.rounds} rounds{design}' + seen_text(result.seen, guard if wear else None))


def bytes_text(n: float) -> str:
    for unit, size in (('TiB', 2 ** 40), ('GiB', 2 ** 30), ('MiB', 2 ** 20)):
        if abs(n) >= size:
            return f'{n / size:.1f} {unit}'
    return f'{n / 2 ** 10:.1f} KiB'


def restart_text(arm: ArmResult, result: Verdict) -> str:
    """How long the canary took to restart after the arm, beside the baseline."""
    took = arm.restart_seconds
    if took is None:
        return ''
    base = result.baseline_restart_seconds
    return (f'; restarts after it {took:.0f}s'
            + (f' (after the baseline {base:.0f}s)' if base is not None else ''))


def gain_text(g: Optional[float]) -> str:
    return '-' if g is None else f'{g:+.0%}'


def noise_line(n: power.Noise) -> str:
    """The noise the baseline's A/A pairs measured, and what the planned rounds see at it."""
    p, d = n.plan, n.design
    name = OBJECTIVE_NAMES.get(n.objective, n.objective)
    line = (f'noise: {name} sd {n.sd:.3f} per round (log-ratio) over {n.pairs} A/A '
            f'pair(s) of {n.window:.0f}-s windows, planned at {p.sd:.3f} (its '
            f'{power.PLAN_CONFIDENCE:.0%} upper confidence limit); ')
    if d.why != 'as asked':
        line += (f'the confirmation takes {d.candidates} candidate(s) over {d.rounds} '
                 f'rounds ({d.why}); ')
    if p.detectable is None:
        line += f'{p.rounds} round(s) are too few to confirm any gain (it takes {MIN_ROUNDS})'
    elif n.goal == 'wear':
        return line + _sees(p.rounds, p.detectable, p.power, p.sd, -p.margin, f'\'s {name}')
    else:
        line += _sees(p.rounds, p.detectable, p.power, p.sd)
    line += (f'; {gain_text(p.detect)} needs ' + (
        f'{p.rounds_for_detect} rounds' if p.rounds_for_detect is not None
        else f'more than {p.most_rounds} rounds') + ' (confirm_rounds, detect)')
    return line


def _sees(rounds: int, detectable: Optional[float], chance: float, sd: float,
          guard: Optional[float] = None, of: str = '') -> str:
    """What `rounds` rounds confirm `chance` of the time: a gain, or with a wear `guard`, a
    candidate passing it and how often one as fast as the baseline does (as one usually is)."""
    if guard is None:
        return (f'{rounds} rounds confirm a gain of {gain_text(detectable)} '
                f'{chance:.0%} of the time')
    return (f'{rounds} rounds pass a candidate at {gain_text(detectable)} of the '
            f'baseline{of} through the {guard:.0%} guard {chance:.0%} of the time, '
            f'one as fast as the baseline '
            f'{power.confirm_rate(0.0, sd, rounds, -guard):.0%} of the time')


def seen_text(seen: Optional[RoundsNoise], guard: Optional[float] = None) -> str:
    """What the confirmation could not see at the noise its rounds showed."""
    if seen is None or seen.detectable is None:
        return ''
    return (f'; at the noise its rounds showed (sd {seen.sd:.3f} per round) its '
            + _sees(seen.rounds, seen.detectable, seen.power, seen.sd, guard)
            + (': a smaller one goes unseen' if guard is None else ''))


def steady_cap_line(cap: SteadyCap) -> str:
    """Which candidates the search proposes, by what a steady window can write."""
    fits = (f'{cap.bytes / 2**20:.0f} MiB of WAL (the baseline\'s '
            f'{cap.rate / 2**20:.2f} MiB/s for {cap.limit:.0f}s, steady_window_limit)')
    if cap.applied is False:
        least = cap.smallest
        at = (f'; the least of the space\'s candidates drawn takes {least / 2**20:.0f} MiB, '
              f'{least / cap.rate:.0f}s at this rate' if least and cap.rate else '')
        return (f'search: every candidate, though a steady window writes about {fits}: '
                'too little for enough of the space; a candidate whose column families\' '
                'L0 cycles take more ends "write-amp unknown" (raise steady_window_limit'
                f'{at})')
    return ('search: only candidates whose write-amp a steady window can judge '
            f'(a first compaction, then every column family\'s L0 cycle, within {fits})')


def took_text(seconds: float) -> str:
    minutes = round(seconds / 60)
    return (f'{seconds:.0f} s' if seconds < 90 else f'{minutes} min' if minutes < 90
            else f'{minutes // 60} h {minutes % 60:02d} min')


def crashes_lines(s: SessionState) -> List[str]:
    """The canary's crashes in failed trials, to read and archive."""
    ids = [i for t in s.trials for i in t.crashes]
    if not ids:
        return []
    return [f'osd.{s.osd} crashed in failed trials (read each, then archive it): '
            + '; '.join(f'ceph crash archive {i}' for i in ids)]


def summary_lines(s: SessionState) -> List[str]:
    """An ended session's answer in a few lines ([] while it runs); the reasoning stays
    in `status --detail`, `history` and `best`."""
    if s.state not in ENDED:
        return []
    rec, result = s.confirm, answer(s)
    arm = result.chosen if result else None
    on = f'osd.{s.osd} (objective {s.settings.objective})'
    if rec is None or result is None:
        lines = [f'state: {s.state}, no answer on {on}: {s.error or s.message}']
    elif arm is None:
        name = OBJECTIVE_NAMES.get(rec.objective, rec.objective)
        lines = [f'state: {s.state}: keep your current options on {on}',
                 '  why: ' + _keep_why(rec, result, name, '')]
    else:
        lines = [f'state: {s.state}: recommend trial {arm.trial} ({arm.arm}) for {on}']
        lines += _summary_figures(s.osd, rec, arm)
    if result is not None and s.error:
        lines.append(f'error: {s.error}')
    if s.started and s.ended:
        lines.append(f'took {took_text(s.ended - s.started)}; osd.{s.osd} '
                     'runs its own options again')
    lines += crashes_lines(s)
    lines.append('next: ceph rocks-autotune apply --dry-run (the rollout plan), or best '
                 '(the commands)' if arm else 'next: nothing to apply')
    lines.append('more: ceph rocks-autotune status --detail, history, best')
    return lines


def _summary_figures(osd: int, rec: ConfirmRecord, arm: ArmResult) -> List[str]:
    """The recommended arm's objective and steady write-amp (the goal's first), its restart."""
    name = OBJECTIVE_NAMES.get(rec.objective, rec.objective)
    wear = rec.goal == WEAR
    steady = arm.steady
    rule = (f'within the {-rec.margin:.0%} guard' if wear
            else f'clearing the {rec.margin:+.0%} margin')
    lines = [f'  {name}: {ratio_text(arm.objective.ratio)} over {arm.objective.rounds} '
             f'rounds, {rule}']
    if steady is not None and steady.ratio is not None:
        saved = steady.saved_per_day
        lines.insert(0 if wear else 1, '  RocksDB bytes per client byte at steady state: '
                     f'{steady_ratio(steady)} the current options\''
                     + (f' ({bytes_text(saved)} fewer a day on osd.{osd})' if saved else ''))
    lines.append('  4 KiB reads after each round\'s window: '
                 + reads_text(arm, of='the current options\''))
    if arm.restart_seconds is not None:
        lines.append(f'  osd.{osd} restarted on it in {arm.restart_seconds:.0f} s')
    return lines


def done(trials: List[Trial]) -> Tuple[int, int, int]:
    """The baseline runs, search trials and confirmation measurements done."""
    return (sum(t.verdict == 'baseline' for t in trials),
            sum(t.kind == 'candidate' for t in trials), sum(t.kind == 'confirm' for t in trials))


def _json(t: Optional[Trial]) -> Optional[Dict[str, Any]]:
    return None if t is None else t.to_json()


def status_of(s: SessionState, osd: int, progress: float, health: List[str],
              release_default: str, max_memtable_bytes: int) -> Dict[str, Any]:
    """The `status -f json` fields: the answer is the confirmation's (`best`), the search's
    leader only its progress; `other_checks`: others' health checks at the last look before a
    restart (they block only without --force)."""
    noise, cap, trials = s.noise, s.steady_cap, s.trials
    base, search, confirm = done(trials)
    pre = s.canary.precondition
    return {
        'state': s.state, 'phase': s.phase, 'id': s.id, 'osd': osd,
        'reason': s.reason, 'message': s.message, 'error': s.error,
        'params': asdict(s.params), 'started': s.started, 'ended': s.ended,
        'objective': s.settings.objective,
        'trials_done': search, 'baseline_runs_done': base, 'confirm_done': confirm,
        'progress': progress, 'baseline': s.baseline and s.baseline.to_json(),
        'noise': noise and noise.to_json(), 'noise_line': noise and noise_line(noise),
        'steady_cap': cap and cap.to_json(), 'steady_cap_line': cap and steady_cap_line(cap),
        'design': session_design(s),
        'best': _json(recommended_trial(s)), 'leader': _json(best_trial(trials)),
        'confirmation': None if s.confirm is None else s.confirm.to_json(),
        'current': _json(s.current), 'health': health,
        'other_checks': s.other_checks or [], 'crashes': [i for t in trials for i in t.crashes],
        'release_default': release_default, 'sharding': s.sharding,
        'max_memtable_bytes': max_memtable_bytes, 'config_changes': s.config_changes,
        'client': None if s.client is None else s.client.to_json(),
        'precondition': None if pre is None else {
            k: v for k, v in pre.to_json().items() if k != 'kv_start'},
        'summary': summary_lines(s),
    }


@dataclass
class TimeSaid:
    """What a running session's windows and the rest of it take, in seconds (Search.time_said)."""
    steady_window: Optional[float]  # one of the current options (None: not known)
    no_flush_seen: bool  # no window so far saw a flush: longer than they were
    steady_window_limit: float
    confirm_window: float  # a round's window: the baseline runs'
    steady_windows_left: int  # at most
    steady_need: Optional[float]  # a finalist's, by the windows so far
    left_seconds: float  # at most
    expected_seconds: Optional[float]  # None: not before a minute of preconditioning
    keep_seconds: Optional[float]  # if the search leaves nothing to confirm (None: planned)
    finalist_seconds: float  # if a finalist passes its rounds
    finalist_chance: float  # that the search leaves one
    pass_chance: float  # that a finalist's rounds pass it


@dataclass(frozen=True)
class View:
    """What the module, the panel and the reports read of a session: copies taken between steps."""
    status: Dict[str, Any]  # the `status -f json` fields
    record: SessionState  # a copy of the persisted state
    active: bool
    time: Optional[TimeSaid] = None  # status's `time`

    @property
    def id(self) -> str: return self.record.id
    @property
    def osd(self) -> int: return self.record.osd
    @property
    def state(self) -> str: return self.record.state
    @property
    def phase(self) -> str: return self.record.phase
    @property
    def message(self) -> str: return self.record.message
    @property
    def reason(self) -> str: return self.record.reason


ROLLOUT_STATUSES = ('pending', 'restarting', 'done', 'failed', 'skipped')
# the most OSDs a rollout's status and progress event name, whatever the OSD count,
# as Ceph's own modules summarise (`status --osds`: every one)
SHOWN = 20


@dataclass
class ProgressEvent:
    """A job's event in `ceph -s` (the progress module's)."""
    id: str
    message: str
    progress: float
    refs: List[Tuple[str, int]]
    failure: Optional[str] = None


def rollout_osd(o: RolloutOsd) -> Dict[str, Any]:
    return dict(osd=o.osd, host=o.host, status=o.status, error=o.error, put_back=o.put_back)


def rollout_status(r: RolloutRecord, progress: float, health: List[str],
                   every: bool = False) -> Dict[str, Any]:
    """`status -f json`'s `rollout`, bounded in the OSD count: `notable` names the first
    SHOWN in flight, failed or skipped.  `every` (`status --osds`) adds every OSD and the
    plan's masks; `current` is the batch's first OSD."""
    n = Counter(o.status for o in r.osds)
    notable = [o for o in r.osds if o.status in ('restarting', 'failed', 'skipped')]
    out: Dict[str, Any] = dict(
        id=r.id, kind=r.kind, state=r.state, phase=r.phase, message=r.message, error=r.error,
        target=r.target, options=r.options, source=r.source, of=r.of, started=r.started,
        ended=r.ended, current=r.osds[r.batch[0].i].osd if r.batch else None,
        total=len(r.osds), counts={s: n[s] for s in ROLLOUT_STATUSES},
        progress=progress, notable=[rollout_osd(o) for o in notable[:SHOWN]],
        notable_more=max(0, len(notable) - SHOWN), notes=r.notes, checks=r.checks,
        force=r.force, allow_single_copy=r.allow_single_copy, health=health)
    if r.max_parallel > 1:
        out.update(max_parallel=r.max_parallel, in_flight=[
            r.osds[f.i].osd for f in r.batch if r.osds[f.i].status == 'restarting'])
    if every:
        out.update(osds=[rollout_osd(o) for o in r.osds], sets=r.sets, priors=r.priors)
    return out
