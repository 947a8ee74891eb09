# Sourced by the scripts in this folder: install what a command needs, only if missing.
# Debian 12, as root (or with sudo). Prints what it installs.

need_cargo() {
    if ! command -v cargo >/dev/null 2>&1; then
        echo "arena-perf needs a Rust toolchain (cargo, rustc >= 1.85); install it with rustup first." >&2
        exit 2
    fi
}

# ensure_apt COMMAND:PACKAGE... installs PACKAGE when COMMAND is not on PATH.
ensure_apt() {
    local missing=()
    for pair in "$@"; do
        local cmd=${pair%%:*} pkg=${pair#*:}
        command -v "$cmd" >/dev/null 2>&1 || missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    local sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    echo "installing ${missing[*]} (apt-get)" >&2
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}
