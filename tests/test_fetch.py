import hashlib

import pytest

from citebible_pipeline.sources import FetchError, fetch, open_text_member
from tests.httpfixture import ScriptedServer

BODY = b"From Verse\tTo Verse\tVotes\n" + b"Gen.1.1\tJohn.1.1\t10\n" * 2000
SHA = hashlib.sha256(BODY).hexdigest()


@pytest.fixture
def server():
    with ScriptedServer() as s:
        yield s


def test_success_verifies_and_writes(server, tmp_path):
    server.routes["/ok"] = [(200, BODY)]
    res = fetch(server.base + "/ok", tmp_path / "x", SHA, backoff_s=0)
    assert res.sha256 == SHA and res.size == len(BODY) and (tmp_path / "x").read_bytes() == BODY
    assert res.attempts == 1
    assert not list(tmp_path.glob(".*.part"))


def test_500_then_success_retries(server, tmp_path):
    server.routes["/flaky"] = [(500, b"oops"), (503, b"busy"), (200, BODY)]
    res = fetch(server.base + "/flaky", tmp_path / "x", SHA, backoff_s=0.01)
    assert res.attempts == 3 and server.hits["/flaky"] == 3


def test_404_is_not_retried(server, tmp_path):
    with pytest.raises(FetchError, match=r"/missing: HTTP 404"):
        fetch(server.base + "/missing", tmp_path / "x", backoff_s=0.01)
    assert server.hits["/missing"] == 1
    assert not (tmp_path / "x").exists()


def test_timeout_gives_up_with_clear_error(server, tmp_path):
    server.routes["/slow"] = [{"status": 200, "body": BODY, "delay": 1.5}]
    with pytest.raises(FetchError, match=r"/slow: giving up after 2 attempts: .*(Timeout|timed out)"):
        fetch(server.base + "/slow", tmp_path / "x", timeout=(2, 0.3), retries=1, backoff_s=0.01)


def test_checksum_mismatch_keeps_the_good_cached_copy(server, tmp_path):
    dest = tmp_path / "x"
    server.routes["/ok"] = [(200, BODY)]
    fetch(server.base + "/ok", dest, SHA)
    server.routes["/changed"] = [(200, BODY + b"tampered")]
    with pytest.raises(FetchError, match=r"/changed: sha256 mismatch: expected " + SHA):
        fetch(server.base + "/changed", dest, SHA, backoff_s=0)
    assert dest.read_bytes() == BODY
    assert not list(tmp_path.glob(".*.part"))


def test_truncated_body_is_an_error_not_a_file(server, tmp_path):
    dest = tmp_path / "x"
    dest.write_bytes(b"previous good copy")
    server.routes["/cut"] = [{"status": 200, "body": BODY, "truncate": 1000}]
    with pytest.raises(FetchError, match=r"/cut: giving up after 2 attempts"):
        fetch(server.base + "/cut", dest, retries=1, backoff_s=0.01)
    assert dest.read_bytes() == b"previous good copy"
    assert server.hits["/cut"] == 2


def test_file_url_and_text_sniffing(tmp_path):
    import gzip
    import zipfile

    plain = tmp_path / "a.txt"
    plain.write_bytes(BODY)
    res = fetch(plain.as_uri(), tmp_path / "cache" / "a", SHA)
    assert res.size == len(BODY)
    gz = tmp_path / "b.gz"
    gz.write_bytes(gzip.compress(BODY))
    zp = tmp_path / "c.zip"
    with zipfile.ZipFile(zp, "w") as zf:
        zf.writestr("inner.txt", BODY)
    for path in (tmp_path / "cache" / "a", gz, zp):
        with open_text_member(path) as f:
            assert f.readline().startswith("From Verse")
    with pytest.raises(FetchError, match="no such file"):
        fetch((tmp_path / "nope").as_uri(), tmp_path / "cache" / "n")
    with pytest.raises(FetchError, match="unsupported URL scheme"):
        fetch("ftp://example.invalid/x", tmp_path / "cache" / "n")
