"""Files of ``docs/`` that MkDocs copies as they are: allow-listed by type, or refused with their path.

A file published byte for byte skips the prose check and, opened on its own, the page policy:
an HTML, XHTML or XML document (``.xml .xhtml .xht .shtml`` ...) runs its own script, and a
``.js`` of the author's could be started by a script the site ships. So only inert types are
copied (check ``C-PROSE``):

* raster images (``.png .jpg .jpeg .gif .webp .avif .ico .bmp``), PDF and fonts
  (``.woff .woff2 .ttf .otf``), each only when its first bytes are those of its type (a page
  named ``x.png`` is not an image);
* CSS only when ``mkdocs.yml`` names it in ``extra_css`` (the site's own stylesheet);
* JavaScript (``.js .mjs``) only when ``mkdocs.yml`` names it as a script (``extra_javascript``,
  ``extra: polyfills``), and only when its bytes are JavaScript text and nothing else
  (:func:`script_problem`): UTF-8 without binary bytes, not starting like an inert type or a
  markup document (a font whose first bytes also parse as JavaScript is no script);
* SVG only after an XML-namespace-aware allow-list (:func:`svg_problems`): the file is parsed
  as XML (lxml: no DTD, no entities, no network), every element must be an SVG element of
  :data:`SVG_ELEMENTS` in the SVG namespace (a namespace-prefixed ``<s:script>`` or an XHTML
  element is refused), every attribute one of :data:`SVG_ATTRIBUTES` (or ``xml:space``/``xml:lang``,
  ``xlink:href``/``href`` to a fragment of the same file), and no value loads anything: a
  ``url()`` only to ``#fragment``, no other function than those of :data:`SVG_FUNCTIONS`
  (``image-set('https://...')`` takes its URL as a plain string), no CSS escape or comment; no
  processing instruction, no style element, no animation.

Anything else (another ``.js``, ``.html``, ``.xml``, a file without a suffix ...) is refused with its path,
and so is any file of ``docs/``, a page too, that links to a file outside it (:func:`check_inside`).
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from lxml import etree

from ...kernel import _fs
from ...kernel.checkids import CheckId
from ...kernel.findings import Finding

__all__ = [
    "CHECK",
    "RASTER",
    "INERT_TYPES",
    "SCRIPT_TYPES",
    "SVG_ELEMENTS",
    "SVG_ATTRIBUTES",
    "SVG_FUNCTIONS",
    "check_static",
    "check_inside",
    "svg_problems",
    "script_problem",
]

CHECK = CheckId.PAGE_PROSE

RASTER = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".avif", ".ico", ".bmp")

_MAGIC: dict[str, tuple[bytes, ...]] = {
    ".png": (b"\x89PNG\r\n\x1a\n",),
    ".jpg": (b"\xff\xd8\xff",),
    ".jpeg": (b"\xff\xd8\xff",),
    ".gif": (b"GIF87a", b"GIF89a"),
    ".ico": (b"\x00\x00\x01\x00",),
    ".bmp": (b"BM",),
    ".pdf": (b"%PDF-",),
    ".woff": (b"wOFF",),
    ".woff2": (b"wOF2",),
    ".ttf": (b"\x00\x01\x00\x00", b"true"),
    ".otf": (b"OTTO",),
}
INERT_TYPES = frozenset({*RASTER, ".pdf", ".woff", ".woff2", ".ttf", ".otf"})
"""Suffixes published as they are, once their first bytes match the type."""

SCRIPT_TYPES = (".js", ".mjs")
"""Suffixes of a script the configuration may name."""

_BINARY = frozenset(range(0x20)) - {0x09, 0x0A, 0x0C, 0x0D}

_SVG = "http://www.w3.org/2000/svg"
_XLINK = "http://www.w3.org/1999/xlink"
_XML = "http://www.w3.org/XML/1998/namespace"
_LIMIT = 16 << 20

SVG_ELEMENTS = frozenset(
    "svg g defs symbol use title desc path rect circle ellipse line polyline polygon text tspan textPath "
    "linearGradient radialGradient stop pattern clipPath mask marker filter feBlend feColorMatrix "
    "feComponentTransfer feComposite feConvolveMatrix feDiffuseLighting feDisplacementMap feDistantLight "
    "feDropShadow feFlood feFuncA feFuncB feFuncG feFuncR feGaussianBlur feMerge feMergeNode feMorphology "
    "feOffset fePointLight feSpecularLighting feSpotLight feTile feTurbulence".split()
)
"""SVG elements that draw; not here: ``script``, ``foreignObject``, ``a``, ``image``, ``style``,
the animation elements (which can rewrite a link) and anything of another namespace."""

SVG_ATTRIBUTES = frozenset(
    "id class style width height viewBox preserveAspectRatio version baseProfile x y x1 y1 x2 y2 cx cy r rx ry "
    "d points pathLength transform fill fill-opacity fill-rule stroke stroke-width stroke-linecap "
    "stroke-linejoin stroke-miterlimit stroke-dasharray stroke-dashoffset stroke-opacity opacity color "
    "display visibility overflow clip-path clip-rule clipPathUnits mask maskUnits maskContentUnits "
    "filter filterUnits primitiveUnits font-family font-size font-style font-weight font-variant "
    "text-anchor dominant-baseline alignment-baseline baseline-shift letter-spacing word-spacing "
    "text-decoration writing-mode dx dy rotate textLength lengthAdjust startOffset method spacing "
    "gradientUnits gradientTransform spreadMethod fx fy fr offset stop-color stop-opacity "
    "patternUnits patternContentUnits patternTransform markerWidth markerHeight markerUnits refX refY "
    "orient marker-start marker-mid marker-end vector-effect shape-rendering text-rendering "
    "image-rendering color-interpolation color-interpolation-filters flood-color flood-opacity "
    "lighting-color in in2 result mode values type tableValues slope intercept amplitude exponent "
    "operator k1 k2 k3 k4 stdDeviation edgeMode kernelMatrix order divisor bias targetX targetY "
    "preserveAlpha surfaceScale diffuseConstant specularConstant specularExponent kernelUnitLength "
    "scale xChannelSelector yChannelSelector azimuth elevation pointsAtX pointsAtY pointsAtZ "
    "limitingConeAngle z radius baseFrequency numOctaves seed stitchTiles role aria-label "
    "aria-hidden focusable".split()
)
"""Attributes without a namespace an SVG may carry (every event handler is outside)."""

_URL = re.compile(r"url\s*\(", re.IGNORECASE)
_LOCAL_URL = re.compile(r"url\s*\(\s*['\"]?#", re.IGNORECASE)
_FUNCTION = re.compile(r"([A-Za-z0-9_-]*)\s*\(")

SVG_FUNCTIONS = frozenset(
    "url rgb rgba hsl hsla hwb calc min max clamp var matrix translate translatex translatey scale scalex "
    "scaley rotate skewx skewy".split()
)
"""CSS and SVG functions a value may call (case-insensitive; ``url()`` only to a ``#fragment``):
colours, arithmetic and transforms. Not here: ``image-set()``, ``cross-fade()``, ``image()``,
``element()``, ``src()`` and every other function that takes a URL, even as a plain string."""


def svg_problems(data: bytes) -> list[str]:
    """Everything in an SVG file outside the namespace-aware allow-list (empty: publishable)."""
    if data[:2] == b"\x1f\x8b":
        return ["a compressed SVG cannot be checked; publish it uncompressed"]
    parser = etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, dtd_validation=False, huge_tree=False
    )
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        return [f"not well-formed XML ({exc.msg})"]
    problems: list[str] = []
    tree = root.getroottree()
    if tree.docinfo.doctype or tree.docinfo.internalDTD is not None:
        problems.append("a document type declaration (entities, external subsets)")
    if any(isinstance(n, etree._ProcessingInstruction) for n in root.itersiblings(preceding=True)):
        problems.append("a processing instruction (a style sheet)")
    if root.tag != f"{{{_SVG}}}svg":
        problems.append(f"a root element {root.tag} that is not <svg> in the SVG namespace")
    for node in root.iter():
        if isinstance(node, etree._ProcessingInstruction):
            problems.append("a processing instruction")
            continue
        if isinstance(node, etree._Entity):
            problems.append(f"an entity reference &{node.name};")
            continue
        if not isinstance(node.tag, str):
            continue  # comments
        qname = etree.QName(node)
        if qname.namespace != _SVG or qname.localname not in SVG_ELEMENTS:
            where = f" of namespace {qname.namespace}" if qname.namespace != _SVG else ""
            problems.append(f"element <{qname.localname}>{where} outside the allow-list")
            continue
        for name, value in node.attrib.items():
            problems += _svg_attribute(qname.localname, etree.QName(name), value)
    return list(dict.fromkeys(problems))


def _svg_attribute(tag: str, name: etree.QName, value: str) -> list[str]:
    local, space = name.localname, name.namespace
    if (space == _XLINK and local == "href") or (space is None and local == "href"):
        if tag in ("use", "linearGradient", "radialGradient", "pattern", "textPath", "filter") and value.startswith(
            "#"
        ):
            return []
        return [f"<{tag} href> to {value[:40]!r}: only a fragment of the same file"]
    if space == _XML and local in ("space", "lang"):
        return []
    if space is not None or local not in SVG_ATTRIBUTES:
        return [f"attribute {local}{' of namespace ' + space if space else ''} on <{tag}> outside the allow-list"]
    if "\\" in value or "/*" in value or "@import" in value.lower():
        return [f"<{tag} {local}> holds a CSS escape, comment or @import"]
    if len(_URL.findall(value)) != len(_LOCAL_URL.findall(value)):
        return [f"<{tag} {local}> loads something: only url(#fragment) is allowed"]
    called = sorted({name for name in _FUNCTION.findall(value) if name and name.lower() not in SVG_FUNCTIONS})
    if called:
        return [f"<{tag} {local}> calls {called[0][:40]}(): only colour, arithmetic and transform functions"]
    return []


def check_inside(file: str, path: Path, docs: Path) -> list[Finding]:
    """A finding when ``path``, a file of ``docs`` (a page too), is a link (or lies in a linked
    folder) to a file outside ``docs``: MkDocs publishes what it points to, so the PDF library,
    the keys or any file of the machine would be published under a name of docs/."""
    try:
        inside = path.resolve(strict=True).is_relative_to(docs.resolve(strict=True))
    except (OSError, RuntimeError):  # a dangling or looping link
        inside = False
    if inside:
        return []
    return [Finding(None, file, "a link to a file outside docs/; not published", check=CHECK)]


def _inert_kind(data: bytes) -> str | None:
    """The inert type whose first bytes ``data`` starts with, if any."""
    for suffix, magics in _MAGIC.items():
        if data.startswith(magics):
            return suffix
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return ".webp"
    if data[4:8] == b"ftyp":
        return ".avif"
    return None


def script_problem(data: bytes) -> str | None:
    """Why ``data``, named as a script, is not JavaScript text alone (None: it is).

    A browser runs whatever parses as JavaScript from a file a page names as a script, whatever
    its type: a font or image whose first bytes are also a statement would be a script that
    passed as an inert file. So a script's bytes must be UTF-8 text without binary bytes, and
    must not start like an inert type or like markup (an SVG, XML or HTML document).
    """
    kind = _inert_kind(data)
    if kind is not None:
        return f"its bytes are also a {kind} file"
    if data.lstrip(b"\xef\xbb\xbf \t\r\n\f").startswith(b"<"):
        return "its bytes are markup (an SVG, XML or HTML document), not JavaScript"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return "its bytes are not UTF-8 text"
    if not _BINARY.isdisjoint(data):
        return "its bytes hold binary data, not JavaScript text"
    return None


def check_static(
    file: str,
    path: Path,
    *,
    own_css: frozenset[str] = frozenset(),
    own_js: frozenset[str] = frozenset(),
    dest: str = "",
) -> list[Finding]:
    """Findings for a file of ``docs/`` published as it is: ``file`` names it (relative to the
    wiki), ``dest`` is its path in the site (POSIX), ``own_css`` the stylesheets ``extra_css``
    names, ``own_js`` the scripts the configuration names."""
    suffix = PurePosixPath(path.name.lower()).suffix
    if suffix == ".css":
        if dest in own_css:
            return []
        return [Finding(None, file, "a stylesheet the site does not name in extra_css", check=CHECK)]
    if suffix in SCRIPT_TYPES and dest in own_js:
        try:
            problem = script_problem(_fs.read_regular(path, limit=_LIMIT))
        except OSError as exc:
            return [Finding(None, file, f"unreadable ({exc.strerror or exc})", check=CHECK)]
        if problem is None:
            return []
        return [Finding(None, file, f"a script named in mkdocs.yml, but {problem}", check=CHECK)]
    if suffix not in INERT_TYPES and suffix != ".svg":
        kind = f"a {suffix} file" if suffix else "a file without a type"
        detail = f"{kind} is not an inert type (raster image, PDF, font, SVG, the site's own CSS); not published"
        return [Finding(None, file, detail, check=CHECK)]
    try:
        data = _fs.read_regular(path, limit=_LIMIT)
    except OSError as exc:
        return [Finding(None, file, f"unreadable ({exc.strerror or exc})", check=CHECK)]
    if suffix == ".svg":
        return [Finding(None, file, f"SVG with {p}", check=CHECK) for p in svg_problems(data)]
    if suffix == ".webp":
        ok = data[:4] == b"RIFF" and data[8:12] == b"WEBP"
    elif suffix == ".avif":
        ok = data[4:8] == b"ftyp" and data[8:12] in (b"avif", b"avis")
    else:
        ok = data.startswith(_MAGIC[suffix])
    if ok:
        return []
    return [Finding(None, file, f"its bytes are not those of a {suffix} file", check=CHECK)]
