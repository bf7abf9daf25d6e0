# The two commands of the README: `make run` and `make test`. Both set up
# everything first (Debian packages, .venv, C++ build); setup is idempotent.
.PHONY: setup run test test-asan bench format

setup:
	@bash scripts/setup.sh

run: setup
	@.venv/bin/python -m openai4s repl

test: setup
	@bash scripts/test.sh

# C++ tests under AddressSanitizer + UndefinedBehaviorSanitizer.
test-asan: setup
	cmake --preset asan >/dev/null && cmake --build build/asan && ctest --preset asan

bench: setup
	@.venv/bin/python -m bench $(ARGS)

format:
	clang-format -i $$(git ls-files 'src/*.cpp' 'src/*.h' 'tests/cpp/*.cpp' 'tests/cpp/*.h')
	black -q python tests/python scripts bench
