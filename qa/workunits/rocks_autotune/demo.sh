#!/usr/bin/env bash
# Run one tuning session with the ceph CLI only and print what it found.
#   demo.sh [start args...]     e.g. demo.sh --trials 8 --duration 20
# Needs CEPH_CONF (or a default ceph.conf) pointing at the cluster.
set -euo pipefail

args=("$@")
if [ ${#args[@]} -eq 0 ]; then
    # the demo's shorter setting: a session at the module's defaults (12
    # trials of 30 s, then its 3 best confirmed in 5 rounds) takes up to 45
    # minutes on the lab; this one about half as long
    args=(--trials 8 --duration 20)
    confirm=$(ceph config get mgr mgr/rocks_autotune/confirm_candidates)
    if [ "$confirm" -gt 2 ]; then
        echo "demo: 8 trials of 20 s, then the 2 best confirmed in 5 rounds against the" \
             "baseline (module option confirm_candidates set to 2; it was $confirm)"
        ceph config set mgr mgr/rocks_autotune/confirm_candidates 2
    fi
    limit=$(ceph config get mgr mgr/rocks_autotune/steady_window_limit)
    if [ "${limit%s}" -gt 30 ]; then
        # at the lab's rates the default options compact once in about half an
        # hour: windows that long would make the demo hours long
        echo "demo: steady windows (the write-amp check after the rounds) of 30 s at" \
             "most (module option steady_window_limit set to 30; it was $limit): short" \
             "of a compaction, a finalist's write-amp stays unknown, so this demo" \
             "answers keep current whatever it finds (a session at the default limit" \
             "can recommend)"
        ceph config set mgr mgr/rocks_autotune/steady_window_limit 30
    fi
    space=$(ceph config get mgr mgr/rocks_autotune/client_space)
    pre=$(ceph config get mgr mgr/rocks_autotune/precondition_limit)
    if [ "$space" -gt $((256 << 20)) ] || [ "${pre%s}" -gt 120 ]; then
        # the client load's 4 GiB keyspace is a million 4 KiB overwrites before
        # the first window, about 17 minutes at the lab's ~1,000 writes/s
        # (qa/bench/lsm_timeline.py --fill): a sixteenth of it, at most 2 minutes
        echo "demo: the client load writes 256 MiB of objects, its preconditioning at" \
             "most 120 s (module options client_space and precondition_limit; they were" \
             "$space and $pre)"
        ceph config set mgr mgr/rocks_autotune/client_space $((256 << 20))
        ceph config set mgr mgr/rocks_autotune/precondition_limit 120
    fi
fi

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
