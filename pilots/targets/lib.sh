# shellcheck shell=bash disable=SC2153
# lib.sh: process-group supervision shared by novnc.sh and broadway.sh (sourced, not run).
#
# Model: `run` makes the script a process-group leader (setsid when needed) and starts every
# component as its child, in that group; it prints the page URL on stdout once everything is
# ready (the only stdout line) and then supervises: a component that dies, a TERM/INT/HUP, or
# (in the foreground) the parent going away tears everything down. Teardown TERMs the
# group's grandchildren first (websockify's per-connection workers), then the components,
# waits (bounded), SIGKILLs what is left, and reaps every child, so nothing is orphaned.
# `start` runs `run` detached and returns after the URL; `stop` signals the leader and waits
# until no live process is left in the group.
#
# The caller sets T_NAME, T_SELF (its own path), T_KEY (the display number), T_STATE (state
# directory) and defines t_components (starts the components with t_spawn, waits for
# readiness and sets T_URL) and t_cleanup_extra (after teardown, e.g. stale lock files).

T_PIDS=()
T_PNAMES=()
T_PLOGS=()
T_DOWN=0
T_SLEEPER=
: "${READY_TIMEOUT_S:=30}"   # bound on every readiness wait
: "${STOP_TIMEOUT_S:=5}"     # bound on a graceful teardown before SIGKILL

t_log() { printf '%s[%s]: %s\n' "$T_NAME" "$$" "$*" >&2; }
t_die() { t_log "error: $*"; exit 1; }

t_now_ms() { local t=${EPOCHREALTIME/./}; echo $(( t / 1000 )); }

# State letter of a process (R, S, D, Z, ...) or nothing when it does not exist.
t_state() {
  local line
  { IFS= read -r line < "/proc/$1/stat"; } 2>/dev/null || return 1
  line=${line##*) }
  printf '%s' "${line%% *}"
}
t_live() { local s; s=$(t_state "$1") || return 1; [[ -n $s && $s != Z && $s != X ]]; }

# "pid ppid stat args" of every process whose process group is $1.
t_group() {
  ps -e -o pid=,ppid=,pgid=,stat=,args= | awk -v g="$1" '$3 == g { $3 = ""; print }'
}
# Live (not zombie) pids in group $1, without pid $2 and without this function's own ps/awk
# (children of the command-substitution subshell, $BASHPID).
t_group_live_pids() {
  ps -e -o pid=,ppid=,pgid=,stat= |
    awk -v g="$1" -v self="${2:-0}" -v me="$BASHPID" \
      '$3 == g && $4 !~ /^Z/ && $1 != self && $1 != me && $2 != me { print $1 }'
}

# t_spawn NAME LOG CMD...: start a component in our group, stdin from /dev/null.
t_spawn() {
  local name=$1 log=$2
  shift 2
  : > "$log" # a fresh log per run: readiness checks grep it
  "$@" < /dev/null >> "$log" 2>&1 &
  T_PIDS+=("$!")
  T_PNAMES+=("$name")
  T_PLOGS+=("$log")
  echo "$name $!" >> "$T_STATE/pids"
  t_log "started $name pid $! (log $log)"
}

# Fails (with a message and the tail of its log) when a component has died.
t_check_alive() {
  local i
  for i in "${!T_PIDS[@]}"; do
    if ! t_live "${T_PIDS[$i]}"; then
      local rc=0
      wait "${T_PIDS[$i]}" 2>/dev/null || rc=$?
      t_log "${T_PNAMES[$i]} (pid ${T_PIDS[$i]}) exited with status $rc; last lines of ${T_PLOGS[$i]}:"
      tail -n 15 "${T_PLOGS[$i]}" >&2 || true
      return 1
    fi
  done
}

# t_wait_until DESC LOG CMD...: poll CMD every 100 ms for READY_TIMEOUT_S; fail early when a
# component dies, and show the tail of LOG either way.
t_wait_until() {
  local desc=$1 log=$2
  shift 2
  local t0 deadline
  t0=$(t_now_ms)
  deadline=$(( t0 + READY_TIMEOUT_S * 1000 ))
  while :; do
    if "$@" > /dev/null 2>&1; then
      t_log "ready: $desc ($(( $(t_now_ms) - t0 )) ms)"
      return 0
    fi
    if ! t_check_alive; then
      t_log "while waiting for: $desc"
      exit 1
    fi
    if (( $(t_now_ms) > deadline )); then
      t_log "timed out after ${READY_TIMEOUT_S}s waiting for: $desc; last lines of $log:"
      tail -n 15 "$log" >&2 || true
      exit 1
    fi
    sleep 0.1
  done
}

t_port_open() { (exec 3<> "/dev/tcp/127.0.0.1/$1") 2> /dev/null; }
t_port_free() { ! t_port_open "$1" || t_die "port $1 on 127.0.0.1 is already in use"; }

# Waits (bounded, ms) until none of the given pids is alive.
t_wait_dead() {
  local ms=$1
  shift
  local deadline p any
  deadline=$(( $(t_now_ms) + ms ))
  while :; do
    any=0
    for p in "$@"; do t_live "$p" && { any=1; break; }; done
    (( any == 0 )) && return 0
    (( $(t_now_ms) > deadline )) && return 1
    sleep 0.05
  done
}

t_teardown() {
  (( T_DOWN )) && return 0
  T_DOWN=1
  trap '' TERM INT HUP
  local others=() p
  # 1. Grandchildren (not our direct children): their parents are still alive to reap them.
  for p in $(t_group_live_pids "$$" "$$"); do
    [[ " ${T_PIDS[*]} $T_SLEEPER " == *" $p "* ]] || others+=("$p")
  done
  if (( ${#others[@]} )); then
    kill -TERM "${others[@]}" 2> /dev/null || true
    t_wait_dead 2000 "${others[@]}" || true
  fi
  # 2. Components, newest first (the app before its display server).
  local i
  for (( i = ${#T_PIDS[@]} - 1; i >= 0; i-- )); do
    kill -TERM "${T_PIDS[$i]}" 2> /dev/null || true
  done
  if [[ -n $T_SLEEPER ]]; then kill -TERM "$T_SLEEPER" 2> /dev/null || true; fi
  if ! t_wait_dead $(( STOP_TIMEOUT_S * 1000 )) "${T_PIDS[@]}"; then
    t_log "components still alive after ${STOP_TIMEOUT_S}s: SIGKILL"
  fi
  # 3. Anything left in the group, whoever its parent.
  local left
  left=$(t_group_live_pids "$$" "$$")
  if [[ -n $left ]]; then
    # shellcheck disable=SC2086
    kill -KILL $left 2> /dev/null || true
    # shellcheck disable=SC2086
    t_wait_dead 2000 $left || true
  fi
  # 4. Reap our children.
  wait 2> /dev/null || true
  t_cleanup_extra 2> /dev/null || true
  rm -f "$T_STATE/pgid" "$T_STATE/url"
  t_log "stopped"
}

t_on_signal() {
  t_log "got $1: tearing down"
  t_teardown
  exit 0
}

# t_run ARGS...: the supervisor (foreground). The URL is printed on stdout once ready.
t_run() {
  # Own process group, so `stop` can address exactly ours. A process that is not a group
  # leader becomes one in place (setsid without fork: same pid); one that already leads a
  # group (e.g. a shell job) keeps it.
  if [[ $(ps -o pgid= -p $$ | tr -d ' ') != "$$" ]]; then
    exec setsid "$T_SELF" run "$@"
  fi
  mkdir -p "$T_STATE"
  if [[ -f $T_STATE/pgid ]]; then
    local old
    old=$(< "$T_STATE/pgid")
    if [[ -n $(t_group_live_pids "$old") ]]; then
      t_die "already running as process group $old (state $T_STATE); stop it first: $T_SELF stop ${T_KEY}"
    fi
  fi
  rm -f "$T_STATE/pids" "$T_STATE/url"
  echo "$$" > "$T_STATE/pgid"
  local ppid0
  ppid0=$(awk '/^PPid:/ { print $2 }' /proc/$$/status)
  trap 't_on_signal TERM' TERM
  trap 't_on_signal INT' INT
  trap 't_on_signal HUP' HUP
  trap 't_teardown' EXIT

  T_URL=
  t_components "$@"
  local url=$T_URL
  [[ -n $url ]] || t_die "t_components set no URL"
  echo "$url" > "$T_STATE/url"
  t_log "ready: $url (process group $$, state $T_STATE)"
  printf '%s\n' "$url"

  # Supervise: a component's death or (foreground only) the parent's takes everything down.
  local pp
  while :; do
    sleep 0.5 &
    T_SLEEPER=$!
    wait "$T_SLEEPER" 2> /dev/null || true
    T_SLEEPER=
    if ! t_check_alive; then
      t_log "a component died: tearing down"
      exit 1
    fi
    if [[ ${T_DETACHED:-0} != 1 ]]; then
      pp=$(awk '/^PPid:/ { print $2 }' /proc/$$/status)
      if [[ $pp != "$ppid0" ]]; then
        t_log "parent $ppid0 is gone: tearing down"
        exit 0
      fi
    fi
  done
}

# t_start ARGS...: `run` detached (own session), returns once the URL is printed.
t_start() {
  mkdir -p "$T_STATE"
  if [[ -f $T_STATE/pgid && -n $(t_group_live_pids "$(< "$T_STATE/pgid")") ]]; then
    t_die "already running as process group $(< "$T_STATE/pgid") (state $T_STATE); stop it first: $T_SELF stop ${T_KEY}"
  fi
  local out=$T_STATE/run.out err=$T_STATE/run.log
  : > "$out"
  : > "$err"
  T_DETACHED=1 setsid "$T_SELF" run "$@" < /dev/null > "$out" 2> "$err" &
  local sup=$! t0 deadline
  t0=$(t_now_ms)
  deadline=$(( t0 + (READY_TIMEOUT_S * 3 + 10) * 1000 ))
  while :; do
    if [[ -s $out ]]; then
      cat "$err" >&2
      tail -n 1 "$out"
      return 0
    fi
    if ! t_live "$sup"; then
      wait "$sup" 2> /dev/null || true
      cat "$err" >&2
      t_die "$T_NAME did not start (see above; logs in $T_STATE)"
    fi
    if (( $(t_now_ms) > deadline )); then
      cat "$err" >&2
      kill -TERM "$sup" 2> /dev/null || true
      t_die "$T_NAME not ready after $(( ($(t_now_ms) - t0) / 1000 ))s"
    fi
    sleep 0.1
  done
}

# t_stop: TERM the leader, wait for the group to empty, SIGKILL stragglers.
t_stop() {
  if [[ ! -f $T_STATE/pgid ]]; then
    t_log "not running (no $T_STATE/pgid)"
    return 0
  fi
  local pg
  pg=$(< "$T_STATE/pgid")
  [[ $pg =~ ^[0-9]+$ ]] || t_die "bad pgid file $T_STATE/pgid"
  local live
  live=$(t_group_live_pids "$pg")
  if [[ -z $live ]]; then
    t_log "not running (process group $pg is empty)"
    rm -f "$T_STATE/pgid" "$T_STATE/url"
    return 0
  fi
  if t_live "$pg"; then
    kill -TERM "$pg" 2> /dev/null || true # the supervisor tears its group down
  else
    t_log "supervisor $pg is gone; signalling its process group directly"
    kill -TERM -- "-$pg" 2> /dev/null || true
  fi
  local deadline=$(( $(t_now_ms) + (STOP_TIMEOUT_S + 5) * 1000 ))
  while [[ -n $(t_group_live_pids "$pg") ]]; do
    if (( $(t_now_ms) > deadline )); then
      t_log "process group $pg still alive after $(( STOP_TIMEOUT_S + 5 ))s: SIGKILL"
      kill -KILL -- "-$pg" 2> /dev/null || true
      sleep 0.2
      break
    fi
    sleep 0.05
  done
  live=$(t_group_live_pids "$pg")
  if [[ -n $live ]]; then
    t_group "$pg" >&2
    t_die "could not stop process group $pg"
  fi
  # Only exited processes can be left: zombies waiting for their parent. A detached
  # supervisor's parent is PID 1: wait (bounded) for init to reap it (the init of some VMs
  # reaps orphans only every ~2 s). A foreground `run` is reaped by whoever spawned it,
  # after this returns: do not wait for that one.
  local z
  deadline=$(( $(t_now_ms) + 5000 ))
  while :; do
    z=$(t_group "$pg")
    [[ -z $z ]] && break
    awk '$2 == 1 { found = 1 } END { exit !found }' <<< "$z" || break
    (( $(t_now_ms) > deadline )) && break
    sleep 0.05
  done
  # A foreground `run`'s supervisor, exited and waiting for the process that started it,
  # is that caller's to reap (tests/pilot_browser/real_apps.rs TERMs and reaps its own):
  # named as such, not listed as a straggler.
  if [[ -n $z ]] && awk -v pg="$pg" 'NR == 1 && $1 == pg && $2 != 1 { ok = 1 } END { exit !(ok && NR == 1) }' <<< "$z"; then
    t_log "stopped process group $pg; its supervisor exited and is reaped by the process that started it (PID $(awk '{print $2}' <<< "$z"))"
  elif [[ -n $z ]]; then
    t_log "stopped; exited, waiting for their parent to reap them:"
    printf '%s\n' "$z" >&2
  else
    t_log "stopped process group $pg"
  fi
  rm -f "$T_STATE/pgid" "$T_STATE/url"
}

t_status() {
  if [[ -f $T_STATE/pgid ]] && [[ -n $(t_group_live_pids "$(< "$T_STATE/pgid")") ]]; then
    t_group "$(< "$T_STATE/pgid")"
    [[ -f $T_STATE/url ]] && cat "$T_STATE/url"
    return 0
  fi
  echo "not running"
  return 3
}
