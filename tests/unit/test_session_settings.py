"""The settings a session runs with (session_settings.py), alone: what a
saved session's record gives back, and what validate refuses beyond the
options' own bounds (those are test_options.py's)."""
from dataclasses import asdict, replace
from typing import Any, Dict

import pytest

from rocks_autotune.session_settings import MAX_CLIENT_OBJECTS, Settings


def test_saved_settings_come_back_as_they_were_compressions_a_tuple_again() -> None:
    st = Settings(compressions=('none', 'lz4'), baseline_runs=3)
    saved = asdict(st)
    saved['compressions'] = list(saved['compressions'])  # as JSON keeps it
    saved['a_setting_of_a_later_version'] = 1  # ignored, not refused
    assert Settings.from_dict(saved) == st


def test_a_saved_record_the_session_cannot_run_with_is_a_value_error() -> None:
    with pytest.raises(ValueError, match='poll'):
        Settings.from_dict(dict(asdict(Settings()), poll=float('nan')))
    with pytest.raises(ValueError, match='compressions'):
        Settings.from_dict(dict(asdict(Settings()), compressions=['zip']))
    # values of the wrong type (a hand-edited or corrupt record): ValueError too,
    # which check_state turns into the session's STATE_CORRUPT, not a crash
    for bad, message in ((dict(compressions=None), 'malformed'),
                         (dict(compressions=7), 'malformed'),
                         (dict(warmup='ten'), 'warmup must be a number'),
                         (dict(baseline_runs=None), 'baseline_runs must be an integer')):
        with pytest.raises(ValueError, match=message):
            Settings.from_dict(dict(asdict(Settings()), **bad))


@pytest.mark.parametrize('change, message', [
    (dict(compressions=()), 'compressions must be a non-empty list'),
    (dict(compressions=('zip',)), 'compressions must be a non-empty list'),
    (dict(poll=-1.0), 'poll must be a non-negative number'),
    (dict(client_object_size=2 * 2**20, client_space=2**20),
     'client_object_size must be at most client_space'),
    (dict(client_object_size=65536, client_space=65536 * (MAX_CLIENT_OBJECTS + 1)),
     f'at most {MAX_CLIENT_OBJECTS} objects'),
])
def test_validate_names_what_a_session_cannot_run_with(
        change: Dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        replace(Settings(), **change).validate()
    Settings().validate()  # the defaults run
