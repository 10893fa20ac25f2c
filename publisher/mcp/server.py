"""The MCP server over the allow-listed tools (official SDK, stdio transport).

Each :class:`~publisher.mcp.tools.ToolSpec` becomes one MCP tool whose input schema is the
function's signature without the workspace (the SDK validates arguments against it before the
tool runs); a :class:`~publisher.mcp.tools.ToolProblem` becomes a tool error (``is_error``) with
its one line, and any other exception the SDK's generic tool error, never a traceback.

Arguments are allow-listed too: a call naming an argument its tool does not take is a tool error
naming it (the SDK alone would drop it silently, so a misspelt ``end`` would read to the end of a
source), and every listed input schema says ``additionalProperties: false``.

The server reads stdin itself (:mod:`.transport`): the SDK's stdio transport is given only the
lines its parser reads as what they mean, and every other line (too long, not JSON, no JSON-RPC
message, an id that is not a string or an integer) is answered with one JSON-RPC error, never
dropped unanswered.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.stdio import stdio_server
from mcp.types import Tool as MCPTool
from mcp.types import ToolAnnotations

from .. import __version__
from ..acquire.signing import Signer
from .tools import TOOLS, ToolProblem, ToolSpec, Workspace
from .transport import Lines, claimed_stdin

__all__ = ["build_server", "serve", "INSTRUCTIONS"]

INSTRUCTIONS = (
    "Evidence tools over verified snapshots. Find what to cite with find_spans or locate_quote, read "
    "around it with read_source, and check a span with check_span before you cite it: only offsets the "
    "gate re-slices count, a quote is never evidence. For claims: run_document_review searches a source "
    "for a claim's terms, validate_evidence_assessment proposes a status (every attempt is logged; admitted "
    "means structurally admissible, not adjudicated; on a wiki that trusts signing keys it writes only when "
    "the server was started with one, and otherwise answers what would be admitted, written: false), "
    "build_evidence_matrix shows every claim, list_claims_awaiting_review the claims no person has "
    "independently reviewed yet. No tool fetches, registers, writes evidence, missingness records or "
    "warrants, or declares a surface complete."
)


def _parameters(spec: ToolSpec) -> tuple[str, ...]:
    """The argument names ``spec``'s tool takes: its function's parameters less the workspace."""
    return tuple(inspect.signature(spec.function).parameters)[1:]


class _StrictServer(MCPServer):
    """An :class:`MCPServer` whose tools refuse an argument they do not take instead of dropping it."""

    def __init__(self, *args: Any, allowed: dict[str, tuple[str, ...]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._allowed = allowed

    async def list_tools(self) -> list[MCPTool]:
        tools = await super().list_tools()
        return [t.model_copy(update={"input_schema": {**t.input_schema, "additionalProperties": False}}) for t in tools]

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None) -> Any:
        takes = self._allowed.get(name)
        if takes is not None and isinstance(arguments, dict):
            unknown = sorted(str(key) for key in arguments if key not in takes)
            if unknown:
                shown = ", ".join(repr(key[:40]) for key in unknown[:5]) + (", …" if len(unknown) > 5 else "")
                raise ToolError(f"{name} takes no argument {shown}; its arguments are: {', '.join(takes) or '(none)'}")
        return await super().call_tool(name, arguments, context)


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


def build_server(wiki: Path, run_dir: Path | None = None, signer: Signer | None = None) -> MCPServer:
    """An MCP server with exactly the tools of :data:`~publisher.mcp.tools.TOOLS`. ``signer``: the
    key the person running it gave (``--key``); on a wiki that trusts keys, assessments are written
    only with it (see :func:`~publisher.mcp.tools.validate_evidence_assessment`)."""
    ws = Workspace(Path(wiki), Path(run_dir) if run_dir is not None else None, signer)
    server: MCPServer = _StrictServer(
        "evidence-publisher",
        version=__version__,
        instructions=INSTRUCTIONS,
        log_level="WARNING",
        allowed={spec.name: _parameters(spec) for spec in TOOLS},
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


async def _serve_stdio(server: MCPServer) -> None:
    """What ``server.run("stdio")`` does, with stdin read by :class:`~.transport.Lines`."""
    lowlevel = server._lowlevel_server
    with claimed_stdin() as wire:
        lines = Lines(wire)  # the transport only iterates its stdin, as Lines is iterated
        async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
            lines.answer_on(write_stream)
            await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())


def serve(wiki: Path, run_dir: Path | None = None, signer: Signer | None = None) -> None:
    """Serve the tools on stdin/stdout until the client closes the connection."""
    anyio.run(_serve_stdio, build_server(wiki, run_dir, signer))
