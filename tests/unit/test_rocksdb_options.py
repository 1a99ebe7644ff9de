from typing import Dict

import pytest

from rocks_autotune.rocksdb_options import (COMPRESSIONS, MAX_OPTIONS_BYTES, NEW_TUNING,
                                            NEW_TUNING_LZ4, PACIFIC_DEFAULT,
                                            ROCKSDB_COMPRESSIONS, OptionStringError,
                                            compression_from_rocksdb, parse_options,
                                            parse_size, render_options)

# Copied by hand from seed 000's conclusion, so a typo in the module shows.
SEED_NEW_TUNING = (
    'compression=kNoCompression,max_write_buffer_number=128,min_write_buffer_number_to_merge=16,'
    'compaction_style=kCompactionStyleLevel,write_buffer_size=8388608,max_background_jobs=4,'
    'level0_file_num_compaction_trigger=8,max_bytes_for_level_base=1073741824,'
    'max_bytes_for_level_multiplier=8,compaction_readahead_size=2MB,'
    'max_total_wal_size=1073741824,writable_file_max_buffer_size=0')
SEED_NEW_TUNING_LZ4 = (
    'compression=kLZ4Compression,max_write_buffer_number=128,min_write_buffer_number_to_merge=16,'
    'compaction_style=kCompactionStyleLevel,write_buffer_size=8388608,max_background_jobs=4,'
    'level0_file_num_compaction_trigger=8,max_bytes_for_level_base=1073741824,'
    'max_bytes_for_level_multiplier=8,compaction_readahead_size=2MB,'
    'max_total_wal_size=1073741824,writable_file_max_buffer_size=0')


def test_parse_basic_order_and_values() -> None:
    d = parse_options('b=2,a=1,c=x=y')
    assert list(d.items()) == [('b', '2'), ('a', '1'), ('c', 'x=y')]


def test_parse_all_separators_whitespace_and_empty_items() -> None:
    s = ' a = 1 ;b=2\n\n c=3,, ,\td=4\t,'
    assert parse_options(s) == {'a': '1', 'b': '2', 'c': '3', 'd': '4'}
    assert parse_options('') == {}
    assert parse_options(' ,;\n') == {}


def test_parse_keeps_value_text() -> None:
    # Sizes and enum names are not normalized: '2MB' stays '2MB'.
    d = parse_options('compaction_readahead_size=2MB,x.y_z=kNoCompression')
    assert d == {'compaction_readahead_size': '2MB', 'x.y_z': 'kNoCompression'}


@pytest.mark.parametrize('s, msg', [
    ('a=1,b', 'no "=value"'),
    ('a=1,=2', 'empty name'),
    ('a=1, =2', 'empty name'),
    ('a=', 'empty value'),
    ('a=  ', 'empty value'),
    ('a-b=1', 'not made of'),
    ('a b=1', 'not made of'),
    ('{a}=1', 'not made of'),
    ('a=1;a=2', 'more than once'),
    ('a=1\x00', 'control character'),
    ('a=\x1b[0m1', 'control character'),
    ('a=1\r\nb=2', 'control character'),
    ('a=1\x7f', 'control character'),
])
def test_parse_errors(s: str, msg: str) -> None:
    with pytest.raises(OptionStringError, match=msg):
        parse_options(s)


def test_parse_size_limit() -> None:
    parse_options('a=' + 'v' * (MAX_OPTIONS_BYTES - 2))  # exactly at the limit
    with pytest.raises(OptionStringError, match='longer than'):
        parse_options('a=' + 'v' * (MAX_OPTIONS_BYTES - 1))
    with pytest.raises(OptionStringError, match='longer than'):
        # counted in UTF-8 bytes, not characters
        parse_options('a=' + '\u00e9' * (MAX_OPTIONS_BYTES // 2))


def test_parse_rejects_non_str() -> None:
    with pytest.raises(OptionStringError):
        parse_options(b'a=1')  # type: ignore[arg-type]


def test_optionstringerror_is_valueerror() -> None:
    assert issubclass(OptionStringError, ValueError)


@pytest.mark.parametrize('s', [PACIFIC_DEFAULT, NEW_TUNING, NEW_TUNING_LZ4,
                               'a=1', 'x=y=z,q.r=0'])
def test_render_parse_round_trip(s: str) -> None:
    d = parse_options(s)
    assert render_options(d) == s
    assert parse_options(render_options(d)) == d


def test_render_round_trip_normalizes_separators() -> None:
    d = parse_options('a=1;b=2\nc=3')
    assert render_options(d) == 'a=1,b=2,c=3'
    assert parse_options(render_options(d)) == d


@pytest.mark.parametrize('d', [
    {'a': '1,b=2'}, {'a': '1;b'}, {'a': 'x\ny'}, {'a': ''}, {'a': ' 1'},
    {'a-b': '1'}, {'': '1'}, {'a': '\x01'}, {'a': 5},
])
def test_render_refuses_what_would_not_round_trip(d: Dict[str, str]) -> None:
    with pytest.raises(OptionStringError):
        render_options(d)


@pytest.mark.parametrize('v, n', [
    ('0', 0), ('268435456', 268435456), (' 42 ', 42),
    ('4k', 4096), ('4K', 4096), ('2m', 2 << 20), ('2M', 2 << 20), ('2MB', 2 << 20),
    ('2MiB', 2 << 20), ('1g', 1 << 30), ('1GB', 1 << 30), ('1GiB', 1 << 30),
    ('3T', 3 << 40), ('1TiB', 1 << 40), ('16777215T', 16777215 << 40),
])
def test_parse_size(v: str, n: int) -> None:
    assert parse_size(v) == n


@pytest.mark.parametrize('v', [
    '', ' ', '-1', '-4k', '+4', '1.5M', '4x', '4KBB', 'M', '4 M', '4b', '4Mb', '4iB',
    '0x10', '1_000', 'nan', '16777216T', str(1 << 64),
])
def test_parse_size_errors(v: str) -> None:
    with pytest.raises(OptionStringError):
        parse_size(v)


def test_compressions() -> None:
    assert COMPRESSIONS == {'none': 'kNoCompression', 'lz4': 'kLZ4Compression',
                            'snappy': 'kSnappyCompression'}
    for short, rocks in COMPRESSIONS.items():
        assert compression_from_rocksdb(rocks) == short
        assert ROCKSDB_COMPRESSIONS[rocks] == short
    for bad in ('kZSTD', 'kZlibCompression', 'kNoCompression ', 'none', ''):
        with pytest.raises(OptionStringError):
            compression_from_rocksdb(bad)


def test_presets_verbatim() -> None:
    assert NEW_TUNING == SEED_NEW_TUNING
    assert NEW_TUNING_LZ4 == SEED_NEW_TUNING_LZ4
    assert PACIFIC_DEFAULT == (
        'compression=kNoCompression,max_write_buffer_number=4,'
        'min_write_buffer_number_to_merge=1,recycle_log_file_num=4,'
        'write_buffer_size=268435456,writable_file_max_buffer_size=0,'
        'compaction_readahead_size=2097152,max_background_compactions=2,'
        'max_total_wal_size=1073741824')


def test_presets_parse() -> None:
    p = parse_options(PACIFIC_DEFAULT)
    assert p['write_buffer_size'] == '268435456' and len(p) == 9
    n = parse_options(NEW_TUNING)
    assert len(n) == 12
    assert parse_size(n['compaction_readahead_size']) == 2 << 20
    assert parse_size(n['max_total_wal_size']) == 1 << 30
    lz = parse_options(NEW_TUNING_LZ4)
    assert lz.pop('compression') == 'kLZ4Compression'
    assert n.pop('compression') == 'kNoCompression'
    assert lz == n
