# One command each: `make demo` (the whole study in miniature, offline) and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

export HF_HUB_OFFLINE := 1
export HF_DATASETS_OFFLINE := 1
export HF_EVALUATE_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: install test demo lint clean browser

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# torch first, pinned: an unpinned torch pulls a multi-GB CUDA build.
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -c constraints.txt -e ".[mauve,news,ray,slurm,dev,leaderboard]"
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

test: $(STAMP) browser
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q -p no:cacheprovider

demo: $(STAMP)
	$(BIN)/continuousbench demo

lint: $(STAMP)
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
