#!/usr/bin/env bash
# Kill the canary while a candidate trial is being measured: the session
# records that trial as failed (with its error), puts the canary back on its
# own options, restarts it, goes on, and ends done with the canary's own
# config exactly as before and no alert left.
#
# How the canary is killed (RA_KILL):
#   orch      `ceph orch daemon stop osd.N` -- the lab's orchestrator backend,
#             or cephadm/rook; the default when `ceph orch status` answers.
#   external  something else kills it: under teuthology's `ceph` task (no
#             orchestrator) the `rocks_autotune` task with `kill_canary: true`
#             (qa/tasks/rocks_autotune.py) stops its daemon (ctx.daemons, as
#             kill_osd does); this script waits for the OSD to go down.
# Exit status 3: the session kept failing inside the module ("internal error")
# instead of failing the trial (as it did before 66dd6cb, when a stopped OSD's
# empty tell answer was not a cluster error).
# One candidate, 20 s windows (RA_SESSION_ARGS overrides): the kill has to land
# in the candidate's warm-up or window, and a 4 s window can end, and the trial
# pass, while `orch daemon stop` is still on its way (seen under load); the
# next restart then brings the OSD back and no trial fails.
#   thrash_canary.sh            RA_OSD=N to choose the canary
set -euo pipefail
RA_SESSION_ARGS=${RA_SESSION_ARGS:---trials 1 --duration 20}
. "$(dirname "$0")/common.sh"

if [ -z "${RA_KILL:-}" ]; then
    if ceph orch status >/dev/null 2>&1; then RA_KILL=orch; else RA_KILL=external; fi
fi
ra_setup
osd=$(ra_pick_osd)
before=$(ra_own_config "$osd")
ra_log "canary osd.$osd, own config: $before; kill: $RA_KILL"

# the candidate trial that failed, if one has (empty if none): sets `failed`
failed_candidate() {
    failed=$(ceph rocks-autotune history -f json | ra_py "str(([t['index'] for t in j
        if t['verdict'] == 'failed' and t['kind'] == 'candidate'] + [''])[0])")
    [ -n "$failed" ]
}

# external: a candidate in flight, or one already failed. The thrasher kills
# the canary as soon as it sees the trial in its 2-s warm-up, and the session
# then fails it and restarts the canary within seconds, so this script (one
# look every 3 to 4 s under load) can miss the trial in flight altogether;
# it then waited 600 s for a trial that had come and gone (a tox -e
# teuthology run, 2026-11-26). Sets `trial`.
in_flight_or_failed() {
    if ra_current_is candidate warmup measure; then
        trial=$(ra_status "str((j.get('current') or {}).get('index', ''))")
        [ -n "$trial" ] && return 0
    fi
    failed_candidate && trial=$failed
}

ra_start --osd "$osd"
case $RA_KILL in
    orch)
        ra_wait 600 'a candidate trial being measured' ra_current_is candidate warmup measure
        trial=$(ra_status "str(j['current']['index'])")
        ra_log "killing osd.$osd in trial $trial: ceph orch daemon stop osd.$osd"
        ceph orch daemon stop "osd.$osd"
        ra_wait 120 "osd.$osd down" eval "! ra_osd_up $osd"
        ra_log "osd.$osd is down"
        ;;
    external)
        ra_wait 600 'a candidate trial being measured (or one failed already)' \
            in_flight_or_failed
        ra_log "trial $trial in flight: waiting for the thrasher to kill osd.$osd"
        # down, or already failed (and maybe back: the session restarts it)
        ra_wait 120 "osd.$osd down" eval "! ra_osd_up $osd || failed_candidate"
        ra_log "osd.$osd was killed (down, or its trial recorded failed)"
        ;;
    *) ra_die "RA_KILL must be orch or external, not $RA_KILL" ;;
esac

# the session notices, raises ROCKS_AUTOTUNE_TRIAL_FAILED and restores
seen=''
stuck_since=''
alerted() {
    local msg
    if ra_health_codes | grep -qx ROCKS_AUTOTUNE_TRIAL_FAILED; then seen=yes; fi
    # a step that keeps failing inside the module never fails the trial
    msg=$(ra_status "j['message']")
    if [[ $msg == 'internal error'* ]]; then
        stuck_since=${stuck_since:-$(date +%s)}
        if [ $(( $(date +%s) - stuck_since )) -gt 60 ]; then
            ra_log "FAIL: the session is stuck on osd.$osd being down: '$msg' for over 60s"
            exit 3
        fi
    else
        stuck_since=''
    fi
    ra_py "str(any(t['verdict'] == 'failed' for t in j))" \
        <<<"$(ceph rocks-autotune history -f json)" | grep -qx True
}
ra_wait 300 "trial $trial recorded as failed" alerted
ra_log "a failed trial is recorded (TRIAL_FAILED health check seen: ${seen:-no})"

state=$(ra_wait_ended)
[ "$state" = done ] || ra_die "the session ended $state, not done"
hist=$(ceph rocks-autotune history -f json)
ceph rocks-autotune history
ra_py "[t['index'] for t in j if t['verdict'] == 'failed' and t['error']]" <<<"$hist" \
    | grep -q "\[$trial" || ra_die "trial $trial is not the failed one: $hist"
ra_py "[t['error'] for t in j if t['verdict'] == 'failed'][0]"  <<<"$hist" >&2
ra_check_restored "$osd" "$before"
ra_wait 300 'PGs active+clean' ra_active_clean
ra_log 'PASS'
