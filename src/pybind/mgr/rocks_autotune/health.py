"""The module's health checks: declared once (CHECKS), computed from the records.
Design: doc/dev/internals.rst, dev-internals-health."""
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from .canary_record import RestartRecord
from .rollout_record import RolloutRecord
from .store import SessionState

HEALTH_PREFIX = 'ROCKS_AUTOTUNE_'
Checks = Dict[str, Dict[str, Any]]

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


# code -> the mgr's severity, and the summary (str.format'ed with the check's fields)
CHECKS: Dict[str, Tuple[str, str]] = {
    # the module's own, from what it could not read
    'STATE_CORRUPT': ('warning', 'rocks_autotune: saved session state is unreadable'),
    'ROLLOUT_STATE_CORRUPT': ('warning', 'rocks_autotune: saved rollout state is unreadable'),
    'BAD_OPTION': ('warning', 'rocks_autotune: a module option is invalid'),
    # a session's or a rollout's
    'STATE_WRITE_FAILED': ('warning', 'rocks_autotune: cannot save the {job} state; paused'),
    'MANUAL_RESTART': ('warning', 'rocks_autotune: restart osd.{osd} to continue'),
    # a session's
    'PAUSED': ('warning', 'rocks_autotune paused: the cluster is not healthy'),
    'CONFIG_CHANGED': ('warning', 'rocks_autotune paused: config of osd.{osd} changed by '
                       'someone else'),
    'RESTORE_PENDING': ('warning', 'rocks_autotune: osd.{osd} waits to be restarted onto its '
                        'original options'),
    'TRIAL_FAILED': ('warning', 'rocks_autotune: trial {index} failed on osd.{osd}'),
    'RESTORE_FAILED': ('error', 'rocks_autotune: osd.{osd} needs attention'),
    # a rollout's
    'ROLLOUT_PAUSED': ('warning', 'rocks_autotune {kind} paused: {why}'),
    'ROLLOUT_FAILED': ('warning', 'rocks_autotune: {what} to {target} stopped: an OSD failed '
                       '({done}/{total} done)'),
    'ROLLOUT_INCOMPLETE': ('warning', 'rocks_autotune: {what} to {target} aborted '
                           '({done}/{total} done)'),
}


def _add(out: Checks, code: str, detail: Sequence[str], **fields: Any) -> None:
    """The check `code` (KeyError: not in the table, or a field its summary lacks)."""
    severity, summary = CHECKS[code]
    out[HEALTH_PREFIX + code] = {'severity': severity, 'summary': summary.format(**fields),
                                 'count': 1, 'detail': list(detail)}


def module_checks(load_error: str, settings_error: str, rollout_error: str) -> Checks:
    """The module's own: a saved state it could not read, an invalid option."""
    out: Checks = {}
    if load_error:
        _add(out, 'STATE_CORRUPT', [load_error, 'check bluestore_rocksdb_options on the '
                                    'canary; start a new session to clear this'])
    if settings_error:
        _add(out, 'BAD_OPTION', [settings_error, 'no session starts until it is fixed; a '
                                 'running session keeps the settings it started with'])
    if rollout_error:
        _add(out, 'ROLLOUT_STATE_CORRUPT', [rollout_error, 'the next apply clears this'])
    return out


def job_checks(kind: str, rec: Any, active: bool, write_error: str) -> Checks:
    """A session's or a rollout's (`kind`) checks, from its record; `write_error`:
    why its last save failed."""
    out: Checks = {}
    if write_error:
        _add(out, 'STATE_WRITE_FAILED', [write_error, f'the {kind} changes nothing until its '
                                         'state is saved'], job=kind)
    (_session if kind == 'session' else _rollout)(out, rec, active)
    return out


def _manual(out: Checks, manual: str, restart: Optional[RestartRecord], osd: int,
            owner: str) -> None:
    """A restart no orchestrator could issue, while it waits for the admin's."""
    # 'wait_up': restart.Stage's (restart.py imports gate.py, which imports this)
    if manual and restart is not None and restart.stage == 'wait_up':
        line = (f'no orchestrator can restart it ({manual}): restart osd.{osd} (e.g. '
                f'systemctl restart ceph-osd@{osd}); {owner} goes on when it is back up')
        held = out.get(HEALTH_PREFIX + 'MANUAL_RESTART')
        if held is not None:  # another of a rollout's batch
            held['detail'].append(line)
            held['count'] += 1
            return
        _add(out, 'MANUAL_RESTART', [line], osd=osd)


def _session(out: Checks, s: SessionState, active: bool) -> None:
    osd = s.osd
    if s.restore_failed is not None:
        _add(out, 'RESTORE_FAILED', [s.error] + s.restore_failed, osd=osd)
    if not active:
        return
    c = s.canary
    if not c.restarted:
        _manual(out, c.manual, c.restart, osd, 'the session')
    cur = s.current
    if cur is not None and cur.kind == 'recovery':
        _add(out, 'TRIAL_FAILED', [cur.error, f'restoring osd.{osd} to its original options'],
             index=cur.index, osd=osd)
    p = s.pause
    if p is None:
        return
    timeout = (f'the session aborts and restores osd.{osd} if this lasts '
               f'{s.settings.unhealthy_timeout:.0f}s')
    if p.on == 'config':
        _add(out, 'CONFIG_CHANGED', p.reasons + [
            'every trial is built on the options in effect when the session started',
            'revert the change to go on, or end the session with `ceph rocks-autotune abort` '
            '(its restore leaves the change in place); ' + timeout], osd=osd)
    elif p.on == 'restore':
        _add(out, 'RESTORE_PENDING', p.reasons + [
            'its config is restored and noout is set; it may still run a candidate, and is '
            'restarted as soon as ok-to-stop says yes and no other OSD is down'], osd=p.osd)
    else:
        _add(out, 'PAUSED', p.reasons + [timeout])


def _rollout(out: Checks, r: RolloutRecord, active: bool) -> None:
    kind = r.kind
    if active:
        for f in r.batch:
            _manual(out, f.manual, f.restart, r.osds[f.i].osd, f'the {kind}')
        p = r.pause
        cur = None if p is None else next(
            (r.osds[f.i] for f in r.batch if r.osds[f.i].osd == p.osd), None)
        if p is not None and p.on == 'put_back' and cur is not None:
            _add(out, 'ROLLOUT_PAUSED', p.reasons + [
                cur.error, f'its prior options are set at '
                f'osd.{p.osd}; it is restarted on them as soon as the gate allows'],
                kind=kind, why=f'osd.{p.osd} waits to be put back on its prior options')
        elif p is not None:
            _add(out, 'ROLLOUT_PAUSED', p.reasons + [
                f'the {kind} stops (the OSDs done stay as they are) if this lasts '
                f'{r.settings.unhealthy_timeout:.0f}s'],
                kind=kind, why='the cluster is not healthy')
    elif r.state in ('failed', 'aborted') and r.changed:
        _stopped(out, r)


def rolled(kind: str) -> str:
    """What a rollout of `kind` restarts its OSDs on, in words."""
    return 'the new options' if kind == 'apply' else 'its options of before'


def _stopped(out: Checks, r: RolloutRecord) -> None:
    """A rollout that changed the config and stopped early: where each OSD is."""
    n, done, what = len(r.osds), [o.osd for o in r.osds if o.status == 'done'], rolled(r.kind)
    detail = [r.error or r.message, f'{len(done)} of {n} OSD(s) run {what}: ' + osd_list(done)]
    for o in r.osds:
        if o.status == 'failed' and r.kind == 'apply':
            detail.append(f'osd.{o.osd}: ' + (
                'put back on its prior options' if o.put_back == 'done' else
                'its prior options are set at its own mask, but it is NOT known to run '
                'them: check it'))
    rest = [o for o in r.osds if o.status in ('pending', 'restarting')]
    untouched = [o.osd for o in rest if not o.changed]
    held = [o.osd for o in rest if o.changed]
    if untouched:
        detail.append(f'not restarted: {osd_list(untouched)}; their config was not changed')
    if held:
        detail.append(f'not restarted: {osd_list(held)}; their config says {what}, '
                      'which they load at their next restart')
    skipped = [o.osd for o in r.osds if o.status == 'skipped']
    if skipped:
        detail.append(f'skipped: {osd_list(skipped)} (`ceph rocks-autotune status --osds` '
                      'says why)')
    detail.append('`ceph rocks-autotune revert` ' + (
        'puts back the config this apply changed and restarts the OSDs that run its options'
        if r.kind == 'apply' else 'again finishes the revert'))
    _add(out, 'ROLLOUT_FAILED' if r.state == 'failed' else 'ROLLOUT_INCOMPLETE', detail,
         what={'apply': 'rollout', 'revert': 'revert'}[r.kind], target=r.target,
         done=len(done), total=n)
