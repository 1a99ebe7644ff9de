import dataclasses
import json
import random
from typing import Any, Dict, List

import numpy as np
import pytest

from rocks_autotune.rocksdb_options import (NEW_TUNING, NEW_TUNING_LZ4, PACIFIC_DEFAULT,
                                            OptionStringError, parse_options, parse_sharding)
from rocks_autotune.space import (GiB, MiB, TUNED_KEYS, Candidate, SearchSpace, cycle_bytes,
                                  flush_capacity)
from space_grid import on_grid

NEW = Candidate(max_write_buffer_number=128, write_buffer_size=8 * MiB,
                min_write_buffer_number_to_merge=16, level0_file_num_compaction_trigger=8,
                max_bytes_for_level_base=1 * GiB, max_bytes_for_level_multiplier=8,
                compression='none')
PACIFIC = Candidate(max_write_buffer_number=4, write_buffer_size=256 * MiB,
                    min_write_buffer_number_to_merge=1, level0_file_num_compaction_trigger=4,
                    max_bytes_for_level_base=256 * MiB, max_bytes_for_level_multiplier=10,
                    compression='none')


def pacific_space(**kw: Any) -> SearchSpace:
    return SearchSpace(base=parse_options(PACIFIC_DEFAULT), **kw)


def random_in_space(space: SearchSpace, rng: random.Random) -> Candidate:
    x: List[Any] = []
    for d in space.dimensions():
        x.append(rng.choice(d.categories) if d.is_categorical else rng.randint(d.low, d.high))
    return space.from_point(x)


# -- Candidate ---------------------------------------------------------------

def test_tuned_keys() -> None:
    assert TUNED_KEYS == ('max_write_buffer_number', 'write_buffer_size',
                          'min_write_buffer_number_to_merge',
                          'level0_file_num_compaction_trigger', 'max_bytes_for_level_base',
                          'max_bytes_for_level_multiplier', 'compression')


def test_candidate_dict_json_round_trip() -> None:
    for c in (NEW, PACIFIC):
        d = c.to_dict()
        assert list(d) == list(TUNED_KEYS)
        assert Candidate.from_dict(json.loads(json.dumps(d))) == c


def test_candidate_is_frozen_and_hashable() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        NEW.compression = 'lz4'  # type: ignore[misc]
    assert len({NEW, dataclasses.replace(NEW), PACIFIC}) == 2


def _with(**kw: Any) -> Dict[str, Any]:
    d = NEW.to_dict()
    d.update(kw)
    return d


@pytest.mark.parametrize('d', [
    None, [], 'x', 42,
    {k: v for k, v in NEW.to_dict().items() if k != 'compression'},
    _with(extra=1),
    _with(write_buffer_size='8388608'),
    _with(write_buffer_size=8388608.0),
    _with(write_buffer_size=None),
    _with(max_write_buffer_number=True),
    _with(min_write_buffer_number_to_merge=0),
    _with(level0_file_num_compaction_trigger=-8),
    _with(compression='kNoCompression'),
    _with(compression='zstd'),
    _with(compression=None),
])
def test_candidate_from_dict_rejects_garbage(d: Any) -> None:
    with pytest.raises(ValueError):
        Candidate.from_dict(d)


def test_candidate_rejects_numpy_scalars() -> None:
    # from_point must convert; a numpy int would render as "np.int64(8)"-ish.
    with pytest.raises(ValueError):
        dataclasses.replace(NEW, max_write_buffer_number=np.int64(8))  # type: ignore[arg-type]


def test_candidate_to_options() -> None:
    assert NEW.to_options() == {
        'max_write_buffer_number': '128', 'write_buffer_size': '8388608',
        'min_write_buffer_number_to_merge': '16', 'level0_file_num_compaction_trigger': '8',
        'max_bytes_for_level_base': '1073741824', 'max_bytes_for_level_multiplier': '8',
        'compression': 'kNoCompression'}
    assert dataclasses.replace(NEW, compression='lz4').to_options()['compression'] == \
        'kLZ4Compression'


# -- presets -------------------------------------------------------------------

@pytest.mark.parametrize('preset, expected', [
    (PACIFIC_DEFAULT, PACIFIC),
    (NEW_TUNING, NEW),
    (NEW_TUNING_LZ4, dataclasses.replace(NEW, compression='lz4')),
])
def test_presets_candidates_safe_and_in_space(preset: str, expected: Candidate) -> None:
    opts = parse_options(preset)
    c = SearchSpace.candidate_from_options(opts)
    assert c == expected
    for base in (PACIFIC_DEFAULT, NEW_TUNING, preset):
        space = SearchSpace(base=parse_options(base))
        assert on_grid(space, c)
        assert space.violations(c) == []
        assert space.from_point(space.to_point(c)) == c


# -- candidate_from_options ------------------------------------------------------

def test_candidate_from_options_rocksdb_defaults() -> None:
    c = SearchSpace.candidate_from_options({})
    assert c == Candidate(max_write_buffer_number=2, write_buffer_size=64 * MiB,
                          min_write_buffer_number_to_merge=1,
                          level0_file_num_compaction_trigger=4,
                          max_bytes_for_level_base=256 * MiB,
                          max_bytes_for_level_multiplier=10, compression='snappy')


def test_candidate_from_options_sizes_and_partial() -> None:
    c = SearchSpace.candidate_from_options(parse_options(
        'write_buffer_size=16M,max_bytes_for_level_base=2GiB,'
        'max_bytes_for_level_multiplier=8.0,compression=kLZ4Compression,foo=bar'))
    assert c.write_buffer_size == 16 * MiB
    assert c.max_bytes_for_level_base == 2 * GiB
    assert c.max_bytes_for_level_multiplier == 8
    assert c.compression == 'lz4'
    assert c.max_write_buffer_number == 2  # RocksDB default for the absent key


@pytest.mark.parametrize('s', [
    'compression=kZSTD',
    'max_write_buffer_number=1.5',
    'max_write_buffer_number=-4',
    'max_write_buffer_number=+4',
    'max_write_buffer_number=1_0',
    'max_write_buffer_number=0',
    'write_buffer_size=0',
    'write_buffer_size=lots',
    'max_bytes_for_level_multiplier=8.5',
    'max_bytes_for_level_multiplier=nan',
    'max_bytes_for_level_multiplier=0',
    'level0_file_num_compaction_trigger=four',
])
def test_candidate_from_options_errors(s: str) -> None:
    with pytest.raises(OptionStringError):
        SearchSpace.candidate_from_options(parse_options(s))


# -- SearchSpace construction and dimensions -----------------------------------

def test_space_constructor_errors() -> None:
    with pytest.raises(ValueError):
        SearchSpace(compressions=())
    with pytest.raises(ValueError):
        SearchSpace(compressions=('zstd',))
    with pytest.raises(ValueError):
        SearchSpace(max_memtable_bytes=0)
    with pytest.raises(OptionStringError):
        SearchSpace(base={'level0_slowdown_writes_trigger': 'x'})
    with pytest.raises(OptionStringError):
        SearchSpace(base={'max_total_wal_size': '-1'})


def test_dimensions() -> None:
    dims = {d.name: d for d in pacific_space().dimensions()}
    assert list(dims) == list(TUNED_KEYS)
    bounds = {n: (d.low * d.unit, d.high * d.unit, d.prior) for n, d in dims.items()
              if not d.is_categorical}
    assert bounds == {
        'max_write_buffer_number': (2, 128, 'log-uniform'),
        'write_buffer_size': (4 * MiB, 256 * MiB, 'log-uniform'),
        'min_write_buffer_number_to_merge': (1, 32, 'uniform'),
        'level0_file_num_compaction_trigger': (2, 16, 'uniform'),
        'max_bytes_for_level_base': (256 * MiB, 4 * GiB, 'log-uniform'),
        'max_bytes_for_level_multiplier': (4, 10, 'uniform'),
    }
    assert dims['compression'].categories == ('none', 'lz4', 'snappy')
    # canonical order whatever the caller's order
    sub = SearchSpace(compressions=['snappy', 'none'])
    assert sub.dimensions()[-1].categories == ('none', 'snappy')


def test_point_round_trip_random() -> None:
    space = pacific_space()
    rng = random.Random(7)
    for _ in range(500):
        c = random_in_space(space, rng)
        assert on_grid(space, c)
        x = space.to_point(c)
        assert space.from_point(x) == c
        # skopt hands back numpy scalars
        assert space.from_point([np.int64(v) if isinstance(v, int) else np.str_(v)
                                 for v in x]) == c


def test_from_point_wrong_length() -> None:
    with pytest.raises(ValueError):
        pacific_space().from_point([1, 2, 3])


@pytest.mark.parametrize('field, value', [
    ('max_write_buffer_number', 1), ('max_write_buffer_number', 129),
    ('write_buffer_size', 3 * MiB), ('write_buffer_size', 257 * MiB),
    ('write_buffer_size', 8 * MiB + 1),  # off the MiB grid
    ('min_write_buffer_number_to_merge', 33),
    ('level0_file_num_compaction_trigger', 1), ('level0_file_num_compaction_trigger', 17),
    ('max_bytes_for_level_base', 255 * MiB), ('max_bytes_for_level_base', 4 * GiB + MiB),
    ('max_bytes_for_level_multiplier', 3), ('max_bytes_for_level_multiplier', 11),
])
def test_contains_bounds(field: str, value: int) -> None:
    space = pacific_space()
    change: Dict[str, Any] = {field: value}
    assert not on_grid(space, dataclasses.replace(NEW, **change))


def test_contains_compression_support() -> None:
    space = pacific_space(compressions=['none'])
    assert on_grid(space, NEW)
    assert not on_grid(space, dataclasses.replace(NEW, compression='lz4'))


# -- violations ------------------------------------------------------------------

def test_violation_merge_not_below_count() -> None:
    space = pacific_space()
    assert space.violations(dataclasses.replace(NEW, max_write_buffer_number=17)) == []
    for n in (16, 8):
        v = space.violations(dataclasses.replace(NEW, max_write_buffer_number=n))
        assert len(v) == 1 and 'min_write_buffer_number_to_merge' in v[0]


def test_violation_memtable_cap() -> None:
    space = pacific_space()
    at_cap = dataclasses.replace(PACIFIC, max_write_buffer_number=8)  # 8 x 256 MiB = 2 GiB
    assert space.violations(at_cap) == []
    over = dataclasses.replace(PACIFIC, max_write_buffer_number=9)
    v = space.violations(over)
    assert len(v) == 1 and 'memtables' in v[0] and '2 GiB' in v[0]
    small = pacific_space(max_memtable_bytes=512 * MiB)
    assert small.violations(NEW) and small.violations(PACIFIC)  # 1 GiB each
    assert small.violations(dataclasses.replace(NEW, max_write_buffer_number=64)) == []


def test_violation_l0_trigger_vs_slowdown() -> None:
    # RocksDB defaults (20/36) when the base does not say
    space = pacific_space()
    assert space.violations(dataclasses.replace(NEW, level0_file_num_compaction_trigger=19)) == []
    v = space.violations(dataclasses.replace(NEW, level0_file_num_compaction_trigger=20))
    assert len(v) == 1 and 'level0_slowdown_writes_trigger (20)' in v[0]
    low = SearchSpace(base={'level0_slowdown_writes_trigger': '8',
                            'level0_stop_writes_trigger': '12'})
    assert low.violations(dataclasses.replace(NEW, level0_file_num_compaction_trigger=7)) == []
    assert low.violations(NEW)  # trigger 8 == slowdown 8


def test_violation_slowdown_not_below_stop() -> None:
    bad = SearchSpace(base={'level0_slowdown_writes_trigger': '36'})  # stop defaults to 36
    v = bad.violations(NEW)
    assert len(v) == 1 and 'level0_stop_writes_trigger (36)' in v[0]
    assert SearchSpace(base={'level0_stop_writes_trigger': '21'}).violations(NEW) == []


def test_violation_flush_over_wal_limit() -> None:
    space = SearchSpace(base={'max_total_wal_size': '256M'})
    ok = dataclasses.replace(NEW, max_write_buffer_number=32,
                             write_buffer_size=16 * MiB)  # flush 16 x 16 MiB = 256 MiB
    assert space.violations(ok) == []
    over = dataclasses.replace(ok, write_buffer_size=17 * MiB)
    v = space.violations(over)
    assert len(v) == 1 and 'max_total_wal_size' in v[0]
    # 1 GiB WAL of the Pacific default: 32 x 64 MiB = 2 GiB flush is too much
    big_flush = dataclasses.replace(NEW, write_buffer_size=64 * MiB, max_write_buffer_number=32,
                                    min_write_buffer_number_to_merge=31)
    assert any('max_total_wal_size' in s for s in pacific_space().violations(big_flush))
    # no fixed WAL limit (absent or 0): nothing to check against
    assert not any('max_total_wal_size' in s for s in SearchSpace().violations(big_flush))
    assert not any('max_total_wal_size' in s
                   for s in SearchSpace(base={'max_total_wal_size': '0'}).violations(big_flush))


# Tentacle's sharding: L and P merge 32 whatever the candidate says
TENTACLE_CFS = parse_sharding('m(3) p(3,0-12) O(3,0-13)=block_cache={type=binned_lru} '
                              'L=min_write_buffer_number_to_merge=32 '
                              'P=min_write_buffer_number_to_merge=32')


def test_violation_write_amp_not_judgeable_in_a_steady_window() -> None:
    fams = TENTACLE_CFS
    # the lab's c1 (40 buffers here, under the memtable cap): 10 families x
    # 4 MiB x 8 + L, P x 4 MiB x 32 = 576 MiB,
    # times its L0 trigger of 2: 1,152 MiB through every family's L0 cycle;
    # a steady window runs to a first compaction, then counts one: twice that
    c1 = Candidate(max_write_buffer_number=40, write_buffer_size=4 * MiB,
                   min_write_buffer_number_to_merge=8, level0_file_num_compaction_trigger=2,
                   max_bytes_for_level_base=256 * MiB, max_bytes_for_level_multiplier=8,
                   compression='none')
    assert flush_capacity(fams, c1) * 2 == 1152 * MiB
    assert SearchSpace(column_families=fams, max_steady_bytes=2304 * MiB).violations(c1) == []
    v = SearchSpace(column_families=fams, max_steady_bytes=2303 * MiB).violations(c1)
    assert len(v) == 1 and 'takes up to 2304 MiB of WAL' in v[0] and 'could not be judged' in v[0]
    # 0: no steady window planned, no limit
    assert SearchSpace(column_families=fams).violations(c1) == []


def test_a_cycle_of_every_family_takes_at_most_the_trigger_times_the_wal_limit() -> None:
    # the lab's seed-4 c1 under Tentacle's sharding: 10 families x 11 MiB x
    # 22 + L, P x 11 MiB x 32 = 3124 MiB of flush capacity, trigger 2
    fams = TENTACLE_CFS
    c1 = Candidate(max_write_buffer_number=86, write_buffer_size=11 * MiB,
                   min_write_buffer_number_to_merge=22, level0_file_num_compaction_trigger=2,
                   max_bytes_for_level_base=265 * MiB, max_bytes_for_level_multiplier=10,
                   compression='none')
    assert flush_capacity(fams, c1) == 3124 * MiB
    # past max_total_wal_size (1 GiB, as BlueStore's defaults set it) RocksDB
    # flushes the families holding the oldest WAL: 2 GiB, not 6248 MiB
    assert cycle_bytes(fams, c1, GiB) == 2 * GiB
    # 0: RocksDB's own limit, 4 x every family's memtables (12 x 86 x 11 MiB): not binding
    assert cycle_bytes(fams, c1, 0) == 2 * 3124 * MiB
    # a smaller config's capacity binds before the limit
    small = dataclasses.replace(c1, write_buffer_size=MiB, min_write_buffer_number_to_merge=2)
    assert cycle_bytes(fams, small, GiB) == 2 * flush_capacity(fams, small) == 2 * 84 * MiB
    # the search's rule counts it so (two cycles: to a first compaction, then
    # the one counted): c1 fits a 4-GiB steady window under the limit
    space = SearchSpace(base={'max_total_wal_size': '1G'}, column_families=fams,
                        max_memtable_bytes=16 * GiB, max_steady_bytes=4 * GiB)
    assert space.violations(c1) == []
    v = SearchSpace(column_families=fams, max_memtable_bytes=16 * GiB,
                    max_steady_bytes=4 * GiB).violations(c1)
    assert len(v) == 1 and 'takes up to 12496 MiB of WAL' in v[0]


def test_violation_compression_unsupported() -> None:
    space = pacific_space(compressions=['none', 'snappy'])
    v = space.violations(dataclasses.replace(NEW, compression='lz4'))
    assert len(v) == 1 and "'lz4'" in v[0]


def test_violations_out_of_bounds_candidate_still_checked() -> None:
    # A cluster running 512 x 64 MiB with merge 600: all rules apply off-grid.
    c = dataclasses.replace(NEW, max_write_buffer_number=512, write_buffer_size=64 * MiB,
                            min_write_buffer_number_to_merge=600)
    v = pacific_space().violations(c)
    assert len(v) == 3


def test_point_is_safe_matches_violations() -> None:
    space = SearchSpace(base={'max_total_wal_size': '1G', 'level0_slowdown_writes_trigger': '12'},
                        compressions=['none', 'lz4'], max_steady_bytes=4 * GiB)
    everything = SearchSpace()
    rng = random.Random(3)
    seen = set()
    for _ in range(3000):
        c = random_in_space(everything, rng)
        x = space.to_point(c)
        safe = space.point_is_safe(x)
        assert safe == (space.violations(c) == [])
        seen.add(safe)
    assert seen == {True, False}


# -- render ----------------------------------------------------------------------

def test_render_replaces_in_place_and_keeps_foreign_bytes() -> None:
    base_s = ('compression=kNoCompression,max_write_buffer_number=4,'
              'min_write_buffer_number_to_merge=1,recycle_log_file_num=4,'
              'write_buffer_size=256M,writable_file_max_buffer_size=0,'
              'compaction_readahead_size=2MB,max_background_compactions=2,'
              'max_total_wal_size=1GiB,x.y=a=b')
    base = parse_options(base_s)
    out = SearchSpace.render(base, NEW)
    items = out.split(',')
    keys = [i.split('=', 1)[0] for i in items]
    # base order first, then the tuned keys the base lacked, in TUNED_KEYS order
    assert keys == list(base) + ['level0_file_num_compaction_trigger',
                                 'max_bytes_for_level_base', 'max_bytes_for_level_multiplier']
    # every foreign item is byte-for-byte the base's
    for item in base_s.split(','):
        if item.split('=', 1)[0] not in TUNED_KEYS:
            assert item in items
    assert 'max_total_wal_size=1GiB' in items and 'compaction_readahead_size=2MB' in items
    parsed = parse_options(out)
    assert SearchSpace.candidate_from_options(parsed) == NEW
    assert {k: v for k, v in parsed.items() if k not in TUNED_KEYS} == \
        {k: v for k, v in base.items() if k not in TUNED_KEYS}


def test_render_pacific_to_new_tuning_values() -> None:
    out = parse_options(SearchSpace.render(parse_options(PACIFIC_DEFAULT), NEW))
    assert out['write_buffer_size'] == '8388608'
    assert out['max_write_buffer_number'] == '128'
    assert out['compression'] == 'kNoCompression'
    assert out['recycle_log_file_num'] == '4'
    assert out['max_total_wal_size'] == '1073741824'


def test_render_round_trip_random() -> None:
    space = pacific_space()
    base = parse_options(NEW_TUNING_LZ4)
    rng = random.Random(11)
    for _ in range(200):
        c = random_in_space(space, rng)
        s = SearchSpace.render(base, c)
        assert SearchSpace.candidate_from_options(parse_options(s)) == c
        assert s.startswith('compression=')  # replaced in place, not appended
