#!/usr/bin/env bash
# Run one tuning session with the ceph CLI only and print what it found.
#   demo.sh [start args...]     e.g. demo.sh --trials 8 --duration 20
# Needs CEPH_CONF (or a default ceph.conf) pointing at the cluster.
set -euo pipefail

args=("$@")
[ ${#args[@]} -gt 0 ] || args=(--trials 8 --duration 20)

ceph rocks-autotune start "${args[@]}"
t0=$(date +%s)
last=''
while :; do
    st=$(ceph rocks-autotune status -f json)
    state=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])' <<<"$st")
    line=$(python3 -c 'import json, sys
s = json.load(sys.stdin)
print("%12s  baseline runs %d  trials %d/%d  %s" % (s["phase"], s["baseline_runs_done"],
      s["trials_done"], s["params"]["trials"], s["message"]))' <<<"$st")
    if [ "$line" != "$last" ]; then
        printf '[%4ds] %s\n' $(( $(date +%s) - t0 )) "$line"
        last=$line
    fi
    case $state in running|stopping|restoring) sleep 5 ;; *) break ;; esac
done
echo
ceph rocks-autotune status
echo
ceph rocks-autotune history
echo
ceph rocks-autotune best || true
[ "$state" = done ]
