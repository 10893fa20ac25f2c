"""The MCP server over the allow-listed tools (official SDK, stdio transport).

Each :class:`~publisher.mcp.tools.ToolSpec` becomes one MCP tool whose input schema is the
function's signature without the workspace (the SDK validates arguments against it before the
tool runs); a :class:`~publisher.mcp.tools.ToolProblem` becomes a tool error (``is_error``) with
its one line, and any other exception the SDK's generic tool error, never a traceback.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

from .. import __version__
from .tools import TOOLS, ToolProblem, ToolSpec, Workspace

__all__ = ["build_server", "serve", "INSTRUCTIONS"]

INSTRUCTIONS = (
    "Evidence tools over verified snapshots. Find what to cite with find_spans or locate_quote, read "
    "around it with read_source, and check a span with check_span before you cite it: only offsets the "
    "gate re-slices count, a quote is never evidence. For claims: run_document_review searches a source "
    "for a claim's terms, validate_evidence_assessment proposes a status (every attempt is logged; admitted "
    "means structurally admissible, not adjudicated), build_evidence_matrix shows every claim. No tool "
    "fetches, registers, writes evidence or missingness records, or declares a surface complete."
)


def _adapt(spec: ToolSpec, ws: Workspace) -> Callable[..., dict[str, Any]]:
    """``spec.function`` with the workspace bound and its signature (less the workspace) kept."""
    signature = inspect.signature(spec.function, eval_str=True)
    parameters = list(signature.parameters.values())[1:]

    def call(**arguments: Any) -> dict[str, Any]:
        try:
            return spec.function(ws, **arguments)
        except ToolProblem as exc:
            raise ToolError(str(exc)) from None

    call.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    call.__name__ = spec.name
    call.__doc__ = spec.function.__doc__
    return call


def build_server(wiki: Path, run_dir: Path | None = None) -> MCPServer:
    """An MCP server with exactly the tools of :data:`~publisher.mcp.tools.TOOLS`."""
    ws = Workspace(Path(wiki), Path(run_dir) if run_dir is not None else None)
    server: MCPServer = MCPServer(
        "evidence-publisher", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING"
    )
    for spec in TOOLS:
        hints = ToolAnnotations(
            read_only_hint=not spec.writes, destructive_hint=False, idempotent_hint=True, open_world_hint=False
        )
        server.add_tool(
            _adapt(spec, ws),
            name=spec.name,
            description=inspect.cleandoc(spec.function.__doc__ or spec.name),
            annotations=hints,
            structured_output=True,
        )
    return server


def serve(wiki: Path, run_dir: Path | None = None) -> None:
    """Serve the tools on stdin/stdout until the client closes the connection."""
    build_server(wiki, run_dir).run("stdio")
