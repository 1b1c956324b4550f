# Each target makes .venv and installs what it needs when missing.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# requirements.lock holds the exact version of everything `.[all,dev]` needs on Python 3.11; the install
# takes it as constraints, so every run gets those versions. `make lock` re-resolves it from pyproject.toml
# with pip-tools in a throwaway venv, keeping the pins that still fit (LOCK_FLAGS=--upgrade: newest in range).
LOCK := requirements.lock
LOCK_FLAGS ?=

.PHONY: demo test bench lock clean

$(STAMP): pyproject.toml $(LOCK)
	test -x $(BIN)/python || $(PY) -m venv $(VENV) || python3 -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c $(LOCK) -e '.[all,dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/wildhold demo --out runs/demo

test: $(STAMP)
	$(BIN)/python -m pytest -q -n auto --dist loadgroup --no-loadscope-reorder

bench: $(STAMP)
	$(BIN)/wildhold bench engine

lock:
	tmp=$$(mktemp -d) && $(PY) -m venv $$tmp && $$tmp/bin/python -m pip install --quiet 'pip-tools>=7.4,<8' && \
	$$tmp/bin/pip-compile --quiet --extra=all --extra=dev --allow-unsafe --strip-extras --no-emit-index-url \
	  --no-emit-find-links $(LOCK_FLAGS) --output-file=$(LOCK) pyproject.toml && rm -rf $$tmp
	awk '/^wildhold @ /{skip=1; next} skip && /^ +#/{next} {skip=0; print}' $(LOCK) > $(LOCK).tmp && mv $(LOCK).tmp $(LOCK)

clean:
	rm -rf $(VENV) runs
