#!/usr/bin/env bash
# On main: measure once and add the run to the history as it is written (`pilot
# --history`), under the branch, commit and testbed of scripts/ci/env.sh.
set -euo pipefail
. "$(dirname "$0")/env.sh"
# shellcheck disable=SC2086 # the pilot's flags are words on purpose
"$ARENA_PERF" pilot $ARENA_CI_PILOT_ARGS --out "$ARENA_CI_RUN" --quiet --format markdown \
    --history --branch "$ARENA_CI_BRANCH" --commit "$ARENA_CI_COMMIT" \
    --testbed "$ARENA_CI_TESTBED" >"$ARENA_CI_OUT/pilot.md"
