"""The canary actuator: what the tuner changes on the canary OSD, and undoes.

Only the `osd.N` config mask is touched.  The values at that mask (or their
absence) are saved before the first change, and `restore` puts exactly those
back: `config set` for a saved value, `config rm` for an absent one.
"""
from typing import Dict, Optional

from .cluster import Cluster
from .rocksdb_options import parse_options, render_options
from .workload import BENCH_LIMIT_OPTION

OPTIONS = 'bluestore_rocksdb_options'
ANNEX = 'bluestore_rocksdb_options_annex'
SAVED = (OPTIONS, ANNEX, BENCH_LIMIT_OPTION)

Originals = Dict[str, Optional[str]]


class Canary:
    def __init__(self, cluster: Cluster, osd: int) -> None:
        self.cluster = cluster
        self.osd = osd
        self.who = f'osd.{osd}'

    def snapshot(self) -> Originals:
        """The values set at exactly this OSD's mask; None where none is set."""
        return {name: self.cluster.config_get_own(self.who, name) for name in SAVED}

    def running_base(self) -> str:
        """The options RocksDB gets on the canary now: the annex folded in.

        The annex is appended after the options string, so its keys win.
        """
        opts = parse_options(self.cluster.config_get(self.who, OPTIONS))
        annex = self.cluster.config_get(self.who, ANNEX)
        if annex.strip():
            opts.update(parse_options(annex))
        return render_options(opts)

    def apply(self, options: str, annexed: bool) -> None:
        """Set a full options string on the canary's mask.

        When the running config had an annex, it is folded into `options`
        already, so the annex is blanked at the mask for the trial: otherwise
        it would override the candidate's keys.
        """
        self.cluster.config_set(self.who, OPTIONS, options)
        if annexed:
            self.cluster.config_set(self.who, ANNEX, '')

    def set_bench_limit(self, value: int) -> None:
        self.cluster.config_set(self.who, BENCH_LIMIT_OPTION, str(value))

    def restore(self, originals: Originals) -> None:
        for name in SAVED:
            value = originals.get(name)
            if value is None:
                if self.cluster.config_get_own(self.who, name) is not None:
                    self.cluster.config_rm(self.who, name)
            else:
                self.cluster.config_set(self.who, name, value)

    def is_restored(self, originals: Originals) -> bool:
        return self.snapshot() == {name: originals.get(name) for name in SAVED}
