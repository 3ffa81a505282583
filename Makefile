# Regenerate the papers' tables and figures (notebooks/<paper>/ executed with papermill).
#
#   make figures                          # every paper, profile quick (default)
#   make figures PAPER=fedlc              # one paper
#   make figures PROFILE=smoke            # seconds per notebook (what CI runs)
#   make figures PROFILE=paper PAPER=fedlc NB=06   # the paper's setup (GPU), one notebook
#   make figures PROFILE=paper PAPER=fedlc EXECUTOR=ray GPUS_PER_RUN=0.25  # on a Ray cluster (docs/gpu_and_cluster.md)
#   make figures PROFILE=paper DEVICE=cuda # every paper cell on a GPU (on a CPU: the cells it affords)
#   make figures RENDER=records          # from the committed run records, no training: what a change reaches (FORCE=1: all)
#   make decide [CLAIM=fedlc/table4-synthetic] [MINUTES=60] [DRY=1]  # train what would decide inconclusive claims
#   make smoke-notebooks                  # CI check: every notebook under smoke, in a temp folder
#   make strip-notebooks                  # remove outputs from notebooks/**/*.ipynb before committing
#   make test                             # the whole test suite
#   make bench                            # engine and thread-invariance benchmarks
#   make docs-params                      # refresh docs/parameters.md's tables from the declarations
#
# Outputs go to figures/<paper>/<profile>/ (one folder per profile: a run never overwrites another
# profile's outputs).  Runs are cached in $FEDLIB_STORE (default .fedlib-store/), so a second
# `make figures` takes seconds.

PYTHON ?= python
PROFILE ?= quick
PAPER ?=
NB ?=
EXECUTOR ?=
RAY_ADDRESS ?=
GPUS_PER_RUN ?=
DEVICE ?=
RENDER ?=
FORCE ?=

.PHONY: figures decide smoke-notebooks strip-notebooks test bench docs-params readme-params

figures:
	$(PYTHON) -m fedlib.repro.regenerate --profile $(PROFILE) $(if $(PAPER),--paper $(PAPER),) $(if $(NB),--only $(NB),) \
		$(if $(EXECUTOR),--executor $(EXECUTOR),) $(if $(RAY_ADDRESS),--ray-address $(RAY_ADDRESS),) \
		$(if $(GPUS_PER_RUN),--gpus-per-run $(GPUS_PER_RUN),) $(if $(DEVICE),--device $(DEVICE),) $(if $(RENDER),--render $(RENDER),) $(if $(FORCE),--force,)

decide:
	$(PYTHON) -m fedlib.repro.decide $(if $(CLAIM),$(CLAIM),--all) $(if $(MINUTES),--minutes $(MINUTES),) $(if $(DRY),--dry-run,)

smoke-notebooks:
	bash .ci/smoke_notebooks.sh

strip-notebooks:
	$(PYTHON) -m fedlib.repro.regenerate --strip

test:
	$(PYTHON) -m pytest -q

bench:
	$(PYTHON) benchmarks/bench_engines.py
	$(PYTHON) benchmarks/bench_threads.py

docs-params:
	$(PYTHON) -c "import re, pathlib; from fedlib.__main__ import parameter_tables as t; p = pathlib.Path('docs/parameters.md'); \
	p.write_text(re.sub(r'(<!-- params:begin -->\n).*?(\n<!-- params:end -->)', lambda m: m.group(1) + t().strip() + m.group(2), p.read_text(), flags=re.S))"

readme-params: docs-params  # the tables moved from README.md to docs/parameters.md
