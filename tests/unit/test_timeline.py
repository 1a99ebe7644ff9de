"""tests/cluster/timeline.py: what the lab's rollout test asserts from the PG
watcher's samples, on samples made up here (so each check is seen to fail)."""
import importlib.util
import os
from typing import Any, Dict, List, Optional, Sequence

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    'timeline', os.path.join(HERE, '..', 'cluster', 'timeline.py'))
timeline: Any = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(timeline)  # type: ignore[union-attr]


def sample(t: float, osds: Dict[int, Sequence[int]], not_clean: int = 0,
           inactive: Optional[List[List[str]]] = None) -> Dict[str, Any]:
    return {'t': t, 'inactive': inactive or [], 'not_clean': not_clean,
            'osds': {str(i): list(v) for i, v in osds.items()}}


def sequential() -> List[Dict[str, Any]]:
    """osd.0 restarted (down 2 s, clean 2 s after up), then osd.1."""
    up = {0: (1, 10), 1: (1, 10)}
    return [
        sample(0, up),
        sample(1, {0: (0, 10), 1: (1, 10)}, 32, [['1.0', 'peering']]),
        sample(2, {0: (0, 10), 1: (1, 10)}, 32, [['1.0', 'peering']]),
        sample(3, {0: (1, 14), 1: (1, 10)}, 32),
        sample(4, {0: (1, 14), 1: (1, 10)}, 8),
        sample(5, {0: (1, 14), 1: (1, 10)}),
        sample(6, {0: (1, 14), 1: (0, 10)}, 32),
        sample(7, {0: (1, 14), 1: (1, 18)}, 4),
        sample(8, {0: (1, 14), 1: (1, 18)}),
    ]


def rows(samples: List[Dict[str, Any]]) -> List[Any]:
    out = [timeline.Row(0), timeline.Row(1)]
    for r in out:
        r.restarts = timeline.restarts_of(samples, r.osd)
    return out


def test_one_restart_each_in_order_passes_with_its_timeline() -> None:
    samples = sequential()
    got = rows(samples)
    assert timeline.one_at_a_time(got) == []
    r0, = got[0].restarts
    assert (r0.down, r0.up, r0.up_from, r0.clean) == (1, 3, 14, 5)
    r1, = got[1].restarts
    assert (r1.down, r1.up, r1.up_from, r1.clean) == (6, 7, 18, 8)
    f = timeline.watcher_figures(samples)
    assert f['most_osds_down'] == 1 and f['most_pgs_not_clean'] == 32
    assert f['longest_pg_inactive_s'] == 1 and f['samples_with_pgs_inactive'] == 2
    lines = timeline.table(got, 0)
    assert len(lines) == 3 and lines[1].split()[:3] == ['osd.0', '-', '+1s']
    assert lines[1].split()[5:8] == ['2s', '+5s', '4s']


def test_two_down_at_once_fails() -> None:
    samples = sequential()
    samples[2] = sample(2, {0: (0, 10), 1: (0, 10)}, 32)  # osd.1 goes down too early
    samples[3] = sample(3, {0: (1, 14), 1: (0, 10)}, 32)
    samples[4] = sample(4, {0: (1, 14), 1: (1, 18)}, 8)
    samples[5:] = [sample(5, {0: (1, 14), 1: (1, 18)})]
    assert timeline.watcher_figures(samples)['most_osds_down'] == 2
    assert timeline.most_down(samples) == [0, 1]
    assert timeline.one_at_a_time(rows(samples)) == [
        'osd.1 went down before osd.0 was back up']


def test_a_second_restart_or_none_fails() -> None:
    samples = sequential() + [sample(9, {0: (0, 14), 1: (1, 18)}),
                              sample(10, {0: (1, 22), 1: (1, 18)})]
    assert timeline.one_at_a_time(rows(samples)) == ['osd.0 restarted 2 times']
    samples = sequential()[:6]
    got = rows(samples)
    assert timeline.one_at_a_time(got) == ['osd.1 restarted 0 times']
    assert timeline.table(got, 0)[2].split()[1:] == ['-'] * 8


def test_samples_without_the_osd_map_count_for_nothing() -> None:
    samples = [{'t': 0.0, 'error': 'mgr failing over'},
               {'t': 1.0, 'inactive': [], 'osd_error': 'timeout'}]
    f = timeline.watcher_figures(samples)
    assert f['pg_errors'] == 1 and f['osd_samples'] == 0 and f['most_osds_down'] == 0
