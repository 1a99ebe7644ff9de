#!/usr/bin/env bash
# Abort a session while a candidate trial is in flight: the canary's own
# config goes back to exactly what it was, the daemon is restarted onto it and
# is up, no noout or ROCKS_AUTOTUNE_* health check is left, PGs are clean.
# The session is under the wear objective: its model has judged the real
# baseline windows by the time a candidate runs.
#   abort.sh                    RA_OSD=N to choose the canary
set -euo pipefail
. "$(dirname "$0")/common.sh"

ra_setup
osd=$(ra_pick_osd)
before=$(ra_own_config "$osd")
ra_log "canary osd.$osd, own config: $before"

ra_start --osd "$osd" --objective wear
ra_wait 600 'a candidate trial in flight' ra_current_is candidate restart wait_up warmup measure
during=$(ra_own_config "$osd")
[ "$during" != "$before" ] || ra_die "a candidate is in flight but osd.$osd config is unchanged"
ra_log "candidate on osd.$osd: $during"
goal=$(ra_status "j['objective'] + ' ' + j['noise']['goal']")
[ "$goal" = 'wear wear' ] || ra_die "objective and noise goal are '$goal', not wear"
text=$(ceph rocks-autotune status)
[[ $text == *objective=wear* ]] || ra_die "status does not say objective=wear: $text"

ceph rocks-autotune abort
state=$(ra_wait_ended 300)
[ "$state" = aborted ] || ra_die "the session ended $state, not aborted"
ra_status "j['message']"
if ceph rocks-autotune abort 2>/dev/null; then
    ra_die 'abort was accepted with no session running'
fi
ra_check_restored "$osd" "$before"
ra_wait 300 'PGs active+clean' ra_active_clean
ra_log 'PASS'
