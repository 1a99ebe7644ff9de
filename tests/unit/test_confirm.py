"""The confirmation phase against the fake cluster: rounds in fresh random
orders, a restart per measurement, a mgr failover in the middle, candidates
that fail or cannot pass, stop, and what the answer says."""
import json
import math
from typing import Any, Dict, List, Optional, Set, Tuple

import pytest

from rocks_autotune import perf_counters, power, report, views
from rocks_autotune.confirm import ConfirmRecord
from rocks_autotune.measurement_plan import SEQUENTIAL, MeasurementPlan
from rocks_autotune.perf_counters import Baseline
from rocks_autotune.options import MAX_CONFIRM_CANDIDATES, MAX_CONFIRM_ROUNDS, default
from rocks_autotune.session import Session, Settings
from rocks_autotune.store import CONFIRM_KEY, HEAD_KEY, MAX_VALUE, SessionStore
from fake_cluster import model
from session_harness import Harness, assert_restored, measurement, status_text, trials, verdict


def confirming(h: Harness, trials: int = 3, **settings: Any) -> Tuple[Harness, Session]:
    for k, v in dict(dict(confirm_candidates=2, confirm_rounds=5), **settings).items():
        setattr(h.settings, k, v)
    return h, h.start(osd=0, trials=trials)


def measured(s: Session) -> List[Tuple[int, str]]:
    return [(t['round'], t['arm']) for t in trials(s)
            if t['kind'] == 'confirm' and t['verdict'] == 'measured' and not t.get('steady')]


def in_confirmation(phase: str, round_: int, nth: int) -> Any:
    """A step's `until`: the nth measurement of a round, in `phase`."""
    def until(s: Session) -> bool:
        cur = s.s.current
        return (s.s.phase == phase and cur is not None and cur.kind == 'confirm'
                and cur.round == round_
                and s.s.confirm.orders[round_].index(cur.arm) == nth)
    return until


def test_rounds_in_fresh_random_orders_each_measurement_a_restart() -> None:
    h, s = confirming(Harness())
    before = h.config_of(0)
    h.run()
    assert s.s.state == 'done'
    orders = s.s.confirm.orders
    arms = [a.arm for a in s.s.confirm.arms]
    assert arms == ['c1', 'c2'] and len(orders) == 5
    assert all(sorted(o) == ['baseline', 'c1', 'c2'] for o in orders)
    assert len({tuple(o) for o in orders}) > 1  # not one order reused
    # measured in each round's order
    assert measured(s) == [(r, a) for r, o in enumerate(orders) for a in o]
    # every round's measurement restarted the canary onto its own options
    # (the steady check's windows follow: test_steady_check.py)
    conf = [t for t in h.trials if t['kind'] == 'confirm' and not t.get('steady')]
    search_restarts = len([t for t in h.trials if t['kind'] != 'confirm'])
    assert [o for _, o in h.cluster.restarts[search_restarts:search_restarts + len(conf)]] == [
        h.cluster.defaults['bluestore_rocksdb_options'] if t['arm'] == 'baseline'
        else t['options'] for t in conf]
    # the candidates are the model's top 2 feasible search trials, not the current options
    base = s.space.base_candidate().to_dict()
    for a in s.s.confirm.arms:
        t = h.trials[a.trial]
        assert t['kind'] == 'candidate' and t['verdict'] == 'feasible'
        assert t['candidate'] == a.candidate.to_dict() != base
    assert_restored(h, 0, before)


def test_a_failover_in_the_middle_of_the_confirmation_resumes_it() -> None:
    # the same session uninterrupted, for its answer
    h0, s0 = confirming(Harness())
    h0.run()
    for phase in ('measure', 'wait_up'):
        h, s = confirming(Harness())
        before = h.config_of(0)
        h.run(until=in_confirmation(phase, 2, 1))
        orders = json.loads(h.saved[-1])['confirm']['orders']
        done = measured(s)
        h.session = None
        s = h.reload()  # a new active mgr, from the last saved state
        if phase == 'measure':
            assert s.s.phase == 'apply'  # the window in flight is redone
        h.run()
        assert s.s.state == 'done'
        # the rounds drawn before are kept, and nothing is measured twice
        assert s.s.confirm.orders[:3] == orders[:3]
        assert measured(s)[:len(done)] == done
        assert sorted(measured(s)) == sorted(set(measured(s)))
        assert len(measured(s)) == 15
        assert s.s.confirm.orders == s0.s.confirm.orders
        assert verdict(s)['recommended'] == \
            verdict(s0)['recommended'] is not None
        assert_restored(h, 0, before)


def test_a_candidate_that_breaks_the_canary_in_the_confirmation_is_out() -> None:
    h, s = confirming(Harness())
    before = h.config_of(0)
    h.run(until=in_confirmation('apply', 1, 0))
    c1 = s.s.confirm.arms[0].options
    h.cluster.broken = lambda options: options == c1
    h.run()
    assert s.s.state == 'done'
    failed = [t for t in h.trials if t['verdict'] == 'failed']
    assert len(failed) == 1 and failed[0]['arm'] == 'c1' and failed[0]['round'] == 1
    assert all('c1' not in o for o in s.s.confirm.orders[2:])
    arms = {a['arm']: a for a in verdict(s)['arms']}
    assert arms['c1']['verdict'] == 'failed' and 'failed in round 2' in arms['c1']['why']
    assert verdict(s)['recommended'] != 'c1'
    assert_restored(h, 0, before)


def test_the_baseline_of_a_round_is_measured_again_after_a_failure() -> None:
    h, s = confirming(Harness())
    h.run(until=lambda s: s.s.phase == 'measure' and s.s.current.kind == 'confirm'
          and s.s.current.arm == 'baseline' and s.s.current.round == 0)
    h.cluster.kill(0)
    h.run()
    assert s.s.state == 'done'
    base0 = [t['verdict'] for t in h.trials if t['kind'] == 'confirm'
             and t['round'] == 0 and t['arm'] == 'baseline' and not t.get('steady')]
    assert base0 == ['failed', 'measured']
    assert len(measured(s)) == 15


def nothing_helps(h: Harness, noise: float) -> None:
    """Every option string performs as the current one, give or take noise."""
    h.cluster.model = lambda options: (0.0004, 0.4)
    h.cluster.noise = noise


def test_when_nothing_helps_the_answer_is_keep_your_current_options() -> None:
    h, s = confirming(Harness())
    nothing_helps(h, 0.05)
    h.run()
    assert s.s.state == 'done' and views.recommended_trial(s.s) is None
    assert 'keep your current options: no candidate\'s IOPS cleared the 3% margin' \
        in s.s.message, s.s.message
    b = report.best_summary(s.s)
    assert b is not None and b['keeps_current'] and b['commands'] == []
    # every candidate the confirmation took (the design's count) is listed
    assert b['options'] is None and len(b['candidates']) == s.s.noise.design.candidates
    text = report.best_text(s.s)
    assert text.startswith('keep your current options') and 'c1 (trial' in text
    assert all(c['verdict'] in ('below margin', 'dropped') for c in b['candidates'])


def test_the_noise_is_measured_before_the_search_and_said_with_the_answer() -> None:
    h, s = confirming(Harness(), baseline_runs=default('baseline_runs'))
    nothing_helps(h, 0.05)
    h.run(until=lambda s: s.status()['baseline'] is not None)
    st = s.status()
    noise = st['noise']
    # the baseline runs in pairs, in the order they ran (A/A)
    runs = [t['measurement']['iops'] for t in h.trials if t['verdict'] == 'baseline']
    assert len(runs) == s.settings.baseline_runs == 4
    aa = power.aa_noise(runs)
    assert aa is not None and noise['pairs'] == 2 and noise['sd'] == aa.sd > 0
    plan = noise['plan']
    assert plan['rounds'] == 5 and plan['detect'] == 0.10
    # planned at the sd's upper confidence limit, not at the estimate
    assert noise['planned_sd'] == power.planned_sd(noise['sd'], 2) > noise['sd']
    assert plan['detectable'] == power.detectable(noise['planned_sd'], 5, 0.03)
    text = status_text(s, detail=True)
    assert 'noise: IOPS sd ' in text and 'A/A pair(s)' in text
    assert f'planned at {noise["planned_sd"]:.3f} (its 80% upper confidence limit)' in text
    h.run()
    result = verdict(s)
    seen = result['seen']
    per_arm = [[math.log(r) for r in a['objective']['ratio']['per_round']]
               for a in result['arms']]
    pooled = power.pooled_sd(per_arm)
    assert pooled is not None and seen['sd'] == pytest.approx(pooled[0])
    # the design's power: its planned rounds (candidates dropped as futile
    # after 3 measured fewer)
    assert seen['rounds'] == 5 and seen['df'] == sum(len(xs) - 1 for xs in per_arm)
    assert seen['detectable'] == power.detectable(seen['sd'], 5, 0.03)
    # what it could not see ends the keep-current answer
    assert views.recommended_trial(s.s) is None
    assert (f'its 5 rounds confirm a gain of {views.gain_text(seen["detectable"])} '
            '90% of the time: a smaller one goes unseen') in s.status()['message']


def test_noise_the_asked_rounds_cannot_see_through_takes_fewer_finalists_more_rounds() -> None:
    # 2 candidates over 5 rounds (15 measurements), at a noise no split of
    # them confirms +10% through: one candidate over 7 rounds
    h, s = confirming(Harness(), baseline_runs=4)
    nothing_helps(h, 0.5)
    h.run(until=lambda s: s.status()['confirmation'] is not None)
    st = s.status()
    design = st['noise']['design']
    assert (design['candidates'], design['rounds']) == (1, 7) and 'no split' in design['why']
    conf = st['confirmation']
    assert len(conf['arms']) == 1 and conf['rounds'] == 7 and conf['design'] == design
    assert ('the confirmation takes 1 candidate(s) over 7 rounds'
            in status_text(s, detail=True))
    h.run()
    assert s.status()['state'] == 'done'
    assert max(t['round'] for t in h.trials if t['kind'] == 'confirm') <= 6


def test_an_odd_baseline_run_pairs_with_none() -> None:
    h, s = confirming(Harness(), baseline_runs=3)
    nothing_helps(h, 0.05)
    h.run(until=lambda s: s.status()['baseline'] is not None)
    assert s.status()['noise']['pairs'] == 1


def test_a_candidate_that_can_no_longer_pass_is_dropped_after_three_rounds() -> None:
    dropped: Set[str] = set()
    for seed in range(6):
        h, s = confirming(Harness(seed=seed))
        nothing_helps(h, 0.05)
        h.run()
        for a in s.s.confirm.arms:
            if a.out:
                assert a.out[0] == 'dropped'
                n = int(a.out[1].split('after round ')[1].split(':')[0])
                assert n >= 3  # never before three rounds
                # measured in every round up to the drop, and never after it
                assert [r for r, arm in measured(s) if arm == a.arm] == list(range(n))
                dropped.add(a.arm)
        # all dropped: the confirmation ends early, without a last round of the baseline alone
        if all(a.out for a in s.s.confirm.arms):
            assert len(s.s.confirm.orders) < 5
    assert dropped


def test_stop_during_the_confirmation_answers_over_the_rounds_done() -> None:
    h, s = confirming(Harness(), confirm_rounds=6)
    # in round 5's first measurement (it ends; no arm has a 5th pair): 4 rounds done
    h.run(until=in_confirmation('measure', 4, 0))
    s.request('stop')
    h.run()
    assert s.s.state == 'stopped'
    result = verdict(s)
    assert not result['complete'] and result['rounds_done'] == 4
    b = report.best_summary(s.s)
    assert b is not None and b['rounds_done'] == 4 and b['rounds'] == 6
    # four rounds give no interval: nothing is recommended over them
    assert b['answer'] == 'keep current'
    assert '4 of 6 rounds measured, too few' in s.status()['message']


def test_a_candidate_that_passes_at_a_look_is_done() -> None:
    # identical rounds (the fake has no noise): both candidates pass at the
    # first look that can pass one, after round 6 of 8 (at 8 rounds' level,
    # 5 rounds' best p-value, 1/32, is too large), and the confirmation ends there
    h, s = confirming(Harness(), confirm_rounds=8)
    h.run(until=in_confirmation('measure', 0, 0))
    # as expected at its start, at a gain far over the margin and next to no noise
    expected = s.search.confirmation().expected_planned(
        {t.index: 0.5 for t in s.s.trials}, 1e-9)
    h.run()
    conf = s.s.confirm
    assert expected == len(measured(s)) == 6 * 3
    assert conf.sequential and conf.level == power.look_level(8) > 1 - 2 / 32
    assert len(conf.orders) == 6 and [a.passed for a in conf.arms] == [6, 6]
    result = verdict(s)
    assert result['complete'] and result['recommended']
    assert s.status()['confirmation']['level'] == conf.level
    assert all(a['objective']['rounds'] == 6 for a in result['arms'])
    assert s.status()['state'] == 'done'


def test_status_and_history_show_the_confirmation() -> None:
    h, s = confirming(Harness())
    h.run()
    st = s.status()
    text = status_text(s, detail=True)
    assert 'confirmation: 2 candidate(s)' in text and 'answer: recommend trial' in text
    assert '  c1 (trial ' in text and '[' in text
    # the 15 rounds' measurements, and the recommended arm's steady pair
    assert st['confirm_done'] == 17
    assert 'steady write-amp' in text and 'short windows' in text
    hist = report.history_table(s.s.trials)
    assert ' r1:base ' in hist and ' r5:c2 ' in hist and 'measured' in hist
    best = verdict(s)['recommended']
    assert f' s1:{best}:base ' in hist and f' s1:{best}:{best} ' in hist
    assert 'WAL_MiB' in hist and 'SST_MiB' in hist
    # the verdict's JSON in `status -f json`, key by key in its order (the
    # panel, qa and scripts read it), and reloaded as saved, to the byte
    assert list(st['confirmation']) == [
        'arms', 'rounds', 'margin', 'objective', 'direction', 'level', 'measurement_plan',
        'steady_pairs', 'steady_window_limit', 'budget', 'restart_limit', 'read_guard',
        'design', 'goal', 'wear_margin', 'window', 'none_why', 'sequential', 'orders', 'result']
    result = st['confirmation']['result']
    assert list(result) == [
        'recommended', 'complete', 'rounds_done', 'baseline_restart_seconds', 'arms', 'seen',
        'reads_seen']
    arm = next(a for a in result['arms'] if a['arm'] == best)
    assert list(arm) == ['arm', 'verdict', 'why', 'objective', 'write_amp', 'kv_sync_lat',
                         'trial', 'mean', 'predicted', 'restart_seconds', 'objective_verdict',
                         'steady']
    assert list(arm['objective']) == ['rounds', 'median', 'low', 'high', 'ratio']
    assert list(arm['objective']['ratio']) == ['median', 'low', 'high', 'rounds', 'per_round',
                                               'at']
    assert list(arm['steady']) == ['verdict', 'why', 'ratio', 'objective', 'saved_per_day',
                                   'range', 'upper_bound', 'pairs', 'arm_seen', 'baseline_seen']
    assert list(result['seen']) == ['sd', 'df', 'rounds', 'power', 'detectable']
    saved = json.dumps(s.s.confirm.to_json())
    assert json.dumps(ConfirmRecord.from_json(json.loads(saved)).to_json()) == saved


@pytest.mark.parametrize('workload,key', [('osd-bench', 'iops'), ('client', 'iops'),
                                          ('live', 'op_w_lat_ms')])
def test_the_score_is_the_objective_the_client_gets(workload: str, key: str) -> None:
    m: Dict[str, Any] = dict(seconds=30.0, client_bytes=1, db_bytes=1, wal_bytes=1,
                             write_amp=1.0, kv_sync_lat_ms=1.0, kv_syncs=1, flushes=1.0,
                             window_short=False)
    base = Baseline.of([measurement(**m, **{key: 100.0})], workload)
    better = 110.0 if key == 'iops' else 90.0
    # kv_sync latency doubled: a diagnostic, not part of the score
    s = perf_counters.score(measurement(**dict(m, kv_sync_lat_ms=2.0, **{key: better})),
                            base, workload)
    assert s < 0
    assert s == pytest.approx(-abs(math.log(better / 100.0)))
    with pytest.raises(ValueError, match='no'):
        perf_counters.score(measurement(**m), base, workload)


def test_the_state_fits_the_store_at_the_largest_confirmation() -> None:
    h, s = confirming(Harness(), trials=12, confirm_candidates=MAX_CONFIRM_CANDIDATES,
                      confirm_rounds=MAX_CONFIRM_ROUNDS)
    kv: Dict[str, Optional[str]] = {}
    store = SessionStore(kv.get, kv.__setitem__)
    h.run(max_steps=100000)
    assert s.s.state == 'done' and len(s.s.confirm.arms) == MAX_CONFIRM_CANDIDATES
    store.save(s.s)  # StoreError past MAX_VALUE
    for key in (HEAD_KEY, CONFIRM_KEY):
        value = kv[key]
        assert value is not None and len(value) < MAX_VALUE // 2
    # the head, rewritten at every step, holds no part of the confirmation
    assert 'confirm' not in json.loads(kv[HEAD_KEY] or '')
    with pytest.raises(ValueError, match=f'between 1 and {MAX_CONFIRM_ROUNDS}'):
        Settings(confirm_rounds=MAX_CONFIRM_ROUNDS + 1).validate()


@pytest.mark.parametrize('seed', [0, 1])
def test_a_session_that_meets_candidates_over_the_write_amp_budget_recommends_none(
        seed: int) -> None:
    # the fake's RocksDB is seed 000's trap: smaller flushes sync faster and
    # write more; at a 1.05x budget the search meets candidates that break it
    h = Harness(seed=seed, confirm_candidates=3, confirm_rounds=5, steady_window_limit=3600.0)
    s = h.start(osd=0, trials=8, budget=1.05)
    h.run(max_steps=50000)
    base = model(s.s.base_options)[1]

    def true_wa(options: str) -> float:
        return model(options)[1] / base
    searched = [t for t in h.trials if t['kind'] != 'confirm' and t.get('measurement')]
    over = [t for t in searched if true_wa(t['options']) > 1.05]
    assert over, 'the search met no candidate over the budget: the test shows nothing'
    result = verdict(s)
    verdicts = {a['arm']: a for a in result['arms']}
    # write-amp is judged in the steady check, whose windows each saw a
    # compaction (the rounds' windows, the baseline runs' length, need not):
    # every arm checked is judged at steady state
    checked = [v for v in verdicts.values() if v['steady']]
    assert checked and all(v['steady']['arm_seen'] and v['steady']['baseline_seen']
                           for v in checked)
    for a in s.s.confirm.arms:
        if true_wa(a.options) > 1.05 and verdicts[a.arm]['steady']:
            assert verdicts[a.arm]['verdict'] == 'over budget'
    rec = result['recommended']
    assert rec is not None  # not by keeping: a candidate within the budget won
    options = {a.arm: a.options for a in s.s.confirm.arms}
    assert true_wa(options[rec]) <= 1.05
    # what it passed over was faster than the baseline (the trap), in the search's windows
    baseline = max(t['measurement']['iops'] for t in searched if t['verdict'] == 'baseline')
    assert max(t['measurement']['iops'] for t in over) > baseline


def test_each_measurement_says_which_canary_ran_it() -> None:
    h, s = confirming(Harness())
    h.run()
    assert s.s.confirm.measurement_plan == MeasurementPlan(SEQUENTIAL)
    assert {t['osd'] for t in h.trials} == {0}


def test_the_last_round_in_flight_still_counts_the_steady_check_to_come() -> None:
    # demo run 7: during its fifth and last round the forecast fell to 119 s
    # left, its finalist's steady check (1,200 s) uncounted until it passed
    h, s = confirming(Harness())
    h.run(until=in_confirmation('measure', 4, 0))
    assert s.search.confirmation().active()
    assert s.search.left()[2] > 0
