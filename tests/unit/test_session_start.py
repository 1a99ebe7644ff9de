"""What a session starts with (session_start.py), alone: the record start
saves, and the record a rescue restores from."""
import pytest

from rocks_autotune import session_start
from rocks_autotune.canary import Canary
from rocks_autotune.session_settings import Params, StartRefused
from rocks_autotune.session import Session, Settings
from rocks_autotune.store import StartRecord
from rocks_autotune.workload import OSD_BENCH
from fake_cluster import FakeClock, FakeCluster


def test_the_first_record_holds_the_canarys_originals_and_passes_the_check() -> None:
    c = FakeCluster(FakeClock())
    config = dict(c.config)
    params = Params(osd=None, trials=2, duration=5.0, workload=OSD_BENCH)
    st = session_start.first_state(c, params, Settings(), 100.0)
    osd = st.osd
    assert params.osd == osd and st.started == st.phase_started == 100.0
    assert st.originals == Canary(c, osd).snapshot()
    Session.check_state(st)
    assert c.config == config  # it read the cluster, and changed nothing


def test_a_rescue_restores_from_the_start_record_and_ends_failed() -> None:
    c = FakeCluster(FakeClock())
    st = session_start.first_state(c, Params(osd=1, trials=2, duration=5.0,
                                             workload=OSD_BENCH), Settings(), 100.0)
    r = session_start.rescue_state(StartRecord.from_json(st.start_json()), 'unreadable', 200.0)
    Session.check_state(r)
    canary = r.canary
    assert r.phase == 'restore' and r.abort and canary.running_dirty
    assert r.originals == canary.originals == st.originals
    assert r.error == 'unreadable'
    # a start record written before STATE_VERSION 9 (its canary's fields
    # copied under canaries_at_start) still rescues a session across the upgrade
    old = dict(st.start_json(), canaries_at_start={'1': {
        'originals': st.originals, 'annexed': st.annexed, 'noout_at_start': False}})
    assert session_start.rescue_state(StartRecord.from_json(old), 'unreadable',
                                      200.0).canary.originals == st.originals


def test_a_rescue_whose_start_record_has_unreadable_settings_restores_with_the_modules(
) -> None:
    c = FakeClock()
    cluster = FakeCluster(c)
    st = session_start.first_state(cluster, Params(osd=1, trials=2, duration=5.0,
                                                   workload=OSD_BENCH), Settings(), 100.0)
    start = StartRecord.from_json(dict(st.start_json(), settings={'poll': 'often'}))
    ours = Settings(poll=7.0)
    s = Session.rescue(start, 'unreadable', cluster, ours, lambda state: None, c)
    assert s.settings == ours and s.s.phase == 'restore'
    start = StartRecord.from_json(dict(st.start_json(), settings=None))
    assert Session.rescue(start, 'unreadable', cluster, ours, lambda state: None,
                          c).settings == ours


def test_a_rescue_restores_the_canary_the_start_record_names() -> None:
    c = FakeCluster(FakeClock())
    st = session_start.first_state(c, Params(osd=0, trials=2, duration=5.0,
                                             workload=OSD_BENCH), Settings(), 100.0)
    start = st.start_json()
    r = session_start.rescue_state(StartRecord.from_json(start), 'unreadable', 200.0)
    Session.check_state(r)
    assert r.osd == 0 and r.canary.originals == Canary(c, 0).snapshot()
    assert (r.canary.noout_ours, r.canary.running_dirty) == (True, True)
    # a rescue reads it alone: malformed is unreadable (ValueError), not a crash
    start['noout_at_start'] = None
    with pytest.raises(ValueError, match='noout_at_start\' is missing or malformed'):
        Session.check_state(session_start.rescue_state(StartRecord.from_json(start),
                                                       'unreadable', 200.0))


def test_a_canary_not_running_what_the_monitors_give_it_is_refused() -> None:
    c = FakeCluster(FakeClock())
    c.running[1] = 'compression=kNoCompression'
    with pytest.raises(StartRefused, match='has not restarted since they changed'):
        session_start.check_running(c, 1)
