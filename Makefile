# The two commands of the README: `make run` and `make test`. Both set up
# what they need first (Debian packages, .venv, C++ build); setup is
# idempotent. `make run` builds only what the REPL loads.
.PHONY: setup setup-repl run test test-asan test-tsan lint bench format

# The REPL's workspace: never the repository itself (a cell's files would
# land among the sources). Override with `make run WORKSPACE=dir`.
WORKSPACE ?= $(or $(OPENAI4S_DATA_DIR),$(HOME)/.openai4s)/agent-workspaces/repl

setup:
	@bash scripts/setup.sh

setup-repl:
	@bash scripts/setup.sh --repl

run: setup-repl
	@mkdir -p "$(WORKSPACE)"
	@.venv/bin/python -m openai4s repl --cwd "$(WORKSPACE)"

test: setup
	@bash scripts/test.sh

# C++ tests under AddressSanitizer + UndefinedBehaviorSanitizer.
test-asan: setup
	cmake --preset asan >/dev/null && cmake --build build/asan && ctest --preset asan

# C++ tests under ThreadSanitizer (the supervisor thread, the execute loop
# and interrupt() from other threads).
test-tsan: setup
	cmake --preset tsan >/dev/null && cmake --build build/tsan && ctest --preset tsan

# clang-tidy over the compile commands of the release build (checks in
# .clang-tidy).
lint: setup
	clang-tidy -p build/release --quiet $$(git ls-files 'src/*.cpp')

bench: setup
	@.venv/bin/python -m bench $(ARGS)

format:
	clang-format -i $$(git ls-files 'src/*.cpp' 'src/*.h' 'tests/cpp/*.cpp' 'tests/cpp/*.h')
	black -q python tests/python scripts bench
