# `make run` and `make test` do all the set-up on a fresh machine with Python 3.11.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PORT ?= 8501

.PHONY: run test mutants bench venv clean sample-data screenshots flower

$(STAMP): requirements.txt requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt -r requirements-dev.txt
	touch $(STAMP)

# Flower (deploy-local and its tests): installed for `make test` only, so `make run` stays light.
DEPLOY_STAMP := $(VENV)/.installed-deploy
$(DEPLOY_STAMP): $(STAMP) requirements-deploy.txt
	$(BIN)/python -m pip install --quiet -r requirements-deploy.txt
	touch $(DEPLOY_STAMP)

venv: $(STAMP)

# Flower for `deploy-local` after `make run` (about a minute; `make test` installs it too).
flower: $(DEPLOY_STAMP)

run: $(STAMP)
	$(BIN)/streamlit run app.py --server.port $(PORT) --server.headless true --browser.gatherUsageStats false

# One worker per core; a worker that runs out of tests takes some from the other (about half the time of one process
# on two cores).
test: $(STAMP) $(DEPLOY_STAMP)
	$(BIN)/python -m pytest -q -n auto --dist worksteal

# Mutation testing of the DP tests (tests/mutants.py): every deliberate privacy bug must be caught.
mutants: $(STAMP)
	$(BIN)/python tests/mutants.py

# The peers' own environments (bench_peers.py): implicit, and diffprivlib with its older scikit-learn.
bench/.venv-%/.installed: bench/requirements-peer-%.txt
	$(PYTHON) -m venv bench/.venv-$*
	bench/.venv-$*/bin/python -m pip install --quiet -r $<
	touch $@

bench: $(STAMP) $(DEPLOY_STAMP) bench/.venv-implicit/.installed bench/.venv-diffprivlib/.installed
	$(BIN)/python -m pip install --quiet -r requirements-bench.txt
	$(BIN)/python bench/run_all.py --jobs 2

# Documentation screenshots (docs/screenshots/) from the real app in headless Chromium; the only
# target that writes there (the browser tests write under a temporary directory).
screenshots: $(STAMP)
	$(BIN)/python docs/make_screenshots.py --out docs/screenshots

sample-data: $(STAMP)
	$(BIN)/python sample_data/generate.py

clean:
	rm -rf $(VENV) .pytest_cache
