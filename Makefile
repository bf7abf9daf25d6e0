# The two commands of the README: `make run` and `make test`. Both set up
# what they need first (Debian packages, .venv, C++ build); setup is
# idempotent. `make help` lists every target (from the `##` comments).
.PHONY: help setup setup-repl run jupyter test test-asan test-tsan lint bench format

# The REPL's workspace: never the repository itself (a cell's files would
# land among the sources). Override with `make run WORKSPACE=dir`.
WORKSPACE ?= $(or $(OPENAI4S_DATA_DIR),$(HOME)/.openai4s)/agent-workspaces/repl

help: ## list the targets
	@echo "make TARGET, where TARGET is one of:"
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([a-z-]+):.*## /  \1\t/' | expand -t 14

setup: ## install Debian packages, create .venv, build everything (idempotent)
	@bash scripts/setup.sh

setup-repl: ## set up only what the REPL needs (no test suites)
	@bash scripts/setup.sh --repl

run: setup-repl ## start the terminal REPL (WORKSPACE=dir to choose its directory)
	@mkdir -p "$(WORKSPACE)"
	@.venv/bin/python -m openai4s repl --cwd "$(WORKSPACE)"

jupyter: ## build the Jupyter kernel and install its kernelspecs for this user
	@bash scripts/setup.sh --jupyter
	@.venv/bin/python -m openai4s jupyter install --user --replace
	@if command -v Rscript >/dev/null; then \
	  .venv/bin/python -m openai4s jupyter install --user --replace --lang r; fi

test: setup ## run every test (C++, Python, the acceptance ratchet); CI runs this
	@bash scripts/test.sh

test-asan: setup ## C++ tests under AddressSanitizer + UBSan
	cmake --preset asan >/dev/null && cmake --build build/asan && ctest --preset asan

# The supervisor thread, the execute loop and interrupt() from other threads.
test-tsan: setup ## C++ tests under ThreadSanitizer
	cmake --preset tsan >/dev/null && cmake --build build/tsan && ctest --preset tsan

# Checks in .clang-tidy.
lint: setup ## clang-tidy over the release build's compile commands
	clang-tidy -p build/release --quiet $$(git ls-files 'src/*.cpp')

bench: setup ## the benchmarks (ARGS="--only cold_start" and the like)
	@.venv/bin/python -m bench $(ARGS)

format: ## clang-format the C++ and black the Python
	clang-format -i $$(git ls-files 'src/*.cpp' 'src/*.h' 'tests/cpp/*.cpp' 'tests/cpp/*.h')
	black -q python tests/python scripts bench
