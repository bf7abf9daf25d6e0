#!/usr/bin/env bash
# Idempotent set-up on a fresh Debian machine: system packages, the project
# venv (with Debian's site packages), and the C++ build. Safe to run often:
# each step is skipped when already done.
#
#   setup.sh            everything `make test` needs
#   setup.sh --repl     only what the REPL loads (the host core module and the
#                       worker's extension; no test suites, no browser
#                       packages); `make run` uses it
#   setup.sh --jupyter  only the Jupyter kernel and what its worker loads;
#                       `make jupyter` uses it
set -euo pipefail
part="${1:-all}"
cd "$(dirname "$0")/.."

# Debian packages, by what needs them. The C++ configure step needs GTest's
# headers even when no suite is built (one configuration serves every part).
core_packages=(
  build-essential cmake ninja-build pkg-config git
  python3 python3-dev python3-venv python3-numpy python3-matplotlib
  python3-prompt-toolkit python3-jedi
  pybind11-dev nlohmann-json3-dev libsimdjson-dev libssl-dev libsqlite3-dev libseccomp-dev
  libcurl4-openssl-dev
  libboost-dev libgtest-dev libgmock-dev bubblewrap
  r-base-core r-cran-jsonlite
)
# The science stack every kernel sees (read-only, in both sandbox modes);
# the README's table lists it with versions.
science_packages=(
  python3-scipy python3-pandas python3-sklearn python3-statsmodels python3-sympy
  python3-seaborn python3-xarray python3-h5py python3-netcdf4 python3-astropy
  python3-biopython python3-rdkit
  r-cran-ggplot2 r-cran-dplyr r-cran-tidyr r-cran-data.table
)
jupyter_packages=(xeus-dev cppzmq-dev python3-jupyter-client jupyter-client jupyter-console)
test_packages=(
  tmux python3-pytest python3-pytest-xdist libbenchmark-dev black clang-format
  python3-ipykernel python3-jupyter-kernel-test python3-nbclient python3-nbconvert
  r-cran-irkernel
  jupyter-notebook chromium
  slurmctld slurmd slurm-client munge
)
case "$part" in
  --repl)
    packages=("${core_packages[@]}" "${science_packages[@]}")
    targets=(_core _fast_open _r_fds)
    ;;
  --jupyter)
    packages=("${core_packages[@]}" "${science_packages[@]}" "${jupyter_packages[@]}")
    targets=(openai4s-jupyter-kernel _core _fast_open _r_fds)
    ;;
  all)
    packages=("${core_packages[@]}" "${science_packages[@]}" "${jupyter_packages[@]}" "${test_packages[@]}")
    targets=()
    ;;
  *)
    echo "usage: setup.sh [--repl | --jupyter]" >&2
    exit 2
    ;;
esac
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [ ! -x .venv/bin/python ]; then
  /usr/bin/python3 -m venv --system-site-packages .venv
fi
# The package is found from its source tree: no pip, no install step.
site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$(pwd)/python" > "$site/openai4s-source.pth"
# The `openai4s` command (e.g. `.venv/bin/openai4s repl`), without pip.
cat > .venv/bin/openai4s <<'LAUNCHER'
#!/bin/sh
exec "$(dirname "$0")/python" -m openai4s "$@"
LAUNCHER
chmod +x .venv/bin/openai4s
# The package's entry points (the `openai4s-slurm` kernel provisioner), seen
# by jupyter_client through this metadata directory: still no pip.
meta="$site/openai4s-0.1.0.dist-info"
mkdir -p "$meta"
printf 'Metadata-Version: 2.1\nName: openai4s\nVersion: 0.1.0\n' > "$meta/METADATA"
cat > "$meta/entry_points.txt" <<'ENTRY_POINTS'
[jupyter_client.kernel_provisioners]
openai4s-slurm = openai4s.slurm.provisioner:SlurmProvisioner
ENTRY_POINTS
# A sandboxed worker sees the package read-only and cannot write its own
# bytecode cache: without one, every worker start compiles the runtime
# (about 40 ms more per kernel start here). Written once, now.
.venv/bin/python -m compileall -q python/openai4s >/dev/null

# The test clients from npm, each pinned by its lock file. Only for the full
# set-up (the tests), and re-installed only when the lock file changed since
# the last install (its hash is kept in node_modules).
npm_clients() {
  local dir=$1 what=$2
  local lock=$dir/package-lock.json stamp=$dir/node_modules/.openai4s-lock.sha256
  [ "$part" = all ] || return 0
  [ "$(cat "$stamp" 2>/dev/null)" != "$(sha256sum < "$lock")" ] || return 0
  if command -v npm >/dev/null; then
    echo "setup: installing $dir (npm ci)"
    npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error
    sha256sum < "$lock" > "$stamp"
  else
    echo "setup: npm not found; $what will be skipped"
  fi
}
# playwright-core drives Debian's chromium (no browser is downloaded).
npm_clients tests/browser "the notebook browser test"
# The official MCP SDK client and Inspector.
npm_clients tests/mcp "the MCP client tests"

# CI builds with -Werror (a new warning fails there); a user's build does not.
werror=OFF
[ "${CI:-}" = true ] && werror=ON
configure() {
  echo "setup: configuring the C++ build (build/release)"
  cmake --preset release -DPython_EXECUTABLE="$(pwd)/.venv/bin/python" -DO4S_WERROR="$werror" >/dev/null
}
if [ ! -f build/release/build.ninja ] ||
  ! grep -q "^O4S_WERROR:BOOL=$werror\$" build/release/CMakeCache.txt; then
  configure
fi
# A target this configuration lacks (the Jupyter kernel, when xeus-dev came
# after the first configure) is found by configuring again.
for target in "${targets[@]}"; do
  ninja -C build/release -t query "$target" >/dev/null 2>&1 || configure
done

# Say how long before it starts: the steps left at about 4 CPU seconds each
# (a fresh clone's REPL build measured 478 CPU seconds for 128 steps, -O2, no
# cache), over the cores this build gets: fewer when the machine is busy.
steps=$(ninja -C build/release -n "${targets[@]}" 2>/dev/null | grep -c '^\[' || true)
if [ "$steps" -gt 0 ]; then
  cores=$(nproc)
  load=$(cut -d' ' -f1 /proc/loadavg)
  share=$(awk -v load="$load" -v cores="$cores" 'BEGIN { print (load > cores ? load / cores : 1) }')
  minutes=$(awk -v s="$steps" -v c="$cores" -v f="$share" 'BEGIN { print int(s * 4 / c * f / 60) + 1 }')
  what="the C++ core"
  [ "$part" = --repl ] && what="what the REPL needs"
  [ "$part" = --jupyter ] && what="the Jupyter kernel"
  busy=""
  [ "$share" != 1 ] && busy=", the machine being busy (load $load)"
  echo "setup: building $what: $steps steps, about $minutes min on $cores cores$busy" \
    "(a first build; later ones rebuild only what changed)"
fi
# Ninja prints one [n/total] line per step: the progress.
if ((${#targets[@]})); then
  cmake --build build/release --target "${targets[@]}"
else
  cmake --build build/release
fi
