# Two set-up commands on a fresh machine: `make run` (build everything, show an answer) and `make test`.
VENV := .venv
BIN := $(VENV)/bin
export DAGSTER_HOME := $(CURDIR)/dagster_home
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TQDM_DISABLE := 1
# The console shows progress at INFO; every DEBUG event stays in the UI's run log.
QUIET := --config-json '{"loggers": {"console": {"config": {"log_level": "INFO"}}}}'

.PHONY: install run bsb test test-fast dev serve validate stop bench clean cross-encoder

$(BIN)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# The CPU torch wheel first, so nothing resolves a multi-GB CUDA build.
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

install: $(BIN)/.installed

run: install
	$(BIN)/dagster asset materialize -m citebible_pipeline.definitions --select 'not key:reranker_cross_encoder' --partition web $(QUIET)
	$(BIN)/citebible summary

# The second translation: the BSB's partition of the corpus, genre and embedding assets (after `make run`).
bsb: install
	$(BIN)/dagster asset materialize -m citebible_pipeline.definitions --select 'bible_verses,bible_chapters,verse_genres,passage_embeddings' --partition bsb $(QUIET)
	$(BIN)/citebible ask --translation bsb "My mother is dying and I'm angry at God"

# The optional second reranker: fine-tune the cross-encoder (minutes on 2 cores), then measure it beside the default.
cross-encoder: install
	$(BIN)/dagster asset materialize -m citebible_pipeline.definitions --select reranker_cross_encoder $(QUIET)
	$(BIN)/citebible eval --rerankers cross_encoder

test: install
	$(BIN)/pytest -q -p no:cacheprovider

test-fast: install
	$(BIN)/pytest -q -m "not slow"

dev: install
	$(BIN)/dagster dev -w workspace.yaml -h 127.0.0.1 -p 3000

serve: install
	$(BIN)/citebible serve --host 127.0.0.1 --port 8000

validate: install
	$(BIN)/dagster definitions validate -w workspace.yaml

stop: install
	$(BIN)/citebible db stop

bench: install
	$(BIN)/python benchmarks/bench_usfm.py
	$(BIN)/python benchmarks/bench_embeddings.py
	$(BIN)/python benchmarks/bench_query.py
	$(BIN)/python benchmarks/bench_products.py
	$(BIN)/python -m benchmarks.bench_api
	$(BIN)/python -m benchmarks.bench_rerank
	$(BIN)/python -m benchmarks.bench_eval
	$(BIN)/python -m benchmarks.bench_pools

clean:
	rm -rf $(VENV) dagster_home/storage dagster_home/logs dagster_home/history dagster_home/cache dagster_home/schedules
