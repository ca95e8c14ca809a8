"""The one fetcher: https:// or file:// into a local cache, verified and atomic.

Streams into a temp file beside the target, hashes while streaming, checks the byte count against
Content-Length, and renames into place only when everything matched, so a failed or truncated
download never replaces a good cached copy. Retries (with backoff) connection errors, timeouts,
truncated bodies and 5xx; a 4xx fails at once.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import logging
import os
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

import requests

log = logging.getLogger(__name__)

CHUNK = 1 << 20


class FetchError(RuntimeError):
    pass


class _Retryable(Exception):
    pass


@dataclass(frozen=True)
class FetchResult:
    url: str
    path: Path
    sha256: str
    size: int
    attempts: int
    seconds: float


def fetch(
    url: str,
    dest: Path,
    sha256: str | None = None,
    *,
    timeout: tuple[float, float] = (10.0, 60.0),
    retries: int = 3,
    backoff_s: float = 1.0,
    session: requests.Session | None = None,
) -> FetchResult:
    """Fetch `url` to `dest` (a file path). Raises FetchError naming the URL and what went wrong."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    scheme = urlparse(url).scheme
    if scheme not in ("http", "https", "file"):
        raise FetchError(f"{url}: unsupported URL scheme {scheme!r} (use https:// or file://)")
    attempt = 0
    while True:
        attempt += 1
        fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
        tmp = Path(tmp_name)
        try:
            with os.fdopen(fd, "wb") as out:
                digest, size = (_copy_file(url, out) if scheme == "file" else _download(url, out, timeout, session))
            if sha256 and digest != sha256.lower():
                raise FetchError(f"{url}: sha256 mismatch: expected {sha256.lower()}, got {digest} ({size} bytes); "
                                 f"the cached copy at {dest} was left untouched")
            os.replace(tmp, dest)
            log.info("fetched %s -> %s (%d bytes, sha256 %s, %d attempt(s))", url, dest, size, digest, attempt)
            return FetchResult(url, dest, digest, size, attempt, time.perf_counter() - started)
        except _Retryable as exc:
            tmp.unlink(missing_ok=True)
            if attempt > retries:
                raise FetchError(f"{url}: giving up after {attempt} attempts: {exc}") from None
            wait = backoff_s * 2 ** (attempt - 1)
            log.warning("fetch %s failed (%s); retry %d/%d in %.1fs", url, exc, attempt, retries, wait)
            time.sleep(wait)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise


def _copy_file(url: str, out) -> tuple[str, int]:
    path = Path(unquote(urlparse(url).path))
    if not path.is_file():
        raise FetchError(f"{url}: no such file {path}")
    h, size = hashlib.sha256(), 0
    with path.open("rb") as src:
        while chunk := src.read(CHUNK):
            h.update(chunk)
            out.write(chunk)
            size += len(chunk)
    return h.hexdigest(), size


def _download(url: str, out, timeout: tuple[float, float], session: requests.Session | None) -> tuple[str, int]:
    sess = session or requests.Session()
    h, size = hashlib.sha256(), 0
    try:
        with sess.get(url, stream=True, timeout=timeout) as resp:
            if 400 <= resp.status_code < 500:
                raise FetchError(f"{url}: HTTP {resp.status_code} {resp.reason} (not retried)")
            if resp.status_code >= 500:
                raise _Retryable(f"HTTP {resp.status_code} {resp.reason}")
            expected = resp.headers.get("Content-Length")
            for chunk in resp.iter_content(CHUNK):
                h.update(chunk)
                out.write(chunk)
                size += len(chunk)
    except (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError) as exc:
        raise _Retryable(f"{type(exc).__name__}: {exc}") from None
    if expected is not None and resp.headers.get("Content-Encoding") in (None, "identity") and size != int(expected):
        raise _Retryable(f"truncated download: got {size} of {expected} bytes")
    return h.hexdigest(), size


def open_text_member(path: Path, member: str | None = None) -> io.TextIOBase:
    """Open a cached source as text whatever its packing: zip (one member or `member`), gzip or plain."""
    with path.open("rb") as f:
        magic = f.read(4)
    if magic.startswith(b"PK"):
        zf = zipfile.ZipFile(path)
        names = [n for n in zf.namelist() if not n.endswith("/")]
        name = member or (names[0] if len(names) == 1 else None)
        if name is None or name not in names:
            raise FetchError(f"{path}: expected member {member!r} in zip, found {names[:5]}")
        return io.TextIOWrapper(zf.open(name), encoding="utf-8", newline="")
    if magic.startswith(b"\x1f\x8b"):
        return gzip.open(path, "rt", encoding="utf-8", newline="")
    return path.open("r", encoding="utf-8", newline="")
