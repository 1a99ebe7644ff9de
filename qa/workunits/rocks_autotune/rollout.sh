#!/usr/bin/env bash
# Roll options out to every OSD of a device class and back, with the ceph CLI
# only.  After a short session on a canary (the last one, when it is done),
# `apply` takes its recommendation;
# the workunits confirm in one round, too few to recommend, so the answer is
# to keep the current options and apply refuses: the options the session
# confirmed are given with --options instead.  No OSD is named: apply takes
# the canary's class, and sets each OSD's own mask osd.N (on Tentacle 20.2.4
# an OSD restarted does not run bluestore_rocksdb_options set at a class
# mask, osd/class:ssd, though `ceph config get osd.N` says it should).  With
# the canary's own annex set (so the plan blanks the annex at each osd.N,
# saving the canary's):
#   - apply --dry-run changes nothing (config, OSD map);
#   - apply to the OSDs of the canary's class: it ends done, each OSD
#     restarted once (one new up_from), never two down at once in a sample,
#     in the plan's order, each running the new options (ceph tell osd.N
#     config get), no noout and no ROCKS_AUTOTUNE_* check left;
#   - revert: the RocksDB entries of `ceph config dump` exactly as before
#     the apply (values and absences, every mask), each OSD restarted once
#     more, one at a time, back on the options it ran before.
# The OSD map is sampled between looks at the status (a few seconds apart):
# a restart shorter than that may be missed as "down", never its new up_from.
#   rollout.sh              RA_OSD=N to choose the canary
set -euo pipefail
. "$(dirname "$0")/common.sh"

RA_ROLLOUT_TIMEOUT=${RA_ROLLOUT_TIMEOUT:-1800}
OPTS=bluestore_rocksdb_options
ANNEX=bluestore_rocksdb_options_annex
ANNEX_VALUE=compaction_readahead_size=2097152
RO_STARTED=''
ANNEX_SET=''

# the RocksDB entries of `ceph config dump`, at every mask
rocksdb_config() {
    ceph config dump -f json | ra_py "sorted([e['section'], e.get('mask', ''), e['name'],
        e['value']] for e in j if e['name'] in ('$OPTS', '$ANNEX'))"
}

# what osd.N's process runs
running() {
    ceph tell "osd.$1" config get "$OPTS" -f json | ra_py "j['$OPTS']"
}

# one sample of the OSD map: "TIME ID:UP:UP_FROM ..."
osd_sample() {
    printf '%s %s\n' "$(date +%s)" "$(ceph osd dump -f json | ra_py "' '.join(
        '%d:%d:%d' % (o['osd'], o['up'], o['up_from']) for o in j['osds'])")"
}

# ro EXPR: EXPR over the last rollout in `status -f json` (j is the rollout)
ro() {
    ra_status_json | ra_py "(lambda j: $1)(j.get('rollout') or {})"
}

ro_ended() {
    case $(ro "j.get('state', '')") in done|aborted|failed) return 0 ;; esac
    return 1
}

# rollout_line ID LOG: one sample of the OSD map into LOG, then rollout ID's
# "STATE PHASE: MESSAGE" (fails when the last rollout is another)
rollout_line() {
    local st
    osd_sample >>"$2"
    st=$(ra_status_json)
    [ "$(ra_py "(j.get('rollout') or {}).get('id', '')" <<<"$st")" = "$1" ] \
        || ra_die "the last rollout is not $1"
    ra_py "(lambda r: f\"{r['state']} {r['phase']}: {r['message']}\")(j['rollout'])" <<<"$st"
}

# roll NAME CMD...: run the rollout command CMD (apply or revert), follow it
# to its end sampling the OSD map, and check that it ended done with each OSD
# restarted once, one at a time, in the plan's order
roll() {
    local name=$1 log=$work/$1.log t0 out id state order
    shift
    osd_sample >"$log"
    t0=$(date +%s)
    out=$("$@")
    ra_log "$out"
    RO_STARTED=yes
    id=$(awk '{print $2; exit}' <<<"$out")
    state=$(ra_follow "the $name" "$RA_ROLLOUT_TIMEOUT" 1 'done aborted failed' \
            rollout_line "$id" "$log")
    osd_sample >>"$log"
    ceph rocks-autotune status
    [ "$state" = done ] || ra_die "the $name ended $state, not done"
    order=$(ceph rocks-autotune status --osds -f json \
            | ra_py "' '.join(str(o['osd']) for o in j['rollout']['osds'])")
    check_restarts "$log" "$t0" $order || ra_die "$name: not one restart each, one at a time"
    ra_log "$name done in $(( $(date +%s) - t0 ))s"
}

# check_restarts LOG T0 OSD...: from the samples, each OSD (in the order
# given) restarted once, in that order, never two OSDs down at once; prints
# each one's times from T0
check_restarts() {
    python3 - "$@" <<'EOF'
import sys
log, t0, osds = sys.argv[1], float(sys.argv[2]), [int(x) for x in sys.argv[3:]]
samples = []
for line in open(log):
    t, *items = line.split()
    samples.append((float(t), {int(i): (int(u), int(f))
                               for i, u, f in (x.split(':') for x in items)}))
bad = []
for t, s in samples:
    down = sorted(i for i, (up, _) in s.items() if not up)
    if len(down) > 1:
        bad.append(f'{len(down)} OSDs down at once at +{t - t0:.0f}s: {down}')
starts = []
for osd in osds:
    first = samples[0][1][osd][1]
    new, down, up = [], None, None
    for t, s in samples:
        is_up, up_from = s[osd]
        if not is_up and down is None:
            down = t
        if is_up and up_from != first and up_from not in new:
            new.append(up_from)
            up = t if up is None else up
    at = lambda x: '-' if x is None else f'+{x - t0:.0f}s'
    print(f'osd.{osd}: down {at(down)}, up {at(up)}, up_from {first} -> '
          f'{", ".join(map(str, new)) or "unchanged"}')
    if len(new) != 1:
        bad.append(f'osd.{osd} restarted {len(new)} times')
    starts.append(down if down is not None else up)
if None not in starts and starts != sorted(starts):
    bad.append(f'not restarted in the plan order {osds}')
print(f'{len(samples)} samples over {samples[-1][0] - samples[0][0]:.0f}s')
if bad:
    print('FAIL: ' + '; '.join(bad))
    sys.exit(1)
EOF
}

cleanup() {
    if [ -n "$RO_STARTED" ]; then
        if ! ro_ended; then
            ra_log 'aborting the rollout this script started'
            ceph rocks-autotune abort || true
            (ra_wait 600 'the rollout to end' ro_ended) || true
        fi
        # an apply or a revert cut short: revert puts back what it changed
        # (waits in subshells: their ra_die would skip the rest of the cleanup)
        if ceph rocks-autotune revert >&2; then
            (ra_wait "$RA_ROLLOUT_TIMEOUT" 'the revert to end' ro_ended) || true
        fi
    fi
    [ -z "$ANNEX_SET" ] || ceph config rm "osd.$ANNEX_SET" "$ANNEX" || true
    ra_teardown
}

ra_setup
trap 'rc=$?; [ $rc = 0 ] || ra_dump; cleanup;
      exit $rc' EXIT
work=$(mktemp -d)
[ -z "$(rocksdb_config | ra_py "j or ''")" ] \
    || ra_die "RocksDB options are set already: $(rocksdb_config)"

# ---- a short session, unless the last one is done (in the suite,
# short_session.sh's or a later one's): apply reads the last session's answer
last=$(ra_status_json)
measured=0
if [ "$(ra_py "j['state']" <<<"$last")" = done ]; then
    measured=$(ceph rocks-autotune history -f json | ra_py "len([t for t in j
        if t['kind'] == 'candidate' and t['verdict'] != 'failed'])")
fi
if [ "$measured" -gt 0 ] \
        && [ "${RA_OSD:-$(ra_py "j['osd']" <<<"$last")}" = "$(ra_py "j['osd']" <<<"$last")" ]; then
    osd=$(ra_py "j['osd']" <<<"$last")
    ra_log "the last session (canary osd.$osd) is done: rolling out from its answer"
else
    osd=$(ra_pick_osd)
    ra_start --osd "$osd"
    state=$(ra_wait_ended)
    [ "$state" = done ] || ra_die "the session ended $state, not done"
fi
cls=$(ceph osd tree -f json | ra_py "[n['device_class'] for n in j['nodes'] if n['id'] == $osd][0]")
osds=$(ceph osd crush class ls-osd "$cls" -f json | ra_py "' '.join(map(str, sorted(j)))")
ra_log "canary osd.$osd, class $cls: osd.${osds// /, osd.}"
ceph rocks-autotune best
bestj=$(ceph rocks-autotune best -f json)
apply=(ceph rocks-autotune apply)
if [ "$(ra_py "j['answer']" <<<"$bestj")" = 'keep current' ]; then
    if err=$(ceph rocks-autotune apply --dry-run 2>&1); then
        ra_die "apply without --options took a 'keep current' answer: $err"
    fi
    grep -q 'there is nothing to apply' <<<"$err" || ra_die "apply: unexpected refusal: $err"
    ra_log "apply without --options is refused: $err"
    # the candidate the session confirmed, else (none was feasible) the first
    # other than the current options it measured
    options=$(ra_py "j['candidates'][0]['options'] if j['candidates'] else ''" <<<"$bestj")
    if [ -z "$options" ]; then
        options=$(ceph rocks-autotune history -f json | ra_py "'\n'.join(t['options']
            for t in j if t['kind'] == 'candidate' and t['verdict'] != 'failed')" \
            | { grep -vxF "$(running "$osd")" || true; } | sed -n 1p)
    fi
    [ -n "$options" ] || ra_die 'the session measured no options but the current ones'
    apply+=(--options "$options")
else
    options=$(ra_py "j['options']" <<<"$bestj")
fi
ra_log "rolling out: $options"

# ---- the canary's own annex: the plan blanks it at each osd.N, saving it
ceph config set "osd.$osd" "$ANNEX" "$ANNEX_VALUE"
ANNEX_SET=$osd
before=$(rocksdb_config)
declare -A old
for o in $osds; do
    old[$o]=$(running "$o")
done
[ "${old[$osd]}" != "$options" ] || ra_die "osd.$osd runs the options to roll out already"

# ---- --dry-run changes nothing
map=$(osd_sample | cut -d' ' -f2-)
plan=$("${apply[@]}" --dry-run -f json)
"${apply[@]}" --dry-run
ra_py "j['notes'][0]" <<<"$plan" | grep -qF "not osd/class:$cls" \
    || ra_die "plan: does not say why each OSD's own mask: $plan"
[ "$(ra_py "' '.join(str(o['osd']) for o in sorted(j['osds'], key=lambda o: o['osd']))" \
     <<<"$plan")" = "$osds" ] || ra_die "plan: not the OSDs of class $cls: $plan"
[ "$(ra_py "' '.join(sorted(j['sets'], key=lambda w: int(w[4:])))" <<<"$plan")" \
  = "osd.${osds// / osd.}" ] || ra_die "plan: does not set osd.N for each OSD: $plan"
ra_py "j['priors']['osd.$osd']['$ANNEX']" <<<"$plan" | grep -qxF "$ANNEX_VALUE" \
    || ra_die "plan: does not save osd.$osd's annex: $plan"
[ "$(rocksdb_config)" = "$before" ] || ra_die 'apply --dry-run changed the config'
[ "$(osd_sample | cut -d' ' -f2-)" = "$map" ] || ra_die 'apply --dry-run restarted an OSD'

# ---- apply
roll apply "${apply[@]}"
for o in $osds; do
    [ "$(running "$o")" = "$options" ] || ra_die "osd.$o does not run the new options"
    case $(ra_osd_flags "$o") in *noout*) ra_die "osd.$o still has noout" ;; esac
done
if ra_health_codes | grep -q '^ROCKS_AUTOTUNE_'; then
    ra_die "health checks left: $(ra_health_codes | tr '\n' ' ')"
fi
ra_log "apply: osd.${osds// /, osd.} run the new options"

# ---- revert
ceph rocks-autotune revert --dry-run
roll revert ceph rocks-autotune revert
after=$(rocksdb_config)
[ "$after" = "$before" ] || ra_die "the config is not as before the apply:
before: $before
after:  $after"
for o in $osds; do
    [ "$(running "$o")" = "${old[$o]}" ] || ra_die "osd.$o is not back on its old options"
done
if ra_health_codes | grep -q '^ROCKS_AUTOTUNE_'; then
    ra_die "health checks left: $(ra_health_codes | tr '\n' ' ')"
fi
if err=$(ceph rocks-autotune revert 2>&1); then
    ra_die "a second revert was accepted: $err"
fi
grep -q 'nothing to revert' <<<"$err" || ra_die "second revert: unexpected refusal: $err"
RO_STARTED=''
rm -rf "$work"
ra_log "revert: the config as before, each OSD on its old options"
ra_log 'PASS'
