#!/usr/bin/env bash
# The PostgreSQL workflow's history when it lives in a service container, which starts
# empty every job: `save FILE` dumps the database $ARENA_PERF_DB names (pg_dump, custom
# format), `restore FILE` loads such a dump into it; a missing FILE (the first job) is
# an empty history, which arena-perf creates on first use.
set -euo pipefail
: "${ARENA_PERF_DB:?the postgres:// URL of the history}"
case "${1:-}" in
save)
    pg_dump --format=custom --no-owner --file "$2" "$ARENA_PERF_DB"
    ;;
restore)
    if [ -s "$2" ]; then
        pg_restore --no-owner --clean --if-exists --exit-on-error --dbname "$ARENA_PERF_DB" "$2"
    else
        echo "pg-cache: no dump at $2: the history starts empty"
    fi
    ;;
*)
    echo "usage: $0 save|restore FILE" >&2
    exit 2
    ;;
esac
