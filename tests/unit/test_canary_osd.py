"""One canary's part of a session (canary_osd.py), alone on the fake
cluster: what is set at osd.N for a trial, its gated restart, the watch for
someone else's change, the restore; and gate.look's crashes of the canary."""
from typing import Any, List, Tuple

from fake_cluster import FakeClock, FakeCluster
from rocks_autotune import session_start
from rocks_autotune.canary import OPTIONS, SAVED, STATS_OPTIONS, Canary
from rocks_autotune.canary_osd import CanaryOsd, SessionLoad, runs_candidate
from rocks_autotune.gate import look
from rocks_autotune.session_settings import Params
from rocks_autotune.restart import Outcome
from rocks_autotune.session import Settings
from rocks_autotune.trial import Trial
from rocks_autotune.workload import BENCH_LIMIT_OPTION, BENCH_LIMIT_VALUE, CLIENT, OSD_BENCH

CANDIDATE = 'max_write_buffer_number=4,write_buffer_size=67108864'


def canary(**params: Any) -> Tuple[CanaryOsd, FakeCluster, FakeClock, List[int]]:
    """A CanaryOsd on a new session's record; `saves` counts its saves."""
    clock = FakeClock()
    cluster = FakeCluster(clock)
    p = Params(**dict(dict(osd=1, trials=2, duration=5.0, workload=OSD_BENCH), **params))
    settings = Settings(restart_timeout=30.0)
    state = session_start.first_state(cluster, p, settings, clock())
    saves: List[int] = []
    c = CanaryOsd(cluster, 1, state.canary, SessionLoad(state.client, state.id, state.seed),
                  p, settings, lambda: saves.append(1), clock)
    return c, cluster, clock, saves


def trial(kind: str, options: str, arm: str = '') -> Trial:
    return Trial(index=0, kind=kind, candidate={}, options=options, arm=arm, osd=1)


def up(c: CanaryOsd, clock: FakeClock) -> Outcome:
    """Step the restart in flight until it is no longer waiting."""
    for _ in range(100):
        r = c.restarter.step(clock())
        if r.outcome != Outcome.WAITING:
            return r.outcome
        clock.advance(2.0)
    raise AssertionError('the restart never came to an outcome')


def test_a_client_load_is_built_on_its_first_use_not_when_a_session_loads() -> None:
    c, _, _, _ = canary(workload=CLIENT)
    # its window and preconditioning drive it; loading hashes no names, opens no pool
    assert c.window.workload is not None and c.precondition is not None
    assert 'client' not in vars(c)  # CanaryOsd.client, a cached property


def test_a_candidate_is_set_at_its_own_mask_and_restarted_onto_through_the_gate() -> None:
    c, cluster, clock, _ = canary()
    cur = trial('candidate', CANDIDATE)
    c.set_up(cur, clock())
    assert cluster.config_get_own('osd.1', OPTIONS) == CANDIDATE
    assert c.rec.last_applied == CANDIDATE and c.rec.restart.purpose == 'candidate'
    assert up(c, clock) == Outcome.UP
    assert cluster.restarts == [(1, CANDIDATE)] and [o for o, _ in cluster.restart_gate] == [1]
    # the process may run the candidate from here on; our noout is gone with the restart
    assert c.rec.running_dirty and not c.rec.noout_ours and not cluster.has_noout(1)


def test_a_baseline_runs_the_originals_with_the_bench_limit_and_rocksdbs_figures_on() -> None:
    c, cluster, clock, _ = canary()
    original = cluster.config_get_own('osd.1', OPTIONS)
    c.prepare()
    assert cluster.config_get_own('osd.1', BENCH_LIMIT_OPTION) == str(BENCH_LIMIT_VALUE)
    assert cluster.config_get_own('osd.1', 'rocksdb_perf') == 'true'
    cur = trial('confirm', CANDIDATE, arm='baseline')
    assert not runs_candidate(cur) and runs_candidate(trial('confirm', CANDIDATE, arm='a'))
    removed: List[str] = []
    rm = cluster.config_rm
    cluster.config_rm = lambda who, name: removed.append(name) or rm(who, name)  # type: ignore
    c.set_up(cur, clock())
    assert cluster.config_get_own('osd.1', OPTIONS) == original
    # RocksDB's figures stay on: never off for a moment between two windows
    # (a look then saw rocksdb_perf gone and the other two still set)
    assert not set(removed) & set(STATS_OPTIONS), removed
    assert c.rec.restart.purpose == 'baseline' and c.rec.last_applied is None
    assert up(c, clock) == Outcome.UP and not c.rec.running_dirty


def test_someone_elses_change_is_seen_and_the_restore_leaves_it_in_place() -> None:
    c, cluster, clock, _ = canary()
    c.rec.config_seen = c.config.entries()
    cur = trial('candidate', CANDIDATE)
    c.set_up(cur, clock())
    assert c.config_changes(cur) == []  # its own candidate is not someone else's
    cluster.config_set('osd.1', 'rocksdb_perf', 'false')
    changes = c.config_changes(cur)
    assert len(changes) == 1 and 'osd.1 rocksdb_perf' in changes[0]
    assert not c.restore(clock())  # never restarted on the candidate: no restart to wait for
    assert cluster.config_get_own('osd.1', 'rocksdb_perf') == 'false'
    assert Canary(cluster, 1).is_restored(c.rec.originals, {'rocksdb_perf'})


def test_the_restore_of_a_canary_that_ran_a_candidate_waits_for_its_gated_restart() -> None:
    c, cluster, clock, _ = canary()
    c.set_up(trial('candidate', CANDIDATE), clock())
    assert up(c, clock) == Outcome.UP
    assert c.restore(clock())
    assert cluster.has_noout(1) and c.rec.noout_ours and c.rec.restart.purpose == 'restore'
    assert up(c, clock) == Outcome.UP
    assert not c.rec.running_dirty and not cluster.has_noout(1)
    assert cluster.restarts[-1] == (1, cluster.config_get('osd.1', OPTIONS)) != (1, CANDIDATE)
    assert {n: cluster.config_get_own('osd.1', n) for n in SAVED} == c.rec.originals


def test_where_restoring_cannot_go_on_the_lines_say_what_is_left() -> None:
    c, cluster, clock, _ = canary()
    c.set_up(trial('candidate', CANDIDATE), clock())
    assert up(c, clock) == Outcome.UP
    lines = c.restore_where_failed()
    assert lines[0] == 'osd.1 may still run a candidate: restart it to load the restored options'
    assert len(lines) == 1 + len(SAVED)
    assert not any('NOT restored' in line for line in lines)
    assert Canary(cluster, 1).is_restored(c.rec.originals)


def test_a_stale_noout_of_ours_is_cleared_and_an_admins_is_left() -> None:
    c, cluster, clock, _ = canary()
    cluster.set_noout(1, True)
    assert not c.clear_stale_noout() and cluster.has_noout(1)  # the admin's
    c.rec.noout_ours = True
    assert c.clear_stale_noout() and not cluster.has_noout(1) and not c.rec.noout_ours


def test_the_look_returns_its_own_crashes_and_does_not_block_on_them() -> None:
    c, cluster, clock, _ = canary()
    mine = cluster.crash('osd.1', delay=0)
    clock.advance(1)
    health = look(cluster, 1, lambda crash: crash.entity == 'osd.1')
    assert health.own_crashes == [mine] and health.others == []
    assert health.blockers(force=False) == []
    cluster.crash('osd.2', delay=0)
    clock.advance(1)
    # another OSD's crash is the cluster's, not the trial's
    health = look(cluster, 1, lambda crash: crash.entity == 'osd.1')
    assert health.own_crashes == [mine] and health.others == ['RECENT_CRASH']
    assert health.blockers(force=False) != []
