"""The health-check table: what a job keeps, what the mgr is given."""
import pytest

from rocks_autotune import health


def test_an_alert_keeps_its_detail_and_fields_and_publishes_the_tables_words() -> None:
    a = health.raised('TRIAL_FAILED', ['boom', 'restoring'], index=3, osd=1)
    assert a == {'detail': ['boom', 'restoring'], 'fields': {'index': 3, 'osd': 1}}
    assert health.publish({'TRIAL_FAILED': a}) == {'ROCKS_AUTOTUNE_TRIAL_FAILED': {
        'severity': 'warning', 'summary': 'rocks_autotune: trial 3 failed on osd.1',
        'count': 1, 'detail': ['boom', 'restoring']}}
    assert health.publish({'RESTORE_FAILED': health.raised('RESTORE_FAILED', [], osd=2)})[
        'ROCKS_AUTOTUNE_RESTORE_FAILED']['severity'] == 'error'


def test_a_code_or_field_the_table_lacks_is_refused_at_the_raise() -> None:
    with pytest.raises(KeyError):
        health.raised('NOT_A_CHECK', [])
    with pytest.raises(KeyError):
        health.raised('TRIAL_FAILED', [], osd=1)  # the summary names index too


def test_the_end_of_a_job_clears_its_conditions_and_keeps_its_facts() -> None:
    alerts = {code: health.raised(code, [], osd=0, index=0, job='session', kind='apply',
                                  why='x', what='rollout', target='t', done=0, total=1)
              for code in ('PAUSED', 'MANUAL_RESTART', 'TRIAL_FAILED', 'RESTORE_FAILED',
                           'ROLLOUT_FAILED')}
    health.end_of_job(alerts)
    assert sorted(alerts) == ['RESTORE_FAILED', 'ROLLOUT_FAILED']
