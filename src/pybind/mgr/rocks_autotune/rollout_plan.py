"""What `apply` and `revert` will do, worked out before anything changes.
Design: doc/dev/internals.rst, dev-internals-rollout."""
import re
import shlex
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from . import views
from .canary import ANNEX, CLASS_MASK_NOTE, OPTIONS
from .cluster import Cluster, ConfigSnapshot, Crash, OsdInfo, split_who
from .gate import look, thin_pools_of
from .rocksdb_options import OptionStringError, parse_options
from .health import osd_list, osds_are
from .rollout_record import MAX_PARALLEL, Masks, RolloutOsd, RolloutPlan, RolloutRecord
from .store import ACTIVE as SESSION_ACTIVE, SessionState

NAMES = (OPTIONS, ANNEX)
# beside them in an OSD's `before`: the options its process runs ('' when it did not answer)
RUNNING = 'running'


class RolloutRefused(Exception):
    """`apply` or `revert` cannot go ahead; the message says why.  Nothing was changed."""


class NothingToRevert(RolloutRefused):
    """`revert` finds nothing to undo."""


def show(value: Optional[str]) -> str:
    return '(not set)' if value is None else repr(value)


def _max_parallel(n: int) -> None:
    """--max-parallel, checked (RolloutRefused)."""
    if not 1 <= n <= MAX_PARALLEL:
        raise RolloutRefused(f'--max-parallel takes the most OSDs restarted together, from 1 '
                             f'(one at a time, the default) to {MAX_PARALLEL}, not {n}')


def at_a_time(n: int) -> str:
    """How a rollout restarts its OSDs, in words."""
    return ('one at a time' if n == 1 else
            f'up to {n} at a time, as ceph osd ok-to-stop --max allows')


def in_flight(n: int) -> str:
    """What an abort lets finish, in words."""
    return 'the OSD in flight' if n == 1 else 'the OSDs in flight'


def parse_osd_ids(text: str) -> List[int]:
    """`--osds 1,2,5` as ids, in the order given; ASCII digits only (str.isdigit
    takes '²' and '١'), each OSD once."""
    ids: List[int] = []
    for item in filter(None, text.replace(' ', ',').split(',')):
        m = re.fullmatch(r'(?:osd\.)?([0-9]{1,9})', item)
        if not m:
            raise RolloutRefused(f'--osds takes OSD ids in ASCII digits separated by commas '
                                 f'(1,2,5), not {text!r}')
        if int(m[1]) in ids:
            raise RolloutRefused(f'--osds names osd.{int(m[1])} more than once: {text!r}')
        ids.append(int(m[1]))
    if not ids:
        raise RolloutRefused('--osds names no OSD')
    return ids


def recommendation(session: Optional[SessionState]) -> Tuple[str, str]:
    """The options the last session recommends, and where they come from."""
    hint = '; give the options to roll out with --options'
    if session is None:
        raise RolloutRefused('no tuning session has run, so there is no recommendation' + hint)
    if session.state in SESSION_ACTIVE:
        raise RolloutRefused(f'the tuning session {session.id} is still {session.state}')
    result = views.final_answer(session)
    if result is None or session.confirm is None:
        raise RolloutRefused(f'the last session ({session.id}, {session.state}) ended '
                             'before its confirmation: it has no answer' + hint)
    arm, answer = result.chosen, views.answer_line(session.confirm, session.osd)
    if arm is None:
        raise RolloutRefused(f'the last session\'s answer is {answer}: '
                             'there is nothing to apply' + hint)
    if session.config_changes:
        raise RolloutRefused(
            'the last session\'s string was measured against the options in effect when it '
            'started, which someone else has changed since (' +
            '; '.join(session.config_changes) + '): rolling it out would undo that' + hint)
    return str(session.confirm.arm(arm.arm).options), (
        f'session {session.id} (canary osd.{session.osd}): ' + answer)


def _order(cluster: Cluster, targets: Sequence[int]) -> List[Tuple[int, str]]:
    """The targets in CRUSH order, host by host (hosts by their first OSD in the tree)."""
    wanted = set(targets)
    hosts: Dict[str, List[Tuple[int, str]]] = {}
    for osd, host in cluster.crush_order():
        if osd in wanted:
            hosts.setdefault(host or f'osd.{osd}', []).append((osd, host))
            wanted.discard(osd)
    # then those not in the tree at all
    return [o for osds in hosts.values() for o in osds] + [(osd, '') for osd in sorted(wanted)]


def _osd_record(config: ConfigSnapshot, osd: int, host: str, back_to: str = '',
                status: str = 'pending', error: str = '') -> RolloutOsd:
    """An OSD of the plan and what the mon gives it now (what its process
    runs is asked just before its restart, not here: a command per OSD)."""
    return RolloutOsd(osd, host, status, error,
                      before={name: config.effective(osd, name) for name in NAMES},
                      back_to=back_to)


def _priors(config: ConfigSnapshot, sets: Masks) -> Masks:
    return {who: {name: config.own(who, name) for name in names}
            for who, names in sets.items()}


def _checks(cluster: Cluster, osds: Sequence[int], crash_osds: Sequence[int], force: bool,
            allow_single_copy: bool, since: float) -> Tuple[List[str], List[str]]:
    """The restart gate's checks as the plan shows them and what holds the
    rollout back now; RolloutRefused on single copies without the flag."""
    thin = {osd: pools for osd, pools in thin_pools_of(cluster, osds).items() if pools}
    if thin and not allow_single_copy:
        raise RolloutRefused('; '.join(f'restarting osd.{osd} leaves ' + '; '.join(pools)
                                       for osd, pools in sorted(thin.items())[:3]) +
                             (f'; and {len(thin) - 3} OSD(s) more' if len(thin) > 3 else '') +
                             '; leave them out with --osds, give the pools more redundancy '
                             '(replicated: size 3; erasure-coded: m >= 2 and min_size > k), '
                             'or pass --allow-single-copy to accept it')
    health = look(cluster, None, own_crash(crash_osds, since))
    checks = [
        'before each restart (the session\'s checks): no OSD down, PGs active+clean, no '
        'noup/nodown flag, ceph osd ok-to-stop; noout on the OSD while it restarts; '
        'now: ' + ('; '.join(health.threats) or 'clear'),
        "others' health checks hold each restart back unless --force: now "
        + (f'{health.status} ({", ".join(health.others)})' if health.others else 'none')
        + (' (--force: not held back)' if force and health.others else ''),
        'single copy: ' + (('--allow-single-copy: restarts of ' + osd_list(sorted(thin)) +
                            ' leave PGs on one copy') if thin else
                           'no restart leaves a PG on a single copy'),
    ]
    return checks, health.blockers(force)


def own_crash(osds: Sequence[int], since: float) -> Callable[[Crash], bool]:
    """A rollout's own crashes, which hold back neither its restarts nor the
    revert: its OSDs' since it (or the apply it reverts) began."""
    names = {f'osd.{osd}' for osd in osds}
    return lambda crash: crash.entity in names and crash.time >= since


def set_by_others(now: Mapping[str, Optional[str]],
                  *ours: Mapping[str, Optional[str]]) -> List[str]:
    """The options whose value at a mask now is none of those a rollout found
    or put there (`ours`): someone else has set them since."""
    return [name for name, value in now.items() if all(value != o.get(name) for o in ours)]


def _some(lines: List[str], n: int = 5) -> str:
    """At most n lines of a list that may name thousands of OSDs."""
    return '; '.join(lines[:n]) + (f'; and {len(lines) - n} more' if len(lines) > n else '')


def _targets(osds: Mapping[int, OsdInfo], device_class: Optional[str],
             osd_ids: Optional[Sequence[int]], canary: Optional[int]
             ) -> Tuple[List[int], str, List[str]]:
    """apply's OSDs (--osds, --device-class, or the canary's class), how the
    plan names them, and its notes; RolloutRefused when there are none."""
    if osd_ids is not None:
        unknown = [i for i in osd_ids if i not in osds]
        if unknown:
            raise RolloutRefused(', '.join(f'osd.{i}' for i in unknown[:10]) +
                                 (' does' if len(unknown) == 1 else ' do') + ' not exist')
        return list(osd_ids), osd_list(sorted(osd_ids)), []
    if device_class is None:
        if canary is None or canary not in osds:
            raise RolloutRefused('give the OSDs to roll out to: --device-class CLASS or '
                                 '--osds N,M (no session canary to take the class of)')
        device_class = osds[canary].device_class
        if not device_class:
            raise RolloutRefused(f'the canary osd.{canary} has no device class: give '
                                 '--device-class CLASS or --osds N,M')
    classes = sorted({o.device_class for o in osds.values() if o.device_class})
    targets = sorted(i for i, o in osds.items() if o.device_class == device_class)
    if not targets:
        raise RolloutRefused(f'no OSD has device class {device_class!r} (the classes: '
                             f'{", ".join(classes) or "none"})')
    return targets, f'the OSDs of class {device_class}', [
        'the options go to ' + CLASS_MASK_NOTE.format(cls=device_class) +
        '. An OSD that joins the class later gets them from another apply']


def _refuse_own_masks(config: ConfigSnapshot, osd: int, names: List[str]) -> None:
    """RolloutRefused when osd.N holds one of `names` at a mask of its own
    (osd.N/host:...), which beats osd.N, where the rollout sets it."""
    for who, entries in sorted(config.entries(osd, names).items()):
        section, where = split_who(who)
        if section == f'osd.{osd}' and where:
            name = sorted(entries)[0]
            raise RolloutRefused(
                f'{who} {name} = {entries[name]!r} is set for osd.{osd} with a mask '
                f'of its own, which beats osd.{osd}, where the rollout sets it: remove it '
                f'(ceph config rm {who} {name}), or leave osd.{osd} out with --osds')


def plan_apply(cluster: Cluster, options: str, source: str,
               device_class: Optional[str] = None, osd_ids: Optional[Sequence[int]] = None,
               canary: Optional[int] = None, force: bool = False,
               allow_single_copy: bool = False, now: float = 0.0,
               max_parallel: int = 1) -> RolloutPlan:
    """apply's plan, read in a fixed number of calls whatever the OSD count;
    RolloutRefused (bad input, nothing to do).  `canary`: the default class's."""
    _max_parallel(max_parallel)
    try:
        if not parse_options(options):
            raise OptionStringError('it holds no option')
    except OptionStringError as e:
        raise RolloutRefused(f'cannot use the options string {options!r}: {e}')
    if device_class is not None and osd_ids is not None:
        raise RolloutRefused('give --device-class or --osds, not both')
    with cluster.one_view():  # reads only: each of the maps read once
        osds = cluster.osds()
        targets, target, notes = _targets(osds, device_class, osd_ids, canary)
        down = [i for i in targets if not osds[i].up]
        if down:
            them = 'it' if len(down) == 1 else 'them'
            raise RolloutRefused(osds_are(down, 'down')[0] + f': bring {them} up, or name the OSDs '
                                 'to roll out to with --osds')
        config = cluster.config_snapshot(defaults=NAMES)
        records = [_osd_record(config, osd, host) for osd, host in _order(cluster, targets)]
        values: Dict[str, Optional[str]] = {OPTIONS: options}
        if any(r.before[ANNEX].strip() for r in records):
            values[ANNEX] = ''  # appended by the OSD: it would override the options' keys
        for r in records:
            _refuse_own_masks(config, r.osd, list(values))
        sets: Masks = {f'osd.{r.osd}': dict(values) for r in records}
        checks, blockers = _checks(cluster, targets, targets, force, allow_single_copy, now)
        return RolloutPlan(kind='apply', options=options, source=source, target=target,
                           sets=sets, priors=_priors(config, sets), notes=notes, checks=checks,
                           blockers=blockers, osds=records, of=None, force=force,
                           allow_single_copy=allow_single_copy, since=now,
                           crash_osds=sorted(targets), max_parallel=max_parallel)


def _to_put_back(last: RolloutRecord) -> Tuple[Masks, Masks, List[Tuple[RolloutOsd, str]], str]:
    """revert's masks to put back, what the last rollout left there, its
    OSDs still to put back (with what each ran before the apply), and the
    apply it undoes; NothingToRevert."""
    if last.kind == 'apply':
        if not last.changed:
            raise NothingToRevert(f'nothing to revert: the last apply ({last.id}, '
                                  f'{last.state}) changed nothing')
        # its mask holds the apply's options, or it may run them (a failed OSD
        # whose restart onto its prior options did not come back)
        todo = [(o, o.before.get(RUNNING, '')) for o in last.osds
                if o.changed or (o.status == 'failed' and o.put_back != 'done')]
        return last.priors, last.sets, todo, last.id
    if last.state == 'done':
        raise NothingToRevert(f'nothing to revert: the last rollout was a revert (of '
                              f'{last.of}), and it is done')
    todo = [(o, o.back_to) for o in last.osds if o.status not in ('done', 'skipped')]
    return last.sets, last.priors, todo, last.id if last.of is None else last.of


def _down_first(records: List[RolloutOsd], up: Mapping[int, Any]) -> List[str]:
    """Put the down OSDs first (their config goes back at once, unrestarted), and say so."""
    records.sort(key=lambda r: r.osd in up and up[r.osd].up)
    down = [r.osd for r in records if r.osd in up and not up[r.osd].up]
    if not down:
        return []
    one = len(down) == 1
    return [osds_are(down, 'down')[0] + f': {"its" if one else "their"} config is put back '
            f'first, with no restart; the other restarts wait for {"it" if one else "them"} '
            'to be up']


def plan_revert(cluster: Cluster, last: Optional[RolloutRecord], force: bool = False,
                allow_single_copy: bool = False, max_parallel: int = 1) -> RolloutPlan:
    """revert's plan from the last (ended) rollout; RolloutRefused when there
    is nothing to revert.  An OSD whose mask now holds what the apply did not
    set is left as it is and named; one gone from the map is not restarted."""
    _max_parallel(max_parallel)
    if last is None:
        raise NothingToRevert('nothing to revert: no rollout has run')
    with cluster.one_view():  # reads only: each of the maps read once
        back, applied, todo, of = _to_put_back(last)
        config = cluster.config_snapshot(defaults=NAMES)
        sets: Masks = {}
        records: List[RolloutOsd] = []
        theirs: List[str] = []
        for o, back_to in todo:
            who = f'osd.{o.osd}'
            now = {name: config.own(who, name) for name in back[who]}
            moved = set_by_others(now, applied[who], back[who])
            if moved:
                error = (f'{who} {moved[0]} is now {show(now[moved[0]])}, which the apply did not '
                         'set: someone else set it since; left as it is, not restarted')
                theirs.append(error)
                records.append(_osd_record(config, o.osd, o.host, status='skipped', error=error))
                continue
            sets[who] = dict(back[who])
            records.append(_osd_record(config, o.osd, o.host, back_to))
        up = cluster.osds()
        notes = ([_some(theirs)] if theirs else []) + _down_first(records, up)
        if not sets:
            # a rollout stopped part way left no mask of its own to put back: an
            # empty revert ends it (refusing would leave no command that clears it)
            notes.append(f'nothing is left to put back of apply {of}: '
                         + ('the rest was set by someone else since' if theirs else
                            'every OSD it changed was put back as it ended'))
        targets = [r.osd for r in records if r.status == 'pending' and r.osd in up]
        crash_osds = list(last.crash_osds)
        since = float(last.since)
        checks, blockers = _checks(cluster, targets, crash_osds, force, allow_single_copy, since)
        return RolloutPlan(kind='revert', options=None, source=f'what apply {of} changed',
                           target=f'the OSDs apply {of} changed', sets=sets,
                           priors=_priors(config, sets), notes=notes, checks=checks,
                           blockers=blockers, osds=records, of=of, force=force,
                           allow_single_copy=allow_single_copy, since=since,
                           crash_osds=crash_osds, max_parallel=max_parallel)


def config_command(who: str, name: str, value: Optional[str]) -> str:
    """The `ceph config` line that sets a value, or removes it (None); shell-quoted."""
    return shlex.join(['ceph', 'config', 'rm', who, name] if value is None
                      else ['ceph', 'config', 'set', who, name, value])


def undo_commands(plan: RolloutPlan) -> List[str]:
    """By hand, what `revert` does to the config: every prior put back."""
    return [config_command(who, name, value) for who, names in sorted(plan.priors.items())
            for name, value in sorted(names.items())]


def partial(last: Optional[RolloutRecord]) -> Optional[str]:
    """Why no new apply may start: the last rollout (its record) stopped part way."""
    if last is None or last.state not in ('aborted', 'failed') or not last.changed:
        return None
    if last.kind == 'apply':
        return (f'the last apply ({last.id}, to {last.target}) ended '
                f'{last.state} part way: `ceph rocks-autotune revert` it first')
    return (f'the last revert (of apply {last.of}) ended {last.state} part way: '
            '`ceph rocks-autotune revert` again to finish it first')
