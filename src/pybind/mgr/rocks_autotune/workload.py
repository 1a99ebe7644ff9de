"""The load a measurement window runs under (client, osd-bench, live), in chunks
of a few seconds (a stop or abort is seen between chunks).
Design: doc/dev/internals.rst, dev-internals-load."""
import itertools
import logging
import math
import random
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Deque, Dict, Iterable, List, Optional, Protocol, Sequence, Tuple

from .cluster import NO_OSD, Cluster, ClientIo, ClusterError, PgInfo, PoolInfo
from .placement import pg_of
from .record import Record

log = logging.getLogger(__name__)

# osd bench caps small writes at max_iops x osd_bench_duration (30 s): the
# canary gets a high cap for the session, its own value back after.
BENCH_LIMIT_OPTION = 'osd_bench_small_size_max_iops'
BENCH_LIMIT_VALUE = 100000
BENCH_MAX_OPS = BENCH_LIMIT_VALUE * 30
CLIENT, OSD_BENCH, LIVE = 'client', 'osd-bench', 'live'
BLOCK_SIZE = 4096  # a client write's
WORKLOADS = (CLIENT, OSD_BENCH, LIVE)
DEFAULT_WORKLOAD = CLIENT
RENAMED = {'bench': OSD_BENCH}  # the name until issue 26: a start under it names the new one
NAMESPACE = 'rocks_autotune'
HUNG_WRITE = 60.0  # s a chunk's write may take before the chunk fails
# s a try at removing the client load's objects may take (on the serve
# thread), and how often an ended session tries again while some are left
CLEANUP_SECONDS, CLEANUP_RETRY = 60.0, 300.0
# an object is filled in writes of at most this (RBD's default object size)
FILL_WRITE = 4 << 20
# the most bytes the load's writes in flight hold (client_threads of a fill's
# 4-MiB writes would hold GiBs of the mgr's memory)
IN_FLIGHT_BYTES = 64 << 20
# a read probe's readers at most: a latency probe, not a load
# (client_threads may be hundreds)
READERS = 16
# starts an operation and gives the call that waits for it, and its bytes
Op = Tuple[Callable[[], Callable[[], None]], int]


class Workload(Protocol):
    block_size: int

    @property
    def last_reference(self) -> Optional[int]:
        """The split design's group R's bytes in the last `drive` (None: no group R)."""

    def drive(self, seconds: float, iops_estimate: Optional[float]) -> Tuple[int, float]:
        """Write for about `seconds` (at most one chunk); bytes written and time taken."""


class KeyspaceWorkload(Workload, Protocol):
    """A load over objects of its own, which it can write end to end first."""
    @property
    def object_count(self) -> int: ...

    @property
    def block_count(self) -> int: ...

    def fill(self, start: int, seconds: float) -> Tuple[int, int, float]: ...

    def overwrite(self, start: int, seconds: float) -> Tuple[int, int, float]: ...


@dataclass
class BenchWorkload:
    cluster: Cluster
    osd: int
    block_size: int = 4096
    object_size: int = 4 << 20
    object_num: int = 16
    chunk_seconds: float = 5.0
    last_reference: Optional[int] = field(default=None, init=False)  # no reference group

    def drive(self, seconds: float, iops_estimate: Optional[float]) -> Tuple[int, float]:
        est = iops_estimate or 500.0  # a first chunk's guess, quick on any drive
        ops = int(min(BENCH_MAX_OPS, max(200, est * min(seconds, self.chunk_seconds))))
        r = self.cluster.bench(self.osd, ops * self.block_size, self.block_size,
                               self.object_size, self.object_num)
        return int(r['bytes_written']), float(r['elapsed_sec'])


def client_pool(pools: Dict[int, PoolInfo], pgs: Sequence[PgInfo], osds: Sequence[int],
                wanted: str = '') -> Tuple[PoolInfo, List[int], List[int]]:
    """The pool the client load writes to (`wanted`, or the replicated pool
    with most PGs served, ties: the lowest id), its PG seeds every OSD of
    `osds` serves, and those whose up set holds none (a split's group R).
    ValueError naming why none will do."""
    served: Dict[int, List[int]] = {}
    for pg in pgs:
        if all(o in pg.up for o in osds):
            served.setdefault(pg.pool, []).append(pg_seed(pg))
    if wanted:
        chosen = [p for p in pools.values() if p.name == wanted]
        if not chosen:
            raise ValueError(f'no pool named {wanted!r}')
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
    without = sorted(pg_seed(pg) for pg in pgs
                     if pg.pool == pool.id and not any(o in pg.up for o in osds))
    return pool, sorted(served[pool.id]), without


def pg_seed(pg: PgInfo) -> int:
    """The PG's seed: the part of its pgid after the pool's, in hex."""
    return int(pg.pgid.split('.')[1], 16)


def up_osds(pgs: Sequence[PgInfo], pool: int, seeds: Sequence[int]) -> List[int]:
    wanted = set(seeds)
    return sorted({o for pg in pgs if pg.pool == pool and pg_seed(pg) in wanted
                   for o in pg.up if o != NO_OSD})


# a split needs this many reference PGs (on fewer, their own queues say more
# than the machine does), and hashes at most this many names to name a group
MIN_REFERENCE_PGS = 4
MAX_NAME_TRIES = 2_000_000
# the most PGs a group writes (the session keeps their seeds): more than a
# canary has at Ceph's 100 PGs per OSD, so C is all of them, and hundreds of
# OSDs' for R; about 2 KiB of the head at any pool size
GROUP_PGS = 256


def sample(seeds: Sequence[int]) -> List[int]:
    """At most GROUP_PGS of the seeds, by an even stride over them sorted
    (CRUSH places a PG by its seed's hash: any stride is a fair draw)."""
    s = sorted(seeds)
    n = len(s)
    return s if n <= GROUP_PGS else [s[i * n // GROUP_PGS] for i in range(GROUP_PGS)]


def split_refusal(ref: Sequence[int], pg_num: int, count: int) -> str:
    """Why no split of `count` objects a group, R on PGs `ref` of `pg_num`
    ('' when there is one)."""
    if len(ref) < MIN_REFERENCE_PGS:
        return (f'{len(ref)} of its {pg_num} PGs leave the canary out, fewer than the '
                f'{MIN_REFERENCE_PGS} a reference group needs')
    if count * pg_num / len(ref) > MAX_NAME_TRIES:
        return (f'naming {count} objects in {len(ref)} of its PGs without the canary would '
                f'hash about {count * pg_num // len(ref)} names')
    return ''


def scattered(n: int) -> Callable[[int], int]:
    """A fixed order of 0..n-1 that puts neighbours far apart: i -> a*i mod n,
    a near n/phi and coprime to n (a bijection with no table)."""
    a = max(1, int(n * 0.6180339887))
    while math.gcd(a, n) != 1:
        a += 1
    return lambda i: (a * i) % n


def client_objects(prefix: str, count: int, pg_num: int, seeds: Sequence[int]) -> List[str]:
    """The first `count` names prefix.0, prefix.1, ... whose PG is one of `seeds`."""
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


@dataclass(frozen=True)
class ReadProbe(Record):
    """A read probe's figures (ClientWorkload.read_probe)."""
    reads: int
    seconds: float
    iops: float
    mean_ms: float
    p99_ms: float

    @classmethod
    def of(cls, latencies: Sequence[float], seconds: float) -> 'ReadProbe':
        """Of reads that took `latencies` (s) over `seconds`."""
        n = len(latencies)
        if not n:
            return cls(0, seconds, 0.0, 0.0, 0.0)
        ordered = sorted(latencies)
        p99 = ordered[math.ceil(0.99 * n) - 1]  # the nearest rank
        return cls(n, seconds, n / seconds if seconds > 0 else 0.0,
                   1000.0 * sum(ordered) / n, 1000.0 * p99)


@dataclass
class ClientRecord(Record):
    """The session's `client`: where the load's objects are (a rescue's knows
    only the pool; group R: session_start.design_of), and their removal."""
    pool: str
    pg_num: int
    seeds: List[int]  # group C's PGs, at most GROUP_PGS
    count: Optional[int]  # objects a group; None: a rescue's
    removed: Optional[int] = None  # how many went, once none is left
    design: Optional[str] = None  # split | sequential, and why (design_why)
    ref_seeds: Optional[List[int]] = None
    ref_osds: Optional[int] = None
    shared_host: Optional[bool] = None  # an OSD of R is on the canary's host
    design_why: Optional[str] = None
    # the last removal's time; if it left some: how many went, are left, and why
    tried: Optional[float] = None
    gone: Optional[int] = None
    left: Optional[int] = None
    remove_error: Optional[str] = None
    # as stored and shown: None left out, but for count and removed
    OMIT_NONE = ('design', 'ref_seeds', 'ref_osds', 'shared_host', 'design_why', 'tried', 'gone',
                 'left', 'remove_error')


def pipelined(items: Iterable[Sequence[Op]], depth: int,
              going: Callable[[], bool]) -> Tuple[int, int]:
    """Start each item's operations (an item's are started together, as an
    object's fill) while `going()`, at most `depth` in flight, as an RBD
    client's queue keeps them: items started, and bytes, once all are done."""
    pending: Deque[Tuple[Callable[[], None], int]] = deque()
    started = done = 0
    for item in items:
        if not going():
            break
        for start, nbytes in item:
            while len(pending) >= depth:
                wait, n = pending.popleft()
                wait()
                done += n
            pending.append((start(), nbytes))
        started += 1
    for wait, n in pending:
        wait()
        done += n
    return started, done


class ClientWorkload:
    def __init__(self, io: ClientIo, objects: Sequence[str], object_size: int,
                 block_size: int = BLOCK_SIZE, in_flight: int = 16, chunk_seconds: float = 5.0,
                 seed: int = 0, clock: Callable[[], float] = time.monotonic,
                 reference: Sequence[str] = ()) -> None:
        if object_size < block_size:
            raise ValueError('objects smaller than a write')
        self.io = io
        self.objects = list(objects)
        # group R (none: C alone): filled after C, so that its writes
        # overwrite as C's do (not allocate, growing R's OSDs' data through
        # the session: demo run 32); only C's blocks are overwritten
        self.reference = list(reference)
        self.last_reference: Optional[int] = None
        self.object_size = object_size
        self.block_size = block_size
        self.blocks = object_size // block_size  # an object's
        self.in_flight = in_flight  # writes (client_threads)
        self.chunk_seconds = chunk_seconds
        self.rng = random.Random(seed)
        self.clock = clock
        # incompressible, as a client's data mostly is (each write's made new: _fresh)
        self.data = self.rng.randbytes(block_size)
        self.fill_data: Optional[bytes] = None
        # the probe in flight: latencies and seconds so far (a new mgr restarts it)
        self._probe: Tuple[List[float], float] = ([], 0.0)

    def drive(self, seconds: float, iops_estimate: Optional[float]) -> Tuple[int, float]:
        """Write for about `seconds` (at most a chunk), `in_flight` writes in
        flight on C (and as many on R): C's bytes and time taken (R's bytes in
        `last_reference`).  ClusterError if a write failed."""
        groups = [self.objects] + ([self.reference] if self.reference else [])
        done = [0] * len(groups)
        seeds = [self.rng.getrandbits(32) for _ in groups]

        def writer(i: int, going: Callable[[], bool]) -> None:
            rng = random.Random(seeds[i])
            writes = ([self._write(rng.choice(groups[i]), self._fresh(self.data, rng),
                                   rng.randrange(self.blocks) * self.block_size)]
                      for _ in itertools.count())
            done[i] = pipelined(writes, self.in_flight, going)[1]

        took = self._run(writer, seconds, len(groups))
        self.last_reference = done[1] if self.reference else None
        return done[0], took

    def _write(self, obj: str, data: bytes, offset: int) -> Op:
        return (lambda: self.io.aio_write(obj, data, offset)), len(data)

    def _fresh(self, data: bytes, rng: random.Random) -> bytes:
        """`data` with each block's first 8 bytes drawn anew.  BlueStore keeps
        a checksum of every block in the object's extent map, in RocksDB: one
        block written everywhere makes those compress (LZ4, Snappy) as no
        client's data does, and a compressed string's write-amp read low
        (doc/bench/wear-floor.md, the load's data)."""
        buf = bytearray(data)
        for off in range(0, len(buf), self.block_size):
            buf[off:off + 8] = rng.randbytes(8)
        return bytes(buf)

    def read_probe(self, seconds: float,
                   objects: Optional[Sequence[str]] = None) -> Optional[ReadProbe]:
        """A chunk of a probe of `seconds` of reads: `in_flight` readers
        (READERS at most) timing block reads at random offsets of `objects`
        (default C's, never R's).
        The probe once its seconds are read (at once with no object), None
        before.  ClusterError if a read failed (the probe is dropped)."""
        chosen = self.objects if objects is None else list(objects)
        latencies, took = self._probe
        self._probe = ([], 0.0)
        if not chosen:
            return ReadProbe.of([], 0.0)
        readers = min(self.in_flight, READERS)
        got: List[List[float]] = [[] for _ in range(readers)]
        seeds = [self.rng.getrandbits(32) for _ in range(readers)]

        def reader(i: int, going: Callable[[], bool]) -> None:
            rng = random.Random(seeds[i])
            while going():
                obj, offset = rng.choice(chosen), rng.randrange(self.blocks) * self.block_size
                began = self.clock()
                self.io.read(obj, self.block_size, offset)
                got[i].append(self.clock() - began)

        took += self._run(reader, seconds - took, readers)
        latencies += [x for g in got for x in g]
        if took < seconds:
            self._probe = (latencies, took)
            return None
        return ReadProbe.of(latencies, took)

    @property
    def object_count(self) -> int:  # the fill's: C's, then R's
        return len(self.objects) + len(self.reference)

    @property
    def block_count(self) -> int:
        return len(self.objects) * self.blocks

    def fill(self, start: int, seconds: float) -> Tuple[int, int, float]:
        """Write whole objects (C's, then R's) from the `start`-th on, as an
        image's first write does (in writes of at most FILL_WRITE, `in_flight`
        at once), starting new ones for about `seconds`: objects filled so far, bytes written,
        time taken.  ClusterError if a write failed."""
        if self.fill_data is None:
            self.fill_data = self.rng.randbytes(min(self.object_size, FILL_WRITE))
        data = self.fill_data

        keyspace = self.objects + self.reference

        def one(n: int) -> List[Op]:
            return [self._write(keyspace[n], self._fresh(data[:self.object_size - off], self.rng),
                                off)
                    for off in range(0, self.object_size, len(data))]

        return self._each(one, start, len(keyspace), seconds, len(data))

    def overwrite(self, start: int, seconds: float) -> Tuple[int, int, float]:
        """Overwrite every block once, from the `start`-th of a scattered order
        on, for about `seconds`: blocks overwritten, bytes written, time taken.
        One pass splits extents as a client's random writes do over time (as
        fio's random map does).  ClusterError if a write failed."""
        order = scattered(self.block_count)

        def one(i: int) -> List[Op]:
            b = order(i)
            return [self._write(self.objects[b // self.blocks], self._fresh(self.data, self.rng),
                                (b % self.blocks) * self.block_size)]

        return self._each(one, start, self.block_count, seconds, self.block_size)

    def _each(self, one: Callable[[int], Sequence[Op]], start: int, count: int,
              seconds: float, size: int) -> Tuple[int, int, float]:
        """`one(i)`'s operations (of `size` bytes at most) for i from `start`
        to `count`, `in_flight` at once (IN_FLIGHT_BYTES at most), starting new
        ones for about `seconds`: the next i, bytes written, time taken."""
        got = [start, 0]
        depth = max(1, min(self.in_flight, IN_FLIGHT_BYTES // max(1, size)))

        def worker(_: int, going: Callable[[], bool]) -> None:
            n, got[1] = pipelined(map(one, range(start, count)), depth, going)
            got[0] = start + n

        took = self._run(worker, seconds, 1)
        return got[0], got[1], took

    def _run(self, work: Callable[[int, Callable[[], bool]], None], seconds: float,
             threads: int) -> float:
        """`work(i, going)` in `threads` threads, `going()` true
        for about `seconds` (at most a chunk) while none failed: the time
        taken once all returned, or the first ClusterError."""
        errors: List[ClusterError] = []
        start = self.clock()
        deadline = start + max(0.1, min(seconds, self.chunk_seconds))

        def worker(i: int) -> None:
            try:
                work(i, lambda: self.clock() < deadline and not errors)
            except ClusterError as e:
                errors.append(e)

        workers = [threading.Thread(target=worker, args=(i,), daemon=True,
                                    name=f'rocks_autotune.client.{i}')
                   for i in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            # librados waits without end: an inactive PG must not hold the
            # session (the thread is left to its I/O)
            w.join(max(0.0, deadline + HUNG_WRITE - self.clock()))
        if any(w.is_alive() for w in workers):
            raise ClusterError(f'client I/O did not complete within {HUNG_WRITE:.0f}s')
        if errors:
            raise errors[0]
        return self.clock() - start

    def cleanup(self, seconds: float) -> Tuple[int, int]:
        """Remove the namespace's objects for about `seconds`: how many went,
        how many are left.  ClusterError if one failed or hung (HUNG_WRITE)."""
        names = self.io.objects()
        deadline = self.clock() + seconds

        def one(i: int) -> List[Op]:
            return [((lambda: self.io.aio_remove(names[i])), 0)]

        gone = 0
        while gone < len(names) and self.clock() < deadline:
            gone = self._each(one, gone, len(names), deadline - self.clock(), 0)[0]
        return gone, len(names) - gone

    @classmethod
    def remove_objects(cls, rec: ClientRecord, cluster: Cluster, in_flight: int,
                       chunk_seconds: float, now: float) -> None:
        """Remove `rec`'s objects for CLEANUP_SECONDS at most (Session.tidy
        retries what is left), and record how it went in `rec`."""
        rec.tried = now
        try:
            # writes nothing: any object size will do
            load = cls(cluster.client_io(rec.pool, NAMESPACE), [], FILL_WRITE, in_flight=in_flight,
                       chunk_seconds=chunk_seconds)
            gone, left = load.cleanup(CLEANUP_SECONDS)
        except ClusterError as e:
            log.warning('removing the client workload\'s objects failed: %s', e)
            rec.remove_error = str(e)
            return
        gone += rec.gone or 0
        if left:
            rec.gone, rec.left = gone, left
            rec.remove_error = f'{left} left after {CLEANUP_SECONDS:.0f}s'
        else:
            rec.removed, rec.left, rec.remove_error = gone, 0, ''
