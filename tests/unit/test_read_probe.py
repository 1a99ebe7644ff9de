"""The rounds' read probe (issue 42, item 4): after each confirmation
round's window of the client load, 4 KiB reads of the canary's objects are
timed; a finalist whose reads' mean latency is shown (its whole interval
over the rounds) past 1 + read_guard times the baseline's is held, and the
answer gives the read figures beside the write ones.  The workload's own
probe: test_client_load.py."""
import json
import math
from typing import Any, Dict, List, Optional, Tuple

import pytest

from fake_cluster import FakeCluster
from rocks_autotune import confirm, measurement_plan, report, store, views
from rocks_autotune.measurement_plan import BASELINE
from rocks_autotune.placement import pg_of
from rocks_autotune.session import Session
from rocks_autotune.space import SearchSpace
from rocks_autotune.trial import Trial
from rocks_autotune.workload import NAMESPACE, ReadProbe
from session_harness import Harness, status_text, verdict
from test_split import _m, confirmed
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


def round_trials(h: Harness) -> List[Dict[str, Any]]:
    return [t for t in h.trials if t['kind'] == 'confirm' and not t.get('steady')]


def probing(s: Session) -> bool:
    """A round's window measured, its read probe in flight."""
    cur = s.s.current
    return (s.s.phase == 'measure' and cur is not None and cur.kind == 'confirm'
            and not cur.steady and cur.measurement is not None and cur.read_probe is None
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
    rounds = round_trials(h)
    assert index in [t['index'] for t in rounds]
    assert {t['arm'] for t in rounds} == {'baseline', 'c1'} and len(rounds) >= 10
    for t in rounds:
        p = t['read_probe']
        assert p['reads'] > 0 and 6.0 <= p['seconds'] < 6.1, t
        want = 3.0 if t['arm'] == 'c1' else 2.0
        assert p['p99_ms'] == pytest.approx(want) and p['mean_ms'] == pytest.approx(want), p
    # held after its rounds: no steady window was run for it
    assert not [t for t in h.trials if t.get('steady')]
    # the canary's reads alone: of C's objects in the PGs it is the primary of
    assert set(h.cluster.reads) == {0}
    led = {i for (pool, i), pg in h.cluster.pg_at.items() if pool == 1 and pg.acting[0] == 0}
    assert h.cluster.read_objects and {pg_of(o, 4, NAMESPACE)
                                       for o in h.cluster.read_objects} <= led
    result = verdict(s)
    assert result['recommended'] is None and s.status()['confirmation']['read_guard'] == 0.25
    (arm,) = result['arms']
    assert arm['verdict'] == arm['objective_verdict'] == 'reads slower'
    assert arm['reads']['ratio']['median'] == pytest.approx(1.5)
    assert arm['reads_p99']['ratio']['median'] == pytest.approx(1.5)
    assert 'its 4 KiB reads\' mean latency 1.50x [1.50, 1.50] the baseline\'s over ' in arm['why']
    assert 'all of it over 1 + read_guard 0.25' in h.message
    assert h.message.startswith('done: keep') and 'c1 held the 3% IOPS guard' in h.message
    assert 'read latency 1.50x [1.50, 1.50] the baseline\'s (p99 1.50x [1.50, 1.50])' in \
        status_text(s, detail=True)
    json.dumps(report.best_summary(s.s))  # `best -f json` carries them


def test_other_workloads_hold_nothing_and_the_answer_says_reads_were_not_measured() -> None:
    h, s = confirming()
    faster(h)
    h.run()
    assert s.s.state == 'done' and views.recommended_trial(s.s) is not None, h.message
    assert round_trials(h) and all(t['read_probe'] is None for t in h.trials)
    assert h.cluster.reads == {}
    assert 'reads not measured' in h.message
    assert '  4 KiB reads after each round\'s window: reads not measured' in \
        h.status['summary']


def test_a_read_that_fails_fails_the_round_window() -> None:
    h, s = wear_session(on_failure='stop')
    h.run(until=probing, max_steps=50000)
    h.cluster.client_fails = 'osd.0: EIO'
    h.run(until=lambda s: s.s.phase != 'measure')
    assert s.s.phase == 'recover' and 'failed during the read probe: osd.0: EIO' in \
        s.s.message
    h.cluster.client_fails = ''
    h.run(max_steps=50000)
    assert 'failed' in [t['verdict'] for t in round_trials(h)]


def rounds_read(c1_ms: List[float], read_guard: Optional[float] = 0.25
                ) -> Tuple[confirm.Confirmation, confirm.Verdict]:
    """Five rounds whose IOPS pass c1 (+20%); the baseline reads in 2 ms
    (twice that in even rounds: the machine's load), c1 in `c1_ms` times it."""
    trial = Trial(index=3, kind='candidate', candidate=SearchSpace.candidate_from_options({}),
                  options='o')
    rec = confirm.plan([(trial, 0.0)], 5, 0.03, 'client', measurement_plan.plan_for(None), 1.5,
                       read_guard=read_guard)
    ts = []
    for r, factor in enumerate(c1_ms):
        load = 2.0 if r % 2 == 0 else 1.0
        for arm, iops, ms in ((BASELINE, 100.0, 2.0), ('c1', 120.0, 2.0 * factor)):
            t = confirmed(r, arm, _m(iops, iops))
            t.read_probe = ReadProbe(1000, 20.0, 50.0, ms * load, 4 * ms * load)
            ts.append(t)
    rec.orders = [[BASELINE, 'c1']] * len(c1_ms)
    conf = confirm.Confirmation(rec, ts, 0, None)
    return conf, conf.update()


def test_reads_are_held_on_their_interval_over_the_rounds_not_one_round() -> None:
    # 1.5x in every round, whatever the machine's load: shown slower, held
    # before any steady window
    conf, result = rounds_read([1.5] * 5)
    (arm,) = result.arms
    assert arm.verdict == confirm.READS_SLOWER and conf.next() is None
    assert arm.reads is not None and arm.reads.ratio.median == pytest.approx(1.5)
    assert arm.reads_p99 is not None and arm.reads_p99.ratio.median == pytest.approx(1.5)
    # the noise the probes showed: none, so the rounds see any slowdown past the guard
    seen = result.reads_seen
    assert seen is not None and seen.sd == pytest.approx(0.0, abs=1e-12)
    assert seen.detectable == pytest.approx(0.25)
    # a median of 1.5 whose interval reaches below 1.25 (one slow round at
    # 4x, one fast at 0.5x): not shown slower, so its steady check comes next
    conf, result = rounds_read([4.0, 0.5, 1.5, 1.2, 1.6])
    (arm,) = result.arms
    assert arm.verdict == 'passes' and arm.reads is not None
    assert arm.reads.ratio.median == pytest.approx(1.5)
    assert arm.reads.ratio.low is not None and arm.reads.ratio.low < 1.25
    nxt = conf.next()
    assert nxt is not None and nxt[2] == 'c1'
    seen = result.reads_seen
    assert seen is not None and seen.sd > 0.5 and seen.detectable is not None
    text = views.reads_text(arm, seen)
    assert text.startswith('read latency 1.50x [') and 'over 5 rounds; at their noise' in text
    assert f'show reads {1 + seen.detectable:.2f}x slower 90% of the time' in text
    # no guard (a record from before it): shown, not judged
    _, result = rounds_read([1.5] * 5, read_guard=None)
    assert result.arms[0].verdict == 'passes' and result.arms[0].reads is not None
    # the figures go to the store and back
    saved = json.dumps(result.to_json())
    assert json.dumps(confirm.Verdict.from_json(json.loads(saved)).to_json()) == saved
    assert math.isfinite(json.loads(saved)['arms'][0]['reads']['low'])


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
