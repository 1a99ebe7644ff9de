#!/usr/bin/env bash
# Run one tuning session with the ceph CLI only and print what it found.
#   demo.sh [start args...]     e.g. demo.sh --osd 0 --objective wear --trials 6
# Needs CEPH_CONF (or a default ceph.conf) pointing at the cluster;
# `qa/lab/ceph-lab demo` sets its lab up first (ceph-lab's demo_setup).
set -euo pipefail

args=("$@")
ceph rocks-autotune start "${args[@]}"
t0=$(date +%s)
last=''
while :; do
    st=$(ceph rocks-autotune status -f json)
    state=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])' <<<"$st")
    line=$(python3 -c 'import json, sys
s = json.load(sys.stdin)
print("%12s  baseline runs %d  trials %d/%d  confirmation %d  %s" % (s["phase"],
      s["baseline_runs_done"], s["trials_done"], s["params"]["trials"], s["confirm_done"],
      s["message"]))' <<<"$st")
    if [ "$line" != "$last" ]; then
        printf '[%4ds] %s\n' $(( $(date +%s) - t0 )) "$line"
        last=$line
    fi
    case $state in running|stopping|restoring) sleep 5 ;; *) break ;; esac
done
# the answer in a few lines (`status --verbose`, `history` and `best` hold
# the reasoning), then the rollout plan when it recommends
echo
ceph rocks-autotune status
if [ "$(ceph rocks-autotune best -f json 2>/dev/null |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["answer"])' 2>/dev/null)" = recommend ]; then
    echo
    ceph rocks-autotune apply --dry-run || true
fi
[ "$state" = done ]
