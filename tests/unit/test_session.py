"""The session state machine against a fake cluster and a fake clock: no sleeps
(the harness and its read helpers: session_harness.py)."""
import json
from typing import Any, Dict, List, Set

import pytest

from fake_cluster import DEFAULTS, FakeClock, FakeCluster
from rocks_autotune import report, store, views
from rocks_autotune.canary import ANNEX, OPTIONS
from rocks_autotune.rocksdb_options import NEW_TUNING, PACIFIC_DEFAULT
from rocks_autotune.gate import choose_canary
from rocks_autotune.session_settings import Params, StartRefused
from rocks_autotune.session import MOVES, Phase, Session
from rocks_autotune.store import StoreError
from session_harness import (Harness, assert_restored, best_summary, best_text, current,
                             kept_reading, may_run_candidate, measuring, measuring_a_candidate,
                             noout_is_ours, phase, rescue_originals, rewound, saved_originals,
                             saved_phase, status_text, trials, view)


def test_full_session_searches_confirms_recommends_and_restores() -> None:
    h = Harness(confirm_candidates=3, confirm_rounds=5)  # the defaults
    before = h.config_of(0)
    s = h.start(osd=0)
    # saved before any change, in the canary's record and in the start record
    assert saved_originals(h.persisted(0)) == rescue_originals(h.persisted(0)) == before
    h.run()
    assert h.state == 'done'
    kinds = [t['kind'] for t in h.trials]
    # 20 rounds' measurements, then the steady check's pair of the recommended arm
    assert kinds == ['baseline'] * 2 + ['candidate'] * 3 + ['confirm'] * 22
    assert [bool(t.get('steady')) for t in h.trials[-2:]] == [True, True]
    for t in h.trials:
        m = t['measurement']
        assert m['kv_sync_lat_ms'] > 0 and m['iops'] > 0 and m['write_amp'] > 0
    assert h.status['baseline']['runs'] == 2
    # the answer is the confirmation's: a feasible search trial, recommended
    best = views.recommended_trial(s.s)
    assert best is not None and best.verdict == 'feasible'
    assert h.message.startswith(f'done: recommend trial {best.index}')
    assert_restored(h, 0, before)
    assert s.health_checks() == {}
    # every trial and measurement restarted the canary with its own options; the
    # last restart restored, unless the last window (a steady one) ran the baseline
    last_ran_baseline = h.trials[-1]['arm'] == 'baseline'
    assert len(h.cluster.restarts) == 27 + (0 if last_ran_baseline else 1)
    assert h.cluster.restarts[2][1] != h.cluster.restarts[0][1]
    assert s.progress() == 1.0


def test_only_the_canary_mask_changes_and_existing_own_values_come_back() -> None:
    h = Harness()
    custom = NEW_TUNING
    h.cluster.config_set('osd.1', 'bluestore_rocksdb_options', custom)
    h.cluster.config_set('osd', 'osd_bench_small_size_max_iops', '200')
    h.cluster.restart_osd(1)
    h.clock.advance(5)
    before_all = dict(h.cluster.config)
    h.start(osd=1, trials=2)
    h.run(until=measuring_a_candidate)
    # while a candidate runs, what changed is at the canary's own mask only
    changed = {k for k in set(h.cluster.config) | set(before_all)
               if h.cluster.config.get(k) != before_all.get(k)}
    assert changed and {who for who, _ in changed} == {'osd.1'}
    h.run()
    assert h.state == 'done'
    assert h.cluster.config == before_all
    # the base string of a candidate is the canary's own, foreign keys kept
    cand = [t for t in h.trials if t['kind'] == 'candidate'][0]
    assert 'max_total_wal_size=1073741824' in cand['options']
    assert 'compaction_style=kCompactionStyleLevel' in cand['options']


def test_annex_is_folded_in_blanked_for_trials_and_restored() -> None:
    h = Harness()
    h.cluster.config_set('osd.0', 'bluestore_rocksdb_options_annex', 'write_buffer_size=33554432')
    before = h.config_of(0)
    h.start(osd=0, trials=1)
    h.run(until=measuring_a_candidate)
    # folded into the options the trials run (the baseline's: the canary's own)
    baseline = [t for t in h.trials if t['kind'] == 'baseline']
    assert baseline and all('write_buffer_size=33554432' in t['options'] for t in baseline)
    assert h.cluster.config_get_own('osd.0', 'bluestore_rocksdb_options_annex') == ''
    h.run()
    assert_restored(h, 0, before)


def test_abort_mid_measurement_restores_the_canary() -> None:
    h = Harness()
    before = h.config_of(0)
    s = h.start(osd=0)
    h.run(until=measuring_a_candidate)
    assert h.config_of(0) != before
    s.request('abort')
    h.run()
    assert h.state == 'aborted'
    assert_restored(h, 0, before)


def test_stop_finishes_the_trial_in_flight() -> None:
    h = Harness()
    s = h.start(osd=0, trials=5)
    h.run(until=measuring_a_candidate)
    n = len(h.trials)
    s.request('stop')
    h.run()
    assert h.state == 'stopped'
    assert len(h.trials) == n + 1
    assert h.trials[-1]['verdict'] in ('feasible', 'infeasible')


def test_candidate_that_keeps_the_osd_down_fails_and_session_continues() -> None:
    h = Harness()
    h.cluster.broken = lambda options: 'max_write_buffer_number=128' in options
    before = h.config_of(0)
    h.settings.confirm_rounds = 5
    s = h.start(osd=0, trials=4)  # the 3rd warm start is New Tuning: 128 memtables
    raised = []
    h.run(until=lambda s: raised.append(set(s.health_checks())) and False)
    assert h.state == 'done'
    failed = [t for t in h.trials if t['verdict'] == 'failed']
    assert len(failed) >= 1 and 'did not come back' in failed[0]['error']
    # it went on: measurements after the failed trials
    after = [t for t in h.trials if t['index'] > failed[-1]['index']]
    assert after and all(t['measurement'] for t in after)
    assert any('ROCKS_AUTOTUNE_TRIAL_FAILED' in r for r in raised)
    assert s.health_checks() == {}
    assert_restored(h, 0, before)
    best = views.recommended_trial(s.s)
    assert best is not None and best.verdict != 'failed'


def test_on_failure_stop_ends_the_session_after_restoring() -> None:
    h = Harness(on_failure='stop')
    h.cluster.broken = lambda options: 'max_write_buffer_number=128' in options
    before = h.config_of(0)
    h.start(osd=0, trials=6)
    h.run()
    assert h.state == 'stopped'
    assert h.trials[-1]['verdict'] == 'failed'
    assert_restored(h, 0, before)


@pytest.mark.parametrize('killed_in,during', [
    ('warmup', 'failed during warm-up'), ('measure', 'failed during the measurement')],
    ids=['warmup', 'measure'])
def test_canary_killed_during_the_window_is_a_failed_trial(killed_in: str, during: str) -> None:
    # warmup -> recover, measure -> recover
    h = Harness()
    before = h.config_of(0)
    s = h.start(osd=0, trials=2)
    h.run(until=lambda s: phase(s) == killed_in and current(s)['kind'] == 'candidate')
    h.cluster.kill(0)
    s.step()
    assert h.phase == 'recover' and during in h.message
    h.run()
    failed = [t for t in h.trials if t['verdict'] == 'failed']
    assert len(failed) == 1 and during in failed[0]['error']
    assert h.state == 'done'
    assert_restored(h, 0, before)


def test_manual_mode_asks_the_admin_and_waits_for_up_from() -> None:
    h = Harness()
    h.cluster.orchestrator = False
    before = h.config_of(0)
    s = h.start(osd=0, trials=1)
    asked = 0
    while True:
        h.run(until=lambda s: 'ROCKS_AUTOTUNE_MANUAL_RESTART' in s.health_checks())
        if not s.active:
            break
        assert 'osd.0' in s.health_checks()['ROCKS_AUTOTUNE_MANUAL_RESTART']['summary']
        h.clock.advance(30)
        s.step()
        assert h.phase in ('wait_up', 'restore_wait')  # nothing moves without the admin
        h.cluster.admin_restarts(0)
        asked += 1
        h.run(until=lambda s: 'ROCKS_AUTOTUNE_MANUAL_RESTART' not in s.health_checks())
    assert h.state == 'done'
    # 2 baselines, 1 candidate, the confirmation's measurements, the restore
    assert asked == len(h.trials) + 1 >= 4
    assert s.health_checks() == {}
    assert_restored(h, 0, before)


def test_failing_orchestrator_on_baseline_ends_with_nothing_changed() -> None:
    h = Harness()
    h.cluster.restart_fails = True
    before = h.config_of(0)
    h.start(osd=0)
    h.run()
    assert h.state == 'failed' and 'restart failed' in h.error
    assert h.trials == [] and h.status['baseline'] is None  # on the baseline's first restart
    assert h.config_of(0) == before
    assert not h.cluster.has_noout(0)


def test_unhealthy_mid_session_pauses_without_restarts_then_resumes() -> None:
    h = Harness()
    s = h.start(osd=0, trials=2)
    h.run(until=lambda s: len(trials(s)) == 2)
    h.cluster.extra_health = ['MON_DOWN']
    restarts = len(h.cluster.restarts)
    h.run(until=lambda s: 'ROCKS_AUTOTUNE_PAUSED' in s.health_checks())
    for _ in range(5):
        h.clock.advance(s.step())
    assert len(h.cluster.restarts) == restarts
    h.cluster.extra_health = []
    h.run()
    assert h.state == 'done' and s.health_checks() == {}


def test_a_stop_while_paused_on_health_restores_without_waiting_for_it() -> None:
    h = Harness()
    before = h.config_of(0)
    s = h.start(osd=0, trials=3)
    h.run(until=lambda s: len(trials(s)) == 2)
    h.cluster.extra_health = ['OSD_BACKFILLFULL']
    h.run(until=lambda s: 'ROCKS_AUTOTUNE_PAUSED' in s.health_checks())
    n, paused_at = len(h.trials), h.clock.now
    s.request('stop')
    h.run()  # not failed by unhealthy_timeout, and no trial more
    assert h.state == 'stopped' and len(h.trials) == n
    assert h.status['ended'] - paused_at < h.settings.unhealthy_timeout
    assert_restored(h, 0, before)


def test_unhealthy_for_too_long_aborts_and_restores() -> None:
    # the session pauses, then gives up after unhealthy_timeout (60 s): it
    # aborts (restores the canary) and ends failed with the reason
    h = Harness()
    before = h.config_of(0)
    h.start(osd=0, trials=3)
    h.run(until=lambda s: len(trials(s)) == 3)
    h.cluster.extra_health = ['MON_DOWN']
    restarts = len(h.cluster.restarts)
    h.run(until=lambda s: 'ROCKS_AUTOTUNE_PAUSED' in s.health_checks())
    paused_at = h.clock.now
    h.run()
    assert h.state == 'failed' and h.error.startswith('cluster stayed unhealthy: ')
    assert 'MON_DOWN' in h.error
    assert h.status['ended'] - paused_at > h.settings.unhealthy_timeout
    assert len(h.cluster.restarts) == restarts + 1  # the restore's own
    assert_restored(h, 0, before)


def test_resume_after_mgr_failover_mid_trial_counts_no_trial_twice() -> None:
    h = Harness()
    before = h.config_of(0)
    h.start(osd=0, trials=3)
    h.run(until=lambda s: measuring_a_candidate(s) and len(trials(s)) == 3)
    h.session = None
    h.reload()
    assert h.phase == 'apply'  # the window in flight is redone
    h.run()
    assert h.state == 'done'
    assert [t['index'] for t in h.trials] == list(range(7))
    assert_restored(h, 0, before)


def test_a_failover_after_a_window_was_read_but_not_recorded_reads_it_again() -> None:
    # a step that read the window and failed before recording it saves the
    # reading in the trial in flight; a new mgr redoes the window, reading anew
    h = Harness()
    before = h.config_of(0)
    s = h.start(osd=0, trials=2)
    h.run(until=measuring_a_candidate)

    def lost(trial: Dict[str, Any]) -> None:
        raise ValueError('lost')
    s.search.add_trial = lost  # type: ignore[method-assign]
    h.run(until=lambda s: 'step failed' in view(s).message)
    assert kept_reading(h.persisted())
    h.reload()
    assert h.phase == 'apply' and h.current['measurement'] is None
    h.run()
    assert h.state == 'done'
    assert_restored(h, 0, before)


def test_replayed_optimizer_asks_what_the_original_would() -> None:
    h = Harness()
    h.start(osd=0, trials=8)
    h.run(until=lambda s: len(trials(s)) == 7 and phase(s) == 'apply')
    nxt = h.current['candidate']
    state = rewound(h.persisted(), 7)  # injected: the state as it was before the 8th trial
    fresh = Session(store.SessionState.from_json(state), h.cluster, h.save, h.clock)
    assert fresh.search.optimizer.ask().to_dict() == nxt


def test_window_is_extended_then_marked_short_for_big_flushes() -> None:
    h = Harness(min_flushes=1000.0, max_window_factor=2.0)
    h.start(osd=0, trials=1, duration=10.0)
    h.run()
    m = h.trials[0]['measurement']
    assert m['window_short'] is True
    assert 20.0 <= m['seconds'] < 25.0


def test_a_live_window_with_no_client_write_ends_the_session_restored() -> None:
    """The fake cluster serves no client traffic: `live` has nothing to measure."""
    h = Harness()
    before = h.config_of(1)
    h.start(osd=1, workload='live')
    h.run()
    assert h.state == 'failed', h.message
    assert 'served no client write' in h.error and '--workload osd-bench' in h.error
    # said once, in the first window: no baseline, no trial, no retries
    assert h.trials == [] and h.status['baseline'] is None
    assert_restored(h, 1, before)


def test_choose_canary_prefers_fast_class_and_few_pgs() -> None:
    c = FakeCluster(FakeClock())  # ssd OSDs with 30, 31, 32 PGs
    c.info[0].device_class = 'hdd'
    c.info[0].num_pgs = 0  # the fewest PGs of all, but a slower class
    c.info[2].num_pgs = 1  # the fewest among the ssds
    osd, why = choose_canary(c, Params())
    assert osd == 2 and 'device class ssd, fewest PGs (1) among the fastest class' in why


@pytest.mark.parametrize('setup,params,message', [
    (None, dict(osd=9), 'does not exist'),
    (lambda c: setattr(c.info[1], 'up', False), dict(osd=1, force=True), 'not all PGs'),
    (lambda c: setattr(c.info[1], 'in_', False), dict(osd=1), 'is out'),
    (lambda c: setattr(c, 'ok_to_stop_answer', (False, 'would be inactive')), dict(osd=1),
     'ok-to-stop'),
    (lambda c: c.extra_health.append('MON_CLOCK_SKEW'), dict(osd=1), 'HEALTH_WARN'),
    (lambda c: c.add_pool('scratch', size=1, min_size=1), dict(osd=1), 'with no copy'),
    (None, dict(budget=0.9), '--budget'),
    (None, dict(budget=float('nan')), '--budget'),
    (None, dict(trials=0), '--trials'),
    (None, dict(duration=1), '--duration'),
    (None, dict(workload='fio'), '--workload'),
    (None, dict(osd=-1), '--osd'),
], ids=['no-such-osd', 'osd-down-even-forced', 'canary-out', 'ok-to-stop-says-no', 'health-warn',
        'pool-with-no-copy', 'budget-below-1', 'budget-nan', 'no-trials', 'duration-1s',
        'unknown-workload', 'negative-osd'])
def test_start_refused_changes_nothing(setup: Any, params: Dict[str, Any], message: str) -> None:
    h = Harness()
    if setup:
        setup(h.cluster)
    config = dict(h.cluster.config)
    with pytest.raises(StartRefused, match=message):
        h.start(**params)
    assert h.saved == [] and h.cluster.config == config and not any(h.cluster.noout.values())


@pytest.mark.parametrize('osds,layout,message', [
    (3, dict(size=2, min_size=1),
     "pool 'thin' (replicated, size 2, min_size 1): 3 PG(s) on one copy"),
    (3, dict(size=3, min_size=2, k=2),
     "pool 'thin' (erasure-coded k=2 m=1, min_size 2): 4 PG(s) with no shard to spare"),
    (4, dict(size=4, min_size=2, k=2), "pool 'thin' (erasure-coded k=2 m=2, min_size 2): 4 PG(s) "
     "taking writes with no shard to spare (min_size = k)"),
], ids=['replicated-2-1', 'ec-2-1', 'ec-2-2-min_size-k'])
def test_start_refuses_a_canary_whose_restarts_leave_a_pg_one_copy(
        osds: int, layout: Dict[str, int], message: str) -> None:
    # issue 12, item 4: a size-2/min_size-1 pool was accepted, EC pools unknown
    h = Harness()
    h.cluster = FakeCluster(h.clock, n_osds=osds)
    h.cluster.add_pool('thin', **layout)
    config = dict(h.cluster.config)
    with pytest.raises(StartRefused) as e:
        h.start(osd=1)
    assert f'restarting osd.1 leaves {message}' in str(e.value)
    assert '--allow-single-copy' in str(e.value) and 'size 3' in str(e.value)
    assert h.saved == [] and h.cluster.config == config


@pytest.mark.parametrize('layout', [dict(size=3, min_size=1), dict(size=4, min_size=3, k=2)],
                         ids=['replicated-3-1', 'ec-2-2-min_size-3'])
def test_start_takes_a_canary_whose_restarts_leave_two_copies(layout: Dict[str, int]) -> None:
    h = Harness()
    h.cluster = FakeCluster(h.clock, n_osds=4)
    h.cluster.add_pool('thick', **layout)
    s = h.start(osd=1)
    assert s.active and h.status['reason'] == 'osd.1 was asked for'


def test_allow_single_copy_starts_and_says_what_each_restart_risks() -> None:
    h = Harness()
    h.cluster.add_pool('thin', size=2, min_size=1)
    s = h.start(osd=0, allow_single_copy=True)
    assert s.active and s.params.allow_single_copy
    assert "--allow-single-copy: every restart of it leaves pool 'thin'" in h.status['reason']


def test_choosing_the_canary_skips_osds_whose_restarts_leave_one_copy() -> None:
    c = FakeCluster(FakeClock())
    c.add_pool('thin', size=2, min_size=1, osds=[0, 1])  # osd.0 has the fewest PGs
    osd, why = choose_canary(c, Params())
    assert osd == 2
    assert "skipped: restarting osd.0 leaves pool 'thin'" in why
    assert "skipped: restarting osd.1 leaves pool 'thin'" in why
    c.add_pool('thin2', size=2, min_size=1, osds=[2])
    with pytest.raises(StartRefused, match='no OSD can be the canary: .*--allow-single-copy'):
        choose_canary(c, Params())


def warned() -> Harness:
    """A cluster whose health status is others' warning, and nothing else."""
    h = Harness()
    h.cluster.extra_health = ['MON_CLOCK_SKEW']
    return h


@pytest.mark.parametrize('gate,refusal', [
    (lambda c: setattr(c.info[2], 'up', False), 'osd.2 is down; not all PGs are active+clean'),
    (lambda c: c.pg_states.update({'active+clean': 90, 'active+undersized+degraded': 6}),
     'not all PGs are active+clean'),
    (lambda c: c.flags.update({'osd.2': {'noup'}}), 'osd.2 has noup set'),
    (lambda c: setattr(c.info[0], 'in_', False), 'osd.0 is out'),
    (lambda c: setattr(c, 'ok_to_stop_answer', (False, 'would be inactive')),
     'ceph osd ok-to-stop osd.0 says no: would be inactive'),
    (lambda c: c.add_pool('thin', size=2, min_size=1), "leaves pool 'thin'"),
], ids=['another-osd-down', 'pgs-degraded', 'noup', 'canary-out', 'ok-to-stop-says-no',
        'single-copy'])
def test_force_skips_only_the_health_status(gate: Any, refusal: str) -> None:
    # gate.look/blockers: --force skips the health status others' checks make;
    # what threatens data, and the canary's own gates, stand
    h = warned()
    with pytest.raises(StartRefused, match=r'HEALTH_WARN \(MON_CLOCK_SKEW\) and --force was '
                       'not given'):
        h.start(osd=0)
    s = h.start(osd=0, force=True)
    assert s.active and h.status['params']['force']
    h = warned()
    gate(h.cluster)
    with pytest.raises(StartRefused) as e:
        h.start(osd=0, force=True)
    assert refusal in str(e.value)
    assert 'HEALTH_WARN' not in str(e.value) and '--force was not given' not in str(e.value)
    assert h.saved == []


@pytest.mark.parametrize('mutate', [
    lambda st: st.update(version=99),
    lambda st: st.pop('originals'),
    lambda st: st['originals'].update(bluestore_rocksdb_options=7),
    lambda st: st['trials'][0]['candidate'].update(write_buffer_size='x'),
    lambda st: st['trials'].append({'candidate': {}}),
    lambda st: st['params'].update(osd='0'),
    lambda st: st.update(canary=[st['canary']]),
    lambda st: st.update(noout_at_start=None),
], ids=['unknown-version', 'no-originals', 'an-original-not-a-string', 'a-trial-malformed',
        'a-trial-missing-fields', 'osd-not-an-int', 'a-canary-record-malformed',
        'a-noout-at-start-unknown'])
def test_corrupted_state_is_rejected(mutate: Any) -> None:
    h = Harness()
    h.start(osd=0)
    h.run(until=lambda s: len(trials(s)) == 1)
    state = h.persisted()
    mutate(state)
    # as the module loads it: the records made (TypeError: not their fields), then checked
    with pytest.raises((ValueError, TypeError)):
        Session.check_state(store.SessionState.from_json(state))


def test_injected_options_reach_the_candidate_and_a_rejecting_osd_fails_the_trial() -> None:
    h = Harness(inject_options='bogus_option=1')
    h.cluster.broken = lambda options: 'bogus_option=1' in options
    before = h.config_of(0)
    s = h.start(osd=0, trials=1)
    h.run()
    cand = [t for t in h.trials if t['kind'] == 'candidate']
    assert cand[0]['options'].endswith(',bogus_option=1') and cand[0]['verdict'] == 'failed'
    # no feasible candidate: nothing to confirm, keep the current options
    assert h.state == 'done' and views.recommended_trial(s.s) is None
    assert h.status['confirmation']['arms'] == [] and 'keep your current options' in h.message
    assert 'no feasible candidate to confirm' in h.message
    assert_restored(h, 0, before)


def test_a_confirmation_too_short_for_an_interval_says_so() -> None:
    h = Harness()  # one round
    s = h.start(osd=0, trials=2)
    h.run()
    assert h.state == 'done' and views.recommended_trial(s.s) is None
    assert 'keep your current options: 1 of 1 rounds measured, too few for a 90% interval ' \
        '(it takes 5)' in h.message, h.message


def test_start_refuses_a_canary_whose_options_do_not_parse() -> None:
    h = Harness()
    h.cluster.config_set('osd.0', 'bluestore_rocksdb_options', 'compression=kNoCompression,,=x')
    config = dict(h.cluster.config)
    with pytest.raises(StartRefused, match='cannot parse'):
        h.start(osd=0)
    assert h.saved == [] and h.cluster.config == config


@pytest.mark.parametrize('options,message', [
    (PACIFIC_DEFAULT.replace('kNoCompression', 'kZSTD'),
     "unsupported RocksDB compression 'kZSTD'"),
    (PACIFIC_DEFAULT.replace('kNoCompression', 'kLZ4HCCompression'),
     "unsupported RocksDB compression 'kLZ4HCCompression'"),
    (PACIFIC_DEFAULT + ',max_bytes_for_level_multiplier=8.5',
     "max_bytes_for_level_multiplier='8.5' is not a whole number"),
], ids=['zstd', 'lz4hc', 'multiplier-8.5'])
def test_start_refuses_options_the_search_space_cannot_hold(options: str, message: str) -> None:
    # issue 12, item 5: these parsed and started, set the bench limit, then
    # every step failed on the baseline's candidate until the session failed
    h = Harness()
    h.cluster.config_set('osd', 'bluestore_rocksdb_options', options)
    config = dict(h.cluster.config)
    with pytest.raises(StartRefused) as e:
        h.start(osd=0)
    assert str(e.value).startswith('osd.0 runs RocksDB options this module cannot tune from')
    assert message in str(e.value) and '--osd' in str(e.value)
    assert h.saved == [] and h.cluster.config == config


@pytest.mark.parametrize('who', ['osd/class:ssd', 'osd.0'],
                         ids=['class-mask', 'own-mask-restarted-onto-them-starts'])
def test_start_refuses_a_canary_that_does_not_run_what_the_mon_gives_it(who: str) -> None:
    # options at a class mask are not read at an OSD's start (as on the lab's
    # Tentacle), options at osd.N not restarted since: either way the baseline
    # would not be what the canary runs
    h = Harness()
    h.cluster.config_set(who, 'bluestore_rocksdb_options', NEW_TUNING)
    h.cluster.admin_restarts(0)
    h.clock.advance(10)
    config = dict(h.cluster.config)
    if who == 'osd.0':  # read at its start: it runs them, and the session starts
        h.start(osd=0)
        assert h.saved
        return
    with pytest.raises(StartRefused) as e:
        h.start(osd=0)
    assert str(e.value).startswith('osd.0 runs bluestore_rocksdb_options') and \
        'class mask' in str(e.value) and 'set the options at osd.0' in str(e.value)
    assert h.saved == [] and h.cluster.config == config
    h.cluster.config_set('osd.0', 'bluestore_rocksdb_options', NEW_TUNING)
    with pytest.raises(StartRefused, match='has not restarted since they changed'):
        h.start(osd=0)


def test_a_start_refused_on_the_releases_defaults_has_saved_nothing() -> None:
    # issue 12, item 5: the session was saved before its search space was built
    h = Harness()
    h.cluster = FakeCluster(h.clock, defaults=dict(
        DEFAULTS, bluestore_rocksdb_options=PACIFIC_DEFAULT.replace('kNoCompression', 'kZSTD')))
    h.cluster.config_set('osd.0', 'bluestore_rocksdb_options', PACIFIC_DEFAULT)
    with pytest.raises(StartRefused, match="cannot read this release's RocksDB defaults"):
        h.start(osd=0)
    assert h.saved == []


def test_repeated_errors_end_the_session_with_the_canary_back_on_its_originals() -> None:
    # issue 11, finding 4: giving up restored the config but left the canary
    # running the candidate, and raised RESTORE_FAILED (error) for a restored canary
    h = Harness()
    before = h.config_of(0)
    s = h.start(osd=0, trials=2)
    h.run(until=measuring_a_candidate)

    def broken(osd: int) -> Any:
        raise ValueError('garbled answer')
    h.cluster.perf_dump = broken  # type: ignore[method-assign]
    h.run()
    assert h.state == 'failed' and 'garbled answer' in h.error
    assert_restored(h, 0, before)
    # and the saved state a new mgr would reload says so: nothing left to restart
    assert not may_run_candidate(h.persisted())
    assert s.health_checks() == {}


def test_a_trial_is_recorded_once_when_telling_the_optimizer_fails() -> None:
    # issue 11, finding 4: an error after the trial was appended recorded it again
    h = Harness()
    s = h.start(osd=0, trials=3)
    h.run(until=measuring_a_candidate)
    opt = s.search.optimizer
    calls = []

    def tell_once_broken(c: Any, told: float) -> None:
        calls.append(c)
        raise RuntimeError('GP fit failed')
    opt.tell = tell_once_broken  # type: ignore[method-assign]
    h.run()
    assert calls, 'the optimizer was never told'
    indices = [t['index'] for t in h.trials]
    assert indices == list(range(len(indices))) and len(indices) == 7
    assert h.state == 'done'


def test_another_osd_down_while_the_canary_restarts_pauses_not_fails() -> None:
    h = Harness()
    before = h.config_of(0)
    s = h.start(osd=0, trials=1)
    h.run(until=lambda s: phase(s) == 'wait_up' and current(s)['kind'] == 'candidate')
    h.cluster.kill(1)
    for _ in range(40):  # well past restart_timeout (30 s), within unhealthy_timeout (60 s)
        h.clock.advance(min(1.0, s.step()))
    assert 'ROCKS_AUTOTUNE_PAUSED' in s.health_checks()
    assert not [t for t in h.trials if t['verdict'] == 'failed']
    h.cluster.admin_restarts(1)
    h.run()
    assert h.state == 'done' and s.health_checks() == {}
    assert not [t for t in h.trials if t['verdict'] == 'failed']
    assert_restored(h, 0, before)


def test_a_failed_session_clears_noout_and_keeps_the_record() -> None:
    h = Harness(restart_timeout=10.0)
    h.cluster.broken = lambda options: True  # not even the originals start
    before = h.config_of(0)
    s = h.start(osd=0, trials=1)
    h.run()
    assert h.state == 'failed'
    assert h.config_of(0) == before and not h.cluster.has_noout(0)
    detail = s.health_checks()['ROCKS_AUTOTUNE_RESTORE_FAILED']['detail']
    assert any('original osd.0 bluestore_rocksdb_options: (not set)' in d for d in detail)


def test_mgr_lost_after_setting_noout_leaves_noout_that_the_resumed_session_clears() -> None:
    h = Harness()
    before = h.config_of(0)
    h.start(osd=0, trials=1)
    h.run(until=lambda s: phase(s) == 'wait_up' and current(s)['index'] == 1)
    assert h.cluster.has_noout(0)
    # the noout is recorded as the session's before it is set
    state = [h.persisted(i) for i in range(len(h.saved)) if noout_is_ours(h.persisted(i))][0]
    assert saved_phase(state) == 'restart'
    h.saved.append(json.dumps(state))
    s = h.reload()
    h.run()
    assert h.state == 'done' and s.health_checks() == {}
    assert_restored(h, 0, before)


def test_a_missing_osd_is_reported_before_cluster_health() -> None:
    h = Harness()
    h.cluster.extra_health = ['MON_DOWN']
    h.cluster.kill(2)
    with pytest.raises(StartRefused, match='osd.9 does not exist'):
        h.start(osd=9)


def assert_gated(h: Harness) -> None:
    """No restart of a canary that was up while ok-to-stop said no."""
    assert all(ok for _, ok in h.cluster.restart_gate), h.cluster.restart_gate


def test_an_abort_while_another_osd_is_down_waits_for_the_restart_gate() -> None:
    # issue 11, finding 1: the restore restarted the canary without ok-to-stop
    h = Harness()
    before = h.config_of(0)
    s = h.start(osd=0, trials=2)
    h.run(until=measuring_a_candidate)
    h.cluster.kill(1)
    s.request('abort')
    restarts = len(h.cluster.restarts)
    for _ in range(50):  # long past every timeout: never forced
        h.clock.advance(max(s.step(), 60.0))
    assert len(h.cluster.restarts) == restarts
    assert s.active and h.phase == 'restore_wait'
    assert h.config_of(0) == before  # the config is restored at once
    assert h.cluster.has_noout(0)
    assert 'ROCKS_AUTOTUNE_RESTORE_PENDING' in s.health_checks()
    h.cluster.admin_restarts(1)
    h.run()
    assert h.state == 'aborted'
    assert_gated(h)
    assert_restored(h, 0, before)
    assert s.health_checks() == {}


def test_the_recovery_after_a_failed_trial_waits_for_the_restart_gate() -> None:
    h = Harness()
    before = h.config_of(0)
    s = h.start(osd=0, trials=2)
    h.run(until=measuring_a_candidate)
    # the window fails (a dead bench), and another OSD is down: the canary is
    # up, so restarting it would take a second copy of the shared PGs
    h.cluster.ok_to_stop_answer = (False, 'PGs would become inactive')
    h.cluster.bench_fails = 'bench timed out'
    for _ in range(8):  # within unhealthy_timeout
        h.clock.advance(min(s.step(), 5.0))
    assert h.current['kind'] == 'recovery'
    assert 'ROCKS_AUTOTUNE_PAUSED' in s.health_checks()
    assert_gated(h)
    h.cluster.ok_to_stop_answer = None
    h.cluster.bench_fails = ''
    h.run()
    assert_gated(h)
    assert h.state == 'done'
    assert_restored(h, 0, before)


def test_the_state_saved_before_a_candidate_restart_says_the_canary_may_run_it() -> None:
    # issue 11, finding 5: a mgr lost right after issuing the restart left a
    # state saying the canary runs its originals; an abort then ended quietly
    h = Harness()
    before = h.config_of(0)
    at_restart: List[Dict[str, Any]] = []
    h.cluster.before_restart = lambda osd: at_restart.append(h.persisted())
    h.start(osd=0, trials=1)
    h.run(until=lambda s: phase(s) == 'wait_up' and current(s)['kind'] == 'candidate')
    state = at_restart[-1]
    assert measuring(state) == 'candidate' and may_run_candidate(state)
    h.saved.append(json.dumps(state))  # the mgr is lost: this is what it left
    s = h.reload()
    s.request('abort')
    h.run()
    assert h.state == 'aborted'
    assert_restored(h, 0, before)


def test_an_admins_noout_set_mid_session_survives_the_session() -> None:
    # issue 11, finding 6: the session cleared a noout it had not set
    h = Harness()
    h.start(osd=0, trials=2)
    h.run(until=measuring_a_candidate)
    h.cluster.set_noout(0, True)  # the admin's
    h.run()
    assert h.state == 'done'
    assert h.cluster.has_noout(0)


def test_a_flap_of_the_canary_is_not_taken_for_its_restart() -> None:
    # issue 11, finding 7: up_from moving without a restart was taken for the
    # canary running the candidate, and the old options measured in its name
    h = Harness()
    h.cluster.orchestrator = False
    s = h.start(osd=0, trials=1)
    for _ in range(2):  # the baseline runs
        h.run(until=lambda s: 'ROCKS_AUTOTUNE_MANUAL_RESTART' in s.health_checks())
        h.cluster.admin_restarts(0)
        h.run(until=lambda s: 'ROCKS_AUTOTUNE_MANUAL_RESTART' not in s.health_checks())
    h.run(until=lambda s: 'ROCKS_AUTOTUNE_MANUAL_RESTART' in s.health_checks())
    assert h.current['kind'] == 'candidate'
    old = h.cluster.running[0]
    h.cluster.flap(0)
    for _ in range(10):
        h.clock.advance(s.step())
    assert h.phase == 'wait_up' and h.cluster.running[0] == old
    h.cluster.admin_restarts(0)
    h.run(until=lambda s: phase(s) == 'measure')
    assert h.cluster.running[0] == h.current['options'] != old


def test_the_phase_table_is_whole_and_checked_at_every_move() -> None:
    assert set(MOVES) == set(Phase) and MOVES[Phase.END] == ()
    trial_phases = set(Phase) - {Phase.RESTORE, Phase.RESTORE_WAIT, Phase.END}
    for p in trial_phases:
        assert Phase.RESTORE in MOVES[p], p  # an abort may come in any of them
    # the end, only where putting the canary back is under way: a failed
    # trial's recovery, or the restore
    assert {p for p in Phase if Phase.END in MOVES[p]} == {
        Phase.RECOVER_RESTART, Phase.RECOVER_WAIT, Phase.RESTORE, Phase.RESTORE_WAIT}
    seen, todo = {Phase.PREPARE}, [Phase.PREPARE]
    while todo:
        for q in MOVES[todo.pop()]:
            if q not in seen:
                seen.add(q)
                todo.append(q)
    assert seen == set(Phase)
    h = Harness()
    s = h.start(osd=0, trials=1)
    h.run()
    with pytest.raises(AssertionError, match='no move from end to apply'):
        s._enter(Phase.APPLY)


def test_a_failed_save_before_noout_still_sets_noout_for_the_restart() -> None:
    h = Harness()
    failed: List[bool] = []

    def save(state: Dict[str, Any]) -> None:
        if not failed and noout_is_ours(state.to_json()):
            failed.append(True)
            raise StoreError('config-key set timed out')
        h.saved.append(json.dumps(state.to_json()))
    h.save = save  # type: ignore[method-assign]
    h.start(osd=0, trials=1)
    noout: List[bool] = []
    h.cluster.before_restart = lambda osd: noout.append(h.cluster.has_noout(osd))
    h.run()
    assert failed and noout and all(noout)
    assert h.state == 'done' and not h.cluster.has_noout(0)


def test_inactive_pgs_hold_the_restore_restart_back() -> None:
    h = Harness()
    before = h.config_of(0)
    s = h.start(osd=0, trials=1)
    h.run(until=measuring_a_candidate)
    h.cluster.inactive = 4
    s.request('abort')
    restarts = len(h.cluster.restarts)
    for _ in range(20):
        h.clock.advance(max(s.step(), 60.0))
    assert len(h.cluster.restarts) == restarts
    detail = s.health_checks()['ROCKS_AUTOTUNE_RESTORE_PENDING']['detail']
    assert any('4 PG(s) are inactive' in d for d in detail)
    h.cluster.inactive = 0
    h.run()
    assert h.state == 'aborted'
    assert_restored(h, 0, before)


def test_a_bench_window_whose_time_passed_before_its_first_chunk_still_runs_the_bench() -> None:
    # seen on a loaded lab with warmup 0: the first measure step came after the
    # window's duration, no bench ran, and the trial had no kv_sync latency
    from rocks_autotune.canary_record import CanaryRecord
    from rocks_autotune.session_settings import Settings
    from rocks_autotune.window import Window
    from rocks_autotune.workload import BenchWorkload
    from rocks_autotune.space import SearchSpace
    from rocks_autotune.rocksdb_options import parse_options
    clock = FakeClock()
    cluster = FakeCluster(clock)
    state, load = CanaryRecord({}, False, None), BenchWorkload(cluster, 0, chunk_seconds=1)
    window = Window(cluster, 0, lambda: load, Settings(
        warmup=0, min_flushes=0, max_window_factor=1, bench_chunk_seconds=1), 2, state)
    c = SearchSpace.candidate_from_options(parse_options(cluster.defaults[
        'bluestore_rocksdb_options']))
    window.begin(clock())
    assert window.warmup(clock(), clock())[0]
    clock.advance(5)  # past the window's 2 s before the first measure step
    m = None
    for _ in range(10):
        m, delay = window.measure(clock(), c)
        if m is not None:
            break
        clock.advance(delay)
    assert m is not None and cluster.bench_calls >= 1
    assert m.kv_sync_lat_ms is not None and m.kv_sync_lat_ms > 0


# ------------------------------------------------ issue 12: real clusters are never idle

def run_watching(h: Harness, until: Any = None) -> List[bool]:
    """Run to the end (or `until`); whether the session was paused, step by step."""
    paused: List[bool] = []

    def watch(s: Session) -> bool:
        paused.append('ROCKS_AUTOTUNE_PAUSED' in s.health_checks())
        return until is not None and bool(until(s))
    h.run(until=watch)
    return paused


def measured(s: Session) -> List[Dict[str, Any]]:
    return [t for t in trials(s) if t['verdict'] in ('feasible', 'infeasible')]


def test_a_scrubbing_cluster_is_clean_at_start_and_after_every_restart() -> None:
    # issue 12, item 1: scrubbing counted as unclean, so start refused and
    # every restart's wait for clean PGs timed out into an abort
    h = Harness()
    h.cluster.pg_states = {'active+clean': 80, 'active+clean+scrubbing': 8,
                           'active+clean+scrubbing+deep': 4, 'active+clean+snaptrim': 2,
                           'active+clean+snaptrim_wait': 2}
    before = h.config_of(0)
    s = h.start(osd=0, trials=2)
    assert not any(run_watching(h))
    assert h.state == 'done' and len(measured(s)) == 2
    assert_restored(h, 0, before)


def test_degraded_pgs_pause_even_a_forced_session() -> None:
    h = Harness()
    s = h.start(osd=0, trials=2, force=True)
    h.run(until=lambda s: len(trials(s)) == 2)
    h.cluster.pg_states = {'active+clean': 90, 'active+undersized+degraded': 6}
    h.run(until=lambda s: 'ROCKS_AUTOTUNE_PAUSED' in s.health_checks())
    assert s.active and 'not all PGs are active+clean' in h.message
    h.cluster.pg_states = {'active+clean': 96}
    h.run()
    assert h.state == 'done' and len(measured(s)) == 2


STANDING = ['AUTH_INSECURE_GLOBAL_ID_RECLAIM_ALLOWED', 'POOL_NO_REDUNDANCY']


def test_a_forced_session_runs_under_standing_warnings_and_shows_them() -> None:
    # issue 12, item 2: --force was honoured at start only; the first trial
    # then paused on the same warnings and the session ended failed
    h = Harness()
    h.cluster.extra_health = list(STANDING)
    before = h.config_of(0)
    s = h.start(osd=0, trials=2, force=True)
    assert not any(run_watching(h))
    assert h.state == 'done' and len(measured(s)) == 2
    assert h.status['other_checks'] == STANDING
    assert_restored(h, 0, before)


def test_without_force_a_warning_mid_session_pauses_and_is_shown() -> None:
    h = Harness()
    h.start(osd=0, trials=1)
    h.run(until=lambda s: len(trials(s)) == 2)
    assert h.status['other_checks'] == []
    h.cluster.extra_health = ['POOL_NO_REDUNDANCY']
    h.run(until=lambda s: 'ROCKS_AUTOTUNE_PAUSED' in s.health_checks())
    assert 'POOL_NO_REDUNDANCY' in h.message
    assert h.status['other_checks'] == ['POOL_NO_REDUNDANCY']
    h.cluster.muted.add('POOL_NO_REDUNDANCY')  # `ceph health mute`: never blocks
    h.run()
    assert h.state == 'done' and h.status['other_checks'] == []


def test_an_admins_noout_on_the_canary_blocks_neither_start_nor_trials() -> None:
    h = Harness()
    h.cluster.set_noout(0, True)  # the admin's
    s = h.start(osd=0, trials=1)
    assert not any(run_watching(h))
    assert h.state == 'done' and len(measured(s)) == 1
    assert h.cluster.has_noout(0)  # and it stays


@pytest.mark.parametrize('flag', [
    lambda c: c.flags.update({'osd.2': {'noup'}}),
    lambda c: c.flags.update({'osd.0': {'nodown'}}),
    lambda c: c.flags.update({'crush node host-a': {'noout'}}),
    lambda c: c.flags.update({'device class ssd': {'noin'}}),
    lambda c: c.cluster_flags.add('noout'),
    lambda c: c.cluster_flags.add('norebalance'),
], ids=['noup-other-osd', 'nodown-canary', 'noout-host', 'noin-class', 'noout-cluster',
        'norebalance-cluster'])
def test_only_the_canarys_own_noout_is_excused(flag: Any) -> None:
    # issue 12, item 2: a noout on the canary excused every flag OSD_FLAGS reports
    h = Harness()
    s = h.start(osd=0, trials=2)
    h.run(until=lambda s: len(trials(s)) == 2)
    h.cluster.set_noout(0, True)  # the admin's, alone: excused at the next restart
    assert not any(run_watching(h, until=lambda s: len(trials(s)) == 3))
    assert s.active and len(measured(s)) == 1  # the candidate after it
    flag(h.cluster)  # beside it: not excused
    h.run(until=lambda s: 'ROCKS_AUTOTUNE_PAUSED' in s.health_checks())
    assert s.active and 'FLAGS' in h.message
    assert h.status['other_checks'] in (['OSD_FLAGS'], ['OSDMAP_FLAGS'],
                                        ['OSDMAP_FLAGS', 'OSD_FLAGS'])


def test_a_candidate_that_crashes_the_canary_does_not_stall_the_session() -> None:
    # issue 12, item 3: the crash a failed candidate left (RECENT_CRASH, two
    # weeks) paused every later trial; ceph-crash posts it minutes later
    h = Harness()
    h.cluster.broken = lambda options: 'max_write_buffer_number=128' in options
    h.cluster.crash_when_broken = True
    h.cluster.crash_post_delay = 45.0
    before = h.config_of(0)
    s = h.start(osd=0, trials=5)  # New Tuning and its LZ4 variant: 128 memtables
    assert not any(run_watching(h))
    assert h.state == 'done' and h.error == ''
    failed = [t for t in h.trials if t['verdict'] == 'failed']
    crashes = h.cluster.recent_crashes()
    assert failed and len(crashes) == len(failed)
    assert {c.entity for c in crashes} == {'osd.0'}
    assert failed[-1]['index'] < h.trials[-1]['index']  # trials ran after them
    assert len(measured(s)) == 5 - len(failed)
    # each failed trial names the crash it caused, though posted later
    assert [t['crashes'] for t in failed] == [[c.id] for c in crashes]
    assert h.status['crashes'] == [c.id for c in crashes]
    assert h.status['other_checks'] == []
    assert f'ceph crash archive {crashes[0].id}' in status_text(s)
    assert crashes[0].id in report.history_table(s.s.trials)
    assert_restored(h, 0, before)


def test_the_last_trials_crash_is_named_at_the_end() -> None:
    # seen on the lab (fault case 15): every candidate crashed the canary, and
    # the last one's crash, reported before the session ended, went unnamed:
    # crashes were named only at the health look, and none follows the last trial
    h = Harness(inject_options='crash_me=1')  # as the lab test: every candidate
    h.cluster.broken = lambda options: 'crash_me=1' in options
    h.cluster.crash_when_broken = True
    h.start(osd=0, trials=2)
    h.run()
    assert h.state == 'done'
    failed = [t for t in h.trials if t['verdict'] == 'failed']
    crashes = h.cluster.recent_crashes()
    assert len(failed) == 2 and len(crashes) == 2
    assert [t['crashes'] for t in failed] == [[c.id] for c in crashes]
    assert h.status['crashes'] == [c.id for c in crashes]


@pytest.mark.parametrize('who', ['osd.2', 'osd.0'], ids=['another-osd', 'the-canary'])
def test_a_crash_outside_the_sessions_failed_trials_blocks_without_force(who: str) -> None:
    # another OSD's crash, or the canary's with no failed trial to account for it
    h = Harness()
    s = h.start(osd=0, trials=1)
    h.run(until=lambda s: len(trials(s)) == 2)
    c = h.cluster.crash(who)
    h.run(until=lambda s: 'ROCKS_AUTOTUNE_PAUSED' in s.health_checks())
    assert s.active and 'RECENT_CRASH' in h.message
    assert h.status['other_checks'] == ['RECENT_CRASH'] and h.status['crashes'] == []
    h.cluster.archive(c.id)
    h.run()
    assert h.state == 'done'


def test_the_canarys_own_crash_is_named_beside_a_foreign_one() -> None:
    h = Harness()
    h.cluster.broken = lambda options: 'max_write_buffer_number=128' in options
    h.cluster.crash_when_broken = True
    h.start(osd=0, trials=5)
    h.run(until=lambda s: any(t['verdict'] == 'failed' for t in trials(s))
          and phase(s) == 'measure')
    own = [c.id for c in h.cluster.recent_crashes()]
    assert own and h.status['crashes'] == own and h.status['other_checks'] == []
    other = h.cluster.crash('osd.1')
    h.run(until=lambda s: 'ROCKS_AUTOTUNE_PAUSED' in s.health_checks())
    assert h.status['other_checks'] == ['RECENT_CRASH']
    assert h.status['crashes'] == own  # still named, though not excused
    h.cluster.archive(other.id)
    h.run()
    assert h.state == 'done' and h.status['crashes'] == own


def test_a_forced_session_goes_on_despite_a_crash_from_before_it() -> None:
    h = Harness()
    h.cluster.crash('osd.0', at=h.clock.now - 3600)
    with pytest.raises(StartRefused, match='RECENT_CRASH'):
        h.start(osd=0, trials=1)
    h.start(osd=0, trials=1, force=True)
    assert not any(run_watching(h))
    assert h.state == 'done' and h.status['other_checks'] == ['RECENT_CRASH']
    assert h.status['crashes'] == []


CHANGED = 'ROCKS_AUTOTUNE_CONFIG_CHANGED'
AN_ANNEX = 'write_buffer_size=33554432'


def test_an_annex_added_at_class_level_pauses_the_session_before_its_next_restart() -> None:
    # issue 12, item 6: a colleague's annex at osd/class:ssd overrode every
    # later candidate's keys
    h = Harness()
    before = h.config_of(0)
    s = h.start(osd=0, trials=3)
    h.run(until=measuring_a_candidate)
    h.cluster.config_set('osd/class:ssd', ANNEX, AN_ANNEX)
    restarts = len(h.cluster.restarts)
    h.run(until=lambda s: CHANGED in s.health_checks())
    for _ in range(5):
        h.clock.advance(min(s.step(), 5.0))
    assert s.active and len(h.cluster.restarts) == restarts
    detail = s.health_checks()[CHANGED]['detail']
    assert f"osd/class:ssd {ANNEX}: (not set) -> '{AN_ANNEX}'" in detail
    assert any('ceph rocks-autotune abort' in d for d in detail)
    s.request('abort')
    h.run()
    assert h.state == 'aborted' and s.health_checks() == {}
    assert_restored(h, 0, before)
    assert h.cluster.config_get_own('osd/class:ssd', ANNEX) == AN_ANNEX
    assert best_summary(s) is None  # aborted before its confirmation: no answer


def test_best_warns_that_a_change_made_during_the_last_window_would_be_undone() -> None:
    # issue 12, item 6: the restore leaves a colleague's annex, and `best`
    # would undo it
    h = Harness(confirm_rounds=5)
    s = h.start(osd=0, trials=3)
    # the last window: the second of the steady check's pair (after the rounds)
    h.run(until=lambda s: phase(s) == 'measure' and current(s)['kind'] == 'confirm'
          and bool(current(s).get('steady'))
          and any(t.get('steady') for t in trials(s) if t['kind'] == 'confirm'))
    h.cluster.config_set('osd/class:ssd', ANNEX, AN_ANNEX)
    h.run()
    assert h.state == 'done' and views.recommended_trial(s.s) is not None
    best = best_summary(s)
    assert best is not None and not best['keeps_current']
    assert best['config_changed'] == [f"osd/class:ssd {ANNEX}: (not set) -> '{AN_ANNEX}'"]
    assert best['commands'][0].startswith('# measured against the options in effect')
    assert 'measured against the options in effect when the session started' in \
        best_text(s)


def test_an_edit_at_the_canarys_own_mask_pauses_and_the_restore_leaves_it() -> None:
    # issue 12, item 6: the restore overwrote a colleague's edit at osd.N
    h = Harness()
    s = h.start(osd=0, trials=3)
    h.run(until=measuring_a_candidate)
    h.cluster.config_set('osd.0', OPTIONS, NEW_TUNING)
    h.run(until=lambda s: CHANGED in s.health_checks())
    assert f"osd.0 {OPTIONS}: now '{NEW_TUNING}', not a value this session set" in \
        s.health_checks()[CHANGED]['detail']
    s.request('abort')
    h.run()
    assert h.state == 'aborted' and s.health_checks() == {}
    assert h.cluster.config_get_own('osd.0', OPTIONS) == NEW_TUNING
    assert h.config_of(0)['osd_bench_small_size_max_iops'] is None  # the session's own, taken back
    assert h.cluster.running[0] == NEW_TUNING  # it ran a candidate: restarted onto the edit
    assert f'left as they set them: osd.0 {OPTIONS}' in h.message


def test_a_change_reverted_during_the_pause_lets_the_session_go_on() -> None:
    h = Harness()
    s = h.start(osd=0, trials=2)
    h.run(until=lambda s: len(trials(s)) == 2)  # the baseline is done
    h.cluster.config_set('osd', OPTIONS, NEW_TUNING)
    h.run(until=lambda s: CHANGED in s.health_checks())
    h.cluster.config_rm('osd', OPTIONS)
    h.run()
    assert h.state == 'done' and s.health_checks() == {}
    assert (best_summary(s) or {'config_changed': 'no answer'})['config_changed'] == []


def test_a_change_that_stays_ends_the_session_after_unhealthy_timeout() -> None:
    h = Harness()
    before = h.config_of(0)
    h.start(osd=0, trials=2)
    h.run(until=measuring_a_candidate)
    h.cluster.config_set('osd/host:node0', 'bluestore_rocksdb_cfs', 'm(3) p(3) O(3) L P')
    restarts = len(h.cluster.restarts)
    h.run(until=lambda s: CHANGED in s.health_checks())
    paused_at = h.clock.now
    h.run()
    assert h.state == 'failed'
    assert h.status['ended'] - paused_at > h.settings.unhealthy_timeout
    assert "config changed by someone else: osd/host:node0 bluestore_rocksdb_cfs: (not set) " \
        "-> 'm(3) p(3) O(3) L P'" in h.error
    assert len(h.cluster.restarts) == restarts + 1  # the restore's own
    assert_restored(h, 0, before)


def test_changes_that_do_not_reach_the_canary_do_not_pause_it() -> None:
    h = Harness()
    s = h.start(osd=0, trials=2)
    h.run(until=measuring_a_candidate)
    for who in ('osd/class:hdd', 'osd/host:node1', 'osd.1', 'mgr'):
        h.cluster.config_set(who, ANNEX, AN_ANNEX)
    # the session's own value at osd.0 hides this one until the restore
    h.cluster.config_set('osd', 'osd_bench_small_size_max_iops', '500')
    raised: List[Set[str]] = []
    h.run(until=lambda s: raised.append(set(s.health_checks())) and False)
    assert raised and not any({CHANGED, 'ROCKS_AUTOTUNE_PAUSED'} & r for r in raised)
    assert h.state == 'done' and s.health_checks() == {}
    assert (best_summary(s) or {'config_changed': 'no answer'})['config_changed'] == []


def test_the_recovery_after_a_failed_trial_leaves_an_edit_at_the_canarys_mask() -> None:
    h = Harness()
    h.cluster.broken = lambda options: 'max_write_buffer_number=128' in options
    s = h.start(osd=0, trials=4)  # the 3rd warm start is New Tuning: 128 memtables
    h.run(until=lambda s: phase(s) == 'wait_up' and 'max_write_buffer_number=128'
          in current(s)['options'])
    h.cluster.config_set('osd.0', OPTIONS, PACIFIC_DEFAULT)  # a colleague's, mid-restart
    h.run(until=lambda s: CHANGED in s.health_checks())
    assert [t['verdict'] for t in h.trials][-1] == 'failed'
    assert h.cluster.running[0] == PACIFIC_DEFAULT  # recovered onto the edit, not over it
    s.request('abort')
    h.run()
    assert h.cluster.config_get_own('osd.0', OPTIONS) == PACIFIC_DEFAULT
