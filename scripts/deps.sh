# Sourced by the scripts in this folder: install what a command needs, only if missing.
# Debian 12, as root (or with sudo). Prints what it installs.

# need_cargo [COMPONENT...]: a Rust toolchain, and the rustup components named (rustfmt,
# clippy), which are added with rustup when missing and rustup manages the toolchain.
need_cargo() {
    if ! command -v cargo >/dev/null 2>&1; then
        echo "arena-perf needs a Rust toolchain (cargo, rustc >= 1.85); install it with rustup first." >&2
        exit 2
    fi
    local missing=() comp
    for comp in "$@"; do
        case $comp in
            rustfmt) cargo fmt --version >/dev/null 2>&1 || missing+=(rustfmt) ;;
            clippy) cargo clippy --version >/dev/null 2>&1 || missing+=(clippy) ;;
            *) echo "need_cargo: unknown component $comp" >&2; exit 2 ;;
        esac
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if command -v rustup >/dev/null 2>&1; then
        echo "installing ${missing[*]} (rustup component add)" >&2
        rustup component add "${missing[@]}"
    else
        echo "the toolchain lacks ${missing[*]} and has no rustup to add them: install ${missing[*]} for this toolchain" >&2
        exit 2
    fi
}

# need_just: the just command runner, for the justfile's recipes (no script here needs it).
# Debian 12 has no package for it, so: Debian's package where the package lists know one,
# else `cargo install just --locked` (into ~/.cargo/bin, on PATH beside cargo).
need_just() {
    command -v just >/dev/null 2>&1 && return 0
    if apt-cache policy just 2>/dev/null | grep -q 'Candidate: [0-9]'; then
        apt_install just
    else
        need_cargo
        echo "installing just (cargo install just --locked; Debian 12 has no package)" >&2
        cargo install just --locked
    fi
}

# ensure_apt COMMAND:PACKAGE... installs PACKAGE when COMMAND is not on PATH.
# apt_install PKG...: installs the packages (none given: nothing to do), as root or via sudo.
apt_install() {
    [ $# -eq 0 ] && return 0
    local sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    echo "installing $* (apt-get)" >&2
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

ensure_apt() {
    local missing=()
    for pair in "$@"; do
        local cmd=${pair%%:*} pkg=${pair#*:}
        command -v "$cmd" >/dev/null 2>&1 || missing+=("$pkg")
    done
    apt_install "${missing[@]}"
}

# ensure_dpkg PKG...: installs the packages dpkg does not list as installed (for packages
# without a command of their own to look for, such as noVNC's web files or python3-gi).
ensure_dpkg() {
    local missing=()
    for pkg in "$@"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed' || missing+=("$pkg")
    done
    apt_install "${missing[@]}"
}

# need_disk GB: warn when the target folder's filesystem has less than GB GiB free, so a full
# disk is named up front rather than surfacing as a linker crash ("Bus error") minutes later.
need_disk() {
    local dir=${CARGO_TARGET_DIR:-target} free_kib
    mkdir -p "$dir"
    free_kib=$(df -Pk "$dir" | awk 'NR == 2 {print $4}')
    if [ "$free_kib" -lt $(($1 * 1024 * 1024)) ]; then
        echo "warning: $((free_kib / 1024)) MiB free on the disk holding $dir; the build needs about $1 GiB" >&2
    fi
}
