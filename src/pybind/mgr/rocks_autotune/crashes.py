"""Which failed trial a crash of the canary belongs to: each failed trial
names the crashes it caused, so the admin knows which to archive and none is
blamed on a trial that did not fail."""
import math
from typing import List, Optional

from .cluster import Crash
from .trial import Trial

# a crash is stamped by its OSD host's clock, the trials by the mgr's
CLOCK_SLACK = 30.0


def failed_trial_of(trials: List[Trial], current: Optional[Trial], osd: int,
                    crash: Crash) -> Optional[Trial]:
    """The failed trial during which (its restarts, or the recovery after
    it, until the next trial started) osd crashed, if any; the nearest one,
    within the hosts' clock slack."""
    if crash.entity != f'osd.{osd}':
        return None
    ends = [t.started for t in trials[1:]]
    if current is not None and current.kind != 'recovery':
        ends.append(current.started)
    # on a tie (a crash as the next trial starts), the later trial: its
    # restart comes after its start
    gap, later = min(((max(t.started - crash.time, crash.time - end, 0.0), -i)
                      for i, (t, end) in enumerate(zip(trials, ends + [math.inf]))
                      if t.verdict == 'failed'), default=(math.inf, 0))
    return trials[-later] if gap <= CLOCK_SLACK else None


def note(trials: List[Trial], current: Optional[Trial], osd: int,
         crashes: List[Crash]) -> None:
    """Name on each failed trial the crashes of osd it caused."""
    for c in crashes:
        t = failed_trial_of(trials, current, osd, c)
        if t is not None and c.id not in t.crashes:
            t.crashes.append(c.id)
