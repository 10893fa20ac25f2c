"""A cited URL's comparison form (``gate.urls.link_key``): Markdown's link normaliser, skipped where
it provably gives the URL back unchanged.

Runs compare every URL an agent writes with the URLs they fetched, in the form a Markdown link's
``href`` holds it. A plain URL (a lower-case ASCII host, no port or user, and only characters the
normaliser never encodes) is its own form, so a run whose URLs are all plain never loads Markdown
for them; any other URL goes through the normaliser as before.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from publisher.gate import urls

_MARKDOWN = MarkdownIt("commonmark")

_ALPHABET = "aZz09-._~!$&'()*+,;=:@/?#%[] \t\\\"<>^`{|}\u00e9\u0130\u212a\uff0fxX"


@settings(max_examples=500, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(url=st.from_regex(urls._PLAIN_URL_RE, fullmatch=True))
def test_a_plain_url_is_what_the_normaliser_gives_back(url: str) -> None:
    assert _MARKDOWN.normalizeLink(url) == url
    assert urls.link_key(url) == url


@settings(max_examples=500, suppress_health_check=[HealthCheck.too_slow])
@given(
    scheme=st.sampled_from(["http://", "https://", "HTTP://", "Https://", "ftp://", "http:/", "//", ""]),
    rest=st.text(alphabet=_ALPHABET, max_size=40),
)
def test_every_url_has_the_normalisers_form(scheme: str, rest: str) -> None:
    url = scheme + rest
    assert urls.link_key(url) == _MARKDOWN.normalizeLink(url)


def test_what_the_fast_form_leaves_to_the_normaliser() -> None:
    # Each of these is rewritten by the normaliser, so none may be taken as its own form.
    for url in (
        "https://Example.org/a",  # an upper-case host
        "https://e.org/Caf\u00e9",  # beyond ASCII
        "https://e.org/a b",  # a space
        "https://e.org/a%2",  # a broken escape
        "https://e.org/[x]",  # brackets
        "https://xn--e-e.org:8080/a",  # a port
        "https://user@e.org/a",  # a user
    ):
        assert urls._PLAIN_URL_RE.fullmatch(url) is None, url
        assert urls.link_key(url) == _MARKDOWN.normalizeLink(url)
