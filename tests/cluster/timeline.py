"""A rollout's timeline from the PG watcher's samples (pg_watcher.py).

Pure functions over the samples (each {"t", "inactive", "not_clean", "osds":
{id: [up, up_from]}}) and over the rollout's own per-OSD statuses as a test
polled them: which OSDs went down and when, how often each restarted, how
long PGs took to be clean again, and the watcher's own figures.
"""
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

Sample = Dict[str, Any]


@dataclass
class Restart:
    """One restart of an OSD as the watcher saw it: the first sample with it
    down, the first with it up on a new up_from, the first after that with
    every PG active+clean."""
    osd: int
    down: Optional[float]  # None: never seen down (a restart shorter than a sample)
    up: float
    up_from: int
    clean: Optional[float] = None


@dataclass
class Row:
    """An OSD of the rollout: its restarts, and when the rollout said it
    was restarting and done (the test's polls of `status`)."""
    osd: int
    restarts: List[Restart] = field(default_factory=list)
    restarting: Optional[float] = None
    done: Optional[float] = None


def osd_samples(samples: Sequence[Sample]) -> List[Sample]:
    return [x for x in samples if 'osds' in x]


def restarts_of(samples: Sequence[Sample], osd: int) -> List[Restart]:
    """Every restart of `osd` in the samples: a new up_from, seen up.  Its
    first sample gives the up_from it started from."""
    found: List[Restart] = []
    last: Optional[int] = None
    down: Optional[float] = None
    for x in osd_samples(samples):
        up, up_from = x['osds'].get(str(osd), [0, 0])
        if not up:
            down = x['t'] if down is None else down
            continue
        if last is not None and up_from != last:
            found.append(Restart(osd, down, x['t'], up_from))
        last, down = up_from, None
    for r in found:
        r.clean = first_clean(samples, r.up)
    return found


def first_clean(samples: Sequence[Sample], after: float) -> Optional[float]:
    """The first sample at or after `after` with every PG active+clean."""
    return next((x['t'] for x in samples
                 if x['t'] >= after and x.get('not_clean') == 0), None)


def most_down(samples: Sequence[Sample]) -> List[int]:
    """The most OSDs down in one sample: their ids (in the first such sample)."""
    best: List[int] = []
    for x in osd_samples(samples):
        down = sorted(int(i) for i, (up, _) in x['osds'].items() if not up)
        if len(down) > len(best):
            best = down
    return best


def longest_inactive(samples: Sequence[Sample]) -> float:
    """The longest time a PG was seen not active across consecutive samples."""
    since: Dict[str, float] = {}
    longest = 0.0
    for x in samples:
        if 'inactive' not in x:
            continue
        now = {pgid for pgid, _ in x['inactive']}
        since = {pgid: t for pgid, t in since.items() if pgid in now}
        for pgid in now:
            longest = max(longest, x['t'] - since.setdefault(pgid, x['t']))
    return longest


def watcher_figures(samples: Sequence[Sample]) -> Dict[str, Any]:
    ok = [x for x in samples if 'inactive' in x]
    return {
        'samples': len(samples),
        'seconds': (samples[-1]['t'] - samples[0]['t']) if samples else 0.0,
        'pg_errors': len(samples) - len(ok),
        'osd_samples': len(osd_samples(samples)),
        'most_osds_down': len(most_down(samples)),
        'most_pgs_inactive': max((len(x['inactive']) for x in ok), default=0),
        'samples_with_pgs_inactive': len([x for x in ok if x['inactive']]),
        'longest_pg_inactive_s': longest_inactive(samples),
        'most_pgs_not_clean': max((x.get('not_clean', 0) for x in ok), default=0),
    }


def one_at_a_time(rows: Sequence[Row]) -> List[str]:
    """What breaks "one OSD at a time, in the plan's order, each restarted
    once": an empty list when nothing does."""
    return in_batches(rows, [[r.osd] for r in rows])


def in_batches(rows: Sequence[Row], batches: Sequence[Sequence[int]]) -> List[str]:
    """What breaks "batch by batch, in order, each OSD restarted once, none
    of a batch down before the batch before it is back up" (--max-parallel):
    an empty list when nothing does."""
    by = {r.osd: r for r in rows}
    bad = [f'osd.{r.osd} restarted {len(r.restarts)} times' for r in rows
           if len(r.restarts) != 1]
    for a, b in zip(batches, batches[1:]):
        back = [by[o] for o in a if len(by[o].restarts) == 1]
        if not back:
            continue
        last = max(back, key=lambda r: r.restarts[0].up)
        for o in b:
            if len(by[o].restarts) == 1:
                nb = by[o].restarts[0]
                start = nb.down if nb.down is not None else nb.up
                if start < last.restarts[0].up:
                    bad.append(f'osd.{o} went down before osd.{last.osd} was back up')
    return bad


def _at(t: Optional[float], t0: float) -> str:
    return '-' if t is None else f'{t - t0:+.0f}s'


def _line(r: Row, x: Optional[Restart], t0: float) -> str:
    down = x.down if x is not None else None
    up = x.up if x is not None else None
    clean = x.clean if x is not None else None
    start = down if down is not None else up
    wall = '-' if start is None else time.strftime('%H:%M:%S', time.localtime(start))
    span = '-' if start is None or up is None else f'{up - start:.0f}s'
    to_clean = '-' if start is None or clean is None else f'{clean - start:.0f}s'
    return (f'{"osd." + str(r.osd):>6} {_at(r.restarting, t0):>10} {_at(down, t0):>8} '
            f'{wall:>10} {_at(up, t0):>6} {span:>8} {_at(clean, t0):>6} {to_clean:>8} '
            f'{_at(r.done, t0):>6}')


HEADER = (f'{"osd":>6} {"restarting":>10} {"down":>8} {"wall clock":>10} {"up":>6} '
          f'{"down for":>8} {"clean":>6} {"to clean":>8} {"done":>6}')
LEGEND = ('times from the command (+Ns); restarting/done: the rollout\'s status, polled; '
          'down/up/clean: the PG watcher\'s first sample with the OSD down, up on a new '
          'up_from, every PG active+clean; down for = up - down; to clean = clean - down')


def table(rows: Sequence[Row], t0: float) -> List[str]:
    """One line per restart of each OSD (a line of dashes: none seen)."""
    lines = [HEADER]
    for r in rows:
        lines += [_line(r, x, t0) for x in r.restarts] or [_line(r, None, t0)]
    return lines
