#!/usr/bin/env bash
# Posts $ARENA_CI_OUT/summary.md on the pull request $PR_NUMBER with the GitHub CLI,
# replacing this job's last comment when there is one, so a pull request keeps one.
set -euo pipefail
. "$(dirname "$0")/env.sh"
: "${PR_NUMBER:?the pull request to comment on}"
body="$ARENA_CI_OUT/summary.md"
gh pr comment "$PR_NUMBER" --body-file "$body" --edit-last 2>/dev/null ||
    gh pr comment "$PR_NUMBER" --body-file "$body"
