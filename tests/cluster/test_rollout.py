"""apply and revert on the lab: every OSD of the class, one at a time, then
in batches (--max-parallel 2) as the mgr's `ceph osd ok-to-stop --max` allows.

After a short session on osd.0, `apply` rolls an options string out to every
OSD of the canary's device class and `revert` puts back what it changed.

The OSDs are named by --device-class, and the plan sets the options at each
OSD's own mask osd.N, not at osd/class:C: on the lab's Tentacle 20.2.4 an OSD
restarted after `ceph config set osd/class:ssd bluestore_rocksdb_options X`
does not run X (`ceph config show` reports the default as its source), though
`ceph config get osd.N` says X (canary.CLASS_MASK_NOTE; an apply through the
class mask timed out on its first OSD in a lab run of 2026-11-21).  That each
OSD runs the new options after the apply is what this test checks.  The PG
watcher (pg_watcher.py) samples the OSD map and the PGs once a second: from
its samples each OSD's restarts are counted (a new up_from), and their
timeline (down, up, PGs clean) is printed (pytest -s) and saved to
build/rollout-timeline.txt with the watcher's figures.  The commands and
their output go to build/rollout-transcript.txt (the admin guide's worked
example quotes it).
"""
import json
import os
import shlex
import subprocess
import time
from typing import Any, Dict, List, Optional, Tuple

from conftest import REPO, Lab, ShortSession
from test_panel import BROWSER, panel_url
from timeline import LEGEND, Row, in_batches, one_at_a_time, restarts_of, table, watcher_figures

OPTIONS = 'bluestore_rocksdb_options'
ANNEX = 'bluestore_rocksdb_options_annex'
CANARY = 0
ROLLOUT_ENDED = ('done', 'aborted', 'failed')
BUILD = os.path.join(REPO, 'build')
TIMELINE = os.path.join(BUILD, 'rollout-timeline.txt')
TRANSCRIPT = os.path.join(BUILD, 'rollout-transcript.txt')
SCREENSHOT = os.path.join(BUILD, 'panel', 'rollout.png')
COMMAND = ('CEPH_LAB_DIR=<lab> CEPH_LAB_MON_PORT=<port> python -m pytest -q -s '
           '-p no:cacheprovider tests/cluster/test_rollout.py')
# what the tests found, shared in file order: the session's options, the
# report's sections, the transcript
RUN: Dict[str, Any] = {'report': [], 'transcript': []}


def save(path: str, lines: List[str]) -> None:
    os.makedirs(BUILD, exist_ok=True)
    with open(path, 'w') as f:
        f.write('\n'.join(lines) + '\n')


def transcribe(args: Tuple[str, ...], p: Any) -> None:
    """`ceph ARGS` and what it printed, kept for the transcript."""
    command = '$ ceph ' + ' '.join(shlex.quote(a) for a in args)
    RUN['transcript'] += [command, (p.stdout + p.stderr).rstrip(), '']
    save(TRANSCRIPT, RUN['transcript'])


def shown(lab: Lab, *args: str, check: bool = True) -> Any:
    """`ceph ARGS`, its output kept for the transcript."""
    p = lab.ceph(*args, check=check)
    transcribe(args, p)
    return p


def running(lab: Lab, osd: int) -> str:
    """What the OSD's process runs (`ceph tell osd.N config get`)."""
    return str(lab.json('tell', f'osd.{osd}', 'config', 'get', OPTIONS)[OPTIONS])


def up_froms(lab: Lab) -> Dict[int, int]:
    return {o['osd']: o['up_from'] for o in lab.json('osd', 'dump')['osds']}


def device_class(lab: Lab, osd: int) -> str:
    node = [n for n in lab.json('osd', 'tree')['nodes'] if n['id'] == osd][0]
    return str(node['device_class'])


def class_osds(lab: Lab, device_class: str) -> List[int]:
    return sorted(int(i) for i in lab.json('osd', 'crush', 'class', 'ls-osd', device_class))


def apply_args(lab: Lab, options: str) -> List[str]:
    """`apply` to every OSD of the canary's class."""
    return ['rocks-autotune', 'apply', '--device-class', device_class(lab, CANARY),
            '--options', options]


def rocksdb_entries(lab: Lab) -> List[Dict[str, Any]]:
    return [e for e in lab.json('config', 'dump') if e['name'] in (OPTIONS, ANNEX)]


def follow(lab: Lab, rid: str, progress: str, timeout: float = 900,
           flights: Optional[List[List[int]]] = None
           ) -> Tuple[Dict[str, Any], Dict[int, Row], bool]:
    """Poll `status` until rollout `rid` ends: when each OSD was first seen
    restarting and done, and whether `ceph -s` showed its progress event;
    into `flights` (--max-parallel), each batch seen in flight, in order."""
    rows: Dict[int, Row] = {}
    seen_event = False
    mid_status = False
    deadline = time.time() + timeout
    while True:
        ro = lab.status(osds=True)['rollout']
        now = time.time()
        assert ro['id'] == rid, ro
        if flights is not None and ro['in_flight'] and ro['in_flight'] not in flights[-1:]:
            flights.append(ro['in_flight'])
        for o in ro['osds']:
            row = rows.setdefault(o['osd'], Row(o['osd']))
            if o['status'] != 'pending' and row.restarting is None:
                row.restarting = now
            if o['status'] in ('done', 'failed') and row.done is None:
                row.done = now
        if ro['state'] in ROLLOUT_ENDED:
            return ro, rows, seen_event
        if not seen_event:
            seen_event = progress in lab.ceph('-s').stdout
        if not mid_status and ro['counts']['done'] >= 1 and ro['current'] is not None:
            shown(lab, 'rocks-autotune', 'status')  # one look mid-way, for the transcript
            mid_status = True
        assert now < deadline, f'the rollout did not end within {timeout}s: {ro}'
        time.sleep(1)


def check_rollout(lab: Lab, kind: str, t0: float, ro: Dict[str, Any], rows: Dict[int, Row],
                  restarted: Optional[List[int]] = None,
                  batches: Optional[List[List[int]]] = None) -> List[Row]:
    """The OSDs `restarted` (by default every OSD of the rollout) restarted
    once each, one at a time in the rollout's order (or `batches`, each
    down only once the one before is back up), with at most one OSD down (a
    batch's) in any sample; no other OSD restarted; the timeline reported."""
    t1 = time.time()
    lab.wait('the watcher to sample past the end', lambda: bool(lab.samples(t1 + 2, 1e12)), 30)
    # from just before the command: the first sample gives each OSD's up_from
    samples = lab.samples(t0 - 5, t1 + 2)
    ordered = [rows[o['osd']] for o in ro['osds']]
    for row in ordered:
        row.restarts = restarts_of(samples, row.osd)
    figures = watcher_figures(samples)
    lines = [f'== {kind} {ro["id"]} to {ro["target"]}: {ro["state"]} in {t1 - t0:.0f}s '
             f'(command at {time.strftime("%H:%M:%S", time.localtime(t0))})',
             *table(ordered, t0), LEGEND,
             'PG watcher: ' + ', '.join(f'{k} {v:.1f}' if isinstance(v, float) else f'{k} {v}'
                                        for k, v in figures.items()),
             '']
    RUN['report'] += lines
    save(TIMELINE, RUN['report'] + [f'from: {COMMAND}'])
    print('\n' + '\n'.join(lines))
    assert figures['osd_samples'] >= (t1 - t0) / 4, f'the watcher missed the OSD map: {figures}'
    most = max(map(len, batches or [[0]]))
    assert figures['most_osds_down'] <= most, f'more than {most} OSD(s) down at once: {figures}'
    want = [o['osd'] for o in ro['osds']] if restarted is None else restarted
    bad = (one_at_a_time([r for r in ordered if r.osd in want]) if batches is None
           else in_batches([r for r in ordered if r.osd in want], batches))
    assert not bad, bad
    for other in up_froms(lab):
        if other not in want:
            assert not restarts_of(samples, other), f'osd.{other} restarted'
    return ordered


def test_short_session_then_apply_takes_no_keep_current_answer(
        lab: Lab, short_session: ShortSession) -> None:
    # the tier's one short session (conftest), its `best` and `apply --dry-run`
    # taken right after it ended
    assert short_session.status['state'] == 'done', short_session.status
    best = short_session.best
    r = short_session.apply_dry_run
    transcribe(('rocks-autotune', 'best'), short_session.best_text)
    transcribe(('rocks-autotune', 'apply', '--dry-run'), r)
    # one confirmation round (conftest): too few for an interval, so the answer
    # is to keep the current options, and apply has nothing of its own to roll out
    assert best['keeps_current'], best
    assert r.returncode != 0 and 'there is nothing to apply' in r.stderr, r.stderr
    assert 'Traceback' not in r.stderr
    lab.wait('active+clean', lab.active_clean, 300)
    assert not rocksdb_entries(lab), 'the lab has RocksDB options set already'
    # what the session measured on its canary: the candidate it confirmed, else
    # the first candidate it measured; rolled out with --options
    measured = [t['options'] for t in short_session.history
                if t['kind'] == 'candidate' and t['verdict'] != 'failed']
    options = best['candidates'][0]['options'] if best['candidates'] else measured[0]
    assert options != running(lab, CANARY)
    RUN['options'] = options


def test_dry_run_changes_nothing(lab: Lab) -> None:
    options = RUN['options']
    before, ups = lab.json('config', 'dump'), up_froms(lab)
    last = lab.status().get('rollout')
    plan = json.loads(lab.ceph(*apply_args(lab, options), '--dry-run', '-f', 'json').stdout)
    brief = shown(lab, *apply_args(lab, options), '--dry-run').stdout
    text = shown(lab, *apply_args(lab, options), '--dry-run', '--detail').stdout
    osds = class_osds(lab, device_class(lab, CANARY))
    assert plan['options'] == options and list(plan['sets']) == [f'osd.{i}' for i in osds]
    assert [o['osd'] for o in plan['osds']] == osds
    assert f"each OSD's own mask (osd.N), not osd/class:{device_class(lab, CANARY)}" \
        in plan['notes'][0], plan['notes']
    assert plan['undo'] == [f'ceph config rm osd.{i} {OPTIONS}' for i in osds], plan['undo']
    assert f'osd.{osds[0]} {OPTIONS}: (not set) -> A' in text, text
    assert 'undo: ceph rocks-autotune revert' in text
    assert brief.startswith('plan: apply A to ') and '\n  undo: ceph rocks-autotune revert\n' \
        in brief and len(brief.splitlines()) <= 12, brief
    assert lab.json('config', 'dump') == before
    assert up_froms(lab) == ups
    assert lab.status().get('rollout') == last  # no rollout started


def test_apply_then_revert_one_osd_at_a_time(lab: Lab) -> None:
    options = RUN['options']
    cls = device_class(lab, CANARY)
    osds = class_osds(lab, cls)
    assert len(osds) >= 3, osds
    a, b = osds[1], osds[2]
    # priors: an annex at the class mask (every OSD gets it, so the plan blanks
    # the annex at each osd.N), osd.A's own annex and osd.B's own options; the
    # plan saves each value and absence at every osd.N, revert puts them back
    default = lab.ceph('config', 'get', f'osd.{b}', OPTIONS).stdout.strip()
    priors = ((f'osd/class:{cls}', ANNEX, 'compaction_readahead_size=2097152'),
              (f'osd.{a}', ANNEX, 'compaction_readahead_size=4194304'),
              (f'osd.{b}', OPTIONS, default))
    saved = {f'osd.{o}': {OPTIONS: default if o == b else None,
                          ANNEX: priors[1][2] if o == a else None} for o in osds}
    try:
        for who, name, value in priors:
            lab.ceph('config', 'set', who, name, value)
        before = lab.json('config', 'dump')
        old = {o: running(lab, o) for o in osds}
        ups = up_froms(lab)
        lab.wait('active+clean', lab.active_clean, 300)

        t0 = time.time()
        r = shown(lab, *apply_args(lab, options))
        rid = r.stdout.split()[1]
        ro, rows, event = follow(lab, rid, 'Rolling out RocksDB options to')
        shown(lab, 'rocks-autotune', 'status')
        check_rollout(lab, 'apply', t0, ro, rows)
        assert ro['state'] == 'done', ro
        assert event, 'no progress event in ceph -s during the apply'
        assert ro['counts']['done'] == len(osds)
        assert ro['sets'] == {f'osd.{o}': {OPTIONS: options, ANNEX: ''} for o in osds}, ro
        assert ro['priors'] == saved, ro['priors']
        now = up_froms(lab)
        for o in osds:
            assert now[o] != ups[o], f'osd.{o}: up_from did not move'
            assert running(lab, o) == options, f'osd.{o} does not run the new options'
        shown(lab, 'tell', f'osd.{CANARY}', 'config', 'get', OPTIONS)
        assert not [o for o in lab.json('osd', 'dump')['osds'] if 'noout' in o['state']]
        assert not [c for c in lab.json('health')['checks'] if c.startswith('ROCKS_AUTOTUNE')]

        shown(lab, 'rocks-autotune', 'revert', '--dry-run')
        ups = up_froms(lab)
        t0 = time.time()
        r = shown(lab, 'rocks-autotune', 'revert')
        rid = r.stdout.split()[1]
        ro, rows, event = follow(lab, rid, 'Reverting the RocksDB options of')
        shown(lab, 'rocks-autotune', 'status')
        check_rollout(lab, 'revert', t0, ro, rows)
        assert ro['state'] == 'done', ro
        assert event, 'no progress event in ceph -s during the revert'
        # every mask as before: values and absences
        assert lab.json('config', 'dump') == before
        now = up_froms(lab)
        for o in osds:
            assert now[o] != ups[o], f'osd.{o}: up_from did not move'
            assert running(lab, o) == old[o], f'osd.{o} is not back on its old options'
        shown(lab, 'tell', f'osd.{CANARY}', 'config', 'get', OPTIONS)
        assert not [c for c in lab.json('health')['checks'] if c.startswith('ROCKS_AUTOTUNE')]
        r = lab.ceph('rocks-autotune', 'revert', check=False)
        assert r.returncode != 0 and 'nothing to revert' in r.stderr, r.stderr
    finally:
        st: Optional[Dict[str, Any]] = lab.status().get('rollout')
        if st is not None and st['state'] == 'running':
            lab.ceph('rocks-autotune', 'abort')
            lab.wait('the rollout to end',
                     lambda: lab.status()['rollout']['state'] in ROLLOUT_ENDED, 600)
        # the lab had no RocksDB options set (the first test checks)
        for e in rocksdb_entries(lab):
            lab.ceph('config', 'rm', e['section'] + (f'/{e["mask"]}' if e['mask'] else ''),
                     e['name'])


def mgr_batches(lab: Lab, order: List[int], most: int) -> List[List[int]]:
    """The batches `--max-parallel most` makes of the OSDs `order`, from the
    mgr's own answers now, all PGs active+clean as at the start of each
    batch: the next OSD, and those `ceph osd ok-to-stop <it> --max <most>`
    names of the OSDs after it, at most `most` in all."""
    pending, out = list(order), []
    while pending:
        p = lab.ceph('osd', 'ok-to-stop', str(pending[0]), '--max', str(most), '-f', 'json',
                     check=False)
        print(f'ceph osd ok-to-stop {pending[0]} --max {most}: {p.returncode} '
              f'{p.stdout.strip()} {p.stderr.strip()}')
        named = set(json.loads(p.stdout)['osds']) if p.returncode == 0 else set()
        batch = [pending[0]] + ([o for o in pending[1:] if o in named][:most - 1]
                                if pending[0] in named else [])
        out.append(batch)
        pending = [o for o in pending if o not in batch]
    return out


def test_apply_then_revert_in_batches_as_ok_to_stop_max_allows(lab: Lab) -> None:
    """--max-parallel 2: each batch is what the mgr answers `ceph osd
    ok-to-stop <osd> --max 2` (on the lab's one host and size-3 pools, two
    OSDs that share a PG may not stop together: most likely one a batch,
    whatever it says is what is checked), never more than two down at once;
    the options and the config as one at a time leaves them."""
    options = RUN['options']
    osds = class_osds(lab, device_class(lab, CANARY))
    lab.wait('active+clean', lab.active_clean, 300)
    before = lab.json('config', 'dump')
    old = {o: running(lab, o) for o in osds}
    try:
        for kind, args, progress in (
                ('apply', apply_args(lab, options), 'Rolling out RocksDB options to'),
                ('revert', ['rocks-autotune', 'revert'], 'Reverting the RocksDB options of')):
            args += ['--max-parallel', '2']
            plan = json.loads(lab.ceph(*args, '--dry-run', '-f', 'json').stdout)
            assert plan['max_parallel'] == 2 and sorted(o['osd'] for o in plan['osds']) == osds
            assert 'up to 2 at a time, as ceph osd ok-to-stop --max allows' in \
                shown(lab, *args, '--dry-run').stdout
            expected = mgr_batches(lab, [o['osd'] for o in plan['osds']], 2)
            ups = up_froms(lab)
            t0 = time.time()
            r = shown(lab, *args)
            assert 'up to 2 at a time' in r.stdout, r.stdout
            flights: List[List[int]] = []
            ro, rows, _ = follow(lab, r.stdout.split()[1], progress, flights=flights)
            shown(lab, 'rocks-autotune', 'status')
            print(f'{kind}: ok-to-stop --max 2 allowed {expected}; in flight: {flights}')
            assert ro['state'] == 'done', ro
            assert flights == expected, (flights, expected)
            check_rollout(lab, f'{kind} --max-parallel 2', t0, ro, rows, batches=expected)
            now = up_froms(lab)
            for o in osds:
                assert now[o] != ups[o], f'osd.{o}: up_from did not move'
                assert running(lab, o) == (options if kind == 'apply' else old[o]), o
            assert not [o for o in lab.json('osd', 'dump')['osds'] if 'noout' in o['state']]
        assert lab.json('config', 'dump') == before
    finally:
        st: Optional[Dict[str, Any]] = lab.status().get('rollout')
        if st is not None and st['state'] == 'running':
            lab.ceph('rocks-autotune', 'abort')
            lab.wait('the rollout to end',
                     lambda: lab.status()['rollout']['state'] in ROLLOUT_ENDED, 600)
        for e in rocksdb_entries(lab):
            lab.ceph('config', 'rm', e['section'] + (f'/{e["mask"]}' if e['mask'] else ''),
                     e['name'])


def test_an_osd_that_does_not_come_back_stops_the_apply(lab: Lab) -> None:
    """Options the OSD will not start with (an option RocksDB rejects): the
    first OSD does not come back on them, so it is put back on its prior
    options and the apply ends failed, the others not restarted; a health
    check says so and that revert undoes the rest; a new apply is refused."""
    cls = device_class(lab, CANARY)
    osds = class_osds(lab, cls)
    bad = RUN['options'] + ',bogus_option_for_test=1'
    lab.wait('active+clean', lab.active_clean, 300)
    before = lab.json('config', 'dump')
    old = {o: running(lab, o) for o in osds}
    t0 = time.time()
    r = shown(lab, *apply_args(lab, bad))
    ro, rows, _ = follow(lab, r.stdout.split()[1], 'Rolling out RocksDB options to')
    shown(lab, 'rocks-autotune', 'status')
    first = ro['osds'][0]['osd']
    # the first OSD: one restart that counts, onto its prior options (the one
    # onto the rejected options never came up)
    check_rollout(lab, 'apply (rejected options)', t0, ro, rows, restarted=[first])
    assert ro['state'] == 'failed', ro
    assert [(o['status'], o['put_back']) for o in ro['osds']] == \
        [('failed', 'done')] + [('pending', '')] * (len(osds) - 1), ro['osds']
    for o in osds:
        assert running(lab, o) == old[o], f'osd.{o} does not run its old options'
    assert not [o for o in lab.json('osd', 'dump')['osds'] if 'noout' in o['state']]
    health = lab.json('health', 'detail')['checks']
    shown(lab, 'health', 'detail')
    check = health.get('ROCKS_AUTOTUNE_ROLLOUT_FAILED')
    assert check, health
    assert any('ceph rocks-autotune revert' in d['message'] for d in check['detail']), check
    r = lab.ceph(*apply_args(lab, RUN['options']), check=False)
    assert r.returncode != 0 and 'part way' in r.stderr and 'rocks-autotune revert' in r.stderr, \
        r.stderr
    assert lab.json('config', 'dump') == before  # the OSDs not done are as they were
    RUN['failed_before'] = before
    RUN['failed_old'] = old


def test_panel_shows_the_rollout_in_headless_chromium(lab: Lab) -> None:
    """The page draws the last rollout (the failed apply above): its counts,
    and a row for the OSD that failed (those in flight, failed or skipped)."""
    ro = lab.status(osds=True)['rollout']
    assert ro['kind'] == 'apply' and ro['state'] == 'failed', ro
    os.makedirs(os.path.dirname(SCREENSHOT), exist_ok=True)
    p = subprocess.run(['node', os.path.join(BROWSER, 'panel_e2e.mjs'), panel_url(lab),
                        SCREENSHOT], cwd=BROWSER, text=True, capture_output=True, timeout=180)
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout.strip().splitlines()[-1])
    assert 'error' not in report, report['error']
    assert not report['console'], report['console']
    assert report['rollout_hidden'] is False
    assert report['rollout_rows'] == [{'osd': ro['osds'][0]['osd'], 'status': 'failed'}], \
        report['rollout_rows']
    n = ro['total']
    assert report['rollout_text'].startswith(f'0 done, 0 restarting, {n - 1} pending, 1 failed')
    assert 'ROCKS_AUTOTUNE_ROLLOUT_FAILED' in report['rollout_summary']
    print(f'\npanel screenshot: {SCREENSHOT}')


def test_revert_after_the_failure_puts_the_config_back(lab: Lab) -> None:
    """revert after the failed apply: the config as before it; no OSD runs
    the rejected options, so none is restarted."""
    ups = up_froms(lab)
    t0 = time.time()
    shown(lab, 'rocks-autotune', 'revert', '--dry-run')
    r = shown(lab, 'rocks-autotune', 'revert')
    ro, rows, _ = follow(lab, r.stdout.split()[1], 'Reverting the RocksDB options of')
    shown(lab, 'rocks-autotune', 'status')
    check_rollout(lab, 'revert (of the failed apply)', t0, ro, rows, restarted=[])
    assert ro['state'] == 'done' and ro['osds'] == [], ro
    assert lab.json('config', 'dump') == RUN['failed_before']
    assert up_froms(lab) == ups
    for o, options in RUN['failed_old'].items():
        assert running(lab, o) == options
    assert not [c for c in lab.json('health')['checks'] if c.startswith('ROCKS_AUTOTUNE')]
