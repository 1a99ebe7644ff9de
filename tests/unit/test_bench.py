"""The pure parts of qa/bench: interleaving, medians and ratios, the table,
and run-bench's check of the session's claim."""
import argparse
import copy
import datetime
import importlib.util
import json
import math
import os
import statistics
import subprocess
import sys
from typing import Any, Dict, List, Optional, Tuple, cast

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..',
                                'qa', 'bench'))

import benchlib  # noqa: E402
from rocks_autotune.rocksdb_options import NEW_TUNING, PACIFIC_DEFAULT  # noqa: E402
from rocks_autotune.workload import OSD_BENCH  # noqa: E402
from space_grid import on_grid  # noqa: E402

# fio 3.41's JSON, trimmed to what parse_fio reads (a line may come before it)
FIO_OUT = """note: both iodepth >= 1 and synchronous I/O engine are selected
{
  "fio version" : "fio-3.41",
  "jobs" : [
    {
      "jobname" : "ratbench",
      "write" : {"io_bytes" : 50565120, "total_ios" : 12345, "runtime" : 10021,
                 "iops" : 1231.9}
    }
  ]
}
"""


def test_interleave_runs_every_configuration_once_per_round_in_order() -> None:
    order = benchlib.interleave(['A', 'B', 'C', 'D'], 3)
    assert [n for _, n in order] == list('ABCD' * 3)
    assert [r for r, _ in order] == [0] * 4 + [1] * 4 + [2] * 4


@pytest.mark.parametrize('names,reps', [(['A', 'A'], 2), (['A'], 0)])
def test_interleave_refuses_repeated_names_and_no_rounds(names: list, reps: int) -> None:
    with pytest.raises(ValueError):
        benchlib.interleave(names, reps)


def test_stat_is_median_and_relative_spread_ignoring_missing_values() -> None:
    s = benchlib.Stat.of([10.0, None, 30.0, 20.0])
    assert (s.median, s.n) == (20.0, 3)
    assert s.spread == pytest.approx(1.0)  # (30 - 10) / 20
    assert benchlib.Stat.of([None]).median is None


def test_even_count_median_is_the_mean_of_the_middle_two() -> None:
    assert benchlib.Stat.of([1.0, 2.0, 3.0, 10.0]).median == 2.5


def test_ratio_guards_missing_and_zero() -> None:
    assert benchlib.ratio(3.0, 2.0) == 1.5
    assert benchlib.ratio(None, 2.0) is None
    assert benchlib.ratio(1.0, 0.0) is None


def test_flush_bytes_from_option_strings() -> None:
    assert benchlib.flush_bytes(PACIFIC_DEFAULT) == 256 << 20
    assert benchlib.flush_bytes(NEW_TUNING) == 16 * (8 << 20)


def _w(config: str, iops: float, wa: float) -> dict:
    return {'config': config, 'iops': iops, 'kv_sync_lat_ms': 1.0, 'db_mib': 100.0,
            'write_amp': wa, 'flushes': 3.0}


def test_table_has_a_row_per_configuration_with_ratios_of_the_medians() -> None:
    ws = [_w('default', 100, 0.30), _w('default', 120, 0.30), _w('default', 110, 0.30),
          _w('new', 150, 0.33), _w('new', 160, 0.33), _w('new', 170, 0.33)]
    summ = benchlib.summarize(ws, ['default', 'new'])
    table = benchlib.render_table(summ, ['default', 'new'], 'default', 'new').splitlines()
    assert len(table) == 4  # header, rule, 2 rows
    assert table[0].count('|') == table[2].count('|') == table[3].count('|')
    default_row = table[2].split(' | ')
    new_row = table[3].split(' | ')
    assert default_row[2] == '110 (18%)'  # median IOPS, spread (120-100)/110
    assert new_row[2] == '160 (12%)'
    # IOPS / default = 160/110; write-amp / default = 0.33/0.30; then / new = 1
    assert new_row[7:10] == ['1.45x', '1.00x', '1.10x']
    assert table[3].endswith('| 1.00x | 1.00x | 1.00x |')


def test_table_shows_a_dash_where_a_metric_is_missing() -> None:
    ws = [dict(_w('default', 100, 0.3), iops=None)]
    summ = benchlib.summarize(ws, ['default'])
    row = benchlib.render_table(summ, ['default'], 'default', 'default').splitlines()[2]
    assert '| – (–) |' in row


def test_parse_fio_takes_its_writes_and_seconds() -> None:
    assert benchlib.parse_fio(FIO_OUT) == {'writes': 12345.0, 'seconds': 10.021}
    with pytest.raises(ValueError):
        benchlib.parse_fio('nothing here')


def test_paired_ratios_pair_by_round_so_drift_cancels() -> None:
    # the machine gets 2x faster in round 1; 'new' is 1.1x default in each round
    ws = [{'rep': r, 'config': c, 'iops': v}
          for r, base in ((0, 100.0), (1, 200.0), (2, 200.0))
          for c, v in (('default', base), ('new', 1.1 * base))]
    r = benchlib.paired_ratios(ws, ['default', 'new'], 'default', 'iops')
    assert r['default'] == 1.0
    assert r['new'] == pytest.approx(1.1)
    # the ratio of the medians agrees here, but a round missing for one side is skipped
    ws.append({'rep': 3, 'config': 'new', 'iops': 999.0})
    assert benchlib.paired_ratios(ws, ['new'], 'default', 'iops')['new'] == pytest.approx(1.1)
    table = benchlib.render_paired(ws, ['default', 'new'], 'default').splitlines()
    assert table[3] == '| new | 1.10x | – | – |'


# ------------------------------------------------------------ the claim check
# run-bench reads the session's answer (`best -f json`, report.best_summary),
# runs its options as `tuned` in the interleaved bench, and checks the claim.

@pytest.fixture(scope='module')
def answered() -> Dict[str, Any]:
    """A finished session's state on the mock (canary osd.1), its
    confirmation recommending, and its `best -f json`."""
    import mgr_mock
    mgr_mock.install()
    from rocks_autotune import report
    m = mgr_mock.make_module()
    assert m.cmd_start(workload=OSD_BENCH, osd=1, trials=2, duration=5).retval == 0
    mgr_mock.drive(m)
    state = m.panel_snapshot.state
    best = report.best_summary(state)
    assert best is not None and best['answer'] == 'recommend'
    return {'state': state, 'best': json.loads(json.dumps(best))}


def keeping(state: Dict[str, Any], verdicts: Dict[str, str]) -> Dict[str, Any]:
    """The `best -f json` of a copy of `state` whose confirmation recommends
    nothing, its arms' verdicts as given (the others: below margin)."""
    from rocks_autotune import report
    state = copy.deepcopy(state)
    result = state.confirm.result
    result.recommended = None
    for a in result.arms:
        a.verdict = verdicts.get(a.arm, 'below margin')
    best = report.best_summary(state)
    assert best is not None
    return json.loads(json.dumps(best))


def test_claim_of_a_recommendation_is_its_arm_confirmed_figures(
        answered: Dict[str, Any]) -> None:
    best = answered['best']
    claim = benchlib.claim_of(best)
    assert claim is not None
    assert claim['answer'] == 'recommend' and claim['arm'] == best['arm']
    assert claim['trial'] == best['trial'] and claim['options'] == best['options']
    assert claim['ratio'] == best['ratios']['objective']
    assert claim['write_amp'] == best['ratios']['write_amp']
    assert claim['ratio']['low'] is not None and claim['ratio']['rounds'] >= 5
    assert (claim['margin'], claim['budget'], claim['objective'], claim['direction']) == \
        (best['margin'], best['budget'], 'iops', 'higher')
    assert claim['rounds_done'] == best['rounds_done']


def test_claim_of_keep_current_runs_the_best_ranked_candidate(answered: Dict[str, Any]
                                                              ) -> None:
    best = keeping(answered['state'], {})
    assert best['keeps_current'] and best['options'] is None
    claim = benchlib.claim_of(best)
    assert claim is not None and claim['answer'] == 'keep current'
    c1 = best['candidates'][0]
    assert c1['arm'] == 'c1'
    assert (claim['arm'], claim['options'], claim['ratio']) == \
        ('c1', c1['options'], c1['objective'])


def test_claim_of_keep_current_skips_a_candidate_that_broke_the_canary(
        answered: Dict[str, Any]) -> None:
    best = keeping(answered['state'], {'c1': 'failed'})
    assert len(best['candidates']) >= 2, 'this needs a session that confirmed two candidates'
    assert benchlib.claim_of(best)['arm'] == 'c2'  # type: ignore[index]
    everyone = {c['arm']: 'failed' for c in best['candidates']}
    claim = benchlib.claim_of(keeping(answered['state'], everyone))
    assert claim is not None and claim['options'] is None and claim['ratio'] is None


def test_claim_of_no_answer_or_an_answer_before_the_confirmation_is_none() -> None:
    assert benchlib.claim_of(None) is None
    # the `best` of sessions before the confirmation: the search's best window
    assert benchlib.claim_of({'trial': 7, 'kind': 'candidate', 'options': 'x=1',
                              'ratios': {'iops': 1.4}}) is None


def claim(answer: str, low: Optional[float], high: Optional[float], median: float = 1.2,
          direction: str = 'higher') -> Dict[str, Any]:
    return {'answer': answer, 'direction': direction, 'margin': 0.03, 'budget': 1.10,
            'ratio': {'median': median, 'low': low, 'high': high, 'rounds': 5},
            'write_amp': {'median': 1.0, 'low': 0.95, 'high': 1.05, 'rounds': 5}}


@pytest.mark.parametrize('bench,held,inside', [
    (1.15, True, True),    # inside the claimed interval
    (1.10, True, True),    # at its low end: still "better by at least low"
    (1.40, True, False),   # better than claimed: held, though outside
    (1.09, False, False),  # below the low end
    (0.95, False, False),  # worse than the default
])
def test_a_recommendation_holds_when_the_bench_reaches_the_claimed_low_end(
        bench: float, held: bool, inside: bool) -> None:
    c = benchlib.check_claim(claim('recommend', 1.10, 1.30), bench, 1.04)
    assert (c['held'], c['inside'], c['write_amp_within']) == (held, inside, True)
    assert c['bench'] == bench and c['bench_write_amp'] == 1.04
    assert c['why'] == f'bench {bench:.2f}x {">=" if held else "<"} 1.10x (the claim\'s low end)'


def test_write_amp_over_the_budget_is_reported_but_does_not_decide() -> None:
    c = benchlib.check_claim(claim('recommend', 1.10, 1.30), 1.2, 1.25)
    assert c['held'] is True and c['write_amp_within'] is False
    assert benchlib.check_claim(claim('recommend', 1.10, 1.30), 1.2, 1.10)['write_amp_within']
    assert benchlib.check_claim(claim('recommend', 1.10, 1.30), 1.2, None)[
        'write_amp_within'] is None


@pytest.mark.parametrize('low,held', [(0.80, True), (1.02, True), (1.03, True),
                                      (1.0301, False), (1.25, False)])
def test_keep_current_holds_unless_the_bench_confirms_a_gain_beyond_the_margin(
        low: float, held: bool) -> None:
    # c1's interval is open (too few rounds): any ratio lies inside it; a
    # median of 1.4 alone contradicts nothing, the bench's interval must
    c = benchlib.check_claim(claim('keep current', None, None, 1.01), 1.4, 1.0, (low, 1.6))
    assert (c['held'], c['inside']) == (held, True)
    assert c['why'] == (f'bench interval\'s low end {low:.2f}x {"<=" if held else ">"} 1.03x '
                        '= (1 + the 3% margin)')


def test_keep_current_is_not_checked_by_a_bench_with_no_interval() -> None:
    c = benchlib.check_claim(claim('keep current', None, None, 1.01), 1.86, 1.0, (None, None))
    assert c['held'] is None and 'no interval of its own' in c['why']
    assert benchlib.tally([c]) == '0 of 0 claims held (1 run with no claim to check)'


def test_an_objective_where_lower_is_better_flips_the_checks() -> None:
    rec = claim('recommend', 0.70, 0.90, 0.8, direction='lower')
    assert benchlib.check_claim(rec, 0.85, None)['held'] is True
    assert benchlib.check_claim(rec, 0.95, None)['held'] is False
    keep = claim('keep current', 0.9, 1.1, 1.0, direction='lower')
    assert benchlib.check_claim(keep, 0.9, None, (0.8, 0.98))['held'] is True
    assert benchlib.check_claim(keep, 0.9, None, (0.8, 0.95))['held'] is False  # < 1 / 1.03


def test_nothing_to_check_is_not_counted_as_held_or_not() -> None:
    assert benchlib.check_claim(None, 1.2, 1.0)['held'] is None
    no_arm = dict(claim('keep current', None, None), ratio=None, write_amp=None)
    assert benchlib.check_claim(no_arm, 1.0, 1.0)['held'] is None
    c = benchlib.check_claim(claim('recommend', 1.1, 1.3), None, 1.0)
    assert c['held'] is None and c['write_amp_within'] is True
    checks = [benchlib.check_claim(claim('recommend', 1.1, 1.3), b, 1.0)
              for b in (1.2, 1.0, 1.15)] + [benchlib.check_claim(None, None, None)]
    assert benchlib.tally(checks) == '2 of 3 claims held (1 run with no claim to check)'
    assert benchlib.tally(checks[:1]) == '1 of 1 claim held'


def bench_windows(ratios: List[float], key: str = 'iops') -> List[Dict[str, Any]]:
    """osd bench windows of default and tuned, tuned at `ratios` of the default
    round by round (the machine's speed drifting), and fio windows that must
    not count."""
    ws = []
    for rep, r in enumerate(ratios):
        base = 1000.0 * (rep + 1)
        ws += [{'rep': rep, 'config': 'default', 'workload': 'osd_bench', key: base},
               {'rep': rep, 'config': 'tuned', 'workload': 'osd_bench', key: base * r},
               {'rep': rep, 'config': 'tuned', 'workload': 'fio_rbd', key: base * 9}]
    return ws


def test_bench_ratio_is_the_paired_median_with_the_sessions_interval() -> None:
    three = benchlib.bench_ratio(bench_windows([1.1, 1.3, 1.2]), 'tuned', 'default', 'iops')
    assert three['median'] == pytest.approx(1.2) and three['rounds'] == 3
    assert (three['low'], three['high']) == (None, None)  # open below 5 rounds
    assert three['at'] == [1, 2, 3]
    # the same as benchlib's paired median for an odd count of rounds
    ws = [w for w in bench_windows([1.1, 1.3, 1.2]) if w['workload'] == 'osd_bench']
    assert benchlib.paired_ratios(ws, ['tuned'], 'default', 'iops')['tuned'] == \
        pytest.approx(three['median'])
    five = benchlib.bench_ratio(bench_windows([1.1, 1.3, 1.2, 1.15, 1.25]), 'tuned',
                                'default', 'iops')
    assert five['rounds'] == 5
    # at 5 rounds the 90% signed-rank interval is the range of the rounds
    assert (five['low'], five['high']) == (pytest.approx(1.1), pytest.approx(1.3))
    # a round whose default window is missing is not paired
    ws = bench_windows([1.1, 1.3, 1.2])[3:]
    assert benchlib.bench_ratio(ws, 'tuned', 'default', 'iops')['rounds'] == 2


def test_the_client_checks_write_amp_pairs_only_steady_windows() -> None:
    ws = []
    for rep, (ratio, short) in enumerate([(1.3, False), (0.5, True), (1.2, False)]):
        ws += [{'rep': rep, 'config': 'default', 'workload': 'fio_rbd', 'write_amp': 2.0,
                'window_short': False},
               {'rep': rep, 'config': 'tuned', 'workload': 'fio_rbd', 'write_amp': 2.0 * ratio,
                'window_short': short}]
    wa = benchlib.bench_ratio(ws, 'tuned', 'default', 'write_amp', 'fio_rbd')
    # the round whose tuned window saw no compaction says nothing about write-amp
    assert wa['rounds'] == 2 and wa['median'] == pytest.approx((1.3 * 1.2) ** 0.5)
    assert benchlib.bench_ratio(ws, 'tuned', 'default', 'write_amp')['rounds'] == 0


def test_lab_dir_and_mon_port_come_from_the_environment(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    def load() -> Any:
        spec = importlib.util.spec_from_file_location('benchlib_env', benchlib.__file__)
        mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        spec.loader.exec_module(mod)  # type: ignore[union-attr]
        return mod
    monkeypatch.delenv('BENCH_LAB_DIR', raising=False)
    monkeypatch.delenv('BENCH_LAB_MON_PORT', raising=False)
    # a lab the shell points the tools at is not the bench's (it tears its own down)
    monkeypatch.setenv('CEPH_LAB_DIR', '/var/tmp/someones-lab')
    mod = load()
    assert (mod.LAB_DIR, mod.LAB_PORT) == ('/var/tmp/rat-bench-lab', 21700)
    monkeypatch.setenv('BENCH_LAB_DIR', '/var/tmp/rat-bench-lab-h')
    monkeypatch.setenv('BENCH_LAB_MON_PORT', '21800')
    mod = load()
    lab = mod.Lab()
    assert (lab.dir, lab.port) == ('/var/tmp/rat-bench-lab-h', 21800)
    assert lab.env['CEPH_LAB_MON_PORT'] == '21800'
    assert lab.env['CEPH_CONF'] == '/var/tmp/rat-bench-lab-h/ceph.conf'


def test_run_bench_seeds_and_the_session_module_options() -> None:
    import argparse
    import run_bench
    assert run_bench.seed_list('1,2,3') == [1, 2, 3]
    for bad in ('1,1', 'a', ''):
        with pytest.raises(argparse.ArgumentTypeError):
            run_bench.seed_list(bad)
    a = argparse.Namespace(warmup=3.0, confirm_candidates=1, confirm_rounds=5, quick=True,
                           steady_limit=30.0, module_option=None)
    assert run_bench.module_options(a, 7) == {'seed': '7', 'warmup': '3',
                                              'steady_window_limit': '30',
                                              'client_space': str(64 << 20),
                                              'precondition_limit': '30',
                                              'confirm_candidates': '1',
                                              'confirm_rounds': '5'}
    a = argparse.Namespace(warmup=10.0, confirm_candidates=None, confirm_rounds=None,
                           quick=False, steady_limit=3600.0,
                           module_option=['precondition_limit=3600', 'warmup=20'])
    # --module-option adds options, and has the last word
    assert run_bench.module_options(a, 0) == {'seed': '0', 'warmup': '20',
                                              'steady_window_limit': '3600',
                                              'precondition_limit': '3600'}


def test_run_bench_resume_keeps_the_finished_seeds_of_the_same_command(tmp_path: Any) -> None:
    import argparse
    import run_bench
    a = argparse.Namespace(reps=1, seeds=[1, 2, 3])

    def windows(n: int) -> List[Dict[str, Any]]:
        cells = [(c, wl) for c in run_bench.NAMES for wl in run_bench.MEASURED]
        return [{'config': c, 'workload': wl, 'rep': 0, 'iops': 100.0, 'write_amp': 0.3,
                 'kv_sync_lat_ms': 1.0} for c, wl in cells[:n]]
    whole = len(run_bench.NAMES) * len(run_bench.MEASURED)
    configs = {n: n for n in run_bench.NAMES}
    runs = [{'seed': 1, 'session': {'best': None}, 'configs': configs, 'windows': windows(whole)},
            {'seed': 2, 'session': {'best': None}, 'configs': configs,
             'windows': windows(whole - 1)},
            {'seed': 4, 'session': {'best': None}, 'configs': configs, 'windows': windows(whole)}]
    path = tmp_path / 'windows-flash.json'
    path.write_text(json.dumps({'command': 'qa/bench/run-bench --seeds 1,2,3', 'runs': runs}))
    assert run_bench.resumed(str(tmp_path / 'none.json'), 'x', a) == []
    kept = run_bench.resumed(str(path), 'qa/bench/run-bench --seeds 1,2,3', a)
    # seed 2's bench was cut short, seed 4 is not asked for
    assert [r['seed'] for r in kept] == [1]
    assert 'check' in kept[0]  # judged again
    with pytest.raises(SystemExit, match='was made by'):
        run_bench.resumed(str(path), 'qa/bench/run-bench --seeds 1,2,3 --reps 5', a)
    # more seeds (a later session's): the finished ones of the same command are kept
    a.seeds = [1, 2, 3, 5]
    kept = run_bench.resumed(str(path), 'qa/bench/run-bench --seeds=1,2,3,5', a)
    assert [r['seed'] for r in kept] == [1]
    path.write_text(json.dumps({'command': 'qa/bench/run-bench --hdd --seeds 4', 'runs': runs}))
    a.seeds = [4, 5]
    kept = run_bench.resumed(str(path), 'qa/bench/run-bench --hdd --seeds 4,5', a)
    assert [r['seed'] for r in kept] == [4]
    with pytest.raises(SystemExit, match='only --seeds may differ'):
        run_bench.resumed(str(path), 'qa/bench/run-bench --flash --seeds 4,5', a)


def test_repo_commit_names_the_checkout_and_marks_uncommitted_changes(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    import shutil
    import subprocess
    monkeypatch.setattr(benchlib, 'REPO', str(tmp_path / 'not-a-repo'))
    assert benchlib.repo_commit() == 'unknown'
    if not shutil.which('git'):
        pytest.skip('no git here (the Tentacle root): the rest needs a repository')
    repo = str(tmp_path)

    def git(*args: str) -> str:
        return subprocess.run(['git', '-C', repo, '-c', 'user.name=t', '-c', 'user.email=t@t',
                               *args], check=True, text=True, stdout=subprocess.PIPE).stdout
    git('init', '-q')
    (tmp_path / 'f').write_text('1')
    git('add', 'f')
    git('commit', '-q', '-m', 'one')
    head = git('rev-parse', '--short', 'HEAD').strip()
    monkeypatch.setattr(benchlib, 'REPO', repo)
    assert benchlib.repo_commit() == head
    (tmp_path / 'new').write_text('untracked: not the code a run measured')
    assert benchlib.repo_commit() == head
    (tmp_path / 'f').write_text('2')
    assert benchlib.repo_commit() == head + '+'


def test_run_bench_sets_each_confirmed_candidate_beside_the_client_check() -> None:
    import run_bench
    tiny, default = 'write_buffer_size=4194304', 'write_buffer_size=16777216'
    configs = {'default': default, 'new_tuning': 'n', 'new_tuning_lz4': 'l', 'tuned': default,
               'start': tiny}
    windows = []
    for rep, (wa, short) in enumerate([(0.80, False), (0.70, False), (0.10, True)]):
        for name in configs:
            windows.append({'rep': rep, 'config': name, 'workload': 'fio_rbd', 'iops': 100.0,
                            'write_amp': (wa if name in ('default', 'tuned') else 1.0),
                            'window_short': short and name == 'default'})
    fig = {'median': 0.78, 'low': None, 'high': None, 'rounds': 3, 'at': [1, 2, 3]}
    best = {'candidates': [{'arm': 'c1', 'options': tiny, 'objective': fig, 'write_amp': fig},
                           {'arm': 'c2', 'options': default, 'objective': fig,
                            'write_amp': fig}]}
    run = {'configs': configs, 'windows': windows, 'session': {'best': best}}
    assert run_bench.names_of(run)[-1] == 'start' and run_bench.baseline_of(run) == 'start'
    assert run_bench.reference(run) == 'fio_rbd'
    (p,) = run_bench.pairs(run, 'iops')  # c1 runs the baseline's own options: not a pair
    assert (p['arm'], p['config']) == ('c2', 'default')
    # the round whose default window saw no compaction is left out: sqrt(0.8 x 0.7)
    assert p['bench_write_amp']['rounds'] == 2
    assert p['bench_write_amp']['median'] == pytest.approx((0.8 * 0.7) ** 0.5)
    assert p['write_amp_agrees'] is True  # 0.78 against 0.75
    best['candidates'][1]['write_amp'] = dict(fig, median=0.6)
    assert run_bench.pairs(run, 'iops')[0]['write_amp_agrees'] is False  # 1.25x apart
    del configs['start']
    assert run_bench.baseline_of(run) == 'default'


@pytest.mark.parametrize('args', [['--configs', 'default,bogus'], ['--configs', 'start'],
                                  ['--configs', 'new_tuning', '--start-options', 'x']])
def test_run_bench_refuses_configs_it_cannot_run(args: List[str]) -> None:
    import subprocess
    p = subprocess.run([os.path.join(benchlib.REPO, 'qa', 'bench', 'run-bench'), *args,
                        '--from-json', '/nonexistent'], capture_output=True, text=True)
    assert p.returncode == 2 and '--configs: a comma-separated subset of' in p.stderr


def test_a_run_takes_the_session_or_the_bench_of_an_earlier_run(tmp_path: Any) -> None:
    import run_bench
    facts = {'osds': 3, 'cores': 2, 'load_avg_at_start': 1.0, 'version': 'v', 'commit': 'abc'}
    earlier = {'seed': 0, 'facts': facts, 'started': 's', 'finished': 'f',
               'configs': {'default': 'a=1', 'start': 'b=2', 'tuned': 'a=1'},
               'windows': [{'config': 'default', 'rep': 0}], 'specs': {'fio_rbd': {}},
               'image_fill_seconds': 9.0, 'session': {'state': 'done'}}
    path = tmp_path / 'windows-flash.json'
    path.write_text(json.dumps({'command': 'c', 'mode': 'flash', 'seeds': [0],
                                'runs': [earlier]}))
    assert run_bench.run_of(str(path), 0)['session'] == {'state': 'done'}
    # one run answers for any seed; of several, the seed asked for
    assert run_bench.run_of(str(path), 5)['seed'] == 0
    with pytest.raises(SystemExit, match='no run of seed 5'):
        run_bench.run_of(str(_two_runs(tmp_path, earlier)), 5)
    got = run_bench.bench_of(str(path), 0, {'default': 'a=1', 'start': 'b=2'})
    assert got['windows'] == earlier['windows'] and got['image_fill_seconds'] == 9.0
    assert got['bench_from'] == {'path': 'windows-flash.json', 'started': 's',
                                 'finished': 'f', 'facts': facts}
    # other options under one name: not the same configurations
    with pytest.raises(SystemExit, match='configurations differ'):
        run_bench.bench_of(str(path), 0, {'default': 'a=1', 'start': 'b=3'})


def test_a_window_recorded_before_counts_write_amp_by_rocksdbs_bytes_it_stored() -> None:
    old = {'config': 'start', 'client_bytes': 100, 'write_amp': 2.0,
           'rocksdb_wal_bytes': 80, 'flush_bytes': 30, 'compaction_bytes': 20}
    new = benchlib.recount(old)
    assert new['write_amp'] == pytest.approx(1.3) and new['write_amp_by'] == 'rocksdb'
    assert new['bluefs_write_amp'] == 2.0 and old['write_amp'] == 2.0
    # counted already, or with no RocksDB bytes: as it was
    assert benchlib.recount(new) == new
    assert benchlib.recount(dict(old, flush_bytes=None)) == dict(old, flush_bytes=None)
    assert benchlib.recount({'config': 'x', 'write_amp': 2.0}) == {'config': 'x',
                                                                   'write_amp': 2.0}


def _two_runs(tmp_path: Any, run: Dict[str, Any]) -> Any:
    p = tmp_path / 'two.json'
    p.write_text(json.dumps({'runs': [dict(run, seed=1), dict(run, seed=2)]}))
    return p


def test_a_split_load_takes_out_what_falls_on_both_groups() -> None:
    import split_aa
    rows = []
    for rnd, (fa, fb) in enumerate([(1.0, 1.4), (0.8, 1.1), (1.2, 0.7)]):
        for arm, f in (('A', fa), ("A'", fb)):
            rows.append({'round': rnd, 'arm': arm, 'iops_c': 300.0 * f, 'iops_r': 500.0 * f,
                         'c_over_r': 0.6})
    s = split_aa.sds(rows)
    assert s['c_over_r']['sd'] == 0.0 and s['c_over_r']['rounds'] == 3
    assert s['iops_c']['sd'] == s['iops_r']['sd'] > 0.2


def test_split_ab_table_shows_the_canarys_rocksdb_when_the_run_read_it(
        capsys: Any, tmp_path: Any) -> None:
    import split_aa
    head = {'placement': {'pool': 'splitaa'}, 'osd': 1, 'b_config': {'x': '1'},
            'warmup_s': 10, 'window_s': 60, 'date': 'D', 'version': 'V'}
    rows = []
    for rnd in range(3):
        for arm, c, flushes in (('A', 600.0, 0), ('B', 300.0, 12)):
            rows.append({'round': rnd, 'arm': arm, 'iops_c': c, 'iops_r': 500.0,
                         'c_over_r': c / 500.0, 'wal_mib': 80.0, 'flushes': flushes,
                         'flush_mib': flushes * 0.5, 'compaction_mib': 1.0,
                         'busiest_cf': 'L' if flushes else '', 'compactions': 1 if flushes else 0,
                         'delay_s': 0.0 if arm == 'A' else 4.5, 'load': 9.0,
                         'running_checked': True})
    p = tmp_path / 'ab.jsonl'
    p.write_text('\n'.join(json.dumps(r) for r in [head] + rows))
    split_aa.table(str(p))
    out = capsys.readouterr().out
    assert '| 1 | B | 300 | 500 | 0.600 | 80.0 | 12 | 6.0 | 1.0 | 4.50 | 9.0 |' in out
    assert 'arm B: 3 of 3 windows saw a flush of the busiest column family (36 flushes)' in out
    assert 'arm A: 0 of 3 windows saw a flush' in out and 'every running value checked' in out
    assert '| c_over_r | -0.6931 | 0.500x | 0.0000 |' in out
    # a run that did not read the canary's RocksDB renders as before
    p.write_text('\n'.join(json.dumps({k: v for k, v in r.items() if k in (
        'round', 'arm', 'iops_c', 'iops_r', 'c_over_r', 'load')}) for r in rows))
    split_aa.table(str(p))
    assert '| 1 | B | 300 | 500 | 0.600 | 9.0 |' in capsys.readouterr().out


def test_split_coupling_says_c_over_r_adds_rs_effect_to_cs(capsys: Any, tmp_path: Any) -> None:
    import split_aa
    rows = []
    for rnd, (c, r) in enumerate([(0.5, 1.2), (0.6, 1.3), (0.55, 1.25)]):
        rows += [{'round': rnd, 'arm': 'A', 'iops_c': 100.0, 'iops_r': 100.0, 'c_over_r': 1.0},
                 {'round': rnd, 'arm': 'B', 'iops_c': 100.0 * c, 'iops_r': 100.0 * r,
                  'c_over_r': c / r}]
    p = tmp_path / 'ab.jsonl'
    p.write_text('\n'.join(json.dumps(r) for r in rows))
    split_aa.coupling([str(p)])
    out = capsys.readouterr().out
    s = split_aa.sds(rows)
    assert math.isclose(s['c_over_r']['mean'], s['iops_c']['mean'] - s['iops_r']['mean'],
                        abs_tol=2e-4)
    assert '| ab.jsonl | iops_c | -0.6006 | 0.0527 | 0.494x-0.609x | 3 of 3 |' in out
    assert 'ab.jsonl: C/R -0.8232 = C -0.6006 minus R +0.2226; C/R over C in logs 1.37' in out


def test_drive_until_sums_the_chunks_up_to_the_end(monkeypatch: Any) -> None:
    now = [100.0]

    class Load:
        asked: List[float] = []

        def drive(self, seconds: float, estimate: Any) -> Tuple[int, float]:
            self.asked.append(seconds)
            took = min(seconds, 5.0)  # a chunk lasts at most 5 s
            now[0] += took
            return 4096 * int(took * 10), took
    monkeypatch.setattr(benchlib.time, 'time', lambda: now[0])
    load = Load()
    assert benchlib.drive_until(load, 112.0) == (4096 * 120, 12.0)  # type: ignore[arg-type]
    assert load.asked == [12.0, 7.0, 2.0]
    assert benchlib.drive_until(load, 90.0) == (0, 0.0)  # type: ignore[arg-type]


def test_design_aa_pools_each_designs_pairs_and_names_a_session_that_ran_another(
        tmp_path: Any) -> None:
    import design_aa
    head = {'facts': {'version': 'ceph version 20.2.4'}, 'osd': 1, 'duration': 20,
            'settings': {'warmup': 10, 'baseline_runs': 6}}
    rows = [head,
            {'design': 'split', 'ran': 'split', 'objective': 'c_over_r',
             'per_pair': [0.03, -0.04], 'load_start': 8.0, 'load_end': 9.5, 'error': ''},
            {'design': 'sequential', 'ran': 'sequential', 'objective': 'iops',
             'per_pair': [0.3, -0.1, 0.2], 'load_start': 9.5, 'load_end': 12.0, 'error': ''},
            {'design': 'split', 'ran': 'sequential', 'objective': 'iops',
             'per_pair': [0.05], 'load_start': 12.0, 'load_end': 11.0, 'error': ''}]
    path = tmp_path / 'aa.jsonl'
    path.write_text('\n'.join(json.dumps(r) for r in rows) + '\n')
    out = design_aa.table(str(path))
    split_sd = math.sqrt((0.03 ** 2 + 0.04 ** 2 + 0.05 ** 2) / 3)
    seq_sd = math.sqrt((0.3 ** 2 + 0.1 ** 2 + 0.2 ** 2) / 3)
    _, split_lo, split_hi = benchlib.aa_sd([0.03, -0.04, 0.05])
    # a run before --grid: every session at the head's warm-up and window, and
    # before threads at client_threads' default; no run or session seconds kept
    assert f'| split | 10 | 20 | 16 | c_over_r, iops | 2 | 3 | {split_sd:.3f} | ' \
        f'{split_lo:.3f}-{split_hi:.3f} | - | -, - | 8.0-12.0 |' in out, out
    assert f'| sequential | 10 | 20 | 16 | iops | 1 | 3 | {seq_sd:.3f} | ' in out, out
    assert '1 session(s) ran another design or failed: split: ran sequential' in out, out


def test_an_aa_sd_says_how_well_its_pairs_know_it() -> None:
    from benchlib import aa_sd
    # 8 pairs whose sd is 0.051: the interval design-aa.md first quoted (0.037-0.087)
    sd, lo, hi = aa_sd([0.051, -0.051] * 4)
    assert (round(sd, 3), round(lo, 3), round(hi, 3)) == (0.051, 0.037, 0.087)
    # more pairs, a narrower interval about the same sd
    _, lo30, hi30 = aa_sd([0.051, -0.051] * 15)
    assert lo < lo30 < 0.051 < hi30 < hi
    # the root mean square, as a session computes it: a drift counts as noise
    assert math.isclose(aa_sd([0.1, 0.1])[0], 0.1)


def test_design_aa_pools_pairs_by_warmup_and_window_too(tmp_path: Any) -> None:
    import design_aa
    head = {'facts': {'version': 'v'}, 'osd': 1, 'duration': 20,
            'settings': {'warmup': 10, 'baseline_runs': 10}}
    row = {'design': 'split', 'ran': 'split', 'objective': 'c_over_r', 'load_start': 5.0,
           'load_end': 6.0, 'error': ''}
    rows = [head,
            {**row, 'warmup': 10, 'duration': 20, 'window': 30.1, 'per_pair': [0.1, -0.1]},
            {**row, 'warmup': 20, 'duration': 60, 'window': 60.2, 'per_pair': [0.02, 0.04]},
            {**row, 'warmup': 10, 'duration': 20, 'window': 29.9, 'per_pair': [0.1]}]
    path = tmp_path / 'grid.jsonl'
    path.write_text('\n'.join(json.dumps(r) for r in rows) + '\n')
    out = design_aa.table(str(path))
    sd, lo, hi = benchlib.aa_sd([0.1, -0.1, 0.1])
    assert f'| split | 10 | 20 (30) | 16 | c_over_r | 2 | 3 | {sd:.3f} | {lo:.3f}-{hi:.3f} |' \
        in out
    sd, lo, hi = benchlib.aa_sd([0.02, 0.04])
    assert f'| split | 20 | 60 (60) | 16 | c_over_r | 1 | 2 | {sd:.3f} | {lo:.3f}-{hi:.3f} |' \
        in out
    assert out.index('| split | 10 |') < out.index('| split | 20 |')


def test_design_aa_splits_the_noise_into_cs_rs_and_how_they_moved_together(
        tmp_path: Any) -> None:
    import design_aa

    def trial(c: float, r: float, kind: str = 'baseline') -> Dict[str, Any]:
        return {'kind': kind, 'measurement': {'iops_c': c, 'iops_r': r, 'c_over_r': c / r,
                                              'compaction_bytes': 0, 'other': 1}}
    # what a session's history holds: baseline runs in order, then a trial
    history = [trial(100, 100), trial(120, 110), trial(90, 100), trial(99, 100),
               trial(50, 100, 'trial'), {'kind': 'baseline', 'measurement': None}]
    runs = design_aa.baseline_runs(history)
    assert [r['iops_c'] for r in runs] == [100, 120, 90, 99]
    # the figures kept, no others, and the run's seconds
    assert set(runs[0]) == {*design_aa.RUN_FIGURES, 'trial_seconds'}
    assert design_aa.pair_logs(runs, 'iops_c') == [math.log(1.2), math.log(1.1)]
    assert design_aa.pair_logs(runs, 'iops_r') == [math.log(1.1), 0.0]

    head = {'facts': {'version': 'v'}, 'osd': 1, 'duration': 20,
            'settings': {'warmup': 10, 'baseline_runs': 4}}
    row = {'design': 'split', 'ran': 'split', 'objective': 'c_over_r', 'load_start': 5.0,
           'load_end': 6.0, 'error': '', 'warmup': 10, 'duration': 20, 'window': 30.0}
    cr = design_aa.pair_logs(runs, 'c_over_r')
    # a row saved before rows kept their runs, and one whose pairs match no dump
    rows = [head, {**row, 'per_pair': cr}, {**row, 'per_pair': [0.5]}]
    path = tmp_path / 'grid.jsonl'
    path.write_text('\n'.join(json.dumps(r) for r in rows) + '\n')
    dumps = tmp_path / 'history.jsonl'
    dumps.write_text(json.dumps(history[:2]) + '\n' + json.dumps(history) + '\n')
    assert '| C sd |' not in design_aa.table(str(path))  # no runs, no split of the noise
    out = design_aa.table(str(path), str(dumps))
    c, r = [math.log(1.2), math.log(1.1)], [math.log(1.1), 0.0]
    # C moved 0.18 and 0.10, R 0.10 and 0: C/R keeps what R did not share
    assert f'| 10 | 20 | 16 | 2 | {benchlib.aa_sd(c)[0]:.3f} | {benchlib.aa_sd(r)[0]:.3f} | ' \
        f'{benchlib.aa_sd(cr)[0]:.3f} | - | {sum(cr) / 2:+.3f} |' in out, out
    # only the matching dump is taken: the other row's pair stays its own
    assert '| split | 10 | 20 (30) | 16 | c_over_r | 2 | 3 |' in out, out


def test_design_aa_pools_real_sessions_a_a_pairs_and_rounds(tmp_path: Any) -> None:
    import design_aa
    from rocks_autotune import power

    def window(kind: str, cr: Optional[float], rnd: int = 0, arm: str = 'baseline',
               steady: str = '') -> Dict[str, Any]:
        return {'kind': kind, 'round': rnd, 'arm': arm, 'steady': steady,
                'measurement': None if cr is None else {'c_over_r': cr}}
    one = [window('baseline', 1.0), window('baseline', 1.1), window('baseline', 1.0),
           window('baseline', 0.9), window('candidate', 1.3)]
    # rounds: c1 over the baseline 1.2, 1.0, 1.1 (its steady window and a
    # round without the baseline's window left out), c2 in one round
    for rnd, (b, c) in enumerate([(1.0, 1.2), (1.0, 1.0), (0.5, 0.55)]):
        one += [window('confirm', b, rnd), window('confirm', c, rnd, 'c1')]
    one += [window('confirm', 9.0, 3, 'c1'), window('confirm', 5.0, 0, 'c1', steady='b1'),
            window('confirm', 1.0, 0, 'c2')]
    two = [window('baseline', 2.0), window('baseline', 2.0 * math.exp(0.05))]
    paths = []
    for name, history in (('one', one), ('two', two), ('none', [window('baseline', None)])):
        paths.append(tmp_path / f'{name}-history.json')
        paths[-1].write_text(json.dumps(history))
    out = design_aa.histories([str(p) for p in paths])
    aa_one = [math.log(1.1), math.log(0.9)]
    c1 = [math.log(1.2), 0.0, math.log(1.1)]
    sd1 = statistics.stdev(c1)  # one arm of 3 rounds: 2 df (c2's one round: none)
    assert f'| one-history.json | 2 | {benchlib.aa_sd(aa_one)[0]:.3f} | ' \
        f'{power.aa_noise([1.0, 1.1, 1.0, 0.9]).planned_sd:.3f} | 4 | {sd1:.3f} |' in out, out
    assert '| two-history.json | 1 | 0.050 |' in out and '| two-history.json | 1 | 0.050 | ' \
        f'{power.planned_sd(0.05, 1):.3f} | 0 | - |' in out, out
    assert 'none-history.json' not in out  # nothing to read
    aa = benchlib.aa_sd(aa_one + [0.05])[0]
    assert f'pooled A/A sd {aa:.3f} (' in out and 'over 3 pairs' in out, out
    assert f"rounds' sd {sd1:.3f} on 2 df; rounds / A/A {sd1 / aa:.2f}" in out, out
    assert f'over 10 rounds {power.confirm_rate(0.0, aa, 10, -0.03):.0%} of the time' in out


def test_design_aa_sets_each_finalists_search_window_beside_its_rounds(tmp_path: Any) -> None:
    import design_aa

    def window(kind: str, cr: float, options: str = 'base', rnd: int = 0, arm: str = 'baseline',
               steady: str = '') -> Dict[str, Any]:
        return {'kind': kind, 'round': rnd, 'arm': arm, 'steady': steady, 'options': options,
                'measurement': {'c_over_r': cr}}
    paths = []
    # three sessions: search windows 1.1x, 1.2x and 0.9x their baselines',
    # rounds 1.0x, 1.1x and 0.95x (the steady window left out)
    for name, (w, r) in (('a', (1.1, 1.0)), ('b', (1.2, 1.1)), ('c', (0.9, 0.95))):
        h = [window('baseline', 2.0), window('baseline', 2.0), window('candidate', 2.0 * w, 'x')]
        for rnd in range(3):
            h += [window('confirm', 1.0, rnd=rnd), window('confirm', r, 'x', rnd, 'c1')]
        h.append(window('confirm', 9.0, 'x', 0, 'c1', steady='c1'))
        paths.append(tmp_path / f'{name}-history.json')
        paths[-1].write_text(json.dumps(h))
    # too few rounds: left out
    short = [window('baseline', 1.0), window('candidate', 1.0, 'y'),
             window('confirm', 1.0), window('confirm', 1.0, 'y', 0, 'c1')]
    paths.append(tmp_path / 'd-history.json')
    paths[-1].write_text(json.dumps(short))
    out = design_aa.finalists([str(p) for p in paths])
    assert f'| a-history.json | c1 | {math.log(1.1):+.3f} | +0.000 | 3 |' in out, out
    assert f'| b-history.json | c1 | {math.log(1.2):+.3f} | {math.log(1.1):+.3f} | 3 |' in out
    assert 'd-history.json' not in out
    xs, ys = [math.log(1.1), math.log(1.2), math.log(0.9)], [0.0, math.log(1.1), math.log(0.95)]
    assert f'3 finalists: correlation {statistics.correlation(xs, ys):+.2f}' in out, out
    assert design_aa.finalists([str(paths[-1])]).endswith('3 rounds')


def test_design_aa_fits_cs_share_of_rs_move_and_judges_each_session_by_the_others(
        tmp_path: Any) -> None:
    import design_aa

    def runs(*pairs: Tuple[float, float, float, float]) -> List[Dict[str, Any]]:
        # the canary's kv_sync latency the inverse of its IOPS: its commit path its noise
        return [{'iops_c': c, 'iops_r': r, 'c_over_r': c / r, 'kv_sync_lat_ms': 200 / c}
                for c1, r1, c2, r2 in pairs for c, r in ((c1, r1), (c2, r2))]
    head = {'facts': {'version': 'v'}, 'osd': 1, 'duration': 40,
            'settings': {'warmup': 20, 'baseline_runs': 4}}
    row = {'design': 'split', 'ran': 'split', 'objective': 'c_over_r', 'load_start': 5.0,
           'load_end': 6.0, 'error': '', 'warmup': 20, 'duration': 40, 'window': 60.0}
    # session 1: C moved half of what R did; session 2: C all of it, and more of its own
    one = runs((100, 100, 110, 121), (100, 100, 95, 90.25))
    two = runs((100, 100, 120, 110), (100, 100, 80, 90))
    rows = [head, *({**row, 'runs': x, 'per_pair': design_aa.pair_logs(x, 'c_over_r')}
                    for x in (one, two))]
    path = tmp_path / 'aa.jsonl'
    path.write_text('\n'.join(json.dumps(r) for r in rows) + '\n')
    out = design_aa.table(str(path))
    c1, r1 = design_aa.pair_logs(one, 'iops_c'), design_aa.pair_logs(one, 'iops_r')
    c2, r2 = design_aa.pair_logs(two, 'iops_c'), design_aa.pair_logs(two, 'iops_r')
    assert all(math.isclose(c, r / 2) for c, r in zip(c1, r1))  # half, as built
    slope = design_aa.c_on_r(list(zip(c1 + c2, r1 + r2)))
    assert slope is not None and 0.5 < slope < 1.5
    b1, b2 = design_aa.c_on_r(list(zip(c2, r2))), design_aa.c_on_r(list(zip(c1, r1)))
    assert b2 is not None and math.isclose(b2, 0.5)
    assert b1 is not None
    # each session's pairs less the slope the other session measured
    left = [c - b1 * r for c, r in zip(c1, r1)] + [c - b2 * r for c, r in zip(c2, r2)]
    kv = statistics.correlation(design_aa.pair_logs(one + two, 'c_over_r'),
                                [-c for c in c1 + c2])
    assert out.rstrip().endswith(
        f' | {slope:.2f} | {benchlib.aa_sd(left)[0]:.3f} | {kv:.2f} |'), out
    assert kv < 0  # C/R fell where the canary's commits slowed
    # not the in-sample fit, which would judge session 1 by its own 0.5 (and leave 0)
    assert benchlib.aa_sd(left)[0] > 0.01
    assert design_aa.c_on_r([(0.1, 0.0)]) is None  # R did not move: no slope
    one_session = tmp_path / 'one.jsonl'
    one_session.write_text('\n'.join(json.dumps(r) for r in rows[:2]) + '\n')
    # one session: no other to fit on; two pairs: no correlation
    assert design_aa.table(str(one_session)).rstrip().endswith(' | 0.50 | - | - |')


class RecordingLab:
    """benchlib.Lab's ceph commands, recorded and answered empty."""

    def __init__(self) -> None:
        self.calls: List[Tuple[str, ...]] = []

    def ceph(self, *args: str, check: bool = True) -> str:
        self.calls.append(args)
        return ''


def test_design_aa_makes_its_pool_of_the_pgs_asked_and_keeps_them(capsys: Any) -> None:
    import design_aa

    class FakeLab(RecordingLab):
        def ceph_json(self, *args: str) -> Any:
            if args[0] == 'tell':
                return {'bluestore_rocksdb_options': 'write_buffer_size=4194304'}
            return {'pg_stats': [{'up': [1, 2, 3]}, {'up': [0, 2, 3]}, {'up': [0, 1, 2]}]}

        def active_clean(self) -> bool:
            return True

        def facts(self) -> Dict[str, Any]:
            return {'version': 'v'}

    lab = FakeLab()
    args = design_aa.parser().parse_args(['--pg-num', '128', '--sessions', '0'])
    design_aa.measure(lab, args)  # type: ignore[arg-type]
    assert ('osd', 'pool', 'create', 'designaa', '128', '128', 'replicated',
            '--size', '2') in lab.calls
    assert ('osd', 'pool', 'set', 'designaa', 'min_size', '1') in lab.calls
    # the autoscaler would change which PGs leave the canary out
    assert ('osd', 'pool', 'set', 'designaa', 'pg_autoscale_mode', 'off') in lab.calls
    head = json.loads(capsys.readouterr().out.splitlines()[0])
    assert head['pg_num'] == 128
    # the canary's string and its group R: the PGs it is not in
    assert head['canary_rocksdb_options'] == 'write_buffer_size=4194304'
    assert head['pgs_without_canary'] == 1
    assert lab.calls[-1][:3] == ('osd', 'pool', 'rm')  # removed at the end
    # the demo's pool: its name, size 3 (min_size 2), application rbd
    lab = FakeLab()
    args = design_aa.parser().parse_args(['--pool', 'demo', '--size', '3', '--application',
                                          'rbd', '--sessions', '0'])
    design_aa.measure(lab, args)  # type: ignore[arg-type]
    assert ('osd', 'pool', 'create', 'demo', '32', '32', 'replicated', '--size', '3') \
        in lab.calls
    assert ('osd', 'pool', 'set', 'demo', 'min_size', '2') in lab.calls
    assert ('osd', 'pool', 'application', 'enable', 'demo', 'rbd') in lab.calls
    assert ('config', 'rm', 'mgr', 'mgr/rocks_autotune/client_threads') in lab.calls


def test_design_aa_sets_each_sessions_client_threads_and_starts_as_asked(
        monkeypatch: Any, tmp_path: Any) -> None:
    import design_aa
    monkeypatch.setattr(design_aa.time, 'sleep', lambda s: None)

    class FakeLab(RecordingLab):
        def ceph_json(self, *args: str) -> Any:
            if args[1] == 'history':
                return [{'kind': 'baseline', 'seconds': 41.5,
                         'measurement': {'c_over_r': 1.0}}]
            return {'state': 'stopped', 'noise': {'per_pair': [0.01]},
                    'precondition': {'seconds': 300}}

    history = tmp_path / 'history.jsonl'
    args = design_aa.parser().parse_args(['--objective', 'wear', '--no-single-copy',
                                          '--history-out', str(history)])
    lab = FakeLab()
    row = design_aa.session(lab, ('split', 10, 20, 4), args)  # type: ignore[arg-type]
    assert ('config', 'set', 'mgr', 'mgr/rocks_autotune/client_threads', '4') in lab.calls
    assert ('rocks-autotune', 'start', '--osd', '1', '--trials', '1', '--duration', '20',
            '--objective', 'wear') in lab.calls  # no --allow-single-copy
    assert (row['threads'], row['precondition']) == (4, {'seconds': 300})
    assert row['runs'][0]['trial_seconds'] == 41.5
    assert json.loads(history.read_text())['arm'] == ['split', 10, 20, 4]
    lab = FakeLab()
    design_aa.session(lab, ('split', 10, 20, 16),  # type: ignore[arg-type]
                      design_aa.parser().parse_args([]))
    # the default: a size-2 pool, one copy allowed
    assert lab.calls[-1][-1] == '--allow-single-copy'


def test_design_aa_tells_arms_apart_by_client_threads_and_compares_their_sds(
        tmp_path: Any) -> None:
    import design_aa
    head = {'facts': {'version': 'v'}, 'osd': 0, 'duration': 20,
            'settings': {'warmup': 10, 'baseline_runs': 4}}

    def row(threads: int, pairs: List[float], seconds: int) -> Dict[str, Any]:
        # each session's first run holds its preconditioning: 400 s
        return {'design': 'split', 'ran': 'split', 'objective': 'c_over_r', 'warmup': 10,
                'duration': 20, 'threads': threads, 'window': 21.0, 'per_pair': pairs,
                'load_start': 1.0, 'load_end': 2.0, 'error': '', 'seconds': seconds,
                'runs': [{'trial_seconds': t} for t in (400, 44, 46, 50)]}
    path = tmp_path / 'aa.jsonl'
    path.write_text('\n'.join(json.dumps(r) for r in [
        head, row(16, [0.04, -0.04], 700), row(4, [0.02, 0.02], 800),
        row(16, [0.04, 0.04], 710)]) + '\n')
    out = design_aa.table(str(path))
    sd16, lo, hi = benchlib.aa_sd([0.04] * 4)
    assert f'| split | 10 | 20 (21) | 16 | c_over_r | 2 | 4 | {sd16:.3f} | {lo:.3f}-{hi:.3f} ' \
        '| 46 | 700, 710 | 1.0-2.0 |' in out, out
    assert '| split | 10 | 20 (21) | 4 | c_over_r | 1 | 2 | 0.020 |' in out, out
    assert out.index('| 20 (21) | 16 |') < out.index('| 20 (21) | 4 |')
    # another run's rows pool with these by arm; the ratio's F interval on 4 and 4 pairs
    other = tmp_path / 'other.jsonl'
    other.write_text(json.dumps(head) + '\n' + json.dumps(row(4, [0.02, -0.02], 800)) + '\n')
    out = design_aa.compare([str(path), str(other)])
    assert '| split 10:20:4 | 2 | 4 | 0.020 |' in out, out
    from scipy.stats import f
    lo, hi = 2 / math.sqrt(f.ppf(0.95, 4, 4)), 2 / math.sqrt(f.ppf(0.05, 4, 4))
    assert f'| split 10:20:16 / split 10:20:4 | 2.00 | {lo:.2f}-{hi:.2f} |' in out, out


def test_design_aa_runs_every_arm_in_turn_and_no_arm_always_first() -> None:
    import design_aa
    # an arm without threads runs client_threads' default
    args = argparse.Namespace(designs=['split'], grid=design_aa.grid('10:20,20:60:4'),
                              warmup=10, duration=20, sessions=3)
    assert design_aa.schedule(args) == [('split', 10, 20, 16), ('split', 20, 60, 4),
                                        ('split', 20, 60, 4), ('split', 10, 20, 16),
                                        ('split', 10, 20, 16), ('split', 20, 60, 4)]
    args = argparse.Namespace(designs=['split', 'sequential'], grid=None, warmup=10,
                              duration=20, threads=8, sessions=2)
    assert design_aa.schedule(args) == [('split', 10, 20, 8), ('sequential', 10, 20, 8),
                                        ('sequential', 10, 20, 8), ('split', 10, 20, 8)]
    for bad in ('10', '10:x', '10:20,10:20', '-1:20', '10:0', '10:20:0', '10:20:4:1',
                '10:20,10:20:16'):
        with pytest.raises(argparse.ArgumentTypeError):
            design_aa.grid(bad)


def test_design_aa_measures_the_designs_asked_and_refuses_others() -> None:
    import design_aa
    assert design_aa.designs('split') == ['split']
    assert design_aa.designs('sequential,split') == ['sequential', 'split']
    for bad in ('duet', 'split,split', '', 'split,'):
        with pytest.raises(argparse.ArgumentTypeError):
            design_aa.designs(bad)


def test_split_ab_arm_a_runs_its_own_baseline_when_given_one(monkeypatch: Any) -> None:
    import split_aa
    conf: Dict[str, str] = {}
    calls: List[Tuple[str, ...]] = []

    def ceph(*args: str) -> str:
        calls.append(args)
        if args[0] == 'config' and args[1] == 'set':
            conf[args[3]] = args[4]
        elif args[0] == 'config' and args[1] == 'rm':
            conf.pop(args[3], None)
        elif args[0] == 'config' and args[1] in ('show', 'get'):
            return conf.get(args[3], 'cluster default') + '\n'
        return ''
    monkeypatch.setattr(split_aa, 'ceph', ceph)
    monkeypatch.setattr(split_aa, 'restart', lambda osd: calls.append(('restart',)))
    split_aa.set_arm(1, {'opts': 'tuned'}, 'A', {'opts': 'slow'})
    assert conf == {'opts': 'slow'} and ('restart',) in calls
    split_aa.set_arm(1, {'opts': 'tuned'}, 'B', {'opts': 'slow'})
    assert conf == {'opts': 'tuned'}
    split_aa.set_arm(1, {'opts': 'tuned'}, 'A')  # no baseline of its own: removed
    assert conf == {}

    # a running value that is not what was set stops the run
    monkeypatch.setattr(split_aa, 'ceph', lambda *a: 'other\n' if a[1] == 'show' else '')
    with pytest.raises(SystemExit, match="runs opts='other' in arm A, not 'slow'"):
        split_aa.set_arm(1, {'opts': 'tuned'}, 'A', {'opts': 'slow'})


def _sensitivity_row(baseline: str, seed: int, answer: str, c_over_r_b: float,
                     claim_low: float) -> Dict[str, Any]:
    lines = [{'round': r, 'arm': arm, 'iops_c': c, 'iops_r': 100.0, 'c_over_r': c / 100.0,
              'load': 5.0}
             for r in range(5) for arm, c in (('A', 100.0), ('B', 100.0 * c_over_r_b))]
    claim = {'answer': answer, 'arm': 'c1', 'verdict': 'passes', 'options': 'x=1',
             'margin': 0.03, 'budget': 1.1, 'direction': 'higher',
             'ratio': {'median': claim_low + 0.1, 'low': claim_low, 'high': None}}
    return {'baseline': baseline, 'seed': seed, 'claim': claim, 'check_lines': lines,
            'session': {'state': 'done', 'seconds': 900, 'load_start': 4.0, 'load_end': 6.0,
                        'best': {'seen': {'sd': 0.05, 'detectable': 0.1}}}}


def test_sensitivity_checks_each_claim_with_the_benchs_own_pairs(tmp_path: Any) -> None:
    import sensitivity
    from benchlib import check_claim
    slow = _sensitivity_row('slow', 1, 'recommend', 1.25, 1.1)
    figs = sensitivity.bench_figures(slow['check_lines'])
    assert math.isclose(figs['c_over_r']['median'], 1.25)
    assert figs['c_over_r']['low'] is not None and figs['iops_r']['median'] == 1.0
    keep = _sensitivity_row('default', 1, 'keep current', 1.0, 0.9)
    for r in (slow, keep):
        r['bench'] = sensitivity.bench_figures(r['check_lines'])
        cr = r['bench']['c_over_r']
        r['held'] = check_claim(r['claim'], cr['median'], None, (cr['low'], cr['high']))
    # a recommendation the bench finds weaker than claimed does not hold
    weak = _sensitivity_row('slow', 2, 'recommend', 1.02, 1.1)
    weak['bench'] = sensitivity.bench_figures(weak['check_lines'])
    weak['held'] = check_claim(weak['claim'], weak['bench']['c_over_r']['median'], None,
                               (weak['bench']['c_over_r']['low'], None))
    p = tmp_path / 's.jsonl'
    p.write_text('\n'.join(json.dumps(r) for r in (keep, weak, slow)))
    out = sensitivity.table([str(p)])
    assert ('| slow | 1 | recommend | 0.050, +10% | 1.200x [1.100, open] (c1: passes) | '
            '1.250x [1.250, 1.250] | 1.250x [1.250, 1.250] | yes | yes | 900 | 4.0-6.0 |') in out
    assert '| no | no: the bench disagrees | 900 |' in out.split('| slow | 2 |')[1]
    assert '| yes | yes | 900 |' in out.split('| default | 1 | keep current |')[1]
    # a keep-current answer from the slow baseline holds as a claim but misses the gain
    keep['baseline'] = 'slow'
    assert sensitivity.wanted(keep) == 'no: a gain missed'
    assert out.index('| slow | 1 |') < out.index('| slow | 2 |') < out.index('| default | 1 |')


def test_sensitivity_lists_each_sessions_baseline_runs_in_the_order_they_ran(
        tmp_path: Any) -> None:
    import sensitivity
    rows = [_sensitivity_row('default', 1, 'keep current', 1.0, 0.9),
            _sensitivity_row('slow', 2, 'recommend', 1.2, 1.1)]
    rows[0]['session']['trials'] = [
        {'kind': 'baseline', 'measurement': {'c_over_r': 1.05, 'compaction_bytes': 0}},
        {'kind': 'baseline', 'measurement': {'c_over_r': 0.95}},
        {'kind': 'candidate', 'measurement': {'c_over_r': 2.0, 'compaction_bytes': 1 << 30}}]
    rows[1]['session']['trials'] = [
        {'kind': 'baseline', 'measurement': {'c_over_r': 0.8, 'compaction_bytes': 300 << 20}},
        {'kind': 'baseline', 'measurement': None},
        {'kind': 'baseline', 'measurement': {'c_over_r': None, 'compaction_bytes': 60 << 20}},
        {'kind': 'confirm', 'arm': 'c1', 'steady': 'c1',
         'measurement': {'seconds': 926.4, 'rocksdb_wal_bytes': 2 << 30, 'busiest_cf': 'O-0',
                         'cf_flushes': 2, 'compactions': 1, 'write_amp': 0.497,
                         'c_over_r': 1.238}}]
    p = tmp_path / 's.jsonl'
    p.write_text('\n'.join(json.dumps(r) for r in rows))
    out = sensitivity.baseline_runs([str(p)])
    assert '| slow | 2 | 0.80 - | 300 60 |' in out, out
    assert '| default | 1 | 1.05 0.95 | 0 0 |' in out, out
    assert out.index('| slow |') < out.index('| default |')
    assert '| slow | 2 | c1 | 926 | 2.00 | O-0 | 2, 1 | 0.497 | 1.238 |' in out, out
    assert out.count(' | c1 | ') == 1, out  # only the steady window, not the rounds
    del rows[0]['session']['trials']  # older runs did not save them
    p.write_text(json.dumps(rows[0]))
    assert '| default | 1 | not saved | not saved |' in sensitivity.baseline_runs([str(p)])


def test_sensitivity_pools_the_sessions_own_aa_noise_by_baseline() -> None:
    import sensitivity
    from benchlib import aa_sd
    rows = [_sensitivity_row('default', 1, 'keep current', 1.0, 0.9),
            _sensitivity_row('slow', 1, 'recommend', 1.2, 1.1),
            _sensitivity_row('slow', 2, 'recommend', 1.2, 1.1),
            _sensitivity_row('default', 2, 'keep current', 1.0, 0.9)]
    for r, pairs in zip(rows, ([0.01, -0.02], [0.2, -0.1, 0.15], [0.05], None)):
        if pairs is not None:
            r['session']['noise'] = {'per_pair': pairs}
    out = sensitivity.noise_table(rows)
    sd, lo, hi = aa_sd([0.2, -0.1, 0.15, 0.05])
    assert f'| slow | 2 | 4 | {sd:.3f} | {lo:.3f}-{hi:.3f} |' in out, out
    # a session without its noise counts as a session, not as pairs
    sd, lo, hi = aa_sd([0.01, -0.02])
    assert f'| default | 2 | 2 | {sd:.3f} | {lo:.3f}-{hi:.3f} |' in out, out
    assert out.index('| slow |') < out.index('| default |')


def test_steady_cap_says_what_share_of_the_space_a_steady_window_can_judge() -> None:
    import steady_cap
    out = steady_cap.table(steady_cap.TENTACLE, steady_cap.TENTACLE_CFS, 12 << 30,
                           rates=(0.25, 1000.0), limits=(1200,), draws=2000)
    # L and P merge 32 whatever a candidate says: no L0 cycle of every
    # family takes less than 2 x 32 x 1 MiB x 2 (the smallest trigger) plus the rest
    smallest = int(out[0].split('smallest ')[1].split(' MiB')[0])
    assert smallest >= 2 * 32 * 2 + 10 * 2, out
    assert '| 0.25 MiB/s | 0.0% (not applied) |' in out, out
    assert '| 1000 MiB/s | 100.0% (kept to) |' in out, out


def test_sensitivity_runs_from_the_options_admins_run_under_either_objective() -> None:
    import sensitivity
    names = ['blog-small', 'pacific', 'default']
    assert sensitivity.starts(','.join(names)) == names
    with pytest.raises(argparse.ArgumentTypeError, match='unknown baseline'):
        sensitivity.starts('blog')
    # from the blog's small memtables a wear session should recommend; keep is a miss
    row = _sensitivity_row('blog-small', 1, 'keep current', 1.0, 0.9)
    assert sensitivity.wanted(dict(row, objective='wear')) == 'no: a gain missed'
    assert sensitivity.wanted(dict(row, objective='iops')) == 'yes'


def test_wear_windows_space_configs_are_candidates_the_module_could_run() -> None:
    import wear_model_check
    import wear_windows
    from rocks_autotune.rocksdb_options import parse_options, parse_sharding
    from rocks_autotune.space import TUNED_KEYS, SearchSpace
    blog = parse_options(benchlib.BLOG_SMALL)
    space = SearchSpace(base=blog, column_families=parse_sharding(wear_model_check.SHARDING),
                        max_memtable_bytes=12 << 30)  # Tentacle's default's memtables
    assert len(wear_windows.SPACE_CONFIGS) == len(wear_windows.SPACE) >= 5
    for options in wear_windows.SPACE_CONFIGS.values():
        opts = parse_options(options)
        c = SearchSpace.candidate_from_options(opts)
        assert on_grid(space, c) and not space.violations(c)
        # the blog string's other options, unchanged
        assert {k: v for k, v in opts.items() if k not in TUNED_KEYS} == \
            {k: v for k, v in blog.items() if k not in TUNED_KEYS}
    # a steady window needs every family's L0 cycle, at most the WAL limit's
    # flushes of it: 128 x 4 MiB merged by 32 under a 128-MiB WAL, 8 of them
    big = SearchSpace.render(blog, SearchSpace.candidate_from_options(parse_options(
        'max_write_buffer_number=128,write_buffer_size=4194304,'
        'min_write_buffer_number_to_merge=32,level0_file_num_compaction_trigger=8,'
        'max_bytes_for_level_base=1073741824,max_bytes_for_level_multiplier=8,'
        'compression=kNoCompression')))
    capped = big.replace('max_total_wal_size=1073741824', 'max_total_wal_size=134217728')
    assert wear_windows.steady_wal(capped) == 8 * (128 << 20) < wear_windows.steady_wal(big)
    assert wear_windows.steady_wal(benchlib.BLOG_SMALL) == (4 << 20) * 2 * 12


def test_client_depth_gives_each_rounds_rates_over_its_first_setting() -> None:
    import client_depth
    rows = [{'round': 1, 'threads': 16, 'rocksdb_wal_mib_s': 2.0},
            {'round': 1, 'threads': 512, 'rocksdb_wal_mib_s': 5.0},
            {'round': 2, 'threads': 16, 'rocksdb_wal_mib_s': 1.0},
            {'round': 2, 'threads': 512, 'rocksdb_wal_mib_s': 2.5}]
    assert client_depth.ratios(rows) == ['round 1: 16 1.00x, 512 2.50x',
                                         'round 2: 16 1.00x, 512 2.50x']


def test_wear_windows_until_is_the_next_such_time() -> None:
    import wear_windows
    now = datetime.datetime(2026, 12, 5, 21, 40, tzinfo=datetime.timezone.utc)
    assert wear_windows.until('23:58', now) - now.timestamp() == 2 * 3600 + 18 * 60
    assert wear_windows.until('00:05', now) - now.timestamp() == 2 * 3600 + 25 * 60


def test_wear_windows_terms_count_what_each_osd_took_in_before_a_window() -> None:
    # the blog string's flush per WAL byte against its DB's age (wear-floor.md)
    import wear_windows
    path = os.path.join(benchlib.RESULTS, 'wear-windows-run28-module-check.jsonl')
    rows = [r.split('|') for r in wear_windows.terms(path).splitlines()[2:]]
    osd0 = [r for r in rows if r[6].strip() == '0']
    assert [r[2].strip() for r in osd0] == ['blog256', 'c1'] * 3
    ages = [float(r[12]) for r in osd0]
    assert ages == sorted(ages) and ages[0] < 1 < 20 < ages[-1]


def test_wear_windows_terms_give_the_compression_ratio_where_rows_count_it(tmp_path: Any) -> None:
    # the load's data made the blog string's extent maps compress (wear-floor.md)
    import wear_windows
    src = os.path.join(benchlib.RESULTS, 'wear-windows-run28-module-check.jsonl')
    rows = [json.loads(x) for x in open(src) if x.strip()]
    counted = [dict(r, rocksdb_compressed_raw_bytes=2 * (r['rocksdb_flush_bytes']
                                                         + r['rocksdb_compaction_bytes']))
               for r in rows]
    path = tmp_path / 'raw.jsonl'
    path.write_text(''.join(json.dumps(r) + '\n' for r in counted))
    ratio = {r.split('|')[13].strip() for r in wear_windows.terms(str(path)).splitlines()[2:]}
    assert ratio == {'2.00'}
    assert {r.split('|')[13].strip() for r in wear_windows.terms(src).splitlines()[2:]} == {'–'}


def test_wear_windows_reads_pair_each_pass_read_probe_with_the_firsts(tmp_path: Any) -> None:
    # --read-probe: the session's read guard on one probe pair (demo run 34)
    import wear_windows
    src = os.path.join(benchlib.RESULTS, 'wear-windows-run32-fresh-check.jsonl')
    p99 = {('before', 1): 4.0, ('before', 2): 8.0, ('before', 3): 5.0,
           ('after', 1): 12.0, ('after', 2): 8.0, ('after', 3): 5.0}
    rows = [dict(r, read_p99_ms=p99[r['config'], r['config_pass']], read_mean_ms=2.0,
                 read_iops=1000.0) if r['window'] == 'steady' else r
            for r in (json.loads(x) for x in open(src) if x.strip())]
    path = tmp_path / 'reads.jsonl'
    path.write_text(''.join(json.dumps(r) + '\n' for r in rows))
    out = wear_windows.reads(str(path)).splitlines()
    table = {(c.strip(), int(n)): (float(q), r.strip()) for c, n, q, *_, r, _m, _i, _ in
             (line.split('|')[1:] for line in out[2:8])}
    assert table[('before', 2)] == (8.0, '–')
    assert [table[('after', n)][1] for n in (1, 2, 3)] == ['3.00', '1.00', '1.00']
    assert out[-1] == ('before against itself: p99_ms max/min 2.00; mean_ms max/min 1.00; '
                       'iops max/min 1.00')
    assert wear_windows.reads(src).splitlines()[2:] == []  # no probe in the file


def test_wear_windows_pairs_each_later_config_with_the_first(tmp_path: Any) -> None:
    # one check of two sessions' answers shares the blog string's windows
    import wear_windows
    src = os.path.join(benchlib.RESULTS, 'wear-windows-run32-fresh-check.jsonl')
    rows = [json.loads(x) for x in open(src) if x.strip()]
    third = [dict(r, config='c3', write_amp=r['write_amp'] * 2) for r in rows
             if r['config'] == 'after']
    path = tmp_path / 'three.jsonl'
    path.write_text(''.join(json.dumps(r) + '\n' for r in rows + third))
    out = wear_windows.pairs(str(path))
    assert 'after/before, steady write-amp over the passes\' medians: 0.592x' in out
    assert 'c3/before, steady write-amp over the passes\' medians: 1.184x' in out
    assert out.count('before against itself') == 1
    # --canary: the canary's own ratio, the others having run `before` in both
    canary = os.path.join(os.path.dirname(src), 'wear-windows-run30-canary.jsonl')
    assert "c30/before, steady write-amp over the passes' osd.0: 0.684x" in \
        wear_windows.pairs(canary)


def test_wear_windows_pairs_says_which_windows_ended_short_of_steady() -> None:
    # the fresh check of runs 29 and 30: every c1 window ran to its 600-s limit
    import wear_windows
    res = benchlib.RESULTS
    out = wear_windows.pairs(os.path.join(res, 'wear-windows-run29-30-fresh-check.jsonl'))
    assert out.count('not at steady state') == 2, out
    assert 'the steady window of c29 in pass 1, c29 in pass 2, c29 in pass 3 ended' in out
    assert 'c30 in pass 3 ended at its limit' in out and 'before in pass' not in out
    # the canary run on the same lab: c30's second window reached the rule
    out = wear_windows.pairs(os.path.join(res, 'wear-windows-run30-canary.jsonl'))
    assert 'the steady window of c30 in pass 1 ended' in out and 'pass 2 ended' not in out


def test_wear_windows_canary_needs_what_the_others_run() -> None:
    # --canary sets configs on one OSD: the others must have been set by --fill-on
    bench = os.path.join(os.path.dirname(__file__), '..', '..', 'qa', 'bench',
                         'wear_windows.py')
    p = subprocess.run([sys.executable, bench, '--canary', '0', '--configs', 'tiny'],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and '--canary needs --fill-on' in p.stderr


def test_wear_windows_counts_each_osds_pg_log_and_parses_its_osd_settings() -> None:
    # what trimming a PG's log writes: the pool's PGs only, each OSD of its acting set
    import argparse
    import wear_windows

    class PgLab:
        def ceph_json(self, *args: str) -> Any:
            if args[:2] == ('osd', 'pool'):
                return {'pool': 'ratbench', 'pool_id': 2, 'size': 3}
            return {'pg_stats': [
                {'pgid': '2.0', 'acting': [0, 1, 2], 'log_size': 100, 'log_dups_size': 3},
                {'pgid': '2.1', 'acting': [1, 2, 3], 'log_size': 50, 'log_dups_size': 0},
                {'pgid': '1.0', 'acting': [0, 3, 1], 'log_size': 999, 'log_dups_size': 9}]}
    logs = wear_windows.pg_logs(cast(Any, PgLab()), 'ratbench')
    assert logs == {0: (100, 3), 1: (150, 3), 2: (150, 3), 3: (50, 0)}
    assert wear_windows.osd_setting('notrim:osd_min_pg_log_entries=9') == (
        'notrim', 'osd_min_pg_log_entries', '9')
    for bad in ('notrim', 'notrim:osd_min_pg_log_entries', ':a=1', 'n:a='):
        with pytest.raises(argparse.ArgumentTypeError):
            wear_windows.osd_setting(bad)


def test_wal_steps_places_a_sessions_step_in_wal_per_client_byte(tmp_path: Any) -> None:
    import wear_model_check

    def trial(i: int, wal: float) -> Dict[str, Any]:
        return {'index': i, 'kind': 'baseline' if i < 2 else 'candidate', 'measurement': {
            'client_bytes': 4096 * 1000, 'rocksdb_wal_bytes': int(wal * 4096 * 1000)}}
    stepped, flat = tmp_path / 'stepped.json', tmp_path / 'flat.json'
    stepped.write_text(json.dumps([trial(0, 0.509), trial(1, 0.509), trial(2, 0.578),
                                   trial(3, 0.580), {'index': 4, 'measurement': None}]))
    flat.write_text(json.dumps([trial(0, 0.509), trial(1, 0.51)]))
    rows = wear_model_check.wal_steps([str(stepped), str(flat)])
    assert rows[2] == '| stepped.json | 4 | 0.509 | 0.580 | 2 (candidate): 2k, 0.509 -> 0.578 |'
    assert rows[3] == '| flat.json | 2 | 0.509 | 0.510 | - |'


def test_units_gives_one_compactions_share_of_each_steady_window(tmp_path: Any) -> None:
    import wear_model_check

    def trial(i: int, arm: str, steady: Any, unit: int = 10 << 20) -> Dict[str, Any]:
        from session_harness import measurement
        return {'index': i, 'arm': arm, 'steady': steady, 'measurement': measurement(
            seconds=67.0, client_bytes=100 << 20, write_amp=0.8, write_amp_by='rocksdb',
            compaction_unit=unit, compaction_bytes=35 << 20).to_dict()}
    h = tmp_path / 'h.json'
    h.write_text(json.dumps([trial(0, 'baseline', None), trial(1, 'c1', 'c1'),
                             trial(2, 'baseline', 'c1'), trial(3, 'baseline', 'c1', 0)]))
    rows = wear_model_check.units([str(h)])
    # a round's window and one without a unit are not steady figures
    assert rows[2:] == ['| h.json | 1 | c1 | 67 | 0.800 | 0.125 | 3.5 |',
                        '| h.json | 2 | baseline | 67 | 0.800 | 0.125 | 3.5 |']


def test_forecast_table_says_how_many_looks_had_no_expected_time() -> None:
    import forecast_check

    def look(t: float, expected: Any, ended: Any = None, state: str = 'running') -> Dict[str, Any]:
        return {'t': 1000.0 + t, 'state': state, 'phase': 'precondition', 'started': 1000.0,
                'ended': ended, 'expected_left': expected, 'max_left': 900.0,
                'keep_left': expected, 'chance': 0.5, 'load': 20.0}
    out = forecast_check.table([look(0.0, None), look(30.0, None), look(60.0, 540.0),
                                look(600.0, 0.0, 1600.0, 'done')]).splitlines()
    assert out[0] == 'session: 600 s; 2 look(s) said no expected time, the last at 30 s'
    assert out[3:] == ['| 60 | precondition | 540 | 900 | 540 | 1.00 | 0.50 | 1.00 | 20.0 |']


def test_osd_samples_sums_each_osds_spans_after_the_first_window_and_skips_a_restart() -> None:
    import osd_samples

    def look(t: float, osd: int, wal: int, sst: int, taken: int) -> Dict[str, Any]:
        return {'t': t, 'osd': osd, 'wal': wal, 'sst': sst, 'op_w': taken, 'subop_w': taken,
                'load': 20.0}
    rows = [look(0, 1, 0, 0, 0), look(60, 1, 100, 10, 100),    # before the first window
            look(120, 1, 200, 60, 200), look(180, 1, 300, 110, 300),
            look(0, 0, 0, 0, 0), look(120, 0, 500, 400, 500),
            look(180, 0, 10, 0, 10),                           # osd.0 restarted: left out
            look(240, 0, 110, 20, 110)]
    history = [{'index': 0, 'kind': 'baseline', 'started': 100.0,
                'measurement': {'wal_bytes': 100, 'sst_bytes': 30}},
               {'index': 1, 'kind': 'candidate', 'started': 200.0,
                'measurement': {'wal_bytes': 100, 'sst_bytes': 90}},
               {'index': 2, 'kind': 'confirm', 'arm': 'baseline', 'steady': True,
                'started': 300.0, 'measurement': {'wal_bytes': 100, 'sst_bytes': 50}}]
    out = osd_samples.table(rows, history).splitlines()
    # spans that began before the first window, or across a restart, are left out:
    # osd.0's 180-240 (100 WAL, 20 SST, 200 taken in), osd.1's 120-180
    assert out[2:4] == ['| 0-2 | osd.0 | 0.00 | 0.200 | 0.500 | - | - | 20.0 |',
                        '| 0-2 | osd.1 | 0.00 | 0.500 | 0.500 | - | - | 20.0 |']
    assert out[5] == ("the canary's 2 baseline windows, SST / WAL: 0.300-0.500 "
                      '(median 0.400)')
    assert out[6:] == ['  baseline 0: 0.300', '  confirm 2 steady: 0.500']
    # in two parts (100-170 s, 170-240 s): only the spans wholly inside each
    assert osd_samples.table(rows, history, 2).splitlines()[2:4] == [
        '| 1-2 | osd.0 | 0.00 | 0.200 | 0.500 | - | - | 20.0 |', '']
    # the gauges: each OSD's last look by the part's end (none polled above)
    rows[3].update(db_used=2**30, stored=3 * 2**30)
    assert osd_samples.table(rows, history).splitlines()[3] == \
        '| 0-2 | osd.1 | 0.00 | 0.500 | 0.500 | 1.00 | 3.00 | 20.0 |'


def test_wear_windows_depth_sets_a_configs_writes_in_flight() -> None:
    # --depth NAME=N: fio's iodepth (or the module's in_flight) in NAME's windows
    import argparse
    import wear_windows
    assert wear_windows.named_depth('deep=512') == ('deep', 512)
    for bad in ('deep', 'deep=', '=16', 'deep=0', 'deep=x'):
        with pytest.raises(argparse.ArgumentTypeError):
            wear_windows.named_depth(bad)
    argv: list = []
    fio = {'jobs': [{'write': {'total_ios': 10, 'runtime': 1000,
                               'clat_ns': {'percentile': {'99.000000': 5000}, 'bins': {}}}}]}

    class RunLab:  # what ran inside the lab's root; fio's JSON, or the module load's line
        def lab(self, *args: str, **kw: Any) -> str:
            argv[:] = args
            return json.dumps(fio if 'fio' in args else {'writes': 1, 'seconds': 1.0})
    lab = cast(Any, RunLab())
    wear_windows.fio_chunk(lab, 5.0, depth=512)
    assert '--iodepth=512' in argv
    wear_windows.fio_chunk(lab, 5.0)
    assert '--iodepth=16' in argv
    wear_windows.module_chunk(lab, 5.0, 4096, depth=16)
    assert argv[argv.index('--depth') + 1] == 'load=16'


def test_scenario_rows_read_what_a_saved_session_answered() -> None:
    """scenarios.py's table: new-tuning under wear, seed 1 (2026-12-05) recommended
    c1 over 7 rounds; new-tuning-lz4 under iops, seed 0, dropped its finalist."""
    import scenarios
    res = benchlib.RESULTS
    rows = {}
    for name in ('scenario-new-tuning-wear-seed1', 'scenario-new-tuning-lz4-iops-seed0'):
        with open(os.path.join(res, name + '-status.json')) as f:
            rows[name] = scenarios.row(json.load(f), name + '-status.json',
                                       scenarios.loads(os.path.join(res, name + '-load.log')))
    wear, iops = rows['scenario-new-tuning-wear-seed1'], rows['scenario-new-tuning-lz4-iops-seed0']
    assert (wear['start'], wear['objective'], wear['seed'], wear['minutes']) == \
        ('new-tuning', 'wear', 1, 71)
    (arm,) = wear['arms']
    assert arm['verdict'] == 'recommended' and len(arm['per_round']) == 7
    assert arm['finalist'] == '34 x 10 MiB merged by 2, L0 3, level base 3.8 GiB, x4, lz4'
    assert (iops['start'], iops['seed']) == ('new-tuning-lz4', 0)
    assert iops['arms'][0]['verdict'] == 'dropped'
    assert iops['load'] is not None and iops['load'][1] > 30  # three labs side by side
    assert 'C/R 0.97, 0.96, 0.98, 0.99 over 4 of 10 rounds' in scenarios.render(iops)


def test_scenario_run_never_overwrites_a_saved_session(tmp_path: Any) -> None:
    """scenarios.py run refuses, before any lab, where a run's records are."""
    import scenarios
    (tmp_path / 'scenario-blog-wear-seed0-status.json').write_text('{}')
    with pytest.raises(SystemExit, match='exists'):
        scenarios.run('blog', 'wear', 0, str(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == ['scenario-blog-wear-seed0-status.json']
    res = benchlib.RESULTS
    with open(os.path.join(res, 'scenario-pacific-wear-seed1-run1-status.json')) as f:
        cut = scenarios.row(json.load(f), 'scenario-pacific-wear-seed1-run1-status.json', None)
    assert (cut['name'], cut['seed'], cut['minutes']) == ('scenario-pacific-wear-seed1-run1', 1,
                                                          None)
    assert 'not ended' in scenarios.render(cut)
