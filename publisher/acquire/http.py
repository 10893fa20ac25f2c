"""HTTP(S) retrieval with httpx: bounded redirects, bounded size, nothing written.

``final_url`` is ``str(response.url)`` of the last response, exactly as httpx
reports it.  The body is the representation after Content-Encoding is undone
(gzip, deflate), and ``max_bytes`` bounds those decoded bytes, so a
compression bomb is cut off like any oversized body.  ``timeout`` applies to
each network operation (connect, read, write, pool wait).  Proxy settings
come from the environment, as httpx does by default.
"""

from __future__ import annotations

import functools
import ssl
from dataclasses import dataclass

import httpx

from . import AcquireError, parse_content_type

__all__ = ["MAX_REDIRECTS", "HttpResult", "http_get"]

MAX_REDIRECTS = 10
_SCHEMES = frozenset({"http", "https"})


@dataclass(frozen=True)
class HttpResult:
    """One successful retrieval."""

    final_url: str
    status: int
    media_type: str
    charset: str | None
    body: bytes
    redirects: int


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """httpx's default verifying TLS context, built once (building it costs ~20 ms)."""
    return httpx.create_ssl_context()


def _one_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def http_get(
    url: str,
    *,
    timeout: float = 30.0,
    max_bytes: int = 64 * 1024 * 1024,
    user_agent: str = "publisher/0.1",
) -> HttpResult:
    """GET ``url`` (http or https only), following up to ten redirects.

    Raises :class:`AcquireError` for another scheme, a non-2xx final status,
    too many redirects, a timeout, a transport failure, or a body larger than
    ``max_bytes`` (in which case nothing is returned).
    """
    try:
        scheme = httpx.URL(url).scheme
    except (httpx.InvalidURL, TypeError) as exc:
        raise AcquireError(f"http: invalid URL {url!r}: {_one_line(exc)}", url=url) from exc
    if scheme not in _SCHEMES:
        raise AcquireError(
            f"http: only http and https URLs can be fetched, not {scheme or 'no scheme'!r}",
            url=url,
        )

    headers = {"User-Agent": user_agent, "Accept": "*/*"}
    try:
        with (
            httpx.Client(
                follow_redirects=True,
                max_redirects=MAX_REDIRECTS,
                timeout=httpx.Timeout(timeout),
                headers=headers,
                verify=_tls_context(),
            ) as client,
            client.stream("GET", url) as response,
        ):
            final_url = str(response.url)
            status = response.status_code
            if not 200 <= status < 300:
                raise AcquireError(
                    f"http: {url} answered status {status} (final URL {final_url})",
                    url=url,
                    final_url=final_url,
                    status=status,
                )
            declared = response.headers.get("content-length", "")
            if declared.strip().isdigit() and int(declared) > max_bytes:
                raise _too_large(url, max_bytes)
            chunks: list[bytes] = []
            received = 0
            for chunk in response.iter_bytes():
                received += len(chunk)
                if received > max_bytes:
                    raise _too_large(url, max_bytes)
                chunks.append(chunk)
            media_type, charset = parse_content_type(response.headers.get("content-type", ""))
            redirects = len(response.history)
    except httpx.TooManyRedirects as exc:
        raise AcquireError(f"http: more than {MAX_REDIRECTS} redirects from {url}", url=url) from exc
    except httpx.TimeoutException as exc:
        raise AcquireError(f"http: timed out after {timeout:g}s fetching {url}", url=url, timeout=timeout) from exc
    except httpx.HTTPError as exc:
        raise AcquireError(f"http: cannot fetch {url}: {_one_line(exc)}", url=url) from exc
    return HttpResult(
        final_url=final_url,
        status=status,
        media_type=media_type,
        charset=charset,
        body=b"".join(chunks),
        redirects=redirects,
    )


def _too_large(url: str, max_bytes: int) -> AcquireError:
    return AcquireError(
        f"http: body of {url} exceeds the limit of {max_bytes} bytes",
        url=url,
        max_bytes=max_bytes,
    )
