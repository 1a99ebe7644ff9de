"""RocksDB option strings as Ceph's BlueStore parses them, refusing anything
ambiguous (a misread string would be written back to a live OSD).
Design: doc/dev/internals.rst, dev-internals-rocksdb."""
import re
from dataclasses import dataclass, field
from typing import Dict, List, Mapping


class OptionStringError(ValueError):
    """An option string, option value or compression name we refuse to use."""


# Config values this long are certainly not hand-written RocksDB options;
# refusing them keeps a corrupted value out of the mgr's KV store and logs.
MAX_OPTIONS_BYTES = 64 * 1024

_SEPARATORS = re.compile(r'[,;\n]')
_KEY = re.compile(r'[A-Za-z0-9_.]+')
# Newline separates items and tab is plain whitespace; every other control
# character is a sign of corruption (or of something pasted from a terminal).
_CONTROL = re.compile(r'[\x00-\x08\x0b-\x1f\x7f]')


def parse_options(s: str) -> Dict[str, str]:
    if not isinstance(s, str):
        raise OptionStringError(f'option string must be str, not {type(s).__name__}')
    _check_length(s)
    m = _CONTROL.search(s)
    if m:
        raise OptionStringError(
            f'control character {m.group()!r} at offset {m.start()} in option string')
    opts: Dict[str, str] = {}
    for raw in _SEPARATORS.split(s):
        item = raw.strip()
        if not item:
            continue  # Ceph ignores empty items too (",," or a trailing ',')
        if '=' not in item:
            raise OptionStringError(f'option {item!r} has no "=value"')
        key, value = (part.strip() for part in item.split('=', 1))
        if not key:
            raise OptionStringError(f'option {item!r} has an empty name')
        if not _KEY.fullmatch(key):
            raise OptionStringError(f'option name {key!r} is not made of [A-Za-z0-9_.]')
        if not value:
            raise OptionStringError(f'option {key!r} has an empty value')
        if key in opts:
            # Ceph would silently keep the last one; an admin who wrote it
            # twice probably did not mean that, so make them choose.
            raise OptionStringError(f'option {key!r} is given more than once')
        opts[key] = value
    return opts


def render_options(opts: Mapping[str, str]) -> str:
    """Join options with ',' so that ``parse_options`` gives them back
    unchanged; OptionStringError for what would not survive the round trip."""
    items = []
    for key, value in opts.items():
        if not isinstance(key, str) or not _KEY.fullmatch(key):
            raise OptionStringError(f'option name {key!r} is not made of [A-Za-z0-9_.]')
        if not isinstance(value, str) or not value or value != value.strip():
            raise OptionStringError(
                f'option {key!r} value {value!r} is empty or has surrounding whitespace')
        if _SEPARATORS.search(value) or _CONTROL.search(value):
            raise OptionStringError(
                f'option {key!r} value {value!r} holds a separator or control character')
        items.append(f'{key}={value}')
    return _check_length(','.join(items))


def _check_length(s: str) -> str:
    if len(s.encode('utf-8')) > MAX_OPTIONS_BYTES:
        raise OptionStringError(f'option string is longer than {MAX_OPTIONS_BYTES} bytes')
    return s


# RocksDB's size suffixes are binary (k = 1 << 10).  The 'B' / 'iB' tails are
# not RocksDB syntax (it ignores what follows the suffix letter) but appear
# in published tunings, e.g. compaction_readahead_size=2MB.
_SIZE = re.compile(r'([0-9]+)(?:([kKmMgGtT])(?:i?B)?)?')
_SHIFT = {'k': 10, 'm': 20, 'g': 30, 't': 40}
_UINT64_MAX = (1 << 64) - 1


def parse_size(v: str) -> int:
    """Parse a RocksDB size ('268435456', '256M', '2MB', '1GiB') into bytes."""
    if not isinstance(v, str):
        raise OptionStringError(f'size must be str, not {type(v).__name__}')
    m = _SIZE.fullmatch(v.strip())
    if not m:
        raise OptionStringError(f'{v!r} is not a size (an integer with optional K/M/G/T)')
    n = int(m.group(1))
    if m.group(2):
        n <<= _SHIFT[m.group(2).lower()]
    if n > _UINT64_MAX:
        raise OptionStringError(f'size {v!r} does not fit in 64 bits')
    return n


# Short names used in the search space and UI -> RocksDB enum names.
COMPRESSIONS: Dict[str, str] = {
    'none': 'kNoCompression',
    'lz4': 'kLZ4Compression',
    'snappy': 'kSnappyCompression',
}
ROCKSDB_COMPRESSIONS: Dict[str, str] = {v: k for k, v in COMPRESSIONS.items()}


def compression_from_rocksdb(value: str) -> str:
    """'kLZ4Compression' -> 'lz4'; other RocksDB algorithms are out of scope."""
    try:
        return ROCKSDB_COMPRESSIONS[value]
    except KeyError:
        raise OptionStringError(
            f'unsupported RocksDB compression {value!r} '
            f'(known: {", ".join(ROCKSDB_COMPRESSIONS)})') from None


# BlueStore's default bluestore_rocksdb_options in Pacific 16.2.x.
PACIFIC_DEFAULT = (
    'compression=kNoCompression,max_write_buffer_number=4,'
    'min_write_buffer_number_to_merge=1,recycle_log_file_num=4,'
    'write_buffer_size=268435456,writable_file_max_buffer_size=0,'
    'compaction_readahead_size=2097152,max_background_compactions=2,'
    'max_total_wal_size=1073741824'
)

# The "New Tuning" of the Ceph RocksDB tuning deep-dive (seed 000), verbatim:
# 128 x 8 MiB memtables flushed 16 at a time, L0 trigger 8, L1 = 1 GiB.
NEW_TUNING = (
    'compression=kNoCompression,max_write_buffer_number=128,'
    'min_write_buffer_number_to_merge=16,compaction_style=kCompactionStyleLevel,'
    'write_buffer_size=8388608,max_background_jobs=4,'
    'level0_file_num_compaction_trigger=8,max_bytes_for_level_base=1073741824,'
    'max_bytes_for_level_multiplier=8,compaction_readahead_size=2MB,'
    'max_total_wal_size=1073741824,writable_file_max_buffer_size=0'
)

# Same with LZ4: lower RGW write-amp, slower bucket listing (seed 000).
NEW_TUNING_LZ4 = NEW_TUNING.replace('compression=kNoCompression',
                                    'compression=kLZ4Compression')

# A small-memtable string of the kind blog posts spread (issue 42): 4 MiB
# memtables flushed one by one, L0 compacted at 2 files, LZ4; on the lab it
# writes about twice the RocksDB bytes of the default-class strings
BLOG_SMALL = (
    'compression=kLZ4Compression,max_write_buffer_number=4,'
    'min_write_buffer_number_to_merge=1,compaction_style=kCompactionStyleLevel,'
    'write_buffer_size=4194304,max_background_jobs=4,'
    'level0_file_num_compaction_trigger=2,max_bytes_for_level_base=268435456,'
    'max_bytes_for_level_multiplier=8,compaction_readahead_size=2MB,'
    'max_total_wal_size=1073741824,writable_file_max_buffer_size=0'
)


@dataclass(frozen=True)
class ColumnFamily:
    """One column family definition of BlueStore's RocksDB sharding."""
    name: str
    shards: int = 1
    # the memtable options it sets for itself (they beat bluestore_rocksdb_options)
    memtable: Dict[str, int] = field(default_factory=dict)


_CF_DEF = re.compile(r'([A-Za-z]+)(?:\(([0-9]+)(?:,[0-9]*-?[0-9]*)?\))?(?:=(.*))?')
_CF_OPT = re.compile(r'(?:^|[,;])\s*(max_write_buffer_number|min_write_buffer_number_to_merge'
                     r'|write_buffer_size)\s*=\s*([^,;{}]+)')


def parse_sharding(s: str) -> List[ColumnFamily]:
    """``bluestore_rocksdb_cfs`` -> the column families an OSD made with it
    runs, RocksDB's 'default' first: 'm(3) p(3,0-12) L=min_write_buffer_number_to_merge=32'
    is 3 + 3 shards and L.  Only a family's memtable options are read."""
    cfs = [ColumnFamily('default')]
    for token in (s or '').split():
        m = _CF_DEF.fullmatch(token)
        if not m:
            raise OptionStringError(f'column family definition {token!r} is not '
                                    'name[(shards[,range])][=options]')
        shards = int(m.group(2) or 1)
        if shards < 1:
            raise OptionStringError(f'column family {token!r} has no shards')
        memtable = {k: parse_size(v) for k, v in _CF_OPT.findall(m.group(3) or '')}
        cfs.append(ColumnFamily(m.group(1), shards, memtable))
    return cfs
