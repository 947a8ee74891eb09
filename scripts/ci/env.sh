# Settings shared by the CI steps (sourced, not run). Each is an environment variable the
# workflow sets (.github/workflows/arena-perf-*.yml); the defaults suit a local try.
#   ARENA_PERF        the binary (default: arena-perf on PATH)
#   ARENA_PERF_DB     the history, an SQLite file or a postgres:// URL (the binary reads it)
#   ARENA_CI_OUT      where run folders and the summary go (default: reports/ci)
#   ARENA_CI_TESTBED  the testbed runs are stored and gated under; hosted runners get a new
#                     hostname every job, so CI names the runner class (default: hostname)
#   ARENA_CI_BRANCH   the branch a run is stored under (default: $GITHUB_REF_NAME, else git)
#   ARENA_CI_COMMIT   the commit measured (default: $GITHUB_SHA, else git)
#   ARENA_CI_BASE     the branch whose history a pull request is gated against (default: main)
#   ARENA_CI_LAST     how many of its newest runs make the baseline (default: 10)
#   ARENA_CI_RUNS     runs a pull request records (default: 3): the gate measures the spread
#                     between sessions from both sides' runs, and one run a side leaves it
#                     assumed (docs/compare.md, "The verdict")
#   ARENA_CI_PILOT_ARGS  flags for `arena-perf pilot` (default: none: the built-in fixture)
#   ARENA_CI_GATE_ARGS   the gate's limits and flags (default: --max inputToPaint.p90=+10%)
ARENA_PERF=${ARENA_PERF:-arena-perf}
ARENA_CI_OUT=${ARENA_CI_OUT:-reports/ci}
ARENA_CI_TESTBED=${ARENA_CI_TESTBED:-$(cat /proc/sys/kernel/hostname)}
ARENA_CI_BRANCH=${ARENA_CI_BRANCH:-${GITHUB_HEAD_REF:-${GITHUB_REF_NAME:-$(git rev-parse --abbrev-ref HEAD 2>/dev/null || echo unknown)}}}
ARENA_CI_COMMIT=${ARENA_CI_COMMIT:-${GITHUB_SHA:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}}
ARENA_CI_BASE=${ARENA_CI_BASE:-main}
ARENA_CI_LAST=${ARENA_CI_LAST:-10}
ARENA_CI_RUNS=${ARENA_CI_RUNS:-3}
ARENA_CI_PILOT_ARGS=${ARENA_CI_PILOT_ARGS:-}
ARENA_CI_GATE_ARGS=${ARENA_CI_GATE_ARGS:---max inputToPaint.p90=+10%}
# One folder per job attempt, so a re-run never meets the last one's run folder.
ARENA_CI_RUN="$ARENA_CI_OUT/run-${GITHUB_RUN_ID:-local}-${GITHUB_RUN_ATTEMPT:-$$}"
mkdir -p "$ARENA_CI_OUT"
