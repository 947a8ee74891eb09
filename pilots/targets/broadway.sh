#!/usr/bin/env bash
# broadway.sh: a real streamed desktop for the pilot: GTK 3 Broadway (broadwayd) showing
# press_panel.py (a 640x480 GTK window at (0,0) that flips colour on button press and on
# space).
#
# Usage:
#   broadway.sh run    [DISPLAY_NUM [HTTP_PORT]]   foreground supervisor
#   broadway.sh start  [DISPLAY_NUM [HTTP_PORT]]   detached; returns once ready
#   broadway.sh stop   [DISPLAY_NUM]
#   broadway.sh status [DISPLAY_NUM]
# Defaults: DISPLAY_NUM 5, HTTP_PORT 8080 + DISPLAY_NUM.
#
# `run` and `start` wait (bounded, READY_TIMEOUT_S per step, default 30) until broadwayd
# serves its page and the app window is mapped and painted, then print the page URL as the
# last (and only) line on stdout:
#   http://127.0.0.1:HTTP_PORT/
# The client creates one canvas per GTK surface (absolutely positioned, no id or class) when
# the server sends the surface, i.e. after the WebSocket is up: wait for the selector.
# broadwayd serves ONE client at a time: a new page that connects takes the display over.
#
# Processes: everything runs in one process group led by the `run` supervisor (it makes
# itself a group leader with setsid). Its pid is the group id, in $STATE/pgid; component
# pids are in $STATE/pids; logs are $STATE/*.log. STATE defaults to
# /tmp/arena-targets/broadway-DISPLAY_NUM (env TARGET_STATE_DIR overrides).
# `stop` (or SIGTERM/SIGINT to the supervisor) tears the group down and returns when no live
# process is left in it. A foreground `run` also stops when its parent dies; a caller that
# spawns `run` should wait() it after stop so the supervisor itself is reaped.
#
# Env: BROADWAY_APP (press_panel, or type_line: a line typed into), PYTHON (/usr/bin/python3: needs gi), READY_TIMEOUT_S (30), STOP_TIMEOUT_S (5).
# Debian packages: libgtk-3-bin python3-gi python3-gi-cairo gir1.2-gtk-3.0 curl.
set -euo pipefail

T_NAME=broadway
T_SELF=$(readlink -f "${BASH_SOURCE[0]}")
T_DIR=$(dirname "$T_SELF")
# shellcheck source=lib.sh
. "$T_DIR/lib.sh"

usage() { sed -n '2,/^set -euo/p' "$T_SELF" | sed '$d' | sed 's/^# \{0,1\}//' >&2; exit 2; }

cmd=${1:-}
[[ -n $cmd ]] || usage
shift
NUM=${1:-5}
HTTP_PORT=${2:-$(( 8080 + NUM ))}
[[ $NUM =~ ^[0-9]+$ && $HTTP_PORT =~ ^[0-9]+$ ]] || usage
T_KEY=$NUM
T_STATE=${TARGET_STATE_DIR:-/tmp/arena-targets/broadway-$NUM}
PYTHON=${PYTHON:-/usr/bin/python3}

page_ready() { curl -sf -o /dev/null --max-time 2 "http://127.0.0.1:$HTTP_PORT/"; }
# BROADWAY_APP: press_panel (default) or type_line (pilots/targets/type_line.py, typing).
APP=${BROADWAY_APP:-press_panel}
[[ $APP == press_panel || $APP == type_line ]] || t_die "BROADWAY_APP must be press_panel or type_line: $APP"
app_ready() {
  grep -q "^$APP mapped" "$T_STATE/app.log" &&
    grep -q "^$APP placed at 0,0" "$T_STATE/app.log" &&
    grep -q "^$APP painted" "$T_STATE/app.log"
}

t_components() {
  local b
  for b in broadwayd curl "$PYTHON"; do
    command -v "$b" > /dev/null || t_die "$b not found (apt-get install -y libgtk-3-bin python3-gi python3-gi-cairo gir1.2-gtk-3.0 curl)"
  done
  "$PYTHON" -c 'import gi; gi.require_version("Gtk", "3.0"); from gi.repository import Gtk' 2> /dev/null ||
    t_die "$PYTHON cannot import gi / Gtk 3 (apt-get install -y python3-gi python3-gi-cairo gir1.2-gtk-3.0; or set PYTHON)"
  [[ -f $T_DIR/$APP.py ]] || t_die "$T_DIR/$APP.py not found"
  t_port_free "$HTTP_PORT"

  t_spawn broadwayd "$T_STATE/broadwayd.log" \
    broadwayd --address 127.0.0.1 --port "$HTTP_PORT" ":$NUM"
  t_wait_until "broadwayd :$NUM serving 127.0.0.1:$HTTP_PORT" "$T_STATE/broadwayd.log" page_ready
  # broadwayd logs "Listening on .../broadwayM.socket" (M = DISPLAY_NUM + 1, in
  # $XDG_RUNTIME_DIR or ~/.cache) once the app socket is up; the app does not retry.
  t_wait_until "broadwayd :$NUM app socket" "$T_STATE/broadwayd.log" \
    grep -q '^Listening on ' "$T_STATE/broadwayd.log"

  t_spawn "$APP" "$T_STATE/app.log" \
    env GDK_BACKEND=broadway BROADWAY_DISPLAY=":$NUM" "$PYTHON" -u "$T_DIR/$APP.py"
  t_wait_until "$APP mapped at (0,0) and painted on broadway :$NUM" "$T_STATE/app.log" app_ready

  T_URL="http://127.0.0.1:$HTTP_PORT/"
}

t_cleanup_extra() { :; }

case $cmd in
  run) t_run "$NUM" "$HTTP_PORT" ;;
  start) t_start "$NUM" "$HTTP_PORT" ;;
  stop) t_stop ;;
  status) t_status ;;
  -h | --help | help) usage ;;
  *) usage ;;
esac
