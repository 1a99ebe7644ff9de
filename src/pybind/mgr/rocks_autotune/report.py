"""Plain-text views of a session and a rollout for the CLI, and `best`'s summary:
they read the figures the session computed and compute no statistic (the
command thread must not import scipy/numpy)."""
from dataclasses import asdict
from typing import Any, Dict, List, Mapping, Optional

from .canary import ANNEX, CLASS_MASK_NOTE, OPTIONS
from .cluster import OsdInfo
from .confirm import FIGURES, ArmResult, ConfirmRecord
from . import perf_counters
from .canary_record import PreconditionRecord
from .perf_counters import OBJECTIVE_NAMES
from .health import osd_list
from .views import (SHARED_HOST, TimeSaid, answer_line, best_trial, crashes_lines,
                    design_why, done, final_answer, groups_text, noise_line, ratio_text,
                    reads_text, steady_cap_line, steady_text, summary_lines)
from .rollout_plan import at_a_time, config_command, show
from .rollout_record import RolloutPlan
from .session_settings import WEAR
from .store import SessionState
from .trial import Trial
from .workload import CLEANUP_RETRY, NAMESPACE, ClientRecord

MiB = 1 << 20


def _fmt(v: Optional[float], spec: str, unit: float = 1.0) -> str:
    return '-' if v is None else format(v / unit, spec)


def status_text(s: Optional[SessionState], st: Mapping[str, Any], detail: bool = False,
                error: str = '', time: Optional[TimeSaid] = None) -> str:
    """`status`: `s`'s summary once ended, else (or `--detail`: the ceph CLI keeps --verbose)
    all of it; then the last rollout.  `st` (its `status -f json`) and `time` carry what only
    the serve thread computes; `error`: the module's, before the session's."""
    if s is None:
        lines = ['state: idle (no session has run)' + (f'\nerror: {error}' if error else '')]
    else:
        summary = summary_lines(s)
        lines = summary if summary and not detail else _detail_lines(s, st, error or s.error, time)
    return '\n'.join(lines + rollout_lines(st.get('rollout')))


def _detail_lines(s: SessionState, st: Mapping[str, Any], error: str,
                  time: Optional[TimeSaid]) -> List[str]:
    p, (base, search, confirm) = s.params, done(s.trials)
    lines = [f'state: {s.state} ({s.phase})',
             f'canary: osd.{s.osd} ({s.reason})',
             f'params: objective={s.settings.objective} trials={p.trials} '
             f'budget={p.budget} workload={p.workload} duration={p.duration:.0f}s',
             f'progress: {base} baseline run(s), {search}/{p.trials} trials, '
             f'{confirm} confirmation measurement(s) ({st["progress"]:.0%})',
             f'message: {s.message}']
    if error:
        lines.append(f'error: {error}')
    lines.append(f'measurement design: {s.plan.design} ({design_why(s)})'
                 + (f'; {SHARED_HOST}' if s.plan.shared_host else ''))
    lines += (client_lines(s.client) + precondition_lines(s.canary.precondition)
              + time_lines(time, s.state))
    b = s.baseline
    if b is not None:
        # what the write-amp counted (perf_counters.ROCKSDB, BLUEFS)
        by = (f'RocksDB\'s bytes; BlueFS\'s {_fmt(b.bluefs_write_amp, ".3f")})'
              if b.write_amp_by == perf_counters.ROCKSDB else 'BlueFS\'s bytes)')
        lines.append(f'baseline ({b.runs} runs, median; spread = (max-min)/median): '
                     f'kv_sync_lat {b.kv_sync_lat_ms:.3f} ms (spread {b.kv_sync_lat_spread:.1%}), '
                     f'IOPS {_fmt(b.iops, ".0f")} (spread {_fmt(b.iops_spread, ".1%")}), '
                     f'write-amp {b.write_amp:.3f} (spread {b.write_amp_spread:.1%}; {by}')
    lines += [noise_line(s.noise)] if s.noise else []
    lines += [steady_cap_line(s.steady_cap)] if s.steady_cap else []
    leader = best_trial(s.trials)
    if leader and s.confirm is None:
        lines.append(f'search leader: trial {leader.index} ({leader.kind}; its single '
                     'window, to be confirmed)')
    lines += confirmation_lines(s.confirm, s.state, s.osd)
    if st['health']:
        lines.append('health: ' + ', '.join(st['health']))
    if s.other_checks:
        lines.append('other health checks: ' + ', '.join(s.other_checks)
                     + (' (not blocking: --force)' if p.force
                        else ' (trials wait for them: no --force)'))
    return lines + crashes_lines(s)


def client_lines(c: Optional[ClientRecord]) -> List[str]:
    """The client workload's keyspace, and what became of it."""
    if c is None:
        return []
    if c.count is None:  # a rescue's: only the pool is known
        line = (f'client load: the lost session\'s objects in pool {c.pool}, namespace '
                f'{NAMESPACE}')
    else:
        line = (f'client load: {c.count} objects in pool {c.pool}, namespace {NAMESPACE}, '
                f'in {len(c.seeds)} of its {c.pg_num} PGs the canary is in')
    if c.ref_seeds:
        line += f', and as many in {len(c.ref_seeds)} without it (group R, on {c.ref_osds} OSDs)'
    if c.removed is not None:
        line += f'; {c.removed} removed at the end'
    elif c.remove_error:
        line += (f'; not all removed ({c.remove_error}): tried again every '
                 f'{CLEANUP_RETRY // 60:.0f} min')
    return [line]


def time_lines(t: Optional[TimeSaid], state: str) -> List[str]:
    """Time said: a steady-state window here, the confirmation's windows, what is left."""
    if not t or state not in ('running', 'stopping'):
        return []
    if t.steady_window is not None:
        steady = (f'a steady-state window of the current options takes about '
                  f'{t.steady_window:.0f}s here (to its busiest column family\'s first '
                  'L0 compaction, then another and the WAL of every family\'s, at the rates '
                  'the windows so far counted, and --duration at least)')
    elif t.no_flush_seen:
        steady = ('no window so far saw a flush: a steady-state window of the '
                  'current options is longer than they were')
    else:
        steady = 'a steady-state window: not known before the baseline\'s windows'
    window = (f'confirmation rounds\' windows last {t.confirm_window:.0f}s (the baseline '
              'runs\'), judged on the objective alone')
    if t.steady_windows_left:
        window += (f'; then at most {t.steady_windows_left} steady window(s) of up to '
                   f'{t.steady_window_limit:.0f}s each (steady_window_limit) for write-amp'
                   + (f', about {t.steady_need:.0f}s each by the windows so far'
                      if t.steady_need else ''))
    left = (f'about {t.expected_seconds / 60:.0f} min expected' if t.expected_seconds is not None
            else 'expected time: after a minute of the preconditioning\'s load (its rates)')
    left += f', at most about {t.left_seconds / 60:.0f} min left'
    if t.keep_seconds is not None:
        left += (f' (about {t.keep_seconds / 60:.0f} min if the search leaves nothing to '
                 f'confirm, {t.finalist_seconds / 60:.0f} min if a finalist passes its '
                 f'rounds; a finalist {t.finalist_chance:.0%} likely, its rounds passing '
                 f'{t.pass_chance:.0%} at its search gain, or at none before one is '
                 'feasible, by the windows so far)')
    return [f'time: {steady}; {window}; {left}']


def precondition_lines(p: Optional[PreconditionRecord]) -> List[str]:
    """What the preconditioning wrote, and the LSM it left (per column family, L<n>:files/size)."""
    if p is None:
        return []
    state = 'done' if p.steady else 'done, not steady' if p.done else 'in progress'
    fill = (f'{p.filled} objects filled ({p.fill_bytes / 2**20:.0f} MiB in '
            f'{p.fill_seconds:.0f}s), then ' if p.filled else '')
    line = (f'preconditioning ({state}): {fill}{p.bytes / 2**20:.0f} MiB written in 4 KiB '
            f'writes in {p.seconds:.0f}s ({p.overwritten} blocks overwritten once); ' + (
                f'{p.busiest_cf} flushed most ({p.flushes} flushes, {p.compactions} '
                'compactions below L0)' if p.busiest_cf else 'no flush yet'))
    out = [line + (f'; {p.why}' if p.why else '')]
    if p.shape:
        out.append('LSM: ' + '; '.join(
            f'{cf} ' + ' '.join(f'L{n}:{files}/{size / 2**20:.1f}MiB' for n, files, size in levels)
            for cf, levels in sorted(p.shape.items())))
    return out


def confirmation_lines(rec: Optional[ConfirmRecord], state: str, osd: int) -> List[str]:
    """The confirmation on canary `osd` in `status`: its progress, candidates, answer."""
    if rec is None:
        return []
    result = rec.result
    name = OBJECTIVE_NAMES.get(rec.objective, rec.objective)
    lines = [f'confirmation: {len(rec.arms)} candidate(s) by the model\'s posterior mean, '
             f'and the baseline, in {rec.rounds} rounds of fresh random order; '
             f'{result.rounds_done if result else 0} done; objective {name}, margin '
             f'{rec.margin:.0%}; then write-amp in steady windows, best first']
    if result is not None:
        lines += [arm_line(name, a) for a in result.arms]
        if result.complete or state in ('stopped', 'aborted', 'failed'):
            lines.append('answer: ' + answer_line(rec, osd))
    return lines


def arm_line(name: str, a: ArmResult) -> str:
    """A confirmed candidate's figures over the rounds, and its verdicts."""
    return (f'  {a.arm} (trial {a.trial}): {name} {ratio_text(a.objective.ratio)}, '
            f'{a.objective.rounds} round(s): {a.objective_verdict}; '
            f'kv_sync_lat {ratio_text(a.kv_sync_lat.ratio)}, write-amp '
            f'{ratio_text(a.write_amp.ratio)} (short windows: shown, not judged)'
            + (f'; {reads_text(a)}' if a.reads else '')
            + f'{steady_text(a)}; verdict: {a.verdict}' + (f' ({a.why})' if a.why else '')
            + groups_text(a))


# write_amp: what the budget judges (RocksDB's bytes when the canary gave
# them); bluefs_wa: BlueFS's bytes, the WAL's padding included
HISTORY_COLUMNS = ['#', 'kind', 'round', 'verdict', 'mwbn', 'wbs', 'merge', 'l0', 'base',
                   'mult', 'comp', 'kv_sync_ms', 'IOPS', 'write_amp', 'bluefs_wa', 'WAL_MiB',
                   'SST_MiB', 'flushes', 'secs', 'score']


def history_row(t: Trial) -> List[str]:
    c, m = t.candidate, t.measurement
    lat, iops, wa, bluefs_wa, wal, sst, flushes = (
        [m.kv_sync_lat_ms, m.iops, m.write_amp, perf_counters.bluefs_write_amp(m),
         m.wal_bytes, m.sst_bytes, m.flushes] if m else [None] * 7)
    # a confirmation measurement: its round (1-based) and arm; a steady
    # window: its pair (1-based), the arm checked and the arm it ran
    arm = 'base' if t.arm == 'baseline' else t.arm
    where = ('-' if t.round is None else
             f's{t.round + 1}:{t.steady}:{arm}' if t.steady else f'r{t.round + 1}:{arm}')
    return [str(t.index), t.kind, where, t.verdict + ('*' if m and m.window_short else ''),
            str(c.max_write_buffer_number), f'{c.write_buffer_size // MiB}M',
            str(c.min_write_buffer_number_to_merge), str(c.level0_file_num_compaction_trigger),
            f'{c.max_bytes_for_level_base // MiB}M', str(c.max_bytes_for_level_multiplier),
            c.compression, _fmt(lat, '.3f'), _fmt(iops, '.0f'), _fmt(wa, '.3f'),
            _fmt(bluefs_wa, '.3f'), _fmt(wal, '.0f', MiB), _fmt(sst, '.0f', MiB),
            _fmt(flushes, '.1f'), f'{t.seconds:.0f}', _fmt(t.score, '+.3f')]


def history_table(trials: List[Trial]) -> str:
    rows = [HISTORY_COLUMNS] + [history_row(t) for t in trials]
    widths = [max(len(r[i]) for r in rows) for i in range(len(HISTORY_COLUMNS))]
    out = ['  '.join(v.rjust(w) for v, w in zip(r, widths)) for r in rows]
    if any(t.round is not None for t in trials):
        out.append('round rN:cK: the confirmation\'s round N, candidate cK (base: the '
                   'baseline), in windows of the baseline runs\' length, judged on the '
                   'objective; sN:cK:X: pair N of cK\'s steady check, X the arm it ran, a '
                   'window counted from the end of a first L0 compaction until another and '
                   'the WAL bytes of every column family\'s L0 cycle, at most '
                   'steady_window_limit')
    if any(t.measurement and t.measurement.window_short for t in trials):
        out.append('* the window ended before it covered min_flushes memtable flushes (a '
                   'search window, at max_window_factor x --duration), or before an L0 '
                   'compaction of its busiest column family (a confirmation round\'s '
                   'window: its write-amp is shown, never judged; a steady window, at '
                   'steady_window_limit, or before the WAL bytes of every column family\'s '
                   'L0 cycle: its write-amp at steady state is unknown)')
    out += [f'trial {t.index}: {t.error}'
            + (f' (crash {", ".join(t.crashes)})' if t.crashes else '') for t in trials if t.error]
    return '\n'.join(out)


def reach(canary: int, osds: Mapping[int, OsdInfo]) -> Dict[str, Any]:
    """Where the best options go after the canary: the other OSDs of its device class,
    each at its own mask (CLASS_MASK_NOTE); with no class, every OSD (`osd`)."""
    info = osds.get(canary)
    cls = info.device_class if info is not None else ''
    if cls:
        members = sorted(i for i, o in osds.items() if o.device_class == cls)
        return {'masks': [f'osd.{i}' for i in members if i != canary], 'device_class': cls,
                'osds': members,
                'note': 'the commands set them at ' + CLASS_MASK_NOTE.format(cls=cls)}
    why = 'has no device class' if info is not None else 'is not in the OSD map'
    return {'masks': ['osd'], 'device_class': '', 'osds': sorted(osds),
            'note': f'osd.{canary} {why}: the options go to every OSD'}


# where the commands go when the OSD map was not read: the canary alone
UNREAD: Dict[str, Any] = {'masks': None, 'device_class': None, 'osds': None,
                          'note': "the OSD map was not read: the canary's commands only"}


def commands(state: SessionState, options: str, masks: Optional[List[str]]) -> List[str]:
    """The commands that set `options` on the canary, then at `masks` (a `reach`'s)."""
    out = []
    for who in [f'osd.{state.osd}'] + (masks or []):
        out.append(config_command(who, OPTIONS, options))
        if state.annexed:  # the annex is folded into the options string
            out.append(config_command(who, ANNEX, ''))
    if state.config_changes:
        # the string embeds the base of the start: applying it undoes the change
        out.insert(0, '# measured against the options in effect when the session '
                   'started, which someone else has changed: applying this string '
                   'would undo that; changed since: ' + '; '.join(state.config_changes))
    return out


def best_summary(state: SessionState,
                 where: Optional[Dict[str, Any]] = None) -> Optional[Dict[str, Any]]:
    """`best -f json`: the confirmation's answer (its rounds' ratios, never the search's),
    None until it stands; with the commands that set a recommendation on the canary,
    then at `where` (a `reach`; None: the OSD map was not read)."""
    result = final_answer(state)
    if result is None:
        return None
    conf = state.confirm
    assert conf is not None  # it has an answer
    arm = result.chosen
    chosen = conf.arm(arm.arm) if arm else None
    where = where or UNREAD

    def figures(a: ArmResult) -> Dict[str, Any]:
        return {k: asdict(f.ratio) for k in FIGURES if (f := getattr(a, k)) is not None}

    return {
        'answer': 'recommend' if arm else 'keep current', 'keeps_current': arm is None,
        'summary': answer_line(conf, state.osd), 'complete': result.complete,
        'trial': arm and arm.trial, 'arm': arm and arm.arm,
        'options': chosen and chosen.options, 'candidate': chosen and chosen.candidate.to_dict(),
        'objective': conf.objective, 'direction': conf.direction,
        'margin': conf.margin, 'budget': conf.budget, 'level': conf.level,
        'goal': conf.goal, 'rounds': conf.rounds, 'rounds_done': result.rounds_done,
        'ratios': arm and figures(arm), 'steady': arm and arm.steady and arm.steady.to_json(),
        'candidates': [dict(figures(a), arm=a.arm, trial=a.trial, verdict=a.verdict,
                            why=a.why, rounds=a.objective.rounds,
                            objective_verdict=a.objective_verdict,
                            steady=a.steady and a.steady.to_json(),
                            options=conf.arm(a.arm).options)
                       for a in result.arms],
        'canary': state.osd, **where,
        'commands': [] if chosen is None else commands(state, chosen.options, where['masks']),
        'config_changed': list(state.config_changes),
        'seen': None if result.seen is None else asdict(result.seen),
        'measurement_plan': conf.measurement_plan.to_json()}


def best_text(state: SessionState, where: Optional[Dict[str, Any]] = None) -> str:
    """`best`: `best_summary(state, where)` in words, with the confirmation's rule and
    candidates (its answer must stand)."""
    result, conf = final_answer(state), state.confirm
    assert result is not None and conf is not None
    m = conf.margin
    rule = (f'is recommended when the low end of its interval is at least {1 + m:.2f}x the '
            f'baseline\'s (the {-m:.0%} guard) and then, in steady windows, its write-amp is '
            f'at most {conf.budget:.2f}x the baseline\'s; the first such candidate, in the '
            'model\'s order, is recommended.' if conf.goal == WEAR else
            f'is recommended when its whole interval clears the {m:.0%} margin and then, '
            f'measured in windows long enough to see a compaction (steady windows), its '
            f'write-amp stays within the {conf.budget:.2f}x budget of the baseline\'s; the '
            'first such candidate, best first, is recommended.')
    lines = [answer_line(conf, state.osd) + '.',
             f'Each figure: the median over the rounds of the candidate\'s ratio to the '
             f'baseline measured in the same round [{conf.level:.0%} interval]; a candidate '
             + rule]
    plan = conf.measurement_plan
    if plan.why:
        lines.append(f'measurement design: {plan.design} ({plan.why})')
    name = OBJECTIVE_NAMES.get(conf.objective, conf.objective)
    lines += [arm_line(name, a) for a in result.arms]
    if result.chosen is None:
        return '\n'.join(lines)
    options = conf.arm(result.chosen.arm).options
    osd, w = state.osd, where or UNREAD
    cls, osds, masks = w['device_class'], w['osds'] or [], w['masks']
    lines.append(f'bluestore_rocksdb_options = {options}')
    lines += [f'note: {w["note"]}'] if w['note'] else []
    target = f'the OSDs of class {cls}' if cls else 'every OSD'
    n = len(osds)
    lines.append(f'to apply on the canary (osd.{osd}); it takes effect on restart:'
                 if masks is None else
                 f'to apply on the canary (osd.{osd}) only, then on {target} '
                 f'({n} OSD{"" if n == 1 else "s"}: {osd_list(osds)}); each takes '
                 'effect on restart:')
    lines += ['  ' + c for c in commands(state, options, masks)]
    if cls:
        lines.append(f'or let the module roll it out to the OSDs of class {cls}, '
                     'one OSD at a time through the restart gate: ceph rocks-autotune apply '
                     '--dry-run (the plan), then ceph rocks-autotune apply')
    return '\n'.join(lines)


# ---------------------------------------------------------------- rollouts

class Labels(Dict[str, str]):
    """Long option strings named once (A, B, ...), spelled out at the end."""

    def __call__(self, v: Optional[str]) -> str:
        if v is None or len(v) <= 40:
            return show(v)
        n = len(self)
        return self.setdefault(v, chr(ord('A') + n) if n < 26 else f'S{n}')

    def lines(self) -> List[str]:
        return [f'{name} = {v}' for v, name in self.items()]


def plan_brief(plan: RolloutPlan) -> str:
    """`apply --dry-run` and `revert --dry-run`: the plan in a few lines (--detail:
    `plan_text`)."""
    label = Labels()
    osds = [o for o in plan.osds if o.status != 'skipped']
    n = len(osds)
    them = f'{n} OSD{"" if n == 1 else "s"}: {osd_list(o.osd for o in osds)}'
    pace = at_a_time(plan.max_parallel)
    if plan.kind == 'apply':
        new = label(plan.options)
        lines = [f'plan: apply {new} to {plan.target} ({them}), {pace}, host by host; each '
                 'OSD gets it at its own mask osd.N just before its restart',
                 f'  {new}: from {plan.source.split(": ", 1)[0]}']
    else:
        lines = [f'plan: revert apply {plan.of}: put back what it changed at '
                 f'{len(plan.sets)} mask(s), then restart {them}, {pace}']
    now: Dict[str, List[int]] = {}
    for o in osds:
        now.setdefault(label(o.before[OPTIONS]), []).append(o.osd)
    if now:
        lines.append('  now: ' + ', '.join(f'{osd_list(ids)} {"gets" if len(ids) == 1 else "get"}'
                                           f' {what}' for what, ids in now.items()))
    lines += [f'  skipped: osd.{o.osd}: {o.error}' for o in plan.osds if o.status == 'skipped']
    lines += [f'  note: {note}' for note in plan.notes if plan.kind == 'revert']
    lines.append('  holding the first restart back now: ' + '; '.join(plan.blockers)
                 if plan.blockers else '  nothing holds the first restart back now')
    lines += [f'  {plan.checks[-1]}'] if plan.allow_single_copy else []  # a waiver: said
    if plan.kind == 'apply':
        lines.append('  undo: ceph rocks-autotune revert')
    args = ' ...' if plan.kind == 'apply' else ''
    lines.append(f'more: ceph rocks-autotune {plan.kind}{args} --dry-run --detail (every mask '
                 'now and then, the checks, the commands by hand), or -f json')
    return '\n'.join(lines + label.lines())


def plan_text(plan: RolloutPlan, undo: List[str]) -> str:
    """`apply --dry-run --detail` and `revert --dry-run --detail`: every mask, check and
    command, the OSDs in restart order with what each gets now, and how to undo it."""
    label = Labels()
    apply = plan.kind == 'apply'
    pace = at_a_time(plan.max_parallel)
    if apply:
        lines = [f'plan: apply to {plan.target}, '
                 + ('one OSD at a time' if plan.max_parallel == 1 else pace),
                 f'options: {label(str(plan.options))}, from {plan.source}']
    else:
        lines = [f'plan: revert apply {plan.of}: put back what it changed, then restart '
                 f'the OSDs that may run its options, {pace}']
    lines.append('config (now -> then):')
    for who, names in plan.sets.items():  # in restart order
        for name, value in sorted(names.items()):
            now = plan.priors.get(who, {}).get(name)
            lines.append(f'  {who} {name}: {label(now)} '
                         + ('(as now)' if now == value else f'-> {label(value)}'))
    lines += [f'  note: {n}' for n in plan.notes]
    lines += ['checks:'] + [f'  {c}' for c in plan.checks]
    if plan.blockers:
        lines.append('  holding the first restart back now: ' + '; '.join(plan.blockers))
    osds = [o for o in plan.osds if o.status != 'skipped']
    lines.append((f'restarts ({len(osds)}, host by host in CRUSH order, each just after its '
                  'own mask is set; the next once it is up on the options set and PGs are '
                  'active+clean):' if plan.max_parallel == 1 else
                  f'restarts ({len(osds)}, host by host in CRUSH order, in batches of up to '
                  f'{plan.max_parallel} from the next pending OSD and those ok-to-stop --max '
                  'lets stop with it, each just after its own mask is set; the next batch once '
                  'all are up on the options set and PGs are active+clean):')
                 if osds else 'restarts: none')
    for i, o in enumerate(osds):
        b = o.before
        annex = f', annex {label(b[ANNEX])}' if b.get(ANNEX, '').strip() else ''
        lines.append(f'  {i + 1:>3}. osd.{o.osd} (host {o.host or "-"}): gets '
                     f'{label(b[OPTIONS])}{annex} from the monitors now')
    lines += [f'  skipped: osd.{o.osd}: {o.error}' for o in plan.osds if o.status == 'skipped']
    if apply:
        lines += ['an OSD that does not come back on the new options stops the rollout: its '
                  'osd.N mask is put back as it was and it is restarted onto the options it '
                  'ran, the OSDs done stay on the new ones',
                  'undo: ceph rocks-autotune revert (puts back, at every mask above, the value '
                  'or absence saved before the first change, and restarts the OSDs that run '
                  'the new options); by hand:'] + [f'  {c}' for c in undo]
    return '\n'.join(lines + label.lines())


def rollout_osd_text(o: Mapping[str, Any], where: str = '') -> str:
    """One of a rollout's OSDs (`where`: its host): its status, and why if it says."""
    back = {'done': '; put back on its prior options', 'failed': '; NOT put back'}
    return (f'osd.{o["osd"]}{where} {o["status"]}' + (f': {o["error"]}' if o['error'] else '')
            + (back.get(o['put_back'], '') if o['status'] == 'failed' else ''))


def rollout_lines(ro: Optional[Mapping[str, Any]]) -> List[str]:
    """The last rollout in `status`: its OSDs counted by status, those in
    flight, failed or skipped named (views.SHOWN); `status --osds`: every one."""
    if not ro:
        return []
    what = f'apply to {ro["target"]}' if ro['kind'] == 'apply' else f'revert of apply {ro["of"]}'
    c = ro['counts']
    lines = [f'rollout: {what}: {ro["state"]} ({ro["phase"]}), {c["done"]}/'
             f'{ro["total"]} OSD(s) done ({ro["progress"]:.0%})',
             f'  message: {ro["message"]}',
             f'  OSDs: {c["done"]} done, {c["restarting"]} restarting, {c["pending"]} pending, '
             f'{c["failed"]} failed' + (f', {c["skipped"]} skipped' if c['skipped'] else '')]
    if ro.get('max_parallel'):
        lines.append(f'  up to {ro["max_parallel"]} OSDs at a time; in flight: '
                     + (', '.join(f'osd.{i}' for i in ro['in_flight']) or 'none'))
    lines += [f'  {rollout_osd_text(o)}' for o in ro['notable']]
    if ro['notable_more']:
        lines.append(f'  and {ro["notable_more"]} more in flight, failed or skipped '
                     '(ceph rocks-autotune status --osds)')
    if ro['kind'] == 'apply' and ro['options']:
        lines.append(f'  options: {ro["options"]}')
    if ro.get('health'):
        lines.append('  health: ' + ', '.join(ro['health']))
    if 'osds' in ro:
        lines.append('  every OSD, in restart order:')
        lines += [f'  {i:>5}. ' + rollout_osd_text(o, f' (host {o["host"] or "-"})')
                  for i, o in enumerate(ro['osds'], 1)]
    return lines
