#!/usr/bin/env bash
# Refusals: `start` with bad arguments (or on an OSD that does not exist),
# and stop/abort with no session running, fail with a message and no
# traceback, and change nothing: `ceph config dump` and the session status
# are the same before and after.
set -euo pipefail
. "$(dirname "$0")/common.sh"

ra_setup
before=$(ceph config dump -f json)
status_before=$(ra_status_json)
missing=$(( $(ceph osd ls -f json | ra_py 'str(max(j))') + 100 ))

# refuse ARGS... EXPECTED: `ceph rocks-autotune ARGS` fails and says EXPECTED
refuse() {
    local expected=${*: -1} out
    if out=$(ceph rocks-autotune "${@:1:$#-1}" 2>&1); then
        ra_die "accepted: ceph rocks-autotune ${*:1:$#-1}: $out"
    fi
    grep -q -- "$expected" <<<"$out" || ra_die "ceph rocks-autotune ${*:1:$#-1}: $out"
    if grep -q Traceback <<<"$out"; then
        ra_die "traceback from ceph rocks-autotune ${*:1:$#-1}: $out"
    fi
    ra_log "refused as expected: ${*:1:$#-1}: $(head -n1 <<<"$out")"
}

refuse start --osd "$missing" "osd.$missing does not exist"
refuse start --osd -1 'non-negative'
refuse start --budget 0.5 --budget
refuse start --budget 100 --budget
refuse start --trials 0 --trials
refuse start --trials 501 --trials
refuse start --duration 1 --duration
refuse start --duration 100000 --duration
refuse start --workload fio --workload
# not an int: the ceph CLI's own argument check refuses it
refuse start --trials many 'Invalid command\|invalid'
if ! ra_state_in running stopping restoring; then
    refuse stop 'no session is running'
    refuse abort 'no session is running'
fi

[ "$(ceph config dump -f json)" = "$before" ] || ra_die 'a refused command changed the config'
[ "$(ra_status_json)" = "$status_before" ] || ra_die 'a refused command changed the status'
ra_log 'PASS'
