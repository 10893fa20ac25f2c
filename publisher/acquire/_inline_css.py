"""Whether an HTML element's inline presentation lets a reader see its text: an allow-list.

A declaration is kept only when no value it may take can make text unseen on its own, or when
its value is checked here: a ``display`` other than ``none``, ``visibility: visible``, a
``font-size`` of at least 6px/6pt/0.5em/50%, an ``opacity`` of at least 0.5, margins, indents and
spacing that are not negative, ``position`` static or relative, ``overflow: visible``.

Opacity and font size are followed down the tree as well, since each element's is relative to its
parent's: eight nested ``opacity: 0.5`` (or ``font-size: 50%``) each pass the test above, and
together show text at 0.4% opacity (or in a 0.06px font). An element whose opacity and its
ancestors' compose to under :data:`MIN_OPACITY` is unseen with all it holds; text whose font
comes to under :data:`MIN_FONT_PX` CSS pixels (from 16px, a browser's default) is unseen, though
a child that sets a larger size again is seen.

Colours are followed down the tree from black on white (``color``, ``<font color>``,
``background-color``, ``bgcolor``, alpha blended), and a run of text is seen only where its
colour keeps a contrast ratio of at least :data:`MIN_CONTRAST` with its background
(:func:`readable`); every declaration of a colour is weighed, not only the one that wins the
cascade.

Anything else (``transform``, ``clip``, offsets, a background image, a colour not read here, CSS
comments or escapes) hides the element: text whose visibility cannot be told without rendering
the page is left out rather than made citable. Style sheets are not applied.
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = [
    "Colours",
    "Look",
    "PAGE",
    "PAGE_LOOK",
    "MIN_CONTRAST",
    "MIN_FONT_PX",
    "MIN_OPACITY",
    "presented",
    "readable",
]

Colours = tuple[tuple[float, float, float], tuple[float, float, float]]
"""(text colour, background colour), each RGB in 0..1."""

PAGE: Colours = ((0.0, 0.0, 0.0), (1.0, 1.0, 1.0))
MIN_CONTRAST = 1.5
"""Least WCAG contrast ratio between text and background that counts as visible (#ccc on white
is 1.6; #eee on white, 1.2, does not count)."""
MIN_OPACITY = 0.5
"""Least opacity, an element's and its ancestors' multiplied, at which its text counts as seen."""
MIN_FONT_PX = 6.0
"""Least font size, in CSS pixels once relative sizes are followed down the tree, at which text
counts as seen."""


class Look(NamedTuple):
    """How an element's text is shown: its colours, the opacity it and its ancestors compose to,
    and its font size in CSS pixels."""

    colours: Colours
    opacity: float
    font_px: float


PAGE_LOOK = Look(PAGE, 1.0, 16.0)
"""The page itself: black on white, opaque, a browser's default 16px."""

_KEYWORD_PX = {
    "xx-small": 9.0, "x-small": 10.0, "small": 13.0, "medium": 16.0, "large": 18.0,
    "x-large": 24.0, "xx-large": 32.0, "xxx-large": 48.0,
}  # fmt: skip
_SIZE = re.compile(r"([0-9.]+)(px|pt|rem|em|%)")

_SPACE = re.compile(r"[ \t\n\f\r]+")
_IMPORTANT = re.compile(r"\s*!\s*important\Z")
_ANY = re.compile(r".*", re.DOTALL)
_NOT_NEGATIVE = re.compile(r"[^-]*")
_FONT_SIZE = re.compile(
    r"(xx?-small|small|medium|large|xx?x?-large|smaller|larger)"
    r"|(?:[6-9]|[1-9]\d+)(?:\.\d+)?(?:px|pt)|(?:0?\.[5-9]\d*|[1-9]\d*(?:\.\d+)?)r?em|(?:[5-9]\d|[1-9]\d\d+)(?:\.\d+)?%"
)
_ALLOWED: dict[str, re.Pattern[str]] = {
    **dict.fromkeys(
        (
            "font-weight", "font-style", "font-family", "font-variant", "font-stretch",
            "text-align", "text-decoration", "text-decoration-line", "text-decoration-style",
            "text-decoration-thickness", "text-underline-offset", "text-transform", "white-space",
            "word-break", "overflow-wrap", "word-wrap", "hyphens", "line-height", "list-style",
            "list-style-type", "list-style-position", "vertical-align", "float", "clear",
            "cursor", "width", "height", "min-width", "min-height", "max-width", "max-height",
            "box-sizing", "border-collapse", "border-spacing", "table-layout", "caption-side",
            "empty-cells",
        ),
        _ANY,
    ),
    **dict.fromkeys(
        ("margin", "margin-top", "margin-right", "margin-bottom", "margin-left", "margin-block",
         "margin-inline", "text-indent", "letter-spacing", "word-spacing"),
        _NOT_NEGATIVE,
    ),
    "display": re.compile(r"(?!none\b)[a-z -]+"),
    "visibility": re.compile(r"visible"),
    "position": re.compile(r"static|relative"),
    "overflow": re.compile(r"visible"),
    "font-size": _FONT_SIZE,
    "opacity": re.compile(r"1|1\.0*|0?\.[5-9]\d*|(?:[5-9]\d|100)(?:\.\d+)?%"),
}  # fmt: skip
_PREFIXES = ("padding", "border")  # padding-*, border-*: cannot hide text whatever the value
_COLOUR_PROPERTIES = frozenset({"color", "background-color", "background"})

_NAMED = {
    "black": "000000", "white": "ffffff", "gray": "808080", "grey": "808080", "silver": "c0c0c0",
    "darkgray": "a9a9a9", "darkgrey": "a9a9a9", "dimgray": "696969", "dimgrey": "696969",
    "lightgray": "d3d3d3", "lightgrey": "d3d3d3", "gainsboro": "dcdcdc", "whitesmoke": "f5f5f5",
    "red": "ff0000", "maroon": "800000", "darkred": "8b0000", "green": "008000", "darkgreen": "006400",
    "lime": "00ff00", "blue": "0000ff", "navy": "000080", "darkblue": "00008b", "purple": "800080",
    "teal": "008080", "olive": "808000", "orange": "ffa500", "yellow": "ffff00", "fuchsia": "ff00ff",
    "aqua": "00ffff", "brown": "a52a2a", "ivory": "fffff0", "beige": "f5f5dc", "lightyellow": "ffffe0",
}  # fmt: skip
_HEX = re.compile(r"#([0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})")
_RGB = re.compile(r"rgba?\(\s*([^)]*)\)")
_NUMBER = re.compile(r"(\d+(?:\.\d+)?|\.\d+)(%?)")


def _colour(value: str) -> tuple[float, float, float, float] | None:
    """RGBA in 0..1 of a CSS colour this module reads (hex, rgb(a), a few names), else None."""
    if value == "transparent":
        return (0.0, 0.0, 0.0, 0.0)
    value = "#" + _NAMED[value] if value in _NAMED else value
    hexed = _HEX.fullmatch(value)
    if hexed:
        digits = hexed.group(1)
        if len(digits) <= 4:
            digits = "".join(d * 2 for d in digits)
        parts = [int(digits[i : i + 2], 16) / 255 for i in range(0, len(digits), 2)]
        return (parts[0], parts[1], parts[2], parts[3] if len(parts) == 4 else 1.0)
    functional = _RGB.fullmatch(value)
    if not functional:
        return None
    items = [p for p in re.split(r"[\s,/]+", functional.group(1).strip()) if p]
    if len(items) not in (3, 4):
        return None
    scaled = []
    for index, item in enumerate(items):
        found = _NUMBER.fullmatch(item)
        if found is None:
            return None
        number, percent = float(found.group(1)), found.group(2)
        top = 100.0 if percent else (1.0 if index == 3 else 255.0)
        scaled.append(min(number / top, 1.0))
    return (scaled[0], scaled[1], scaled[2], scaled[3] if len(scaled) == 4 else 1.0)


def _luminance(rgb: tuple[float, float, float]) -> float:
    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _contrast(a: tuple[float, float, float], b: tuple[float, float, float]) -> float:
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def _over(rgba: tuple[float, float, float, float], under: tuple[float, float, float]) -> tuple[float, float, float]:
    alpha = rgba[3]
    return (
        rgba[0] * alpha + under[0] * (1 - alpha),
        rgba[1] * alpha + under[1] * (1 - alpha),
        rgba[2] * alpha + under[2] * (1 - alpha),
    )


def _font_px(value: str, parent: float) -> float:
    """The size in CSS pixels of a ``font-size`` value :data:`_FONT_SIZE` accepts, in an element
    whose parent's font is ``parent`` pixels."""
    if value in _KEYWORD_PX:
        return _KEYWORD_PX[value]
    if value in ("smaller", "larger"):
        return parent / 1.2 if value == "smaller" else parent * 1.2
    found = _SIZE.fullmatch(value)
    if found is None:  # not reached: _FONT_SIZE admits only the forms above
        return 0.0
    number, unit = float(found.group(1)), found.group(2)
    scale = {"px": 1.0, "pt": 4 / 3, "rem": PAGE_LOOK.font_px, "em": parent, "%": parent / 100}[unit]
    return number * scale


def _declarations(style: str) -> list[tuple[str, str]] | None:
    """(property, value) pairs, lowercased, ``!important`` dropped; None when unreadable."""
    if "\\" in style or "/*" in style:
        return None  # escapes and comments only obscure what a declaration says
    out = []
    for declaration in style.split(";"):
        name, colon, value = declaration.partition(":")
        name = name.strip(" \t\n\f\r").lower()
        if not name and not value.strip():
            continue
        if not colon:
            return None
        out.append((name, _IMPORTANT.sub("", _SPACE.sub(" ", value).strip(" ").lower())))
    return out


def presented(
    style: str, colour: str | None, bgcolor: str | None, inherited: Look, font_size: str | None = None
) -> Look | None:
    """How an element's text is shown (see :func:`readable`), or None when the element may be
    unseen with all it holds, whatever its colours.

    ``style`` is its ``style`` attribute, ``colour`` a ``<font color>``, ``bgcolor`` its
    ``bgcolor`` attribute (each empty or None when absent); ``inherited`` what it sits in;
    ``font_size`` the size a browser's own style sheet gives the element (``smaller`` for
    ``<small>``), used when ``style`` sets none. Of several declarations of one property, the one
    that shows least is weighed.
    """
    declarations = _declarations(style)
    if declarations is None:
        return None
    (text, background), opacity, font_px = inherited
    asked_text = [v for n, v in declarations if n == "color"]
    asked_background = [v for n, v in declarations if n in ("background", "background-color")]
    for name, value in declarations:
        if name in _COLOUR_PROPERTIES:
            continue
        allowed = _ALLOWED.get(name)
        if allowed is None and name.startswith(_PREFIXES):
            allowed = _ANY
        if allowed is None or not allowed.fullmatch(value):
            return None
    opacities = [float(v[:-1]) / 100 if v.endswith("%") else float(v) for n, v in declarations if n == "opacity"]
    opacity *= min(opacities, default=1.0)
    if opacity < MIN_OPACITY:
        return None
    sizes = [_font_px(v, font_px) for n, v in declarations if n == "font-size"]
    if not sizes and font_size is not None:
        sizes = [_font_px(font_size, font_px)]
    font_px = min(sizes, default=font_px)
    for value in ([bgcolor.strip().lower()] if bgcolor is not None else []) + asked_background:
        if value == "inherit":
            continue
        rgba = _colour(value)
        if rgba is None:
            return None  # an image, a gradient, a colour not read here
        background = _over(rgba, background)
    for value in ([colour.strip().lower()] if colour is not None else []) + asked_text:
        if value in ("inherit", "currentcolor"):
            continue
        rgba = _colour(value)
        if rgba is None or rgba[3] < 0.5:
            return None
        text = _over(rgba, background)
    return Look((text, background), opacity, font_px)


def readable(look: Look) -> bool:
    """Whether text shown so can be seen: a contrast of at least :data:`MIN_CONTRAST` between its
    colours, and a font of at least :data:`MIN_FONT_PX`."""
    return look.font_px >= MIN_FONT_PX and _contrast(*look.colours) >= MIN_CONTRAST
