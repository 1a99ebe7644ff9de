"""The session's persistence: small values, checked writes, one version."""
import json
from dataclasses import fields
from typing import Any, Dict, Optional

import pytest

from rocks_autotune import session_start
from rocks_autotune.canary_record import CanaryRecord
from rocks_autotune.session_settings import Settings
from rocks_autotune.store import (CONFIRM_KEY, HEAD_KEY, ORIGINALS_KEY, START_KEY, Request,
                                  SessionState, SessionStore, StoreError)
from session_harness import Harness


class KV:
    """A store that refuses values over 64 KiB, as the mon answers config-key set."""

    def __init__(self) -> None:
        self.d: Dict[str, str] = {}

    def get(self, key: str) -> Optional[str]:
        return self.d.get(key)

    def put(self, key: str, value: Optional[str]) -> None:
        if value is None:
            self.d.pop(key, None)
        elif len(value) > 64 << 10:
            raise OSError('error: entry size limited to 65536 bytes.')
        else:
            self.d[key] = value


def stored_session(**settings: Any) -> Any:
    kv = KV()
    store = SessionStore(kv.get, kv.put)
    h = Harness(**settings)
    h.save = store.save  # type: ignore[method-assign]
    return kv, store, h


def test_round_trip_and_the_originals_key_lives_as_long_as_the_session() -> None:
    kv, store, h = stored_session()
    s = h.start(osd=0, trials=1)
    assert json.loads(kv.d[ORIGINALS_KEY])['originals'] == s.s.originals
    h.run(until=lambda s: len(s.s.trials) == 2)
    loaded = SessionStore(kv.get, kv.put).load()
    assert loaded is not None and loaded.trials == s.s.trials
    assert loaded.to_json() == json.loads(json.dumps(s.s.to_json()))
    h.run()
    assert ORIGINALS_KEY not in kv.d  # ended: nothing is left to restore
    done = SessionStore(kv.get, kv.put).load()
    assert done is not None and done.state == 'done'
    # the confirmation in a key of its own, out of the head a step rewrites
    assert done.confirm == s.s.confirm is not None
    assert 'confirm' not in json.loads(kv.d[HEAD_KEY])
    # one of another session is no confirmation of this one
    kv.d[CONFIRM_KEY] = json.dumps({'id': 'another', 'confirm': None})
    with pytest.raises(ValueError, match='confirm record'):
        SessionStore(kv.get, kv.put).load()


def test_a_start_record_unchanged_is_not_written_again() -> None:
    kv, store, h = stored_session()
    s = h.start(osd=0, trials=2)
    for key in (START_KEY, ORIGINALS_KEY):
        assert json.loads(kv.d[key]) == json.loads(json.dumps(s.s.start_json()))
    writes = []
    put = store._put
    store._put = lambda key, value: (writes.append(key), put(key, value))  # type: ignore
    store.save(s.s)
    assert writes == [HEAD_KEY]


def test_a_start_refused_at_its_first_save_changes_nothing_stored() -> None:
    # issue 45: the refused start had overwritten the last session's start
    # record; after a failover that session was set aside as corrupt and the
    # refused start's canary restarted
    kv, store, h = stored_session()
    h.start(osd=0, trials=1)
    h.run()
    before = dict(kv.d)
    refuse = kv.put

    def put(key: str, value: Optional[str]) -> None:
        if key == HEAD_KEY and value is not None and 'refused-start' in value:
            raise OSError('error: entry size limited to 8192 bytes.')
        refuse(key, value)
    store._put = put  # type: ignore[method-assign]
    state = session_start.first_state(h.cluster, h.session.params, h.settings, 500.0)
    state.id = 'refused-start'
    with pytest.raises(StoreError, match='writing session '):
        store.save(state)
    assert kv.d == before
    last = SessionStore(kv.get, kv.put).load()
    assert last is not None and last.state == 'done'
    # and the store goes on as it was: the last session saves only its head
    writes = []
    store._put = lambda key, value: (writes.append(key), refuse(key, value))  # type: ignore
    store.save(last)
    assert writes == [HEAD_KEY]


def test_an_oversized_value_is_refused_not_dropped() -> None:
    kv = KV()
    store = SessionStore(kv.get, kv.put)
    with pytest.raises(StoreError):
        store._write(HEAD_KEY, 'x' * (100 << 10))


def test_the_typed_records_match_what_is_written() -> None:
    h = Harness()
    s = h.start(osd=0, trials=1)
    # the end; the first health look; the noise and the steady windows' WAL
    # bound, once the baseline is measured: not in the head until set
    unset = {'final', 'other_checks', 'noise', 'steady_cap',
             'feasible_prior', 'reach_prior', 'wal_flushed_prior'}
    keys = set(json.loads(h.saved[-1]))
    canary = {f.name for f in fields(CanaryRecord)}
    assert set(s.s.to_json()) == keys
    assert keys | unset | {'confirm'} == {f.name for f in fields(SessionState)} | {'version'}
    assert set(s.canary.rec.to_json()) == canary - {'precondition'}
    h.run()
    # an iops session's: feasible_prior and wal_flushed_prior are the wear search's
    # (its is reach_prior)
    assert set(json.loads(h.saved[-1])) == keys | unset - {
        'feasible_prior', 'wal_flushed_prior'} | {'confirm'}
    assert set(s.canary.rec.to_json()) == canary - {'precondition'}
    h = Harness(client_space=8 << 20, client_object_size=1 << 20, steady_window_limit=10.0,
                precondition_limit=10.0)
    s = h.start(osd=0, trials=1, workload='client')
    h.run()
    assert set(s.canary.rec.to_json()) == canary


def test_a_record_of_todays_shape_reads_back_as_it_was_written() -> None:
    # the JSON a session of before the head was typed (issue 44) saved, key for key
    # (but the pause's start, in its pause since STATE_VERSION 10)
    kv, store, h = stored_session()
    s = h.start(osd=0, trials=1)
    h.run(until=lambda s: s.s.noise is not None)
    head = json.loads(kv.d[HEAD_KEY])
    assert {k for k, v in head.items() if v is None} >= {'current', 'ended', 'pause'}
    assert set(head) == {
        'version', 'state', 'phase', 'current', 'baseline', 'ended', 'phase_started', 'message',
        'error', 'abort', 'pause', 'restore_failed', 'cluster_errors',
        'config_changes', 'client', 'canary', 'plan', 'other_checks', 'noise', 'steady_cap',
        'id', 'n_trials'}
    start = json.loads(kv.d[START_KEY])
    assert list(start) == [
        'id', 'params', 'reason', 'originals', 'base_options', 'annexed', 'release_default',
        'sharding', 'seed', 'started', 'settings', 'noout_at_start', 'client_pool']
    # what a rescue restores the canary from
    assert (start['originals'], start['annexed'], start['noout_at_start']) == (
        s.s.originals, False, False)
    # the plan, the baseline and the settings as they were as dicts (issue 44)
    assert list(head['plan'].items()) == [('design', 'sequential')]
    assert list(head['baseline']) == [
        'kv_sync_lat_ms', 'iops', 'write_amp', 'runs', 'kv_sync_lat_spread', 'iops_spread',
        'write_amp_spread', 'op_w_lat_ms', 'op_w_lat_spread', 'write_amp_by',
        'bluefs_write_amp', 'c_over_r', 'wal_per_byte']
    settings = start['settings']
    assert list(settings) == [f.name for f in fields(Settings)]
    assert settings['compressions'] == list(Settings().compressions)
    loaded = SessionStore(kv.get, kv.put).load()
    assert loaded is not None and loaded.to_json() == json.loads(json.dumps(s.s.to_json()))


def test_a_pause_is_stored_in_todays_shape_and_reads_back() -> None:
    # a typed record in memory (pause_record.PauseRecord), its JSON its fields
    kv, store, h = stored_session()
    h.start(osd=0, trials=3)
    h.run(until=lambda s: len(s.s.trials) == 2)
    h.cluster.extra_health = ['MON_DOWN']
    s = h.run(until=lambda s: s.s.pause is not None)
    head = json.loads(kv.d[HEAD_KEY])
    assert s.s.pause is not None and head['pause'] == {
        'on': 'health', 'reasons': [
            'cluster health is HEALTH_WARN (MON_DOWN) and --force was not given'],
        'osd': None, 'since': s.s.pause.since}
    loaded = SessionStore(kv.get, kv.put).load()
    assert loaded is not None and loaded.pause == s.s.pause


def test_a_canary_record_of_todays_shape_reads_back_as_it_was_written() -> None:
    # its JSON when it was a dict (issue 44), key for key in order, at every
    # step of a session with a client load: restart, window, preconditioning
    h = Harness(client_space=8 << 20, client_object_size=1 << 20, steady_window_limit=10.0,
                precondition_limit=10.0)
    s = h.start(osd=0, trials=1, workload='client')
    restart = ['purpose', 'stage', 'since', 'up_from', 'expect', 'ran']
    window = ['start', 'bytes', 'bench_seconds', 'before']
    seen = set()
    while s.active:
        h.clock.advance(s.step())
        rec = json.loads(h.saved[-1])['canary']
        assert CanaryRecord.from_json(rec).to_json() == rec
        assert list(rec) == [
            'originals', 'annexed', 'config_seen', 'config_changes', 'last_applied', 'restart',
            'manual', 'noout_ours', 'running_dirty', 'restarted', 'window',
            'iops_estimate'] + ['precondition'] * ('precondition' in rec)
        if rec['restart'] is not None:
            assert list(rec['restart']) in (restart, restart + ['issued'],
                                            restart + ['issued', 'up_seconds'])
        if rec['window'] is not None:  # the warm-up's, then the window's
            assert list(rec['window']) in (window, window + ['kv_before'])
        if 'precondition' in rec:
            assert list(rec['precondition']) == [
                'filled', 'fill_bytes', 'fill_seconds', 'overwritten', 'bytes', 'seconds',
                'done', 'steady', 'why', 'shape', 'busiest_cf', 'flushes', 'compactions',
                'kv_bytes', 'kv_start', 'kv_since', 'drive_wal', 'drive_seconds']
        seen |= {k for k in ('restart', 'window', 'precondition') if rec.get(k)}
        seen |= {k for k in ('up_seconds', 'kv_before') for part in (rec['restart'], rec['window'])
                 if part and k in part}
    assert seen == {'restart', 'window', 'precondition', 'up_seconds', 'kv_before'}


def test_a_request_is_stored_in_todays_shape_and_an_unreadable_one_names_no_job() -> None:
    raw = Request('s1', 'abort').to_json()
    assert json.loads(raw) == {'id': 's1', 'what': 'abort'}
    assert Request.from_json(raw) == Request('s1', 'abort')
    for bad in (None, '', 'not json', '[1]', '{"id": "s1", "who": 1}'):
        assert Request.from_json(bad).id == ''
