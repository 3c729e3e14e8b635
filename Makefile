# Two commands matter on a fresh machine: `make run` (serve on the embedded SQLite store at
# http://127.0.0.1:8000) and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test check lint typecheck format bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[etcd,api,test,dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/catalog serve --host 127.0.0.1 --port 8000

test: $(STAMP)
	$(BIN)/pytest -q

lint: $(STAMP)
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .

typecheck: $(STAMP)
	$(BIN)/mypy catalog updatelog schemasync api tests bench

check: lint typecheck test

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: $(STAMP)
	$(BIN)/python -m bench $(BENCH_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info .mypy_cache .pytest_cache .ruff_cache
