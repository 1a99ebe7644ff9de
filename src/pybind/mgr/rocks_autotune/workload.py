"""The load a measurement window runs under.

`bench` drives `osd bench` on the canary: 4 KiB random writes into objects the
bench pre-creates, in chunks of a few seconds so that a stop or abort is seen
between chunks.  `live` drives nothing: the window measures the canary's own
client traffic.
"""
from typing import Optional, Tuple

from .cluster import Cluster

# osd bench caps small writes at max_iops x osd_bench_duration (30 s); the
# canary gets a high cap for the session and its original value back after.
BENCH_LIMIT_OPTION = 'osd_bench_small_size_max_iops'
BENCH_LIMIT_VALUE = 100000
BENCH_MAX_OPS = BENCH_LIMIT_VALUE * 30
WORKLOADS = ('bench', 'live')


class BenchWorkload:
    kind = 'bench'

    def __init__(self, cluster: Cluster, osd: int, block_size: int = 4096,
                 object_size: int = 4 << 20, object_num: int = 16,
                 chunk_seconds: float = 5.0) -> None:
        self.cluster = cluster
        self.osd = osd
        self.block_size = block_size
        self.object_size = object_size
        self.object_num = object_num
        self.chunk_seconds = chunk_seconds

    def ops_for(self, seconds: float, iops_estimate: Optional[float]) -> int:
        # first chunk of a trial: a guess that finishes quickly on any drive
        est = iops_estimate or 500.0
        return int(min(BENCH_MAX_OPS, max(200, est * min(seconds, self.chunk_seconds))))

    def drive(self, seconds: float, iops_estimate: Optional[float]) -> Tuple[int, float]:
        """Write for about `seconds` (at most one chunk); bytes written and time taken."""
        ops = self.ops_for(seconds, iops_estimate)
        r = self.cluster.bench(self.osd, ops * self.block_size, self.block_size,
                               self.object_size, self.object_num)
        return int(r['bytes_written']), float(r['elapsed_sec'])
