"""A duet (measurement_plan.duet) run by the session's engine on the fake
cluster: the confirmation measures two canaries over the same windows, each
canary restarted through the gate one at a time, and every way out puts
both back on their originals."""
from typing import Any, Dict, List, Optional

from session_harness import (Harness, assert_restored, current, may_run_candidate, measured_on,
                             phase, rescue_originals, saved_originals, status)
from rocks_autotune.session import Session

DUET = dict(confirm_candidates=1, confirm_rounds=2)


def in_duet_window(s: Session, at: Optional[str] = None) -> bool:
    """A confirmation window of both canaries in flight (in phase `at`)."""
    cur: Optional[Dict[str, Any]] = status(s)['current']
    return (cur is not None and len(cur.get('slots') or []) == 2
            and (at is None or phase(s) == at))


def run_watching(h: Harness, until: Any = None, killed: Optional[int] = None) -> List[str]:
    """Run, checking before every step that at most one canary is down and a
    canary that is down has noout (but `killed`, which the test killed); the
    phases entered, in order."""
    s = h._s()
    phases: List[str] = []
    for _ in range(5000):
        down = [o for o in (0, 1) if not h.cluster.osds()[o].up]
        assert len(down) <= 1, f'both canaries down at once in {phase(s)}'
        assert all(h.cluster.has_noout(o) for o in down if o != killed), \
            f'{down} down without noout'
        if not phases or phases[-1] != phase(s):
            phases.append(phase(s))
        if not s.active or (until is not None and until(s)):
            return phases
        h.clock.advance(s.step())
    raise AssertionError(f'session did not finish: {h.phase} {h.message}')


def ends_restored(h: Harness, before: Dict[int, Dict[str, Optional[str]]],
                  state: str = 'done') -> List[str]:
    """Run to the end: it ends `state`, both canaries on their originals;
    the phases entered."""
    phases = run_watching(h)
    assert h.state == state
    for o in (0, 1):
        assert_restored(h, o, before[o])
    return phases


def test_a_duet_measures_each_round_on_both_canaries_with_the_arms_crossed_and_restores_both(
        ) -> None:
    h = Harness(**DUET)
    before = {o: h.config_of(o) for o in (0, 1)}
    h.start(osd=0, duet=1, trials=2)
    # both canaries' originals are saved before the first change
    first = h.persisted(0)
    assert {o: saved_originals(first, o) for o in (0, 1)} == before
    # and in the start record, which a rescue restores from
    assert {o: rescue_originals(first, o) for o in (0, 1)} == before
    assert measured_on(first) == ('duet', [0, 1])
    phases = ends_restored(h, before)
    confirms = [t for t in h.trials if t['kind'] == 'confirm']
    # a window per round: the baseline on one canary, the finalist on the
    # other, swapped the next round (crossover)
    assert [(t['round'], t['osd'], t['arm']) for t in confirms] == [
        (0, 0, 'baseline'), (0, 1, 'c1'), (1, 0, 'c1'), (1, 1, 'baseline')]
    assert all(t['verdict'] == 'measured' and t['measurement'] for t in confirms)
    # the search ran on the session's canary alone; the second restarted only for the duet
    assert {t['osd'] for t in h.trials if t['kind'] != 'confirm'} == {0}
    # each duet window restarts its canaries one after the other through the gate
    assert phases.count('wait_up') - phases.count('warmup') == 2
    assert all(ok for osd, ok in h.cluster.restart_gate)
    assert {o for o, _ in h.cluster.restarts} == {0, 1}


def test_a_canary_failing_mid_duet_window_fails_the_window_and_recovers_both() -> None:
    h = Harness(**DUET)
    before = {o: h.config_of(o) for o in (0, 1)}
    s = h.start(osd=0, duet=1, trials=2)
    run_watching(h, until=lambda s: in_duet_window(s, 'measure'))
    window = current(s)
    h.cluster.kill(1)
    run_watching(h, killed=1, until=lambda s: phase(s) in ('next', 'confirm', 'apply')
                 and not in_duet_window(s, 'measure') and current(s) is not None
                 and current(s)['kind'] == 'confirm' and current(s)['index'] > window['index'])
    failed = [t for t in h.trials if t['verdict'] == 'failed']
    # both of the window's trials are failed, the dead canary named
    assert [(t['osd'], t['arm']) for t in failed] == [
        (t['osd'], t['arm']) for t in window['slots']]
    assert all('osd.1 failed during the measurement' in t['error'] for t in failed)
    # both canaries back on their originals before the next window
    for o in (0, 1):
        assert h.cluster.osds()[o].up and not h.cluster.has_noout(o)
        assert h.cluster.running[o] == h.cluster.defaults['bluestore_rocksdb_options']
    ends_restored(h, before)


def test_an_abort_mid_duet_window_restores_both_canaries() -> None:
    h = Harness(**DUET)
    before = {o: h.config_of(o) for o in (0, 1)}
    s = h.start(osd=0, duet=1, trials=2)
    run_watching(h, until=lambda s: in_duet_window(s, 'measure'))
    # one canary runs the finalist: its record says so, with how to restore it
    dirty = [o for o in (0, 1) if may_run_candidate(h.persisted(), o)]
    assert len(dirty) == 1
    assert h.cluster.running[dirty[0]] != h.cluster.defaults['bluestore_rocksdb_options']
    s.request_abort()
    ends_restored(h, before, 'aborted')
    assert not any(may_run_candidate(h.persisted(), o) for o in (0, 1))


def test_a_failover_mid_duet_window_runs_the_window_again_on_both() -> None:
    h = Harness(**DUET)
    before = {o: h.config_of(o) for o in (0, 1)}
    h.start(osd=0, duet=1, trials=2)
    run_watching(h, until=lambda s: in_duet_window(s, 'measure'))
    index = current(h._s())['index']
    s = h.reload()
    assert phase(s) == 'apply' and current(s)['index'] == index
    ends_restored(h, before)
    # the window measured once, on both canaries
    assert [t['osd'] for t in h.trials if t['index'] in (index, index + 1)] == [0, 1]


def test_a_config_change_at_the_second_canary_pauses_a_duet_until_reverted() -> None:
    h = Harness(**DUET)
    before = {o: h.config_of(o) for o in (0, 1)}
    s = h.start(osd=0, duet=1, trials=2)
    run_watching(h, until=lambda s: in_duet_window(s, 'apply'))
    h.cluster.config_set('osd.1', 'bluestore_rocksdb_options_annex', 'max_open_files=100')
    h.clock.advance(s.step())
    assert phase(s) == 'apply' and 'CONFIG_CHANGED' in ' '.join(s.health_checks())
    assert 'osd.1 bluestore_rocksdb_options_annex' in h.message
    h.cluster.config_rm('osd.1', 'bluestore_rocksdb_options_annex')
    ends_restored(h, before)
    assert s.health_checks() == {}
