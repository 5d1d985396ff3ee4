# frugalml: `make demo` runs the main job, `make test` the whole suite.
# Both set themselves up: a local virtual environment with the package
# (whose install builds the C runtime through cffi) and the test tools.

PYTHON ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
STAMP := $(VENV)/.frugalml-installed
SOURCES := pyproject.toml setup.py $(shell find runtime_c/src runtime_c/include compiler/boosting -name "*.[ch]") $(wildcard pyruntime/cdefs/*.cdef)

.PHONY: all venv demo test test-fast lint bench bench-peers check-figures figures toolchains clean

all: venv

$(STAMP): $(SOURCES)
	@$(PYTHON) -c 'import sysconfig, os, sys; sys.exit(0 if os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")) else 1)' \
	  || (echo "installing python3-dev and python3-venv (Python headers for the C runtime build)"; \
	      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-dev python3-venv >/dev/null)
	@test -x $(VPY) || $(PYTHON) -m venv $(VENV) \
	  || (DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null && $(PYTHON) -m venv $(VENV))
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q -e '.[test]'
	@touch $(STAMP)

venv: $(STAMP)

# Cross compilers and QEMU for the firmware tests (Debian packages; skipped tests say why when missing).
toolchains:
	@bash tools/install_toolchains.sh

demo: venv
	$(VPY) -m compiler.demo --out demo_out

# `make test` runs the tests in parallel (pytest-xdist, one worker per core; tests/conftest.py keeps each
# module's shared fixtures on one worker). Serially: `make test PYTEST_JOBS=0`; more pytest options
# (e.g. -k NAME, -x): PYTEST_ARGS="...".
PYTEST_JOBS ?= auto
PYTEST_ARGS ?=
test: venv toolchains
	$(VPY) -m pytest -q -p no:cacheprovider --durations=30 -n $(PYTEST_JOBS) --dist loadgroup $(PYTEST_ARGS)

test-fast: venv
	$(VPY) -m pytest -q -x -m "not slow"

lint: venv
	$(VPY) -m ruff check compiler pyruntime power_bench tests benchmarks

# Every benchmark's full run (tables on stdout); the peers (emlearn, lightgbm) live in benchmarks/.venv.
# `make test` runs each one's --quick mode (tests/test_benchmarks_quick.py). Figures in README/docs:
# rerun the command stated in their marker with --write-docs; `make check-figures` lists stale ones.
BENCH_ENERGY := --quick --idle-seconds 10 --min-samples 30 --rounds 2 -o /tmp/frugalml-energy-bench
# One progress line per script, its wall time after it, the total at the end; the first failing script
# stops the run with its name and exit status (BENCH_LOG=FILE: the time lines are appended there too).
bench: venv bench-peers
	@scripts="$$(ls benchmarks/*.py)"; n=$$(echo "$$scripts" | wc -l); i=0; t0=$$(date +%s); \
	for s in $$scripts; do \
	  i=$$((i + 1)); \
	  case $$s in benchmarks/energy.py) args="$(BENCH_ENERGY)";; *) args="";; esac; \
	  echo "== [$$i/$$n] $$s $$args (started $$(date -u +%H:%M:%S) UTC)"; t=$$(date +%s); \
	  FRUGALML_PROGRESS=summary $(VPY) $$s $$args; rc=$$?; dt=$$(($$(date +%s) - t)); \
	  if [ $$rc -ne 0 ]; then \
	    echo "make bench: FAILED: $$s exited with status $$rc after $$dt s ($$i of $$n; rerun: $(VPY) $$s $$args)" >&2; \
	    exit 1; \
	  fi; \
	  echo "== [$$i/$$n] $$s: $$dt s"; \
	  if [ -n "$(BENCH_LOG)" ]; then echo "$$s $$dt" >> "$(BENCH_LOG)"; fi; \
	done; \
	echo "== make bench: $$n scripts in $$(($$(date +%s) - t0)) s"

bench-peers: venv
	$(VPY) -c 'import sys; sys.path.insert(0, "."); from benchmarks.common.peers import peer_python; peer_python(create=True)'

check-figures: venv
	$(VPY) tools/check_figures.py --strict

# Rerun the command of every stale doc figure with --write-docs (each writes its own blocks and record),
# FIGURE_JOBS at a time, longest first by their last wall times (docs/figure_times.json); a failure is
# reported at the end without stopping the others (tools/regen_figures.py; --dry-run prints the plan).
FIGURE_JOBS ?= 2
figures: venv bench-peers
	$(VPY) tools/regen_figures.py --jobs $(FIGURE_JOBS)

clean:
	rm -rf $(VENV) build demo_out *.egg-info pyruntime/_frugalml_c.*
