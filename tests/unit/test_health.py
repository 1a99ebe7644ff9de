"""The health checks, computed from a job's record: what the mgr is given."""
from dataclasses import replace
from typing import Any

from fake_cluster import FakeClock, FakeCluster
from rocks_autotune import health, session_start
from rocks_autotune.canary_record import CanaryRecord, RestartRecord
from rocks_autotune.pause_record import PauseRecord
from rocks_autotune.session_settings import Params, Settings
from rocks_autotune.space import SearchSpace
from rocks_autotune.store import SessionState
from rocks_autotune.trial import Trial
from rocks_autotune.workload import OSD_BENCH


def session(**head: Any) -> SessionState:
    """A session's record on osd.1, with the fields its checks read as given."""
    s = session_start.first_state(FakeCluster(FakeClock()), Params(osd=1, workload=OSD_BENCH),
                                  Settings(unhealthy_timeout=600.0), 0.0)
    return replace(s, **head)


def test_a_sessions_facts_give_its_checks_in_the_tables_words() -> None:
    c = SearchSpace.candidate_from_options({})
    s = session(current=Trial(index=3, kind='recovery', candidate=c, options='', error='boom'),
                pause=PauseRecord('health', ['osd.2 is down'], None, 0.0),
                canary=CanaryRecord({}, False, None, restarted=False, manual='no backend',
                                    restart=RestartRecord('candidate', 'wait_up', 0.0, None, '',
                                                          '')))
    checks = health.job_checks('session', s, True, '')
    assert checks['ROCKS_AUTOTUNE_TRIAL_FAILED'] == {
        'severity': 'warning', 'summary': 'rocks_autotune: trial 3 failed on osd.1',
        'count': 1, 'detail': ['boom', 'restoring osd.1 to its original options']}
    assert checks['ROCKS_AUTOTUNE_PAUSED']['detail'] == [
        'osd.2 is down', 'the session aborts and restores osd.1 if this lasts 600s']
    assert 'no backend' in checks['ROCKS_AUTOTUNE_MANUAL_RESTART']['detail'][0]
    # what it is in goes with the job's end
    assert health.job_checks('session', s, False, '') == {}


def test_a_failed_restore_stays_after_the_end_and_a_failed_write_says_so() -> None:
    s = session(error='restart failed', restore_failed=['osd.1 may still run a candidate'])
    checks = health.job_checks('session', s, False, 'mon refused')
    assert checks['ROCKS_AUTOTUNE_RESTORE_FAILED']['severity'] == 'error'
    assert checks['ROCKS_AUTOTUNE_RESTORE_FAILED']['detail'] == [
        'restart failed', 'osd.1 may still run a candidate']
    assert checks['ROCKS_AUTOTUNE_STATE_WRITE_FAILED']['summary'] == (
        'rocks_autotune: cannot save the session state; paused')


def test_a_config_change_and_a_held_restore_are_their_own_checks() -> None:
    changed = session(pause=PauseRecord('config', ['osd.1 x: 1 -> 2'], None, 0.0))
    assert list(health.job_checks('session', changed, True, '')) == [
        'ROCKS_AUTOTUNE_CONFIG_CHANGED']
    held = session(pause=PauseRecord('restore', ['not ok-to-stop'], 4, 0.0))
    assert health.job_checks('session', held, True, '')[
        'ROCKS_AUTOTUNE_RESTORE_PENDING']['summary'] == (
        'rocks_autotune: osd.4 waits to be restarted onto its original options')


def test_the_modules_own_checks() -> None:
    assert health.module_checks('', '', '') == {}
    assert sorted(health.module_checks('unreadable', 'bad', 'lost')) == [
        'ROCKS_AUTOTUNE_BAD_OPTION', 'ROCKS_AUTOTUNE_ROLLOUT_STATE_CORRUPT',
        'ROCKS_AUTOTUNE_STATE_CORRUPT']
