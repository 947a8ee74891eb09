# Recipes for working on arena-perf. Each runs the same script or command the README gives,
# so nothing here is needed to build, test or run the tool: `./scripts/demo` and
# `./scripts/test` work without just. `just --list` shows the recipes; `./scripts/install-just`
# installs just (Debian 12 has no package for it).

set positional-arguments

# List the recipes
default:
    @just --list

# The main job: stock vs lazy-png on the built-in match (arguments go to `demo`)
demo *args:
    ./scripts/demo "$@"

# The whole suite as CI runs it: README check, fmt, clippy, then every test
test:
    ./scripts/test

# What CI runs (.ci/run, which is exactly ./scripts/test)
ci:
    ./.ci/run

# The lint step of the suite alone: rustfmt check, clippy with warnings as errors
lint:
    ./scripts/lint

# Format the whole workspace in place
fmt:
    cargo fmt --all

# Type-check every crate and target
check:
    cargo check --workspace --all-targets --locked

# Run the benchmarks: all of them, or e.g. `just bench -p arena-wire --bench wire_bench`
bench *args:
    if [ "$#" -eq 0 ]; then cargo bench --workspace --locked; else cargo bench --locked "$@"; fi

# The decision rule on simulated runs with a known truth: coverage, false alarms, power
# (`just sim kinds`: presses and releases only)
sim *part:
    cargo bench --locked -p arena-stats --bench decide_sim -- {{part}}

# verify's rule on simulated runs with a known truth: caused, not caused, unknown by scenario
# (`just verify-sim 1000`: trials a scenario, 400 by default)
verify-sim *trials:
    cargo run --release --locked -p arena-pilot --example verify_sim -- {{trials}}

# API docs of the workspace's crates (without dependencies)
doc:
    cargo doc --workspace --no-deps --locked

# Run the README's examples on fixtures/ (the root test binary's fixtures_examples module)
examples:
    cargo test --locked --test tests fixtures_examples::

# Remake the generated inputs under fixtures/ (needs root and Chromium)
fixtures:
    ./scripts/fixtures

# Remake docs/report.png, the README's picture of `arena-perf report` (needs Chromium)
report-png:
    cargo run -- report fixtures/runs --baseline stock --out /tmp/report.html --screenshot docs/report.png
