"""The canary actuator: what the tuner changes at the canary's osd.N mask,
and restores (but not over someone else's value since: `foreign`).
"""
import hashlib
from typing import Collection, Dict, List, Mapping, Optional, Set, Tuple

from .cluster import Cluster, ConfigEntries
from .rocksdb_options import parse_options, render_options
from .workload import BENCH_LIMIT_OPTION, BENCH_LIMIT_VALUE

OPTIONS = 'bluestore_rocksdb_options'
ANNEX = 'bluestore_rocksdb_options_annex'
CFS = 'bluestore_rocksdb_cfs'
# RocksDB's statistics (read at the DB's open), which dump_objectstore_kv_stats
# prints (rocksdb_stats.py): on for the session
STATS_OPTIONS = ('rocksdb_perf', 'rocksdb_collect_extended_stats',
                 'rocksdb_collect_compaction_stats')
SAVED = (OPTIONS, ANNEX, BENCH_LIMIT_OPTION) + STATS_OPTIONS
# what every trial is built on, at each mask that reaches the canary (osd,
# osd/class:ssd, osd/host:..., osd.N): a change there makes the candidates stale
WATCHED = (OPTIONS, ANNEX, CFS)
# why the options go to each OSD's own mask, never to osd/class:<class>
CLASS_MASK_NOTE = (
    "each OSD's own mask (osd.N), not osd/class:{cls}: an OSD reads the options when it "
    'opens BlueStore, before the monitors give it what is set at a class mask, so it would '
    'not run options set there (seen on Tentacle 20.2.4; Ceph tracker 65228)')

Originals = Dict[str, Optional[str]]

# a watched value longer than this is kept in the session's head as its
# length and digest: someone else's long value must not grow the head past
# what the mgr's store holds
MAX_KEPT = 2048


def kept(value: str) -> str:
    if len(value) <= MAX_KEPT:
        return value
    return f'<{len(value)} bytes, sha256 {hashlib.sha256(value.encode()).hexdigest()[:16]}>'


def _show(value: Optional[str]) -> str:
    if value is None:
        return '(not set)'
    return f"'{value}'" if len(value) <= MAX_KEPT else f"'{value[:60]}...' ({len(value)} bytes)"


def ours(originals: Originals, applied: Collection[str], annexed: bool,
         bench_limit: bool) -> Dict[str, Set[Optional[str]]]:
    """What a session may have left at the canary's own mask: the originals,
    the strings it set (`applied`), the blank annex, bench limit, statistics."""
    return {
        OPTIONS: {originals[OPTIONS]} | set(applied),
        ANNEX: {originals[ANNEX]} | ({''} if annexed else set()),
        BENCH_LIMIT_OPTION: {originals[BENCH_LIMIT_OPTION]} | (
            {str(BENCH_LIMIT_VALUE)} if bench_limit else set()),
        **{name: {originals[name], 'true'} for name in STATS_OPTIONS if name in originals},
    }


class Canary:
    def __init__(self, cluster: Cluster, osd: int) -> None:
        self.cluster = cluster
        self.osd = osd
        self.who = f'osd.{osd}'

    def snapshot(self) -> Originals:
        """The values set at exactly this OSD's mask; None where none is set."""
        return {name: self.cluster.config_get_own(self.who, name) for name in SAVED}

    def running_base(self) -> str:
        """The options RocksDB gets on the canary now, the annex (whose keys win) folded in."""
        opts = parse_options(self.cluster.config_get(self.who, OPTIONS))
        annex = self.cluster.config_get(self.who, ANNEX)
        if annex.strip():
            opts.update(parse_options(annex))
        return render_options(opts)

    def apply(self, options: str, annexed: bool) -> None:
        """Set a full options string on the canary's mask; `annexed`: the
        annex, folded into `options` already, is blanked (it would win)."""
        self.cluster.config_set(self.who, OPTIONS, options)
        if annexed:
            self.cluster.config_set(self.who, ANNEX, '')

    def set_bench_limit(self, value: int) -> None:
        self.cluster.config_set(self.who, BENCH_LIMIT_OPTION, str(value))

    def collect_rocksdb_stats(self) -> None:
        for name in STATS_OPTIONS:
            self.cluster.config_set(self.who, name, 'true')

    def restore(self, originals: Originals, keep: Collection[str] = ()) -> None:
        """Put the originals back, but for `keep`: names someone else set since."""
        for name in (n for n in SAVED if n not in keep):
            value = originals[name]
            if value is not None:
                self.cluster.config_set(self.who, name, value)
            elif self.cluster.config_get_own(self.who, name) is not None:
                self.cluster.config_rm(self.who, name)

    def is_restored(self, originals: Originals, keep: Collection[str] = ()) -> bool:
        now = self.snapshot()
        return all(now[name] == originals[name] for name in SAVED if name not in keep)

    def entries(self) -> ConfigEntries:
        """The watched options at every mask that reaches the canary, and the
        saved ones at its own."""
        return {who: {name: kept(v) for name, v in names.items()} for who, names in
                self.cluster.config_entries(self.osd, WATCHED + SAVED).items()}

    def foreign(self, seen: ConfigEntries,
                ours: Mapping[str, Collection[Optional[str]]]) -> Tuple[List[str], Set[str]]:
        """Someone else's changes since `seen` (`entries` at the start): a
        saved name at the canary's mask holding a value not in `ours`, any
        other watched entry that differs; a line each, and the saved names
        others hold (the restore leaves them)."""
        now = self.entries()
        changes: List[str] = []
        held: Set[str] = set()
        own = now.get(self.who, {})
        for name in SAVED:
            if name not in ours:
                continue
            if own.get(name) not in {None if v is None else kept(v) for v in ours[name]}:
                held.add(name)
                changes.append(f'{self.who} {name}: now {_show(own.get(name))}, '
                               'not a value this session set')
        for who in sorted(set(seen) | set(now)):
            for name in WATCHED:
                if who == self.who and name in SAVED:
                    continue  # the session's own changes: judged above
                old, new = seen.get(who, {}).get(name), now.get(who, {}).get(name)
                if old != new:
                    changes.append(f'{who} {name}: {_show(old)} -> {_show(new)}')
        return changes, held
