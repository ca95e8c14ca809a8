"""A few hundred of the soak's generated queries (benchmarks/soak.py runs 10,000) through Engine.search and the
API: every one is an answer, an abstention or a validation error (422), never anything else."""

import pytest
from fastapi.testclient import TestClient

from benchmarks.soak import soak
from citebible_pipeline.api.app import create_app
from citebible_pipeline.query import Engine

pytestmark = pytest.mark.slow


def test_generated_hostile_queries_meet_only_expected_outcomes(full_db):
    engine = Engine(full_db["url"], llm=None)
    with TestClient(create_app(lambda: engine)) as client:
        def api_get(text):
            r = client.get("/api/search", params={"q": text})
            return r.status_code, r.text

        outcomes, unexpected = soak(300, engine.search, api_get)
    assert unexpected == []
    assert sum(v for k, v in outcomes.items() if k.startswith("engine")) == 300
    assert outcomes["api: 200"] + outcomes["api: 422"] == 300
    assert outcomes["engine: validation error"] > 0 and outcomes["engine: answered"] > 0  # both paths exercised
