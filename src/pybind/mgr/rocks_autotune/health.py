"""The module's health checks, declared once.

Every check the module can raise is a row of CHECKS: its code (published as
ROCKS_AUTOTUNE_<code>), severity and summary.  A session, a rollout and the
restart path keep an alert in their state as `raised(code, detail, **fields)`:
the detail lines and the fields its summary names, nothing else; `publish`
turns the alerts into the mgr's health checks (severity and summary from the
table), so that what a check says lives here and nowhere else.

A check is a condition or a fact.  A condition (paused, waiting for a
restart) holds while the job is in it and goes with the job's end
(`end_of_job` clears them all, so no ending keeps a list of its own).  A fact
(a failed trial, a failed restore, a rollout that stopped) stays for the
admin to read until the next start clears it.
"""
from dataclasses import dataclass
from typing import Any, Dict, Mapping, MutableMapping, Sequence

HEALTH_PREFIX = 'ROCKS_AUTOTUNE_'


@dataclass(frozen=True)
class Check:
    severity: str  # the mgr's: 'warning' or 'error'
    summary: str   # str.format'ed with the alert's fields
    condition: bool  # holds while the job is in it (else a fact, kept after the end)


CHECKS: Dict[str, Check] = {
    # the module's own, from what it could not read
    'STATE_CORRUPT': Check('warning', 'rocks_autotune: saved session state is unreadable',
                           condition=False),
    'ROLLOUT_STATE_CORRUPT': Check('warning',
                                   'rocks_autotune: saved rollout state is unreadable',
                                   condition=False),
    'BAD_OPTION': Check('warning', 'rocks_autotune: a module option is invalid',
                        condition=False),
    # a session's or a rollout's
    'STATE_WRITE_FAILED': Check('warning', 'rocks_autotune: cannot save the {job} state; '
                                'paused', condition=True),
    'MANUAL_RESTART': Check('warning', 'rocks_autotune: restart osd.{osd} to continue',
                            condition=True),
    # a session's
    'PAUSED': Check('warning', 'rocks_autotune paused: the cluster is not healthy',
                    condition=True),
    'CONFIG_CHANGED': Check('warning', 'rocks_autotune paused: config of osd.{osd} changed by '
                            'someone else', condition=True),
    'RESTORE_PENDING': Check('warning', 'rocks_autotune: osd.{osd} waits to be restarted onto '
                             'its original options', condition=True),
    'TRIAL_FAILED': Check('warning', 'rocks_autotune: trial {index} failed on osd.{osd}',
                          condition=True),
    'RESTORE_FAILED': Check('error', 'rocks_autotune: osd.{osd} needs attention',
                            condition=False),
    # a rollout's
    'ROLLOUT_PAUSED': Check('warning', 'rocks_autotune {kind} paused: {why}', condition=True),
    'ROLLOUT_FAILED': Check('warning', 'rocks_autotune: {what} to {target} stopped: an OSD '
                            'failed ({done}/{total} done)', condition=False),
    'ROLLOUT_INCOMPLETE': Check('warning', 'rocks_autotune: {what} to {target} aborted '
                                '({done}/{total} done)', condition=False),
}


def raised(code: str, detail: Sequence[str], **fields: Any) -> Dict[str, Any]:
    """An alert as a job's state keeps it.  KeyError for a code not in the
    table, or a field its summary names and `fields` lacks."""
    CHECKS[code].summary.format(**fields)
    return {'detail': list(detail), 'fields': fields}


def end_of_job(alerts: MutableMapping[str, Any]) -> None:
    """The job ended: its conditions go; facts stay."""
    for code in [c for c in alerts if c in CHECKS and CHECKS[c].condition]:
        del alerts[code]


def publish(alerts: Mapping[str, Mapping[str, Any]]) -> Dict[str, Dict[str, Any]]:
    """The mgr's health checks of a job's alerts (set_health_checks' shape)."""
    out = {}
    for code, a in alerts.items():
        check = CHECKS[code]
        out[HEALTH_PREFIX + code] = {'severity': check.severity,
                                     'summary': check.summary.format(**a['fields']),
                                     'count': 1, 'detail': list(a['detail'])}
    return out
