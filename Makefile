# Regenerate the FedLC paper's tables and figures (notebooks/ executed with papermill).
#
#   make figures                      # profile quick (default): ~45 min on a 2-core CPU
#   make figures PROFILE=smoke        # seconds per notebook (what CI runs)
#   make figures PROFILE=paper        # the paper's setup (GPU)
#   make figures NB=04_label_skew     # one notebook only (name, number or substring)
#   make smoke-notebooks              # CI check: every notebook under smoke, in a temp folder
#   make strip-notebooks              # remove outputs from notebooks/*.ipynb before committing
#
# Runs are cached in $FEDLIB_STORE (default .fedlib-store/), so a second `make figures` takes seconds.

PYTHON ?= python
PROFILE ?= quick
NB ?=

.PHONY: figures smoke-notebooks strip-notebooks test bench

figures:
	$(PYTHON) -m fedlib.regenerate --profile $(PROFILE) $(if $(NB),--only $(NB),)

smoke-notebooks:
	bash .ci/smoke_notebooks.sh

strip-notebooks:
	$(PYTHON) -m fedlib.regenerate --strip

test:
	$(PYTHON) -m pytest -q

bench:
	$(PYTHON) benchmarks/bench_engines.py
