# Shared helpers of the rocks_autotune workunits.  Source it; do not run it.
#
# The workunits use only the `ceph` CLI (and python3 to read its JSON), so the
# same scripts run on the local lab (qa/lab/ceph-lab, tox -e teuthology) and
# under teuthology's `workunit` task.  They need CEPH_CONF (or the default
# ceph.conf) and an admin keyring, a cluster that is HEALTH_OK with at least 3
# OSDs holding replicated data, and the rocks_autotune module enabled.
#
# Every script:
#   - shortens trials through module options (warmup, bench_chunk_seconds; two
#     baseline runs, one candidate confirmed in one round: the scripts check
#     behaviour, not figures; a restart that does not come back fails the
#     session in 3 or 5 minutes, not the default 5 or 60) and puts those
#     options back as they were when it exits, pass or fail;
#   - starts sessions with RA_SESSION_ARGS (default: --trials 2 --duration 4);
#   - prints the session's status and history when it fails.

RA_SESSION_ARGS=${RA_SESSION_ARGS:---trials 2 --duration 4}
# how long a short session may take; trials restart an OSD each
RA_SESSION_TIMEOUT=${RA_SESSION_TIMEOUT:-900}
RA_ENDED='done stopped aborted failed'
# module options the workunits shorten, and the value they use (the
# MgrTestCase's FAST_OPTIONS, qa/tasks/mgr/test_rocks_autotune.py)
RA_FAST_OPTIONS='warmup=2 bench_chunk_seconds=2 baseline_runs=2 confirm_candidates=1
confirm_rounds=1 steady_window_limit=10 client_space=16777216 precondition_limit=10
restart_timeout=180 manual_restart_timeout=300'
RA_SAVED_OPTIONS=''
RA_EFFECTIVE_OPTIONS=''
RA_STARTED=''

ra_log() {
    printf '%s [%s] %s\n' "$(date +%H:%M:%S)" "$(basename "$0")" "$*" >&2
}

ra_die() {
    ra_log "FAIL: $*"
    exit 1
}

# ra_py EXPR: evaluate EXPR with `j` bound to the JSON read from stdin
ra_py() {
    python3 -c 'import json, sys
j = json.load(sys.stdin)
r = eval(sys.argv[1])
print(r if isinstance(r, str) else json.dumps(r, sort_keys=True))' "$1"
}

ra_status_json() {
    ceph rocks-autotune status -f json
}

# ra_status EXPR: EXPR over `ceph rocks-autotune status -f json`
ra_status() {
    ra_status_json | ra_py "$1"
}

# the config set at exactly osd.N's mask (what the tuner must leave as it was)
ra_own_config() {
    ceph config dump -f json | ra_py "sorted([(e['name'], e['value']) for e in j
        if e['section'] == 'osd.$1'])"
}

ra_osd_up() {
    [ "$(ceph osd dump -f json | ra_py "[o['up'] for o in j['osds'] if o['osd'] == $1][0]")" = 1 ]
}

ra_osd_flags() {
    ceph osd dump -f json | ra_py "[o['state'] for o in j['osds'] if o['osd'] == $1][0]"
}

ra_active_clean() {
    ceph pg stat -f json | ra_py "(lambda s: str(sum(x['num'] for x in s['num_pg_by_state']
        if x['name'] == 'active+clean') == s['num_pgs'] > 0))(j.get('pg_summary', j))" \
        | grep -qx True
}

ra_health_ok() {
    [ "$(ceph health -f json | ra_py "j['status']")" = HEALTH_OK ]
}

# ra_health_codes: the health check codes raised now, one a line
ra_health_codes() {
    ceph health -f json | ra_py "'\n'.join(sorted(j['checks']))"
}

# ra_wait TIMEOUT WHAT CMD...: run CMD every 2 s until it succeeds
ra_wait() {
    local timeout=$1 what=$2 t0
    shift 2
    t0=$(date +%s)
    until "$@"; do
        if [ $(( $(date +%s) - t0 )) -gt "$timeout" ]; then
            ra_die "timed out after ${timeout}s waiting for $what"
        fi
        sleep 2
    done
}

ra_state_in() {
    local state
    state=$(ra_status "j['state']")
    [[ " $* " == *" $state "* ]]
}

# ra_follow WHAT TIMEOUT PERIOD ENDED LINE_CMD...: every PERIOD s run LINE_CMD
# (it prints "STATE PHASE: MESSAGE"), log each new line, until STATE is one
# of ENDED; print that state.  Fails when LINE_CMD does, or after TIMEOUT s
ra_follow() {
    local what=$1 timeout=$2 period=$3 ended=$4 t0 line last=''
    shift 4
    t0=$(date +%s)
    while :; do
        line=$("$@") || ra_die "following $what: $* failed"
        if [ "$line" != "$last" ]; then
            ra_log "[$(( $(date +%s) - t0 ))s] $line"
            last=$line
        fi
        [[ " $ended " != *" ${line%% *} "* ]] || break
        [ $(( $(date +%s) - t0 )) -le "$timeout" ] || ra_die "$what did not end within ${timeout}s"
        sleep "$period"
    done
    echo "${line%% *}"
}

ra_session_line() {
    ra_status "f\"{j['state']} {j['phase']}: {j['message']}\""
}

# ra_wait_ended [TIMEOUT]: wait for the session to end; print its state
ra_wait_ended() {
    ra_follow 'the session' "${1:-$RA_SESSION_TIMEOUT}" 3 "$RA_ENDED" ra_session_line
}

# ra_current_is KIND PHASE...: a trial of KIND is in one of the PHASEs
ra_current_is() {
    local kind=$1 got
    shift
    got=$(ra_status "(j.get('current') or {}).get('kind', '') + ' ' + j['phase']")
    [ "${got%% *}" = "$kind" ] && [[ " $* " == *" ${got#* } "* ]]
}

# ra_pick_osd: RA_OSD if set, else the highest-numbered OSD that is up and in
ra_pick_osd() {
    if [ -n "${RA_OSD:-}" ]; then
        echo "$RA_OSD"
        return
    fi
    ceph osd dump -f json | ra_py "str(max(o['osd'] for o in j['osds']
        if o['up'] == 1 and o['in'] == 1))"
}

# ra_check_restored OSD BEFORE: the canary's own config is BEFORE, the running
# daemon loaded it, it is up, and the tuner left no flag and no health check
ra_check_restored() {
    local osd=$1 before=$2 after shown want
    after=$(ra_own_config "$osd")
    [ "$after" = "$before" ] || ra_die "osd.$osd config not restored:
before: $before
after:  $after"
    ra_wait 180 "osd.$osd up" ra_osd_up "$osd"
    shown=$(ceph config show "osd.$osd" bluestore_rocksdb_options)
    want=$(ceph config get "osd.$osd" bluestore_rocksdb_options)
    [ "$shown" = "$want" ] || ra_die "osd.$osd runs '$shown', its config says '$want'"
    case $(ra_osd_flags "$osd") in
        *noout*) ra_die "osd.$osd still has noout" ;;
    esac
    if ra_health_codes | grep -q '^ROCKS_AUTOTUNE_'; then
        ra_die "health checks left: $(ra_health_codes | tr '\n' ' ')"
    fi
    ra_log "osd.$osd restored: own config as before, running it, up, no noout, no alert"
}

ra_dump() {
    ra_log 'status and history at exit:'
    ceph rocks-autotune status >&2 || true
    ceph rocks-autotune history >&2 || true
    ceph health detail >&2 || true
}

# ra_setup: check the cluster, shorten trials, and arrange to undo that at exit
ra_setup() {
    local kv name value
    ceph mgr module ls -f json | ra_py "str('rocks_autotune' in j['enabled_modules'])" \
        | grep -qx True || ra_die 'the rocks_autotune module is not enabled'
    ra_wait 300 'HEALTH_OK' ra_health_ok
    ra_wait 300 'PGs active+clean' ra_active_clean
    if ra_state_in running stopping restoring; then
        ra_die "a session is already $(ra_status "j['state']") on osd.$(ra_status "j['osd']")"
    fi
    RA_SAVED_OPTIONS=$(ceph config dump -f json | ra_py "'\n'.join(
        e['name'] + '=' + e['value'] for e in j
        if e['section'] == 'mgr' and e['name'].startswith('mgr/rocks_autotune/'))")
    # the values in effect (defaults included), to give back to the running mgr
    RA_EFFECTIVE_OPTIONS=''
    for kv in $RA_FAST_OPTIONS; do
        name=mgr/rocks_autotune/${kv%%=*}
        RA_EFFECTIVE_OPTIONS+="$name=$(ceph config get mgr "$name")"$'\n'
    done
    trap 'rc=$?; [ $rc = 0 ] || ra_dump; ra_teardown; exit $rc' EXIT
    # killed (a workunit timeout): still clean up through the EXIT trap
    trap 'exit 143' TERM
    trap 'exit 130' INT
    for kv in $RA_FAST_OPTIONS; do
        name=${kv%%=*}
        value=${kv#*=}
        ceph config set mgr "mgr/rocks_autotune/$name" "$value"
    done
}

# ra_start [ARGS...]: `ceph rocks-autotune start ARGS RA_SESSION_ARGS`; a session
# this script started is aborted at exit if it is still running then.  Its
# output is in RA_START_OUT.  Not in a subshell: it sets RA_STARTED.
ra_start() {
    # shellcheck disable=SC2086
    RA_START_OUT=$(ceph rocks-autotune start "$@" $RA_SESSION_ARGS)
    RA_STARTED=yes
    ra_log "$RA_START_OUT"
}

# ra_teardown: abort a session this script left running (a failed check), and
# put the shortened module options back as they were
ra_teardown() {
    local kv name saved
    if [ -n "$RA_STARTED" ] && ra_state_in running stopping restoring; then
        ra_log 'aborting the session this script started'
        ceph rocks-autotune abort || true
        # in a subshell: its ra_die would exit the trap, leaving the options
        (ra_wait_ended 600 >/dev/null) || true
    fi
    for kv in $RA_FAST_OPTIONS; do
        name=mgr/rocks_autotune/${kv%%=*}
        saved=$(grep "^$name=" <<<"$RA_SAVED_OPTIONS" || true)
        if [ -n "$saved" ]; then
            ceph config set mgr "$name" "${saved#*=}"
        else
            # Pacific's mgr keeps a removed module option's last value until it
            # restarts: set the value that was in effect, then remove the entry
            saved=$(grep "^$name=" <<<"$RA_EFFECTIVE_OPTIONS" || true)
            [ -z "$saved" ] || ceph config set mgr "$name" "${saved#*=}"
            ceph config rm mgr "$name"
        fi
    done
}
