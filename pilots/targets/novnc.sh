#!/usr/bin/env bash
# novnc.sh: a real streamed desktop for the pilot: TigerVNC's Xvnc + websockify + noVNC,
# showing PressPanel.java (a 640x480 Swing panel at (0,0) that flips colour on mouse press
# and on space).
#
# Usage:
#   novnc.sh run    [DISPLAY_NUM [HTTP_PORT [RFB_PORT]]]   foreground supervisor
#   novnc.sh start  [DISPLAY_NUM [HTTP_PORT [RFB_PORT]]]   detached; returns once ready
#   novnc.sh stop   [DISPLAY_NUM]
#   novnc.sh status [DISPLAY_NUM]
# Defaults: DISPLAY_NUM 41, HTTP_PORT 6080, RFB_PORT 5900 + DISPLAY_NUM.
#
# `run` and `start` wait (bounded, READY_TIMEOUT_S per step, default 30) until the RFB port
# answers, websockify serves the page, and the app window is mapped and painted, then print
# the page URL as the last (and only) line on stdout:
#   http://127.0.0.1:HTTP_PORT/vnc_lite.html?host=127.0.0.1&port=HTTP_PORT
# (quote it in a shell: it contains `&`). noVNC's canvas (`#screen canvas`) is attached at
# 0x0 when the page script runs and sized 1024x768 only at the RFB ServerInit; it is shown
# 1:1 and centred in #screen: wait for the selector with a size, not for page load. Do not
# add `scale=false`: vnc_lite.html reads any `scale` value as true.
#
# Processes: everything runs in one process group led by the `run` supervisor (it makes
# itself a group leader with setsid). Its pid is the group id, in $STATE/pgid; component
# pids are in $STATE/pids; logs are $STATE/*.log. STATE defaults to
# /tmp/arena-targets/novnc-DISPLAY_NUM (env TARGET_STATE_DIR overrides).
# `stop` (or SIGTERM/SIGINT to the supervisor) tears the group down and returns when no live
# process is left in it. A foreground `run` also stops when its parent dies; a caller that
# spawns `run` should wait() it after stop so the supervisor itself is reaped.
#
# Env: NOVNC_APP (PressPanel, or type_line: a line typed into, needs python3-gi),
#      NOVNC_GEOMETRY (1024x768), NOVNC_WEB (/usr/share/novnc), JAVA (java),
#      NOVNC_FRAME_RATE (60, Xvnc's own default: updates per second at most, on a timer),
#      READY_TIMEOUT_S (30), STOP_TIMEOUT_S (5); PRESS_GC_EVERY (0: PressPanel forces a
#      full GC before every Nth press's answer). PressPanel's GC log, with wall time (what
#      `arena-perf explain --gc` joins by), is $STATE/gc.log.
# Debian packages: tigervnc-standalone-server websockify novnc x11-utils curl openjdk-17-jdk
# (single-file source launch needs a JDK; Swing on X11 a non-headless JRE).
set -euo pipefail

T_NAME=novnc
T_SELF=$(readlink -f "${BASH_SOURCE[0]}")
T_DIR=$(dirname "$T_SELF")
# shellcheck source=lib.sh
. "$T_DIR/lib.sh"

usage() { sed -n '2,/^set -euo/p' "$T_SELF" | sed '$d' | sed 's/^# \{0,1\}//' >&2; exit 2; }

cmd=${1:-}
[[ -n $cmd ]] || usage
shift
NUM=${1:-41}
HTTP_PORT=${2:-6080}
RFB_PORT=${3:-$(( 5900 + NUM ))}
[[ $NUM =~ ^[0-9]+$ && $HTTP_PORT =~ ^[0-9]+$ && $RFB_PORT =~ ^[0-9]+$ ]] || usage
T_KEY=$NUM
T_STATE=${TARGET_STATE_DIR:-/tmp/arena-targets/novnc-$NUM}
GEOMETRY=${NOVNC_GEOMETRY:-1024x768}
WEB=${NOVNC_WEB:-/usr/share/novnc}
JAVA=${JAVA:-java}
FRAME_RATE=${NOVNC_FRAME_RATE:-60}
[[ $FRAME_RATE =~ ^[0-9]+$ ]] || t_die "NOVNC_FRAME_RATE must be a whole number: $FRAME_RATE"

x_ready() { [[ -S /tmp/.X11-unix/X$NUM ]] && t_port_open "$RFB_PORT"; }
page_ready() { curl -sf -o /dev/null --max-time 2 "http://127.0.0.1:$HTTP_PORT/vnc_lite.html"; }
# NOVNC_APP: PressPanel (default) or type_line (pilots/targets/type_line.py, typing).
APP=${NOVNC_APP:-PressPanel}
[[ $APP == PressPanel || $APP == type_line ]] || t_die "NOVNC_APP must be PressPanel or type_line: $APP"
app_ready() {
  grep -q "^$APP painted" "$T_STATE/app.log" || return 1
  if command -v xwininfo > /dev/null; then
    DISPLAY=:$NUM xwininfo -name "$APP" | grep -q 'Map State: IsViewable'
  fi
}

t_components() {
  local b
  for b in Xvnc websockify curl "$JAVA"; do
    command -v "$b" > /dev/null || t_die "$b not found (apt-get install -y tigervnc-standalone-server websockify novnc curl x11-utils openjdk-17-jdk)"
  done
  # `java File.java` needs the compiler module (a JDK, not a JRE), and Swing on X11 needs a
  # non-headless runtime (Debian: openjdk-17-jre, pulled in by openjdk-17-jdk).
  "$JAVA" --list-modules 2> /dev/null | grep -q '^jdk\.compiler@' ||
    t_die "$JAVA has no jdk.compiler module: single-file source launch needs a JDK (apt-get install -y openjdk-17-jdk)"

  [[ -f $WEB/vnc_lite.html ]] || t_die "$WEB/vnc_lite.html not found (apt-get install -y novnc)"
  [[ -f $T_DIR/PressPanel.java ]] || t_die "$T_DIR/PressPanel.java not found"
  t_port_free "$RFB_PORT"
  t_port_free "$HTTP_PORT"
  if [[ -e /tmp/.X$NUM-lock || -e /tmp/.X11-unix/X$NUM ]]; then
    local lockpid
    lockpid=$(tr -d ' ' < "/tmp/.X$NUM-lock" 2> /dev/null || true)
    if [[ -n $lockpid ]] && t_live "$lockpid"; then
      t_die "X display :$NUM is in use (pid $lockpid); pick another DISPLAY_NUM"
    fi
  fi

  # -localhost and -interface: the RFB port listens on 127.0.0.1 only; -nolisten tcp: no
  # X11 TCP port; no authentication (a test target on loopback).
  t_spawn Xvnc "$T_STATE/xvnc.log" \
    Xvnc ":$NUM" -geometry "$GEOMETRY" -depth 24 -rfbport "$RFB_PORT" \
    -localhost -interface 127.0.0.1 -SecurityTypes None -nolisten tcp \
    -AlwaysShared -AcceptSetDesktopSize=0 -FrameRate "$FRAME_RATE"
  t_wait_until "Xvnc :$NUM, RFB on 127.0.0.1:$RFB_PORT" "$T_STATE/xvnc.log" x_ready

  t_spawn websockify "$T_STATE/websockify.log" \
    websockify --web "$WEB" "127.0.0.1:$HTTP_PORT" "127.0.0.1:$RFB_PORT"
  if [[ $APP == type_line ]]; then
    t_spawn type_line "$T_STATE/app.log" \
      env DISPLAY=":$NUM" /usr/bin/python3 -u "$T_DIR/type_line.py"
  else
    t_spawn PressPanel "$T_STATE/app.log" \
      env DISPLAY=":$NUM" _AWT_MAX_POLL_TIMEOUT=10 "$JAVA" \
      "-Xlog:gc*:file=$T_STATE/gc.log:time,uptime" "$T_DIR/PressPanel.java"
  fi
  t_wait_until "websockify serving $WEB on 127.0.0.1:$HTTP_PORT" "$T_STATE/websockify.log" page_ready
  t_wait_until "$APP mapped and painted on :$NUM" "$T_STATE/app.log" app_ready

  T_URL="http://127.0.0.1:$HTTP_PORT/vnc_lite.html?host=127.0.0.1&port=$HTTP_PORT"
}

t_cleanup_extra() {
  # Xvnc removes its lock and socket on SIGTERM; after a SIGKILL they are stale.
  local lockpid
  lockpid=$(tr -d ' ' < "/tmp/.X$NUM-lock" 2> /dev/null || true)
  if [[ -n $lockpid ]] && ! t_live "$lockpid"; then
    rm -f "/tmp/.X$NUM-lock" "/tmp/.X11-unix/X$NUM"
  fi
}

case $cmd in
  run) t_run "$NUM" "$HTTP_PORT" "$RFB_PORT" ;;
  start) t_start "$NUM" "$HTTP_PORT" "$RFB_PORT" ;;
  stop) t_stop ;;
  status) t_status ;;
  -h | --help | help) usage ;;
  *) usage ;;
esac
