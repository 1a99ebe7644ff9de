"""The pure parts of qa/bench: interleaving, medians and ratios, the table."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..',
                                'qa', 'bench'))

import benchlib  # noqa: E402
from rocks_autotune.rocksdb_options import NEW_TUNING, PACIFIC_DEFAULT  # noqa: E402

RADOS_OUT = """hints = 1
Total time run:         10.0213
Total writes made:      12345
Write size:             4096
Object size:            4096
Bandwidth (MB/sec):     4.81
Average IOPS:           1231
Stddev IOPS:            80.3
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


def test_parse_rados_bench_totals() -> None:
    r = benchlib.parse_rados_bench(RADOS_OUT)
    assert r == {'seconds': 10.0213, 'writes': 12345.0, 'iops': 1231.0}
    with pytest.raises(ValueError):
        benchlib.parse_rados_bench('nothing here')


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
