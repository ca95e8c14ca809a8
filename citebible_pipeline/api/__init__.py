"""The reference HTTP API and reading page over the query module (FastAPI + Jinja2, no JavaScript)."""
