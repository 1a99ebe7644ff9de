"""The confirmation's write-amp, judged apart from its rounds (issue 24): the
rounds run in windows of the baseline runs' length and judge the objective
alone; then, for the arms whose objective passed, best first, the steady
check measures the baseline and the arm each in a window that lasts until a
compaction below L0 (at most steady_window_limit)."""
import dataclasses
from typing import Any, Callable, Dict, List, Tuple

import pytest

from rocks_autotune import steady_check, views
from rocks_autotune.canary_record import PreconditionRecord
from rocks_autotune.search import PRIOR_AFTER
from rocks_autotune.session import Session
from session_harness import (Harness, best_summary, best_text, measurement, status, status_text,
                             trials, verdict)

# the fake's canary at this kv_sync latency writes slowly enough that an L0
# cycle of the current options takes ~30 s: longer than the 10-s windows
SLOW = 0.0012
WA = 0.4


def faster(h: Harness, gain: float = 1.2, wa: float = WA) -> str:
    """Every candidate's IOPS `gain` times the current options', its
    write-amp `wa` (the baseline's: WA); returns the current options."""
    base: str = h.cluster.defaults['bluestore_rocksdb_options']
    h.cluster.model = lambda o: (SLOW, WA) if o == base else (SLOW / gain, wa)
    return base


def confirming(**settings: Any) -> Tuple[Harness, Session]:
    h = Harness(**dict(dict(confirm_candidates=2, confirm_rounds=5), **settings))
    return h, h.start(osd=0, trials=3)


def confirm_trials(s: Session, steady: bool) -> List[Dict[str, Any]]:
    return [t for t in trials(s) if t['kind'] == 'confirm' and t['verdict'] == 'measured'
            and bool(t.get('steady')) == steady]


def arms(s: Session) -> Dict[str, Dict[str, Any]]:
    return {a['arm']: a for a in verdict(s)['arms']}


def baseline_length(s: Session) -> float:
    runs = sorted(t['measurement']['seconds'] for t in trials(s)
                  if t['verdict'] == 'baseline')
    return float(runs[len(runs) // 2] if len(runs) % 2 else
                 (runs[len(runs) // 2 - 1] + runs[len(runs) // 2]) / 2)


def in_steady(phase: str) -> Callable[[Session], bool]:
    def until(s: Session) -> bool:
        cur = s.s.current
        return s.s.phase == phase and cur is not None and bool(cur.steady)
    return until


def test_a_candidate_20pc_better_within_budget_at_steady_state_is_recommended() -> None:
    h, s = confirming()
    faster(h)
    h.run(until=lambda s: s.s.confirm is not None)
    # the time said counts the steady windows, at most one pair per finalist
    t = status(s)['time']
    assert t['steady_windows_left'] == 4
    assert 'steady window(s)' in status_text(s, detail=True)
    assert t['steady_need'] is not None and t['steady_need'] <= t['steady_window_limit']
    h.run()
    assert s.s.state == 'done'
    result = verdict(s)
    best = result['recommended']
    assert best is not None
    a = arms(s)[best]
    assert a['objective_verdict'] == 'passes' and a['verdict'] == 'recommended'
    assert a['objective']['ratio']['median'] == pytest.approx(1.2, rel=0.02)
    assert a['steady']['arm_seen'] and a['steady']['baseline_seen']
    assert a['steady']['ratio'] == pytest.approx(1.0, rel=0.05)
    # the objective windows were the baseline runs' length, the steady ones
    # lasted until a compaction: longer
    rounds, steady = confirm_trials(s, False), confirm_trials(s, True)
    assert s.s.confirm.window == baseline_length(s)
    longest_round = max(t['measurement']['seconds'] for t in rounds)
    assert longest_round < s.s.confirm.window + h.settings.bench_chunk_seconds + 1
    # most round windows saw no compaction (their write-amp is shown, not judged)
    assert sum(t['measurement']['window_short'] for t in rounds) > len(rounds) / 2
    # each steady window saw one and its WAL covered a whole cycle's, and the
    # baseline's needed longer than the rounds' windows
    assert all(t['measurement']['l0_cycles'] >= 1 and t['measurement']['wal_cover'] >= 1
               for t in steady)
    base_steady = next(t for t in steady if t['arm'] == 'baseline')
    assert base_steady['measurement']['seconds'] > 2 * longest_round
    # one pair, of the recommended arm alone (the best first: no later arm checked)
    assert sorted(t['arm'] for t in steady) == sorted(['baseline', best])
    assert {t['steady'] for t in steady} == {best}
    (other,) = [x for name, x in arms(s).items() if name != best]
    assert other['verdict'] == 'passes' and other['steady'] is None
    assert 'needed no steady window' in other['why']
    # the answers say it
    b = best_summary(s)
    assert b is not None and b['answer'] == 'recommend'
    assert 'steady write-amp 1.00x' in b['summary'] or 'steady write-amp 0.' in b['summary']
    # the objective over the steady pair's whole windows, beside the claim:
    # the fake's candidate is 1.2x faster however long the window
    assert a['steady']['objective'] == pytest.approx(1.2, rel=0.05)
    assert 'its objective 1.2' in b['summary'] and 'not an interval' in b['summary']
    text = best_text(s)
    # each side's window reached steady state (a compaction, and a cycle's WAL bytes)
    assert 'short windows' in text and 'reached steady state' in text
    assert status(s)['time'] is None or status(s)['time']['steady_windows_left'] == 0


def test_one_over_budget_at_steady_state_is_not_recommended_and_the_next_is_tried() -> None:
    h, s = confirming()
    base = faster(h)
    h.run(until=lambda s: s.s.confirm is not None)
    c1, c2 = [a.options for a in s.s.confirm.arms]
    # c1 the faster (checked first), but over the 1.10x budget at steady state
    h.cluster.model = lambda o: ((SLOW, WA) if o == base else (SLOW / 1.3, WA * 1.5) if o == c1
                                 else (SLOW / 1.2, WA))
    h.run()
    got = arms(s)
    assert got['c1']['objective_verdict'] == got['c2']['objective_verdict'] == 'passes'
    assert got['c1']['verdict'] == 'over budget' and 'over the 1.10x budget' in got['c1']['why']
    assert got['c1']['steady']['ratio'] == pytest.approx(1.5, rel=0.05)
    assert got['c2']['verdict'] == 'recommended'
    assert verdict(s)['recommended'] == 'c2'
    # c1's pair, then c2's: each arm with a baseline window of its own
    steady = confirm_trials(s, True)
    assert [t['steady'] for t in steady] == ['c1', 'c1', 'c2', 'c2']
    assert sorted(t['arm'] for t in steady) == ['baseline', 'baseline', 'c1', 'c2']


def test_a_steady_window_without_a_compaction_within_the_limit_is_write_amp_unknown() -> None:
    h, s = confirming(steady_window_limit=30.0)
    base = faster(h)
    h.cluster.compacts = lambda o: o == base  # no candidate's L0 ever compacts
    h.run()
    assert s.s.state == 'done' and verdict(s)['recommended'] is None
    for a in arms(s).values():
        assert a['objective_verdict'] == 'passes'
        assert a['verdict'] == 'write-amp unknown'
        assert ('not steady within steady_window_limit 30s (no compaction below L0): its '
                'write-amp at steady state is unknown; raise steady_window_limit') in a['why']
        assert a['steady']['arm_seen'] is False
    # both arms checked (the first unknown, the next tried), each arm's window to the limit
    steady = confirm_trials(s, True)
    assert sorted(t['steady'] for t in steady) == ['c1', 'c1', 'c2', 'c2']
    for t in steady:
        if t['arm'] != 'baseline':
            assert 30.0 <= t['measurement']['seconds'] <= 30.0 + h.settings.bench_chunk_seconds
            assert t['measurement']['window_short'] and t['measurement']['l0_cycles'] == 0
    assert 'write-amp unknown' in s.s.message or 'unknown' in s.s.message
    b = best_summary(s)
    assert b is not None and b['keeps_current']


def test_a_finalist_whose_window_cannot_reach_steady_state_is_unknown_without_one() -> None:
    # what the baseline's WAL rate writes in steady_window_limit (steady_cap)
    # made less than any candidate's column families' L0 cycles: a finalist
    # passing its rounds cannot be judged at steady state, said at once, not
    # after a window of an hour that cannot see it (the iops session at the
    # defaults, doc/bench/defaults.md)
    h, s = confirming()
    faster(h)
    h.run(until=lambda s: s.s.steady_cap is not None)
    s.s.steady_cap = dataclasses.replace(s.s.steady_cap, bytes=1 << 20, applied=False)
    h.run(until=lambda s: any(t.verdict == 'feasible' for t in s.s.trials))
    # the forecast, before the confirmation: a finalist's branch adds its
    # rounds, not steady windows of up to steady_window_limit
    small = s.s.steady_cap
    out = s.time_said()
    s.s.steady_cap = dataclasses.replace(small, bytes=1 << 40)
    fits = s.time_said()
    s.s.steady_cap = small
    assert out.keep_seconds == fits.keep_seconds
    assert fits.finalist_seconds is not None and out.finalist_seconds is not None
    assert fits.finalist_seconds - out.finalist_seconds > h.settings.steady_window_limit
    h.run(until=lambda s: s.s.confirm is not None)
    # the forecast counts no steady window for them
    assert s.search.confirmation().steady_planned() == 0
    h.run()
    assert s.s.state == 'done' and verdict(s)['recommended'] is None
    for a in arms(s).values():
        assert a['objective_verdict'] == 'passes' and a['verdict'] == 'write-amp unknown'
        assert 'MiB of WAL (every column family\'s L0 cycle), past the 1 MiB' in a['why']
        assert 'raise steady_window_limit to' in a['why']
    assert confirm_trials(s, True) == []


def test_before_a_feasible_candidate_steady_windows_count_at_the_share_that_can_reach() -> None:
    # the iops sessions at the defaults (doc/bench/defaults.md) forecast 3.4-3.9x
    # the time left until a candidate was feasible: a finalist's steady windows
    # counted whole, though few points of the space could reach steady state
    # in the hour at the lab's WAL rate (nor could the default itself)
    def drawn(limit: float) -> Session:
        h = Harness(client_space=32 << 20, client_object_size=1 << 20, precondition_limit=600.0,
                    client_threads=1, steady_window_limit=limit, confirm_rounds=5)
        s = h.start(osd=0, workload='client', trials=6)
        h.run(until=lambda s: s.s.reach_prior is not None)
        assert s.s.reach_prior == 1.0  # at the start, no WAL rate yet
        # known from the preconditioning's WAL rate, a minute into its 4 KiB writes
        h.run(until=lambda s: (s.canary.rec.precondition or PreconditionRecord()).seconds
              >= PRIOR_AFTER)
        assert s.s.phase == 'precondition' and s.s.feasible_prior is None
        return s
    short, hour = drawn(10.0), drawn(3600.0)
    assert short.s.reach_prior == 0.0 < hour.s.reach_prior
    t = short.time_said()
    assert t.finalist_seconds is not None and t.keep_seconds is not None
    # what a finalist adds is its rounds alone: counted whole, its steady windows add more
    short.s.reach_prior = 1.0
    whole = short.time_said()
    assert whole.finalist_seconds is not None
    assert whole.finalist_seconds - t.finalist_seconds >= 2 * 10.0
    # in the expected time, at the chances of a finalist and of its passing
    assert whole.expected_seconds - t.expected_seconds == pytest.approx(
        t.finalist_chance * t.pass_chance * (whole.finalist_seconds - t.finalist_seconds))


def test_a_baseline_without_a_compaction_gives_no_bound_judged_all_the_same() -> None:
    # 60 s, not 30: the arm's window waits for a whole L0 cycle's WAL bytes
    # (about 42 s here), not only its compaction, which the L0 files carried
    # over from the search bring after 6 of its trigger's 8 flushes
    h, s = confirming(steady_window_limit=60.0)
    base = faster(h)
    h.cluster.compacts = lambda o: o != base
    h.run()
    best = verdict(s)['recommended']
    assert best is not None
    st = arms(s)[best]['steady']
    assert st['upper_bound'] and st['baseline_seen'] is False and st['arm_seen']
    assert 'no bound' in arms(s)[best]['why']
    b = best_summary(s)
    assert b is not None and 'steady write-amp ~' in b['summary']


@pytest.mark.parametrize('limit', [20.0, 600.0])
def test_the_rounds_windows_are_the_baseline_runs_length_whatever_the_limit(
        limit: float) -> None:
    h, s = confirming(steady_window_limit=limit)
    faster(h)
    h.run()
    window = s.s.confirm.window
    # the search extended the baseline's 10-s windows to cover its flushes: 16 s
    assert window == baseline_length(s) > 10.0
    rounds = confirm_trials(s, False)
    assert len(rounds) == 15
    assert all(window <= t['measurement']['seconds'] < window + h.settings.bench_chunk_seconds
               + 1 for t in rounds)


def test_a_keep_current_session_measures_no_steady_window() -> None:
    h, s = confirming()
    h.cluster.model = lambda o: (SLOW, WA)  # nothing helps
    h.cluster.noise = 0.05
    h.run()
    assert s.s.state == 'done' and verdict(s)['recommended'] is None
    assert not confirm_trials(s, True)
    assert not any(t.get('steady') for t in h.trials)
    assert all(a['steady'] is None for a in arms(s).values())


def test_a_failover_mid_steady_window_measures_it_again() -> None:
    h0, s0 = confirming()
    faster(h0)
    h0.run()
    h, s = confirming()
    faster(h)
    h.run(until=in_steady('measure'))
    cur = s.s.current
    h.session = None
    s = h.reload()
    assert s.s.phase == 'apply' and s.s.current.steady == cur.steady
    h.run()
    assert s.s.state == 'done'
    steady = [(t['round'], t['arm'], t['steady']) for t in confirm_trials(s, True)]
    assert sorted(steady) == sorted(set(steady))  # none measured twice
    assert steady == [(t['round'], t['arm'], t['steady']) for t in confirm_trials(s0, True)]
    assert verdict(s)['recommended'] == verdict(s0)['recommended']


def test_the_steady_verdict_rules() -> None:
    def m(wa: float, short: bool = False, cover: Any = 1.0, settled: Any = 30.0,
          **more: Any) -> Any:
        return measurement(write_amp=wa, write_amp_by='rocksdb', window_short=short,
                           l0_cycles=0.0 if short else 1.0, wal_cover=cover,
                           settled=settled, **more)
    judge = steady_check.judge
    ok = judge('c1', [(m(0.42), m(0.4))], 1, 1.10, 600)
    assert ok.verdict == 'recommended' and ok.ratio == pytest.approx(1.05)
    assert not ok.upper_bound
    over = judge('c1', [(m(0.5), m(0.4))], 1, 1.10, 600)
    assert over.verdict == 'over budget' and over.ratio == pytest.approx(1.25)
    # the arm saw no compaction: unknown, whatever its ratio
    blind = judge('c1', [(m(0.1, short=True, settled=None), m(0.4))], 1, 1.10, 600)
    assert blind.verdict == 'write-amp unknown' and 'steady_window_limit 600s' in blind.why
    assert '(no compaction below L0)' in blind.why
    # its one compaction was the first, which took in L0 files the options
    # before it wrote (and the replayed WAL's flush): unknown too
    first = judge('c1', [(m(0.1, settled=None), m(0.4))], 1, 1.10, 600)
    assert first.verdict == 'write-amp unknown' and 'after the first' in first.why
    # a compaction, but fewer WAL bytes than its families' memtables take in
    # through a cycle: unknown too, and the why says how far it got
    few = judge('c1', [(m(0.1, cover=0.14), m(0.4))], 1, 1.10, 600)
    assert few.verdict == 'write-amp unknown' and '14% of the WAL bytes' in few.why
    # a window measured before wal_cover was counted did not show it
    assert judge('c1', [(m(0.42, cover=None), m(0.4))], 1, 1.10, 600).verdict == \
        'write-amp unknown'
    # the baseline saw none: its write-amp low there, the ratio no bound,
    # judged against the budget all the same
    upper = judge('c1', [(m(0.42), m(0.4, short=True))], 1, 1.10, 600)
    assert upper.verdict == 'recommended' and upper.upper_bound and 'no bound' in upper.why
    assert judge('c1', [(m(0.5), m(0.4, short=True))], 1, 1.10, 600).verdict == 'over budget'
    # the median over the pairs, once all are in
    assert judge('c1', [(m(0.42), m(0.4))], 3, 1.10, 600).verdict == ''
    three = judge('c1', [(m(0.42), m(0.4)), (m(0.6), m(0.4)), (m(0.4), m(0.4))], 3, 1.10, 600)
    assert three.verdict == 'recommended' and three.ratio == pytest.approx(1.05)
    # a window short of min_flushes that saw a compaction saw one; without
    # a count, the short mark says

    def saw(**m: Any) -> bool:
        return steady_check.saw_compaction(measurement(settled=30.0, **m))
    assert saw(window_short=True, l0_cycles=1.0, wal_cover=1.0)
    assert not saw(window_short=False, l0_cycles=0.0, wal_cover=1.0)
    assert not saw(window_short=True, l0_cycles=None, wal_cover=1.0)
    assert not saw(window_short=True, l0_cycles=1.0, wal_cover=0.99)
    # not counted from the end of a first compaction: not steady
    assert not steady_check.saw_compaction(measurement(l0_cycles=1.0, wal_cover=1.0))

    # the objective's ratio over the same windows, when the rounds' key is
    # given (the median over the pairs); none without it
    def mo(wa: float, iops: float) -> Any:
        return m(wa, iops=iops)
    got = judge('c1', [(mo(0.42, 110.0), mo(0.4, 100.0)), (mo(0.4, 90.0), mo(0.4, 100.0)),
                       (mo(0.4, 130.0), mo(0.4, 100.0))], 3, 1.10, 600, 'iops')
    assert got.objective == pytest.approx(1.1)
    assert [p.objective for p in got.pairs] == pytest.approx([1.1, 0.9, 1.3])
    assert got.to_json()['objective'] == pytest.approx(1.1)
    assert ok.objective is None and ok.to_json()['pairs'][0]['objective'] is None
    assert judge('c1', [(mo(0.4, 90.0), m(0.4))], 1, 1.10, 600, 'iops').objective is None
    # the order within a pair: the first from the seed (both drawn over
    # seeds), each later pair the one before reversed (ABBA)
    firsts = {tuple(steady_check.order(seed, 'c1', 0)) for seed in range(8)}
    assert firsts == {('baseline', 'c1'), ('c1', 'baseline')}
    for seed in range(4):
        a, b = steady_check.order(seed, 'c1', 0), steady_check.order(seed, 'c1', 1)
        assert b == a[::-1] and steady_check.order(seed, 'c1', 2) == a


def test_a_steady_ratio_is_given_with_a_compaction_in_or_out_of_either_window() -> None:
    # demo run 20 (doc/bench/scenarios.md), per window: WAL, flush and
    # compaction MB, client MB; one compaction of its P family ~13.5 MB
    # (qa/bench/results/demo-run20-history.json)
    def m(wal: float, flush: float, comp: float, unit: float, per_byte: float = 0.509) -> Any:
        client = wal / per_byte
        return measurement(write_amp=(wal + flush + comp) / client, write_amp_by='rocksdb',
                           client_bytes=int(client * 1e6), rocksdb_wal_bytes=int(wal * 1e6),
                           flush_bytes=int(flush * 1e6), compaction_bytes=int(comp * 1e6),
                           compaction_unit=int(unit * 1e6), window_short=False,
                           l0_cycles=1.0, wal_cover=1.0, settled=30.0)
    c1, blog = m(605, 32.5, 127.4, 13.5), m(138, 11.8, 46.6, 13.5)
    v = steady_check.judge('c1', [(c1, blog)], 1, 0.97, 900, goal='wear')
    assert v.ratio == pytest.approx(0.888, abs=0.002)
    assert (v.low, v.high) == pytest.approx((0.816, 0.971), abs=0.002)
    # the all-OSD check under fio, 0.857x [0.833, 0.882], is inside it
    assert v.low < 0.857 < v.high
    # the same bytes per WAL byte after a step in the WAL per client byte
    # (perf_counters.write_amps): the same ratio and range
    stepped = steady_check.judge('c1', [(m(605, 32.5, 127.4, 13.5, 0.58), blog)], 1, 0.97, 900,
                                 goal='wear')
    assert (stepped.ratio, stepped.low, stepped.high) == pytest.approx((v.ratio, v.low, v.high))
    # recommended by its ratio, and the why says how far a compaction takes it
    assert v.verdict == 'recommended' and 'up to 0.97x' in v.why
    assert v.to_json()['range'] == pytest.approx([0.816, 0.971], abs=0.002)
    assert '0.89x (0.82-0.97x with a compaction in or out)' in views.steady_ratio(v)
    # a window whose compactions RocksDB did not count has no range
    blind = measurement(write_amp=0.5, write_amp_by='rocksdb', l0_cycles=1.0, wal_cover=1.0,
                        settled=30.0)
    assert steady_check.compaction_range(blind, blog) == (None, None)
    # one saved before the range was kept reads back without one
    saved = v.to_json()
    for p in saved['pairs']:
        del p['low'], p['high']
    assert steady_check.SteadyVerdict.from_json(saved, 'c1').high is None
