"""What RocksDB says it wrote (flushes, compactions, the LSM's shape), from
`ceph tell osd.N dump_objectstore_kv_stats`.
Design: doc/dev/internals.rst, dev-internals-rocksdb."""
import json
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

# the statistics a window compares, as Tentacle names them
FLUSH_BYTES = 'rocksdb.flush.write.bytes'
COMPACT_WRITE_BYTES = 'rocksdb.compact.write.bytes'
COMPACT_READ_BYTES = 'rocksdb.compact.read.bytes'
WAL_BYTES = 'rocksdb.wal.bytes'
# a histogram of block sizes before compression: its SUM is the bytes
# compressed by flushes and compactions (blocks left uncompressed not in it)
COMPRESSED_RAW = 'rocksdb.bytes.compressed'
TICKERS = (FLUSH_BYTES, COMPACT_WRITE_BYTES, COMPACT_READ_BYTES, WAL_BYTES, COMPRESSED_RAW)

_TICKER = re.compile(r'^(rocksdb\.[\w.]+) COUNT : (\d+)$')
_HISTOGRAM = re.compile(r'^(rocksdb\.[\w.]+) P50 : .* SUM : (\d+)$')
_CF = re.compile(r'^\*\* Compaction Stats \[(.+)\] \*\*$')
_LEVEL = re.compile(r'^L(\d+)$')
_UNITS = {'B': 1, 'KB': 1 << 10, 'MB': 1 << 20, 'GB': 1 << 30, 'TB': 1 << 40}


@dataclass
class Level:
    files: int
    size: int  # bytes
    # compactions whose output landed at this level; at L0, RocksDB counts flushes
    compactions: int


@dataclass
class KvStats:
    tickers: Dict[str, int] = field(default_factory=dict)
    # column family -> level number -> Level (levels that hold nothing are left out)
    levels: Dict[str, Dict[int, Level]] = field(default_factory=dict)

    def shape(self) -> Dict[str, List[Tuple[int, int, int]]]:
        """Per family, (level, files, bytes) of the levels that hold data."""
        return {cf: [(n, lv.files, lv.size) for n, lv in sorted(ls.items()) if lv.files]
                for cf, ls in sorted(self.levels.items())}


def _documents(text: str) -> List[List[Tuple[str, Any]]]:
    """Each JSON document in `text`, as its top-level (key, value) pairs in order."""
    dec = json.JSONDecoder(object_pairs_hook=list)
    docs: List[List[Tuple[str, Any]]] = []
    text, pos = text.rstrip(), 0
    while pos < len(text):  # from the next document's start
        doc, pos = dec.raw_decode(text, len(text) - len(text[pos:].lstrip()))
        if not isinstance(doc, list):
            raise ValueError('dump_objectstore_kv_stats: not a JSON object')
        docs.append(doc)
    return docs


def _size(number: str, unit: str) -> int:
    if unit not in _UNITS:
        raise ValueError(f'unknown size unit {unit!r}')
    return int(float(number) * _UNITS[unit])


def parse(text: str) -> KvStats:
    """KvStats from `dump_objectstore_kv_stats`; ValueError with no
    statistics (RocksDB perf off: the OSD answers with an error)."""
    stats = KvStats()
    header: Optional[List[str]] = None
    cf = ''
    found = False
    for doc in _documents(text):
        for key, value in doc:
            if key in ('rocksdb_extended_statistics', 'rocksdb_compaction_statistics'):
                found = True
            if not isinstance(value, str):
                continue
            line = value.strip()
            m = _TICKER.match(line) or _HISTOGRAM.match(line)
            if m:
                stats.tickers[m.group(1)] = int(m.group(2))
                continue
            m = _CF.match(line)
            if m:
                cf, header = m.group(1), None
                continue
            words = line.split()
            if not words:
                continue
            if words[0] in ('Level', 'Priority'):
                header = words if words[0] == 'Level' else None
                continue
            lv = _LEVEL.match(words[0])
            if header is None or not lv or len(words) != len(header) + 1:
                continue
            # the size is two words (number, unit): the header's one
            row = dict(zip(header[3:], words[4:]))
            stats.levels.setdefault(cf, {})[int(lv.group(1))] = Level(
                files=int(words[1].split('/')[0]), size=_size(words[2], words[3]),
                compactions=int(row.get('Comp(cnt)', 0)))
    if not found:
        raise ValueError('dump_objectstore_kv_stats holds no RocksDB statistics '
                         '(rocksdb_perf off, or the OSD not restarted since it was set)')
    return stats


# What a window keeps of a read in the session's head (bounded by the mgr's
# store): the tickers it compares and, per family, [flushes, compactions
# landing below L0, bytes in L0 and L1]
Counts = Dict[str, Any]


def counts(s: KvStats) -> Counts:
    return {'t': {k: s.tickers[k] for k in TICKERS if k in s.tickers},
            'c': {cf: [ls[0].compactions if 0 in ls else 0,
                       sum(lv.compactions for n, lv in ls.items() if n > 0),
                       sum(lv.size for n, lv in ls.items() if n <= 1)]
                  for cf, ls in sorted(s.levels.items())}}


@dataclass
class KvDelta:
    """What RocksDB wrote in a window, from two reads of one OSD process."""
    wal_bytes: int
    flush_bytes: int
    compaction_bytes: int
    # the family that flushed most often ('' if none did), and its compactions below L0
    busiest_cf: str
    flushes: int
    compactions: int
    compressed_raw: int = 0  # the bytes compressed, before (COMPRESSED_RAW)
    # the most one compaction below L0 writes (0: none): the L0 and L1 bytes
    # at the end of the largest family that compacted (window edges may take
    # one in or leave one out)
    unit: int = 0


def delta(before: Counts, after: Counts) -> KvDelta:
    """Between two `counts` of one OSD process."""
    def tick(name: str) -> int:
        return int(after['t'].get(name, 0)) - int(before['t'].get(name, 0))

    def grew(cf: str, i: int) -> int:
        # 0: flushes, by the L0 row's count (its bytes, in 0.1 GB steps, are too
        # coarse); 1: compactions below L0
        return int(after['c'][cf][i]) - int(before['c'].get(cf, [0, 0])[i])

    busiest = max(sorted(after['c']), key=lambda cf: grew(cf, 0), default='')
    unit = max((int(n[2]) for cf, n in after['c'].items() if len(n) > 2 and grew(cf, 1) > 0),
               default=0)
    if busiest and grew(busiest, 0) <= 0:
        busiest = ''
    return KvDelta(wal_bytes=tick(WAL_BYTES), flush_bytes=tick(FLUSH_BYTES),
                   compaction_bytes=tick(COMPACT_WRITE_BYTES), busiest_cf=busiest,
                   compressed_raw=tick(COMPRESSED_RAW) if COMPRESSED_RAW in before['t'] else 0,
                   flushes=grew(busiest, 0) if busiest else 0,
                   compactions=grew(busiest, 1) if busiest else 0, unit=unit)
