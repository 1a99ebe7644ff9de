"""The module's options, declared once (options.py): the mgr's Options, the
settings records' defaults and the bounds a session is held to all come from
one table."""
import dataclasses
from typing import Any, Dict

import pytest

from rocks_autotune import options
from rocks_autotune.options import OPTIONS, Opt
from rocks_autotune.rollout import RolloutSettings
from rocks_autotune.session import Settings


def values(**over: Any) -> Dict[str, Any]:
    """The options as the mgr gives them (its defaults, some changed)."""
    return dict({o.name: o.default for o in OPTIONS}, **over)


def test_every_settings_field_but_poll_is_an_option_with_its_default() -> None:
    fields = {f.name: f for f in dataclasses.fields(Settings)}
    assert set(fields) - {o.field for o in OPTIONS} == {'poll'}
    for name in fields.keys() - {'poll'}:
        assert getattr(Settings(), name) == options.default(name), name
    assert options.read(Settings, values().get) == Settings()
    for f in dataclasses.fields(RolloutSettings):
        if f.name != 'poll':
            assert getattr(RolloutSettings(), f.name) == options.default(f.name), f.name


def test_options_feed_the_settings_they_name_converted() -> None:
    s = options.read(Settings, values(max_memtable_mib=512, compressions='lz4, none',
                                      inject_candidate_options='x=1', warmup='7').get)
    assert s.max_memtable_bytes == 512 << 20 and s.compressions == ('lz4', 'none')
    assert s.inject_options == 'x=1' and s.warmup == 7.0
    r = options.read(RolloutSettings, values(restart_timeout=99).get)
    assert r.restart_timeout == 99.0 and r.unhealthy_timeout == 1800.0


@pytest.mark.parametrize('name,bad,message', [
    ('baseline_runs', 1, 'baseline_runs must be between 2 and 10, not 1'),
    ('confirm_rounds', 16, 'confirm_rounds must be between 1 and 15, not 16'),
    ('restart_timeout', 5, 'restart_timeout must be at least 10, not 5'),
    ('warmup', 'soon', "warmup must be a number, not 'soon'"),
    ('on_failure', 'retry', "on_failure must be one of continue, stop, not 'retry'"),
    ('max_memtable_mib', -1, 'max_memtable_mib must be at least 0, not -1'),
])
def test_a_value_out_of_the_declared_bounds_is_named(name: str, bad: Any, message: str) -> None:
    with pytest.raises(ValueError) as e:
        options.read(Settings, values(**{name: bad}).get).validate()
    assert str(e.value) == message


def test_a_saved_session_is_held_to_the_same_bounds() -> None:
    # one bound, wherever the settings come from (baseline_runs: 2 in the
    # Option, 1 in the old validate)
    with pytest.raises(ValueError, match='baseline_runs must be between 2 and 10'):
        Settings.from_dict(dict(dataclasses.asdict(Settings()), baseline_runs=1))
    with pytest.raises(ValueError, match='must be an integer'):
        Settings(client_threads=2.5).validate()  # type: ignore[arg-type]


SLEEP = next(o for o in OPTIONS if o.name == 'sleep_interval')


def test_an_option_is_what_the_mgr_option_is_made_of() -> None:
    o = Opt('x', type='int', default=3, desc='d', min=1, enum=('a',))
    assert o.option_kwargs() == {'type': 'int', 'default': 3, 'desc': 'd', 'min': 1,
                                 'enum_allowed': ['a']}
    assert SLEEP.field == ''  # the module's own, no setting


def test_every_number_has_a_lower_bound_the_mon_refuses_below() -> None:
    # issue 45: a sleep_interval below 0 passed, and the serve loop then never slept
    numbers = [o for o in options.OPTIONS if o.type in ('int', 'float', 'secs', 'size')]
    assert [o.name for o in numbers if o.min is None] == []
    assert SLEEP.option_kwargs()['min'] == 1


@pytest.mark.parametrize('seed', [-1, 2 ** 32])
def test_a_seed_the_optimizer_cannot_take_is_refused_when_read(seed: int) -> None:
    with pytest.raises(ValueError, match='seed must be between 0 and 4294967295'):
        options.read(Settings, values(seed=seed).get)
    assert options.read(Settings, values(seed=2 ** 32 - 1).get).seed == 2 ** 32 - 1
