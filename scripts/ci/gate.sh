#!/usr/bin/env bash
# On a pull request: measure $ARENA_CI_RUNS runs, then gate them against the newest runs of
# the base branch in the history. The gate's Markdown goes to $ARENA_CI_OUT/summary.md (and
# to the job's summary page through $GITHUB_STEP_SUMMARY); the exit code is the gate's: 0
# pass, 1 a regression, 4 unknown (the runs cannot tell either way: the summary says what
# each limit could see), 2 bad input (no baseline stored yet), 3 the target or database
# failed.
set -euo pipefail
. "$(dirname "$0")/env.sh"
# A pilot that fails still leaves the pull request its comment, saying which run and why.
for i in $(seq 1 "$ARENA_CI_RUNS"); do
    pilot_status=0
    # shellcheck disable=SC2086
    "$ARENA_PERF" pilot $ARENA_CI_PILOT_ARGS --out "$ARENA_CI_RUN/pr-$i" --quiet \
        --format markdown >"$ARENA_CI_OUT/pilot-$i.md" 2>"$ARENA_CI_OUT/pilot-$i.err" ||
        pilot_status=$?
    cat "$ARENA_CI_OUT/pilot-$i.err" >&2
    if [ "$pilot_status" -ne 0 ]; then
        {
            printf 'arena-perf gate: no verdict: the pilot of run %s of %s failed (exit %s):\n\n' \
                "$i" "$ARENA_CI_RUNS" "$pilot_status"
            sed 's/^/    /' "$ARENA_CI_OUT/pilot-$i.err"
        } >"$ARENA_CI_OUT/summary.md"
        exit "$pilot_status"
    fi
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
