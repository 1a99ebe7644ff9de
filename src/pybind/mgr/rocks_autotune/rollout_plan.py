"""What `apply` and `revert` will do, worked out before anything changes.

A plan (store.RolloutPlan) names the OSDs to restart, in order, what each
gets from the monitors now, what is set at which mask, and what each of
those masks holds now (the priors: a value, or None for none set).  It is
what `--dry-run` prints and what rollout.Rollout carries out.

apply's plan:

- **The options**: `--options`, or the last session's recommendation (none
  when it has no answer or its answer is to keep the current options).
- **The masks**: each OSD's own, `osd.N`, whether the OSDs are named with
  `--osds N,M` or by device class (`--device-class`, by default the last
  session's canary's class).  Not `osd/class:<class>`: an OSD reads
  `bluestore_rocksdb_options` when it opens BlueStore, before the monitors
  give it what is set at a class mask, so a restarted OSD would not run
  options set there (seen on Tentacle 20.2.4 in the lab; Ceph tracker 65228
  found the same for osd_compact_on_start).  The plan says so.  `osd.N` is
  the most precise entry there is, except one at `osd.N` with a mask of its
  own (`osd.3/host:x`): such an entry would beat the rollout, so the plan is
  refused, naming it.
- **The annex**: `bluestore_rocksdb_options_annex` is appended to the options
  by the OSD, so when any OSD of the plan has one, the plan blanks it at the
  same masks (the last session's string has the canary's annex folded in).
- **The order**: one OSD at a time, host by host in CRUSH order (as `ceph osd
  tree` lists them), so a failure domain is done before the next is touched.

revert's plan puts back, at every mask the apply touched, the values (and
absences) it saved, and restarts the OSDs that may run the applied options:
those done or in flight, and a failed one that was not put back.  A revert
cut short (aborted, or an OSD that did not come back) is finished by the next
`revert`: the same config, the OSDs it had not done.

Nothing here changes the cluster.
"""
import shlex
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from . import views
from .canary import ANNEX, CLASS_MASK_NOTE, OPTIONS
from .cluster import Cluster, ClusterError, split_who
from .rocksdb_options import OptionStringError, parse_options
from .store import Masks, RolloutOsd, RolloutPlan

NAMES = (OPTIONS, ANNEX)
# beside them in an OSD's `before`: the options its process runs ('' when it did not answer)
RUNNING = 'running'
# a session in one of these has not answered yet
SESSION_ACTIVE = ('running', 'stopping', 'restoring')
REVERT = 'ceph rocks-autotune revert'


class RolloutRefused(Exception):
    """`apply` or `revert` cannot go ahead; the message says why.  Nothing was changed."""


class NothingToRevert(RolloutRefused):
    """`revert` finds nothing to undo."""


def show(value: Optional[str]) -> str:
    return '(not set)' if value is None else repr(value)


def parse_osd_ids(text: str) -> List[int]:
    """`--osds 1,2,5` as ids, in the order given, each once."""
    ids: List[int] = []
    for item in text.replace(' ', ',').split(','):
        if not item:
            continue
        if item.startswith('osd.'):
            item = item[len('osd.'):]
        if not item.isdigit():
            raise RolloutRefused(f'--osds takes OSD ids separated by commas (1,2,5), '
                                 f'not {text!r}')
        if int(item) not in ids:
            ids.append(int(item))
    if not ids:
        raise RolloutRefused('--osds names no OSD')
    return ids


def recommendation(session: Optional[Mapping[str, Any]]) -> Tuple[str, str]:
    """The options the last session recommends and where they come from;
    RolloutRefused when it recommends none."""
    hint = '; give the options to roll out with --options'
    if session is None:
        raise RolloutRefused('no tuning session has run, so there is no recommendation' + hint)
    if session['state'] in SESSION_ACTIVE:
        raise RolloutRefused(f'the tuning session {session["id"]} is still {session["state"]}')
    result = views.final_answer(session)
    if result is None:
        raise RolloutRefused(f'the last session ({session["id"]}, {session["state"]}) ended '
                             'before its confirmation: it has no answer' + hint)
    arm = views.recommended_arm(result)
    if arm is None:
        raise RolloutRefused(f'the last session\'s answer is {views.answer_line(result)}: '
                             'there is nothing to apply' + hint)
    if session.get('config_changes'):
        raise RolloutRefused(
            'the last session\'s string was measured against the options in effect when it '
            'started, which someone else has changed since (' +
            '; '.join(session['config_changes']) + '): rolling it out would undo that' + hint)
    options = views.arm_record(session, arm['arm'])['options']
    return str(options), (f'session {session["id"]} (canary osd.{session["params"]["osd"]}): '
                          + views.answer_line(result))


def _order(cluster: Cluster, targets: Sequence[int]) -> List[Tuple[int, str]]:
    """The targets in CRUSH order, host by host (a host in the order of its
    first OSD in the tree)."""
    wanted = set(targets)
    hosts: Dict[str, List[int]] = {}
    for osd, host in cluster.crush_order():
        if osd in wanted:
            hosts.setdefault(host or f'osd.{osd}', []).append(osd)
            wanted.discard(osd)
    for osd in sorted(wanted):  # not in the tree at all
        hosts.setdefault(f'osd.{osd}', []).append(osd)
    return [(osd, '' if host.startswith('osd.') else host)
            for host, osds in hosts.items() for osd in osds]


def _osd_record(cluster: Cluster, osd: int, host: str, back_to: str = '') -> RolloutOsd:
    """An OSD of the plan: what the mon gives it now, and what its process runs."""
    who = f'osd.{osd}'
    before = {name: cluster.config_get(who, name) for name in NAMES}
    try:
        before[RUNNING] = cluster.config_get_running(osd, OPTIONS)
    except ClusterError:
        before[RUNNING] = ''
    return RolloutOsd(osd=osd, host=host, status='pending', error='', put_back='',
                      before=before, back_to=back_to)


def _priors(cluster: Cluster, sets: Masks) -> Masks:
    return {who: {name: cluster.config_get_own(who, name) for name in names}
            for who, names in sets.items()}


def plan_apply(cluster: Cluster, options: str, source: str,
               device_class: Optional[str] = None, osd_ids: Optional[Sequence[int]] = None,
               canary: Optional[int] = None) -> RolloutPlan:
    """apply's plan; RolloutRefused (bad input, nothing to do) changes nothing.
    `canary`: the last session's, whose class is the default target."""
    try:
        if not parse_options(options):
            raise OptionStringError('it holds no option')
    except OptionStringError as e:
        raise RolloutRefused(f'cannot use the options string {options!r}: {e}')
    if device_class is not None and osd_ids is not None:
        raise RolloutRefused('give --device-class or --osds, not both')
    osds = cluster.osds()
    notes: List[str] = []
    if osd_ids is not None:
        unknown = [i for i in osd_ids if i not in osds]
        if unknown:
            raise RolloutRefused(', '.join(f'osd.{i}' for i in unknown) +
                                 (' does' if len(unknown) == 1 else ' do') + ' not exist')
        targets = list(osd_ids)
        target = 'osd.' + ', osd.'.join(str(i) for i in sorted(targets))
    else:
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
        target = f'the OSDs of class {device_class}'
        notes.append('the options go to ' + CLASS_MASK_NOTE.format(cls=device_class) +
                     '. An OSD that joins the class later gets them from another apply')
    down = [i for i in targets if not osds[i].up]
    if down:
        raise RolloutRefused(', '.join(f'osd.{i}' for i in down) + ' ' +
                             ('is' if len(down) == 1 else 'are') + ' down: bring '
                             + ('it' if len(down) == 1 else 'them') +
                             ' up, or name the OSDs to roll out to with --osds')
    records = [_osd_record(cluster, osd, host) for osd, host in _order(cluster, targets)]
    values: Dict[str, Optional[str]] = {OPTIONS: options}
    if any(r['before'][ANNEX].strip() for r in records):
        values[ANNEX] = ''  # appended by the OSD: it would override the options' keys
    for r in records:
        osd = r['osd']
        for who, entries in sorted(cluster.config_entries(osd, list(values)).items()):
            section, where = split_who(who)
            if section == f'osd.{osd}' and where:
                name = sorted(entries)[0]
                raise RolloutRefused(
                    f'{who} {name} = {entries[name]!r} is set for osd.{osd} with a mask '
                    f'of its own, which beats osd.{osd}, where the rollout sets it: remove it '
                    f'(ceph config rm {who} {name}), or leave osd.{osd} out with --osds')
    sets: Masks = {f'osd.{r["osd"]}': dict(values) for r in records}
    return RolloutPlan(kind='apply', options=options, source=source, target=target,
                       sets=sets, priors=_priors(cluster, sets), notes=notes,
                       osds=records, of=None)


def plan_revert(cluster: Cluster, last: Optional[Mapping[str, Any]]) -> RolloutPlan:
    """revert's plan, from the last rollout (ended); RolloutRefused when there
    is nothing to revert."""
    if last is None:
        raise NothingToRevert('nothing to revert: no rollout has run')
    if last['kind'] == 'apply':
        if not last['changed']:
            raise NothingToRevert(f'nothing to revert: the last apply ({last["id"]}, '
                                  f'{last["state"]}) changed nothing')
        sets: Masks = last['priors']
        osds = [dict(o, back_to=o['before'][RUNNING]) for o in last['osds']
                if o['status'] in ('restarting', 'done')
                or (o['status'] == 'failed' and o['put_back'] != 'done')]
        of = str(last['id'])
    else:
        if last['state'] == 'done':
            raise NothingToRevert(f'nothing to revert: the last rollout was a revert (of '
                                  f'{last["of"]}), and it is done')
        sets = last['sets']
        osds = [o for o in last['osds'] if o['status'] != 'done']
        of = str(last['of'])
    records = [_osd_record(cluster, o['osd'], o['host'], o.get('back_to', '')) for o in osds]
    return RolloutPlan(kind='revert', options=None, source=f'what apply {of} changed',
                       target=f'the OSDs apply {of} restarted', sets=dict(sets),
                       priors=_priors(cluster, sets), notes=[], osds=records, of=of)


def config_command(who: str, name: str, value: Optional[str]) -> str:
    """The `ceph config` line that sets a value, or removes it (None); shell-quoted."""
    args = (['ceph', 'config', 'rm', who, name] if value is None
            else ['ceph', 'config', 'set', who, name, value])
    return ' '.join(shlex.quote(a) for a in args)


def undo_commands(plan: Mapping[str, Any]) -> List[str]:
    """By hand, what `revert` does to the config: every prior put back."""
    return [config_command(who, name, value) for who, names in sorted(plan['priors'].items())
            for name, value in sorted(names.items())]
