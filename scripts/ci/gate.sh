#!/usr/bin/env bash
# On a pull request: measure $ARENA_CI_RUNS runs, then gate them against the newest runs of
# the base branch in the history. The gate's Markdown goes to $ARENA_CI_OUT/summary.md (and
# to the job's summary page through $GITHUB_STEP_SUMMARY); the exit code is the gate's: 0
# pass, 1 a regression, 4 unknown (the runs cannot tell either way: the summary says what
# each limit could see), 2 bad input (no baseline stored yet), 3 the target or database
# failed.
set -euo pipefail
. "$(dirname "$0")/env.sh"
for i in $(seq 1 "$ARENA_CI_RUNS"); do
    # shellcheck disable=SC2086
    "$ARENA_PERF" pilot $ARENA_CI_PILOT_ARGS --out "$ARENA_CI_RUN/pr-$i" --quiet \
        --format markdown >"$ARENA_CI_OUT/pilot-$i.md"
done
status=0
# shellcheck disable=SC2086
"$ARENA_PERF" gate --baseline-history "$ARENA_CI_BASE" --last "$ARENA_CI_LAST" \
    --testbed "$ARENA_CI_TESTBED" --candidate "$ARENA_CI_RUN" $ARENA_CI_GATE_ARGS \
    --summary "$ARENA_CI_OUT/summary.md" --format markdown || status=$?
if [ ! -s "$ARENA_CI_OUT/summary.md" ]; then
    # No verdict (exit 2 or 3): the comment still says why.
    printf 'arena-perf gate: no verdict (exit %s); see the job log.\n' "$status" \
        >"$ARENA_CI_OUT/summary.md"
fi
exit "$status"
