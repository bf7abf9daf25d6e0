#!/usr/bin/env bash
# Idempotent set-up on a fresh Debian machine: system packages, the project
# venv (with Debian's site packages), and the C++ build. Safe to run often:
# each step is skipped when already done.
#
# `setup.sh --repl` builds only what the REPL loads (the host core module and
# the worker's extension), not the test suites; `make run` uses it.
set -euo pipefail
targets=()
if [ "${1:-}" = "--repl" ]; then
  targets=(_core _fast_open)
fi
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build pkg-config git tmux
  python3 python3-dev python3-venv python3-pytest python3-pytest-xdist python3-numpy python3-matplotlib
  pybind11-dev nlohmann-json3-dev libsimdjson-dev libssl-dev libsqlite3-dev libseccomp-dev libboost-dev
  libgtest-dev libgmock-dev libbenchmark-dev bubblewrap black clang-format
  python3-ipykernel python3-jupyter-client python3-prompt-toolkit python3-jedi
  xeus-dev cppzmq-dev python3-jupyter-kernel-test python3-nbclient python3-nbconvert
  jupyter-console jupyter-notebook chromium
  r-base-core r-cran-jsonlite
)
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
# A sandboxed worker sees the package read-only and cannot write its own
# bytecode cache: without one, every worker start compiles the runtime
# (about 40 ms more per kernel start here). Written once, now.
.venv/bin/python -m compileall -q python/openai4s >/dev/null

# playwright-core (npm) for the notebook-in-Chromium test; it drives Debian's
# chromium, so no browser is downloaded. Re-installed only when the lock file
# changed since the last install (its hash is kept in node_modules).
browser_lock=tests/browser/package-lock.json
browser_stamp=tests/browser/node_modules/.openai4s-lock.sha256
if [ "$(cat "$browser_stamp" 2>/dev/null)" != "$(sha256sum < "$browser_lock")" ]; then
  if command -v npm >/dev/null; then
    echo "setup: installing tests/browser (npm ci)"
    npm ci --prefix tests/browser --no-audit --no-fund --loglevel=error
    sha256sum < "$browser_lock" > "$browser_stamp"
  else
    echo "setup: npm not found; the notebook browser test will be skipped"
  fi
fi

# The MCP SDK clients (npm) for tests/mcp, the same way.
mcp_lock=tests/mcp/package-lock.json
mcp_stamp=tests/mcp/node_modules/.openai4s-lock.sha256
if [ "$(cat "$mcp_stamp" 2>/dev/null)" != "$(sha256sum < "$mcp_lock")" ]; then
  if command -v npm >/dev/null; then
    echo "setup: installing tests/mcp (npm ci)"
    npm ci --prefix tests/mcp --no-audit --no-fund --loglevel=error
    sha256sum < "$mcp_lock" > "$mcp_stamp"
  else
    echo "setup: npm not found; the MCP client tests will be skipped"
  fi
fi

if [ ! -f build/release/build.ninja ]; then
  echo "setup: configuring the C++ build (build/release)"
  cmake --preset release -DPython_EXECUTABLE="$(pwd)/.venv/bin/python" >/dev/null
fi
# Ninja prints one [n/total] line per step, so a first build shows progress.
if ninja -C build/release -n "${targets[@]}" 2>/dev/null | grep -q '^\['; then
  echo "setup: building the C++ core${targets:+ (what the REPL needs)}; a first build takes a few minutes"
fi
if ((${#targets[@]})); then
  cmake --build build/release --target "${targets[@]}"
else
  cmake --build build/release
fi
