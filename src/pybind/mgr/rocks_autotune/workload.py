"""The load a measurement window runs under.

`client` writes as a client does: 4 KiB writes at random offsets of
thousands of objects (an RBD image's shape) through librados from the mgr,
so every write goes through the PG layer (PG log, dup entries, onode
updates) of a PG the canary serves.  The objects live in a namespace of one
replicated pool (`NAMESPACE`, never a user's objects); they are only ones in
PGs whose up set holds the canary, so every byte lands on it, and the
session removes them when it ends; the default.  `osd-bench` drives `osd
bench` on the canary: 4 KiB writes into 16 objects below the PG layer, a
quick mode that makes no PG log and touches a few onodes.  `live` drives nothing: the window
measures the canary's own client traffic.  The driven ones run in chunks of
a few seconds, so that a stop or abort is seen between chunks.
"""
import math
import random
import threading
import time
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from .cluster import Cluster, ClientIo, ClusterError, PgInfo, PoolInfo
from .placement import pg_of

try:
    from typing import Protocol
except ImportError:  # Python < 3.8
    from typing_extensions import Protocol  # type: ignore

Clock = Callable[[], float]

# osd bench caps small writes at max_iops x osd_bench_duration (30 s); the
# canary gets a high cap for the session and its original value back after.
BENCH_LIMIT_OPTION = 'osd_bench_small_size_max_iops'
BENCH_LIMIT_VALUE = 100000
BENCH_MAX_OPS = BENCH_LIMIT_VALUE * 30
CLIENT, OSD_BENCH, LIVE = 'client', 'osd-bench', 'live'
WORKLOADS = (CLIENT, OSD_BENCH, LIVE)
DEFAULT_WORKLOAD = CLIENT
RENAMED = {'bench': OSD_BENCH}  # the name until issue 26, in saved sessions and old scripts
NAMESPACE = 'rocks_autotune'
HUNG_WRITE = 60.0  # s a chunk's write may take before the chunk fails
# an object is filled in writes of at most this (RBD's default object size)
FILL_WRITE = 4 << 20


class Workload(Protocol):
    block_size: int

    def drive(self, seconds: float, iops_estimate: Optional[float]) -> Tuple[int, float]:
        """Write for about `seconds` (at most one chunk); bytes written and time taken."""


class KeyspaceWorkload(Workload, Protocol):
    """A load over objects of its own, which it can write end to end first."""
    @property
    def object_count(self) -> int:
        """How many objects the keyspace holds."""

    @property
    def block_count(self) -> int:
        """How many blocks (writes of the load's size) the keyspace holds."""

    def fill(self, start: int, seconds: float) -> Tuple[int, int, float]:
        """Fill objects from the `start`-th on for about `seconds`: how many are
        filled from the first on, bytes written and time taken."""

    def overwrite(self, start: int, seconds: float) -> Tuple[int, int, float]:
        """Overwrite blocks from the `start`-th on (of a fixed order) for about
        `seconds`: how many are done, bytes written and time taken."""


class BenchWorkload:
    kind = OSD_BENCH

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


def client_pool(pools: Dict[int, PoolInfo], pgs: Sequence[PgInfo], osds: Sequence[int],
                wanted: str = '') -> Tuple[PoolInfo, List[int]]:
    """The pool the client load writes to, and the PG seeds of it that every
    OSD of `osds` serves (the canary; and a second OSD that is to see the
    same writes): `wanted`, or the replicated pool with the most such PGs
    (ties: the lowest id).  ValueError naming why none will do."""
    served: Dict[int, List[int]] = {}
    for pg in pgs:
        if all(o in pg.up for o in osds):
            served.setdefault(pg.pool, []).append(int(pg.pgid.split('.')[1], 16))
    by_name = {p.name: p for p in pools.values()}
    if wanted:
        if wanted not in by_name:
            raise ValueError(f'no pool named {wanted!r}')
        chosen = [by_name[wanted]]
    else:
        chosen = sorted((p for p in pools.values() if not p.erasure and served.get(p.id)),
                        key=lambda p: (-len(served[p.id]), p.id))
    if not chosen or chosen[0].erasure or not served.get(chosen[0].id):
        who = ' and '.join(f'osd.{o}' for o in osds)
        raise ValueError(
            f'{who} {"serve" if len(osds) > 1 else "serves"} no PG of '
            + (f'pool {wanted!r}' if wanted else 'a replicated pool')
            + (' together' if len(osds) > 1 else '')
            + ' (the client workload writes 4 KiB at random offsets: an erasure-coded pool '
            'takes them only with overwrites, and makes other DB writes)')
    pool = chosen[0]
    if pool.pg_num < 1:
        raise ValueError(f'pool {pool.name!r} has no pg_num in the OSD map')
    return pool, sorted(served[pool.id])


def scattered(n: int) -> Callable[[int], int]:
    """A fixed order of 0..n-1 in which neighbours land far apart: i -> a*i
    mod n with a near n/phi and coprime to n (a bijection that needs no
    table, whatever n is)."""
    a = max(1, int(n * 0.6180339887))
    while math.gcd(a, n) != 1:
        a += 1
    return lambda i: (a * i) % n


def client_objects(prefix: str, count: int, pg_num: int, seeds: Sequence[int]) -> List[str]:
    """`count` object names (prefix.0, prefix.1, ...) of those whose PG is one of
    `seeds`, in the workload's namespace."""
    wanted = set(seeds)
    if not wanted:
        raise ValueError('no PG to write to')
    names: List[str] = []
    i = 0
    while len(names) < count:
        name = f'{prefix}.{i}'
        if pg_of(name, pg_num, NAMESPACE) in wanted:
            names.append(name)
        i += 1
    return names


class ClientWorkload:
    kind = CLIENT

    def __init__(self, io: ClientIo, objects: Sequence[str], object_size: int,
                 block_size: int = 4096, threads: int = 16, chunk_seconds: float = 5.0,
                 seed: int = 0, clock: Clock = time.monotonic) -> None:
        if object_size < block_size:
            raise ValueError('objects smaller than a write')
        self.io = io
        self.objects = list(objects)
        self.object_size = object_size
        self.block_size = block_size
        self.threads = threads
        self.chunk_seconds = chunk_seconds
        self.rng = random.Random(seed)
        self.clock = clock
        # incompressible, as a client's data mostly is
        self.data = self.rng.randbytes(block_size)
        self.fill_data: Optional[bytes] = None

    def drive(self, seconds: float, iops_estimate: Optional[float]) -> Tuple[int, float]:
        """Write for about `seconds` (at most one chunk), `threads` writes in
        flight; bytes written and time taken.  ClusterError if a write failed."""
        length = max(0.1, min(seconds, self.chunk_seconds))
        blocks = self.object_size // self.block_size
        done = [0] * self.threads
        seeds = [self.rng.getrandbits(32) for _ in range(self.threads)]
        start = self.clock()
        deadline = start + length

        def writer(i: int, failed: Callable[[], bool]) -> None:
            rng = random.Random(seeds[i])
            while self.clock() < deadline and not failed():
                self.io.write(rng.choice(self.objects), self.data,
                              rng.randrange(blocks) * self.block_size)
                done[i] += 1

        self._run(writer, deadline)
        return sum(done) * self.block_size, self.clock() - start

    @property
    def object_count(self) -> int:
        return len(self.objects)

    @property
    def block_count(self) -> int:
        return len(self.objects) * (self.object_size // self.block_size)

    def fill(self, start: int, seconds: float) -> Tuple[int, int, float]:
        """Write whole objects from the `start`-th on, as an image's first
        write does (each end to end in writes of at most FILL_WRITE bytes),
        `threads` objects at a time, starting new ones for about `seconds`
        (at most one chunk): how many objects are filled from the first on,
        bytes written, time taken.  ClusterError if a write failed."""
        if self.fill_data is None:
            self.fill_data = self.rng.randbytes(min(self.object_size, FILL_WRITE))
        data = self.fill_data

        def one(n: int) -> int:
            for off in range(0, self.object_size, len(data)):
                self.io.write(self.objects[n], data[:self.object_size - off], off)
            return self.object_size

        return self._each(one, start, len(self.objects), seconds)

    def overwrite(self, start: int, seconds: float) -> Tuple[int, int, float]:
        """Overwrite every block of the keyspace once, from the `start`-th
        block of a fixed scattered order on, for about `seconds` (at most one
        chunk): how many blocks are overwritten, bytes written, time taken.
        After the last, every object's extents are split as a client's
        random writes split them over time (what fio's random map does in
        one pass, where writes at random offsets would need several to reach
        most blocks).  ClusterError if a write failed."""
        blocks = self.object_size // self.block_size
        order = scattered(self.block_count)

        def one(i: int) -> int:
            b = order(i)
            self.io.write(self.objects[b // blocks], self.data, (b % blocks) * self.block_size)
            return self.block_size

        return self._each(one, start, self.block_count, seconds)

    def _each(self, one: Callable[[int], int], start: int, count: int,
              seconds: float) -> Tuple[int, int, float]:
        """`one(i)` for i from `start` to `count`, `threads` at a time,
        starting new ones for about `seconds` (at most one chunk); each
        started is finished: the next i, bytes written, time taken."""
        length = max(0.1, min(seconds, self.chunk_seconds))
        lock = threading.Lock()
        claimed = [start]
        written = [0] * self.threads
        began = self.clock()
        deadline = began + length

        def worker(t: int, failed: Callable[[], bool]) -> None:
            while self.clock() < deadline and not failed():
                with lock:
                    i = claimed[0]
                    if i >= count:
                        return
                    claimed[0] += 1
                written[t] += one(i)

        self._run(worker, deadline)
        return claimed[0], sum(written), self.clock() - began

    def _run(self, work: Callable[[int, Callable[[], bool]], None], deadline: float) -> None:
        """`work(i, failed)` in `threads` threads until each returns; the
        first ClusterError raised, once all are done."""
        errors: List[ClusterError] = []

        def worker(i: int) -> None:
            try:
                work(i, lambda: bool(errors))
            except ClusterError as e:
                errors.append(e)

        workers = [threading.Thread(target=worker, args=(i,), daemon=True,
                                    name=f'rocks_autotune.client.{i}')
                   for i in range(self.threads)]
        for w in workers:
            w.start()
        for w in workers:
            # librados waits for an OSD without end; a PG that stays inactive must
            # not hold the session (the thread is left to its write)
            w.join(max(0.0, deadline + HUNG_WRITE - self.clock()))
        if any(w.is_alive() for w in workers):
            raise ClusterError(f'client writes did not complete within {HUNG_WRITE:.0f}s')
        if errors:
            raise errors[0]

    def cleanup(self) -> int:
        """Remove every object of the namespace; how many there were."""
        names = self.io.objects()
        for name in names:
            self.io.remove(name)
        return len(names)


class LazyClientWorkload:
    """A ClientWorkload made on its first use (by `make`)."""
    block_size = 4096

    def __init__(self, make: Callable[[], ClientWorkload]) -> None:
        self.make = make
        self.load: Optional[ClientWorkload] = None

    def _load(self) -> ClientWorkload:
        if self.load is None:
            self.load = self.make()
        return self.load

    def drive(self, seconds: float, iops_estimate: Optional[float]) -> Tuple[int, float]:
        return self._load().drive(seconds, iops_estimate)

    def fill(self, start: int, seconds: float) -> Tuple[int, int, float]:
        return self._load().fill(start, seconds)

    def overwrite(self, start: int, seconds: float) -> Tuple[int, int, float]:
        return self._load().overwrite(start, seconds)

    @property
    def object_count(self) -> int:
        return self._load().object_count

    @property
    def block_count(self) -> int:
        return self._load().block_count
