"""The steady check's read probe (issue 42, item 4): after each steady window
of the client load, 4 KiB reads of the canary's objects are timed; a
finalist whose reads' p99 is past 1 + read_guard times the baseline's is
held, and the answer gives the read figures beside the write ones.  The
workload's own probe: test_client_load.py; the verdict's rule:
test_steady_check.py."""
import json
from typing import Any, Dict, List, Tuple

import pytest

from fake_cluster import FakeCluster
from rocks_autotune import report, store, views
from rocks_autotune.placement import pg_of
from rocks_autotune.session import Session
from rocks_autotune.space import SearchSpace
from rocks_autotune.workload import NAMESPACE, ReadProbe
from session_harness import Harness, status_text, verdict
from test_steady_check import confirming, faster
from test_wear import SMALL, _small_canary


def wear_session(**settings: Any) -> Tuple[Harness, Session]:
    """test_wear's session that saves DB bytes: one finalist, one steady pair."""
    h = Harness(**dict(dict(objective='wear', confirm_candidates=1, confirm_rounds=5,
                            steady_window_limit=900.0, client_space=64 << 20,
                            client_object_size=1 << 20, precondition_limit=60.0,
                            client_threads=1, read_probe=6.0), **settings))
    _small_canary(h)
    return h, h.start(osd=0, workload='client', trials=4)


def slower_reads(cluster: FakeCluster, factor: float) -> None:
    """Every candidate's reads `factor` times the current options' (SMALL's)."""
    cluster.read_latency = lambda o: 0.002 * (1.0 if o == SMALL else factor)


def steady_trials(h: Harness) -> List[Dict[str, Any]]:
    return [t for t in h.trials if t['kind'] == 'confirm' and t.get('steady')]


def probing(s: Session) -> bool:
    """A steady window measured, its read probe in flight."""
    cur = s.s.current
    return (s.s.phase == 'measure' and cur is not None and bool(cur.steady)
            and cur.measurement is not None and cur.read_probe is None
            # the client load, once built (CanaryOsd.client, a cached property)
            and (load := vars(s.canary).get('client')) is not None and load._probe[0] != [])


def test_a_finalist_whose_reads_are_slower_is_held_through_a_failover_mid_probe() -> None:
    h, s = wear_session()
    slower_reads(h.cluster, 1.5)
    h.run(until=probing, max_steps=50000)
    cur = s.s.current
    assert cur is not None
    measured, index = cur.measurement, cur.index
    h.session = None
    s = h.reload()
    # a new mgr keeps the window measured; its probe starts again
    assert s.s.phase == 'measure' and s.s.current is not None
    assert s.s.current.measurement == measured and s.s.current.read_probe is None
    h.run(max_steps=50000)
    assert s.s.state == 'done'
    steady = steady_trials(h)
    assert sorted((t['round'], t['arm']) for t in steady) == [(0, 'baseline'), (0, 'c1')]
    assert index in [t['index'] for t in steady]
    for t in steady:
        p = t['read_probe']
        assert p['reads'] > 0 and 6.0 <= p['seconds'] < 6.1, t
        want = 3.0 if t['arm'] == 'c1' else 2.0
        assert p['p99_ms'] == pytest.approx(want) and p['mean_ms'] == pytest.approx(want), p
    # the rounds' windows read nothing
    assert all(t['read_probe'] is None for t in h.trials if not t.get('steady'))
    # the canary's reads alone: of C's objects in the PGs it is the primary of
    assert set(h.cluster.reads) == {0}
    led = {i for (pool, i), pg in h.cluster.pg_at.items() if pool == 1 and pg.acting[0] == 0}
    assert h.cluster.read_objects and {pg_of(o, 4, NAMESPACE)
                                       for o in h.cluster.read_objects} <= led
    result = verdict(s)
    assert result['recommended'] is None and s.status()['confirmation']['read_guard'] == 0.25
    (arm,) = result['arms']
    assert arm['verdict'] == 'reads slower'
    assert arm['steady']['read_p99'] == pytest.approx(1.5)
    assert 'p99 latency is 1.50x the baseline\'s (IOPS 0.67x' in arm['why']
    assert 'over 1 + read_guard 0.25' in h.message and h.message.startswith('done: keep')
    assert 'read p99 1.50x, read IOPS 0.67x the baseline\'s' in status_text(
        s, detail=True)
    json.dumps(report.best_summary(s.s))  # `best -f json` carries them


def test_other_workloads_hold_nothing_and_the_answer_says_reads_were_not_measured() -> None:
    h, s = confirming()
    faster(h)
    h.run()
    assert s.s.state == 'done' and views.recommended_trial(s.s) is not None, h.message
    assert steady_trials(h) and all(t['read_probe'] is None for t in h.trials)
    assert h.cluster.reads == {}
    assert 'reads not measured' in h.message
    assert '  4 KiB reads at steady state: reads not measured' in h.status['summary']


def test_a_read_that_fails_fails_the_steady_window() -> None:
    h, s = wear_session(on_failure='stop')
    h.run(until=probing, max_steps=50000)
    h.cluster.client_fails = 'osd.0: EIO'
    h.run(until=lambda s: s.s.phase != 'measure')
    assert s.s.phase == 'recover' and 'failed during the read probe: osd.0: EIO' in \
        s.s.message
    h.cluster.client_fails = ''
    h.run(max_steps=50000)
    assert [t['verdict'] for t in steady_trials(h)] == ['failed']


def test_a_trial_keeps_its_read_probe_through_the_store() -> None:
    p = ReadProbe(reads=120, seconds=20.0, iops=6.0, mean_ms=1.5, p99_ms=4.0)
    c = SearchSpace.candidate_from_options({})
    t = store.Trial(index=3, kind='confirm', candidate=c, options='', steady='c1',
                    read_probe=p)
    saved = json.loads(json.dumps(t.to_json()))
    assert saved['read_probe'] == {'reads': 120, 'seconds': 20.0, 'iops': 6.0,
                                   'mean_ms': 1.5, 'p99_ms': 4.0}
    assert store.Trial.from_json(saved) == t
    # a trial recorded before the probe (or without one)
    del saved['read_probe']
    assert store.Trial.from_json(saved).read_probe is None
    assert store.Trial.from_json(store.Trial(1, 'baseline', c, '').to_json()).read_probe is None
