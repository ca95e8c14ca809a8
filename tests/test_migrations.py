import pytest

from citebible_pipeline.db import MigrationError, apply_migrations, connect
from citebible_pipeline.db.migrate import migration_files


def test_migrations_apply_once_and_are_idempotent(empty_db):
    first = apply_migrations(empty_db)
    assert first == [p.name for p in migration_files()]
    assert apply_migrations(empty_db) == []
    with connect(empty_db) as conn:
        rows = conn.execute("SELECT filename, count(*) FROM schema_migrations GROUP BY filename").fetchall()
        assert sorted(r[0] for r in rows) == sorted(first)
        assert all(r[1] == 1 for r in rows)
        assert conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()[0] >= "0.8"


def test_broken_migration_rolls_back_and_names_its_file(empty_db, tmp_path):
    (tmp_path / "001_good.sql").write_text("CREATE TABLE good_one (id int);")
    (tmp_path / "002_broken.sql").write_text("CREATE TABLE half_done (id int);\nSELECT * FROM no_such_table;")
    with pytest.raises(MigrationError, match="002_broken.sql"):
        apply_migrations(empty_db, folder=tmp_path)
    with connect(empty_db) as conn:
        applied = [r[0] for r in conn.execute("SELECT filename FROM schema_migrations")]
        assert applied == ["001_good.sql"]
        assert conn.execute("SELECT to_regclass('good_one')").fetchone()[0] == "good_one"
        assert conn.execute("SELECT to_regclass('half_done')").fetchone()[0] is None


def test_bad_migration_name_is_refused(tmp_path):
    (tmp_path / "1_oops.sql").write_text("SELECT 1;")
    with pytest.raises(MigrationError, match="1_oops.sql"):
        migration_files(tmp_path)


def test_connections_register_pgvector(db_url):
    from pgvector import Vector

    with connect(db_url) as conn:
        vec = conn.execute("SELECT '[1,2,3]'::vector").fetchone()[0]
        assert isinstance(vec, Vector) and vec.to_list() == [1.0, 2.0, 3.0]
        assert conn.execute("SELECT %s::vector <=> %s::vector", (Vector([1, 0]), Vector([0, 1]))).fetchone()[0] == 1.0
