"""The session's persistence: small values, checked writes, versions 1 to 3
read, start records of one canary (before `canaries_at_start`) read."""
import json
from typing import Any, Dict, Optional

import pytest

from rocks_autotune import session_start
from rocks_autotune.store import (CANARY_FIELDS, CONFIRM_KEY, HEAD_KEY, ORIGINALS_KEY, START_FIELDS,
                                  START_KEY, STATE_VERSION, CanaryRecord, SessionState,
                                  SessionStore, StartRecord, StoreError, canary_start,
                                  migrate_v1)
from session_harness import Harness


def as_version_3(state: Dict[str, Any]) -> Dict[str, Any]:
    """A state as version 3 saved it: the one canary's fields in the head's own."""
    v3 = {k: v for k, v in state.items()
          if k not in ('canaries', 'plan', 'canaries_at_start', 'confirm_key')}
    (rec,) = state['canaries'].values()
    v3.update({k: v for k, v in rec.items() if k not in ('originals', 'annexed', 'restarted')})
    v3.setdefault('precondition', None)
    return dict(v3, version=3)


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
    assert json.loads(kv.d[ORIGINALS_KEY])['originals'] == s.s['originals']
    h.run(until=lambda s: len(s.s['trials']) == 2)
    assert SessionStore(kv.get, kv.put).load() == json.loads(json.dumps(s.s))
    h.run()
    assert ORIGINALS_KEY not in kv.d  # ended: nothing is left to restore
    done = SessionStore(kv.get, kv.put).load()
    assert done is not None and done['state'] == 'done'
    # the confirmation in a key of its own, out of the head a step rewrites
    assert done['confirm'] == s.s['confirm'] is not None
    assert 'confirm' not in json.loads(kv.d[HEAD_KEY])
    # one of another session is no confirmation of this one
    kv.d[CONFIRM_KEY] = json.dumps({'id': 'another', 'confirm': None})
    with pytest.raises(ValueError, match='confirm record'):
        SessionStore(kv.get, kv.put).load()


def test_a_canary_that_joins_is_in_the_start_record_before_the_head_names_it() -> None:
    kv, store, h = stored_session()
    s = h.start(osd=0, trials=2)
    writes = []
    put = store._put
    store._put = lambda key, value: (writes.append(key), put(key, value))  # type: ignore
    session_start.add_canary(h.cluster, s.s, 1)
    store.save(s.s)
    # the rescue's two keys first, the head that names osd.1 last
    assert writes[:2] == [START_KEY, ORIGINALS_KEY] and writes[-1] == HEAD_KEY
    for key in (START_KEY, ORIGINALS_KEY):
        assert json.loads(kv.d[key])['canaries_at_start'] == s.s['canaries_at_start']
    assert set(s.s['canaries_at_start']) == {'0', '1'}
    writes.clear()
    store.save(s.s)
    assert writes == [HEAD_KEY]  # unchanged: not written again


def test_an_oversized_value_is_refused_not_dropped() -> None:
    kv = KV()
    store = SessionStore(kv.get, kv.put)
    with pytest.raises(StoreError):
        store._write(HEAD_KEY, 'x' * (100 << 10))


def test_a_version_1_state_is_read_and_resumed() -> None:
    # what Session.start wrote before issue 11, mid-candidate-restart
    h = Harness()
    s = h.start(osd=0, trials=1)
    h.run(until=lambda s: s.s['phase'] == 'wait_up' and s.s['current']['kind'] == 'candidate')
    v1 = as_version_3(json.loads(h.saved[-1]))
    for k in ('noout_ours', 'noout_at_start', 'settings', 'restart'):
        v1.pop(k)
    v1.update(version=1, noout_preexisting=False, up_from=5)
    kv = KV()
    kv.d[HEAD_KEY] = json.dumps(v1)
    state = SessionStore(kv.get, kv.put).load()
    # its canary's part of a start record, from its own fields (v1 had no start record)
    assert state == dict(migrate_v1(v1), canaries_at_start={'0': canary_start(
        v1['originals'], v1['annexed'], False)}) and state['phase'] == 'apply'
    assert state['canaries']['0']['noout_ours']
    h.saved.append(json.dumps(state))
    s = h.reload()
    h.run()
    assert s.s['state'] == 'done' and not h.cluster.has_noout(0)
    assert h.cluster.running[0] == h.cluster.defaults['bluestore_rocksdb_options']


@pytest.mark.parametrize('old,new', [('apply', 'recover'), ('restart', 'recover_restart'),
                                     ('wait_up', 'recover_wait')])
def test_a_version_2_recovery_is_read_in_its_own_phase_and_resumed(old: str, new: str) -> None:
    # version 2 ran a failed trial's recovery in the trial's phases
    kv, store, h = stored_session()
    before = h.config_of(0)
    s = h.start(osd=0, trials=2)
    h.run(until=lambda s: s.s['phase'] == 'restart' and s.s['current']['kind'] == 'candidate')
    h.cluster.restart_fails = True
    s.step()  # the candidate's restart: the trial fails
    h.cluster.restart_fails = False
    h.run(until=lambda s: s.s['phase'] == new)
    head = as_version_3(json.loads(kv.d[HEAD_KEY]))
    kv.d[HEAD_KEY] = json.dumps(dict(head, version=2, phase=old))
    state = SessionStore(kv.get, kv.put).load()
    assert state is not None and state['version'] == STATE_VERSION and state['phase'] == new
    # a version-2 trial phase stays what it was
    kv.d[HEAD_KEY] = json.dumps(dict(head, version=2, phase=old, current=None))
    assert SessionStore(kv.get, kv.put).load()['phase'] == old  # type: ignore[index]
    kv.d[HEAD_KEY] = json.dumps(dict(head, version=2, phase=old))
    h.saved.append(json.dumps(SessionStore(kv.get, kv.put).load()))
    s = h.reload()
    h.run()
    assert s.s['state'] == 'done' and 'failed' in [t['verdict'] for t in s.s['trials']]
    assert h.config_of(0) == before


def test_a_version_3_state_keeps_its_canarys_fields_in_its_record_and_resumes() -> None:
    # version 3 kept the one canary's fields in the head's own
    kv, store, h = stored_session()
    before = h.config_of(0)
    s = h.start(osd=0, trials=1)
    h.run(until=lambda s: s.s['phase'] == 'wait_up' and s.s['current']['kind'] == 'candidate')
    rec = dict(s.canary.rec)
    head = as_version_3(json.loads(kv.d[HEAD_KEY]))
    assert 'canaries' not in head and head['running_dirty'] and head['noout_ours']
    kv.d[HEAD_KEY] = json.dumps(head)
    # and its start record: the one canary's originals in its own fields only
    for key in (START_KEY, ORIGINALS_KEY):
        start = json.loads(kv.d[key])
        del start['canaries_at_start']
        kv.d[key] = json.dumps(start)
    fresh = SessionStore(kv.get, kv.put)
    state = fresh.load()
    assert state is not None and state['version'] == STATE_VERSION and 'running_dirty' not in state
    # what a rescue needs of the canary, as a start record of today keeps it
    assert state['canaries_at_start'] == s.s['canaries_at_start']
    fresh.save(state)  # the next save writes the start record as today's
    for key in (START_KEY, ORIGINALS_KEY):
        assert json.loads(kv.d[key])['canaries_at_start'] == s.s['canaries_at_start']
    # its restart still to be waited for (restarted: False), all else as it was
    assert state['canaries'] == {'0': dict(rec, restarted=False)}
    assert state['plan'] == {'design': 'sequential', 'osds': [0]}
    h.saved.append(json.dumps(state))
    s = h.reload()
    h.run()
    assert s.s['state'] == 'done' and h.config_of(0) == before
    assert not h.cluster.has_noout(0)
    assert h.cluster.running[0] == h.cluster.defaults['bluestore_rocksdb_options']


def test_the_typed_records_match_what_is_written() -> None:
    assert set(StartRecord.__annotations__) == set(START_FIELDS)
    h = Harness()
    s = h.start(osd=0, trials=1)
    keys = set(SessionState.__annotations__)
    # the end; the first health look; the confirmation, after the search; the
    # client load's preconditioning; the noise and the steady windows' WAL
    # bound, once the baseline is measured
    canary = set(CanaryRecord.__annotations__)
    assert set(CANARY_FIELDS) == canary
    assert set(s.s) == keys - {'final', 'other_checks', 'confirm', 'noise', 'steady_cap'}
    assert set(s.canary.rec) == canary - {'precondition'}
    h.run()
    assert set(s.s) == keys and set(s.canary.rec) == canary - {'precondition'}
    h = Harness(client_space=8 << 20, client_object_size=1 << 20, steady_window_limit=10.0,
                precondition_limit=10.0)
    s = h.start(osd=0, trials=1, workload='client')
    h.run()
    assert set(s.s) == keys and set(s.canary.rec) == canary


def test_a_session_saved_under_the_old_bench_name_goes_on_as_osd_bench() -> None:
    kv, store, h = stored_session()
    before = h.config_of(0)
    s = h.start(osd=0, trials=2)
    h.run(until=lambda s: s.s['phase'] == 'measure')
    assert s.s['params']['workload'] == 'osd-bench'
    # as a module from before the rename saved it
    for key, raw in list(kv.d.items()):
        rec = json.loads(raw)
        if isinstance(rec, dict) and isinstance(rec.get('params'), dict):
            rec['params']['workload'] = 'bench'
            kv.d[key] = json.dumps(rec)
    state = store.load()
    assert state is not None and state['params']['workload'] == 'osd-bench'
    h.saved.append(json.dumps(state))
    s = h.reload()
    h.run()
    assert s.s['state'] == 'done', s.s['error']
    # osd bench's cap was the session's and is taken back: the old name ran as osd-bench
    assert h.config_of(0) == before
