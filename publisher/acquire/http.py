"""HTTP(S) retrieval with httpx: no ambient authority, bounded redirects and size, nothing written.

No ambient authority: the client ignores the environment (``trust_env=False``: no proxy
variables, no ``.netrc``, no ``SSL_CERT_FILE``), keeps no cookies between hops, and never sends
credentials: a URL with a ``user:password@`` part is refused, at the start and at every redirect.
Redirects are followed here, one hop at a time (at most :data:`MAX_REDIRECTS`), so that every URL
that answered with a redirect is recorded in order, and each hop is checked again (http or https
only, no credentials).

``final_url`` is ``str(response.url)`` of the last response, exactly as httpx reports it. The
body is the representation after Content-Encoding is undone (``gzip``/``x-gzip``, ``deflate``
zlib-wrapped or raw, ``identity``, several in the order listed). The layers are undone here, not
by httpx, a bounded step at a time, and ``max_bytes`` bounds the decoded bytes: a compression
bomb, nested layers included, is cut off like any oversized body without ever being inflated
whole. Any other coding (``br``, ``zstd``...), or a stream that is corrupt, stops short or
carries bytes after its end, is refused: encoded bytes are never passed on as the text.
``timeout`` applies to each network operation (connect, read, write, pool wait); ``deadline``
(default :data:`DEADLINE`, ten minutes) bounds the whole retrieval, every hop and the body, so a
server that drips a byte at a time, each within ``timeout``, is still cut off.

A failure raises :class:`HttpFailure`, which carries what was learnt before it (final URL,
redirects, status, media type) so the attempt can be logged with a receipt.
"""

from __future__ import annotations

import functools
import os
import ssl
import time
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx

from ..kernel.text import first_line
from . import AcquireError, parse_content_type

__all__ = ["DEADLINE", "MAX_REDIRECTS", "HttpResult", "HttpFailure", "http_get", "redact", "ambient_settings", "ROUTE"]

MAX_REDIRECTS = 10
DEADLINE = 600.0
"""Seconds one retrieval may take in all, every redirect and the whole body included."""
_SCHEMES = frozenset({"http", "https"})
_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_STEP = 64 * 1024  # most decoded bytes one layer hands on at a time
_CODINGS = frozenset({"gzip", "x-gzip", "deflate"})
_AMBIENT = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "NETRC", "SSL_CERT_FILE", "SSL_CERT_DIR")

ROUTE = "direct, no proxy, no credentials"
"""How every retrieval is made; written into each receipt's event detail."""


@dataclass(frozen=True)
class HttpResult:
    """One successful retrieval: the last response and every redirect that led to it."""

    requested_url: str
    final_url: str
    status: int
    media_type: str
    charset: str | None
    body: bytes
    redirects: tuple[str, ...]


class HttpFailure(AcquireError):
    """A retrieval that failed; ``context`` holds what was learnt (final_url, redirects, status...)."""


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """httpx's verifying TLS context without environment overrides, built once (~20 ms)."""
    return httpx.create_ssl_context(trust_env=False)


def redact(url: str) -> str:
    """``url`` without a ``user:password@`` part (what may be logged of a refused URL)."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError):
        return url
    return str(parsed.copy_with(userinfo=b"")) if parsed.userinfo else url


def ambient_settings() -> list[str]:
    """Names of the proxy/credential variables set in the environment (all ignored), sorted."""
    return sorted({name for name in os.environ if name.upper() in _AMBIENT})


def _checked(url: str, requested: str, hops: list[str], *, redirect: bool) -> httpx.URL:
    """Parse and check one hop: http(s) only, no credentials."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError) as exc:
        raise HttpFailure(
            f"http: invalid URL {redact(url)!r}: {first_line(exc)}", url=requested, redirects=hops
        ) from exc
    what = "a redirect to" if redirect else "the URL"
    if parsed.scheme not in _SCHEMES:
        raise HttpFailure(
            f"http: only http and https URLs can be fetched, not {parsed.scheme or 'no scheme'!r} "
            f"({what} {redact(url)})",
            url=requested,
            redirects=hops,
        )
    if parsed.userinfo:
        raise HttpFailure(
            f"http: {what} {redact(url)} carries credentials (user:password@); retrieval never sends "
            "credentials: remove them from the URL",
            url=requested,
            redirects=hops,
        )
    return parsed


def http_get(
    url: str,
    *,
    timeout: float = 30.0,
    max_bytes: int = 64 * 1024 * 1024,
    user_agent: str = "publisher/0.1",
    deadline: float = DEADLINE,
) -> HttpResult:
    """GET ``url`` (http or https only), following up to ten redirects.

    Raises :class:`HttpFailure` for another scheme, credentials in a URL, a non-2xx final status,
    too many redirects, a timeout, a transport failure, a body larger than ``max_bytes``, or a
    retrieval still unfinished after ``deadline`` seconds.
    """
    requested = redact(url)
    ends = time.monotonic() + deadline
    hops: list[str] = []
    current = _checked(url, requested, hops, redirect=False)
    headers = {"User-Agent": user_agent, "Accept": "*/*"}
    try:
        with httpx.Client(
            follow_redirects=False,
            timeout=httpx.Timeout(timeout),
            headers=headers,
            verify=_tls_context(),
            trust_env=False,
        ) as client:
            while True:
                client.cookies.clear()  # nothing a server set on one hop is sent on the next
                if time.monotonic() > ends:
                    raise _overdue(requested, deadline, {"url": requested, "redirects": list(hops)})
                with client.stream("GET", current) as response:
                    here = str(response.url)
                    status = response.status_code
                    location = response.headers.get("location")
                    if status in _REDIRECT_STATUSES and location:
                        hops.append(here)
                        if len(hops) > MAX_REDIRECTS:
                            raise HttpFailure(
                                f"http: more than {MAX_REDIRECTS} redirects from {requested}",
                                url=requested,
                                final_url=here,
                                redirects=hops,
                                status=status,
                            )
                        current = _checked(str(response.url.join(location)), requested, hops, redirect=True)
                        continue
                    media_type, charset = parse_content_type(response.headers.get("content-type", ""))
                    facts: dict[str, Any] = {
                        "url": requested,
                        "final_url": here,
                        "redirects": list(hops),
                        "status": status,
                        "media_type": media_type,
                    }
                    if not 200 <= status < 300:
                        raise HttpFailure(f"http: {requested} answered status {status} (final URL {here})", **facts)
                    body = _read_body(response, requested, max_bytes, facts, (ends, deadline))
                    return HttpResult(requested, here, status, media_type, charset, body, tuple(hops))
    except httpx.TimeoutException as exc:
        raise HttpFailure(
            f"http: timed out after {timeout:g}s fetching {requested}", url=requested, redirects=hops, timeout=timeout
        ) from exc
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        raise HttpFailure(f"http: cannot fetch {requested}: {first_line(exc)}", url=requested, redirects=hops) from exc


def _read_body(
    response: httpx.Response, url: str, max_bytes: int, facts: dict[str, Any], until: tuple[float, float] | None = None
) -> bytes:
    """The decoded body, refused past ``max_bytes`` or past ``until`` (monotonic end, deadline)."""
    declared = response.headers.get("content-length", "").strip()
    if declared.isascii() and declared.isdigit() and int(declared) > max_bytes:  # "²" is a digit too
        raise _too_large(url, max_bytes, facts)
    codings = _codings(response, url, facts)
    stream: Iterable[bytes] = response.iter_raw()
    if until is not None:  # on the wire: a coded body may arrive for ever and decode to nothing
        stream = _before(stream, url, until, facts)
    for coding in reversed(codings):  # the last coding listed was applied last
        stream = _inflate(stream, coding, url, facts)
    chunks: list[bytes] = []
    received = 0
    for chunk in stream:
        received += len(chunk)
        if received > max_bytes:
            raise _too_large(url, max_bytes, facts)
        if until is not None and time.monotonic() > until[0]:
            raise _overdue(url, until[1], facts)
        chunks.append(chunk)
    return b"".join(chunks)


def _before(chunks: Iterable[bytes], url: str, until: tuple[float, float], facts: dict[str, Any]) -> Iterator[bytes]:
    """``chunks`` as they are received, refused once the retrieval is past ``until`` (monotonic
    end, deadline). Empty deflate blocks dripped each within the read timeout decode to no byte
    of the body, so the deadline is looked at for every chunk received, not only for each decoded."""
    for chunk in chunks:
        if time.monotonic() > until[0]:
            raise _overdue(url, until[1], facts)
        yield chunk


def _overdue(url: str, deadline: float, facts: dict[str, Any]) -> HttpFailure:
    return HttpFailure(f"http: fetching {url} took longer than {deadline:g}s in all", deadline=deadline, **facts)


def _too_large(url: str, max_bytes: int, facts: dict[str, Any]) -> HttpFailure:
    return HttpFailure(f"http: body of {url} exceeds the limit of {max_bytes} bytes", max_bytes=max_bytes, **facts)


def _codings(response: httpx.Response, url: str, facts: dict[str, Any]) -> list[str]:
    """The Content-Encoding layers to undo, in the order they were applied (``identity`` dropped)."""
    listed = ",".join(response.headers.get_list("content-encoding"))
    codings = [c.strip().lower() for c in listed.split(",") if c.strip() and c.strip().lower() != "identity"]
    for coding in codings:
        if coding not in _CODINGS:
            raise HttpFailure(
                f"http: {url} is sent with Content-Encoding {coding!r}, which cannot be undone here "
                "(only gzip and deflate)",
                content_encoding=listed,
                **facts,
            )
    return codings


def _inflater(coding: str, first: bytes) -> Any:
    """A zlib decompressor for one gzip member or one deflate stream (zlib-wrapped or raw)."""
    if coding != "deflate":
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    wrapped = len(first) >= 2 and first[0] & 0x0F == 8 and (first[0] << 8 | first[1]) % 31 == 0
    return zlib.decompressobj(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)


def _inflate(chunks: Iterable[bytes], coding: str, url: str, facts: dict[str, Any]) -> Iterator[bytes]:
    """Undo one coding lazily, never handing on more than ``_STEP`` bytes from one call.

    A gzip body may hold several members one after another; anything after a deflate stream's
    end, or a stream that stops short, is an error.
    """

    def broken(why: str) -> HttpFailure:
        return HttpFailure(f"http: the {coding} Content-Encoding of {url} {why}", **facts)

    inflater: Any = None
    held = b""  # a deflate stream's first byte, until the second tells zlib-wrapped from raw
    ended = False  # a deflate stream ended: any byte after it, in this read or a later one, is refused
    for chunk in chunks:
        if ended and chunk:
            raise broken("has bytes after the end of the stream")
        data = held + chunk
        held = b""
        while data:
            if inflater is None:
                if coding == "deflate" and len(data) < 2:
                    held = data
                    break
                inflater = _inflater(coding, data)
            try:
                out = inflater.decompress(data, _STEP)
            except zlib.error as exc:
                raise broken(f"is corrupt: {exc}") from exc
            data = inflater.unconsumed_tail
            if out:
                yield out
            if inflater.eof:
                data = inflater.unused_data + data
                if coding == "deflate":
                    if data:
                        raise broken("has bytes after the end of the stream")
                    ended = True
                inflater = None  # the next gzip member, if any
    if held:
        raise broken("stops before the end of the stream")
    if inflater is not None:
        try:
            while not inflater.eof:  # output still held back by the step bound
                out = inflater.decompress(b"", _STEP)
                if not out:
                    break
                yield out
        except zlib.error as exc:
            raise broken(f"is corrupt: {exc}") from exc
        if not inflater.eof:
            raise broken("stops before the end of the stream")
