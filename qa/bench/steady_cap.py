#!/usr/bin/env python3
"""How much of the search space a steady window can judge, by WAL rate and
steady_window_limit.

Not a measurement: the search's own rule (SearchSpace.max_steady_bytes, set
by window.SteadyCap to the baseline runs' WAL rate times
steady_window_limit) applied to the points the optimizer draws (skopt's
random draws over the space's dimensions, as its constraint check draws
them).  Per WAL rate and limit: the share of the safe points whose steady
window (to a first compaction, then every column family's L0 cycle:
window.steady_window_bytes) fits, and whether the search keeps to them
(enough of them for the optimizer; else it searches as before and every
candidate over the bound ends "write-amp unknown").  The
options and sharding are the canary's (Tentacle's defaults by default, as
`ceph rocks-autotune status -f json` gives them as release_default and
sharding).

    python3 qa/bench/steady_cap.py [--options S] [--cfs S] [--max-memtable-bytes N]
"""
import argparse
import os
import sys
from typing import List, Sequence

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', '..', 'src', 'pybind', 'mgr'))
from rocks_autotune.optimizer import enough_safe_points, random_points  # noqa: E402
from rocks_autotune.rocksdb_options import parse_options, parse_sharding  # noqa: E402
from rocks_autotune.space import MiB, SearchSpace  # noqa: E402
from rocks_autotune.window import steady_window_bytes  # noqa: E402

TENTACLE = ('compression=kLZ4Compression,max_write_buffer_number=64,'
            'min_write_buffer_number_to_merge=6,compaction_style=kCompactionStyleLevel,'
            'write_buffer_size=16777216,max_background_jobs=4,'
            'level0_file_num_compaction_trigger=8,max_bytes_for_level_base=1073741824,'
            'max_bytes_for_level_multiplier=8,compaction_readahead_size=2MB,'
            'max_total_wal_size=1073741824,writable_file_max_buffer_size=0')
TENTACLE_CFS = ('m(3) p(3,0-12) O(3,0-13)=block_cache={type=binned_lru} '
                'L=min_write_buffer_number_to_merge=32 P=min_write_buffer_number_to_merge=32')
RATES = (0.25, 0.5, 1.0, 2.0, 5.0, 20.0)  # MiB/s
LIMITS = (1200, 3600, 7200)  # s
DRAWS = 20000


def table(options: str, cfs: str, max_memtable_bytes: int, rates: Sequence[float],
          limits: Sequence[int], seed: int = 0, draws: int = DRAWS) -> List[str]:
    space = SearchSpace(max_memtable_bytes=max_memtable_bytes, base=parse_options(options),
                        column_families=parse_sharding(cfs))
    safe = [space.from_point(x) for x in random_points(space, draws, seed)
            if space.point_is_safe(x)]
    wal = space.max_total_wal_size
    need = sorted(steady_window_bytes(c, space.column_families, wal) for c in safe)
    base = steady_window_bytes(space.base_candidate(), space.column_families, wal)
    out = [f'{len(safe)} safe points of {draws} drawn; WAL a steady window writes at most '
           f'(a first compaction, then every column family\'s L0 cycle): smallest '
           f'{need[0] / MiB:.0f} MiB, median {need[len(need) // 2] / MiB:.0f} MiB, '
           f'base options {base / MiB:.0f} MiB',
           '', '| WAL rate | ' + ' | '.join(f'{n} s' for n in limits) + ' |',
           '|---|' + '---|' * len(limits)]
    for r in rates:
        cells = []
        for n in limits:
            cap = int(r * MiB * n)
            share = sum(b <= cap for b in need) / len(need)
            space.max_steady_bytes = cap
            kept = enough_safe_points(space, seed)
            cells.append(f'{share:.1%} ({"kept to" if kept else "not applied"})')
        out.append(f'| {r:g} MiB/s | ' + ' | '.join(cells) + ' |')
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--options', default=TENTACLE, help='the canary\'s RocksDB options')
    ap.add_argument('--cfs', default=TENTACLE_CFS, help='its bluestore_rocksdb_cfs')
    ap.add_argument('--max-memtable-bytes', type=int, default=12 << 30,
                    help='the memtable cap (Tentacle\'s default: 12 GiB)')
    args = ap.parse_args()
    print('\n'.join(table(args.options, args.cfs, args.max_memtable_bytes, RATES, LIMITS)))


if __name__ == '__main__':
    main()
