#!/usr/bin/env bash
# A short tuning session on one canary, end to end, with the ceph CLI only:
# start (a second start is refused while it runs), status until it ends,
# history holds the baseline runs, every trial and the confirmation's
# measurements, best prints the confirmation's answer (a
# bluestore_rocksdb_options string and the commands to apply it, or keep
# the current options, with no command), and the
# canary's own config (`ceph config dump` at osd.N, here with an annex set
# beforehand) is exactly as before, loaded by the running daemon.
#   short_session.sh            RA_OSD=N to choose the canary
set -euo pipefail
. "$(dirname "$0")/common.sh"

ra_setup
osd=$(ra_pick_osd)
annex=compaction_readahead_size=2097152
ceph config set "osd.$osd" bluestore_rocksdb_options_annex "$annex"
trap 'rc=$?; [ $rc = 0 ] || ra_dump; ceph config rm "osd.$osd" bluestore_rocksdb_options_annex;
      ra_teardown; exit $rc' EXIT
before=$(ra_own_config "$osd")
ra_log "canary osd.$osd, own config: $before"

ra_start --osd "$osd"
out=$RA_START_OUT
grep -q "on osd.$osd" <<<"$out" || ra_die "start did not name osd.$osd"
if err=$(ceph rocks-autotune start 2>&1); then
    ra_die "a second start was accepted: $err"
fi
grep -q already <<<"$err" || ra_die "second start: unexpected refusal: $err"
ra_status "j['state']" | grep -qx running || ra_die 'status is not running after start'

state=$(ra_wait_ended)
[ "$state" = done ] || ra_die "the session ended $state, not done"

# shellcheck disable=SC2086
trials=$(python3 -c 'import sys; a = sys.argv[1:]; print(a[a.index("--trials") + 1])' \
         $RA_SESSION_ARGS)
runs=$(ceph config get mgr mgr/rocks_autotune/baseline_runs)
hist=$(ceph rocks-autotune history -f json)
ra_py "[t['kind'] for t in j].count('baseline')" <<<"$hist" | grep -qx "$runs" \
    || ra_die "history: not $runs baseline runs (baseline_runs): $hist"
# the baseline runs, in pairs, measured the noise the confirmation faces
ra_py "j['noise']['pairs']" <<<"$(ceph rocks-autotune status -f json)" | grep -qx $((runs / 2)) \
    || ra_die "status: the noise is not measured over $((runs / 2)) A/A pair(s)"
ra_py "[t['kind'] for t in j].count('candidate')" <<<"$hist" | grep -qx "$trials" \
    || ra_die "history: not $trials candidate trials: $hist"
# every trial has a verdict; measured ones have positive figures, failed ones an error
ra_py "[t['index'] for t in j if not (t['verdict'] in ('baseline', 'feasible', 'infeasible',
                                                      'measured')
        and all(((t['measurement'] or {}).get(k) or 0) > 0
                for k in ('kv_sync_lat_ms', 'iops', 'write_amp'))
        or t['verdict'] == 'failed' and t['error'])]" <<<"$hist" | grep -qx '\[\]' \
    || ra_die "history: trials without a verdict or figures: $hist"
ceph rocks-autotune history

best=$(ceph rocks-autotune best)
echo "$best"
bestj=$(ceph rocks-autotune best -f json)
case $(ra_py "j['answer']" <<<"$bestj") in
    recommend)
        grep -q 'bluestore_rocksdb_options' <<<"$best" || ra_die 'best prints no options string'
        ra_py "str('ceph config set osd.$osd bluestore_rocksdb_options' in j['commands'][0])" \
            <<<"$bestj" | grep -qx True || ra_die "best: no apply command for osd.$osd: $bestj"
        ;;
    'keep current')
        grep -q '^keep your current options' <<<"$best" || ra_die "best: no answer: $best"
        ra_py "j['commands']" <<<"$bestj" | grep -qx '\[\]' \
            || ra_die "best: commands to keep the current options: $bestj"
        ;;
    *) ra_die "best: no answer: $bestj" ;;
esac

ra_check_restored "$osd" "$before"
ra_log 'PASS'
