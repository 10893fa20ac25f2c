"""The agents' tool server: the Model Context Protocol on stdio (``publisher mcp``).

:mod:`.tools` holds the tools as plain functions and :data:`.tools.TOOLS`, the allow-list;
:mod:`.server` adapts them to the official MCP SDK, and :mod:`.transport` reads stdin for it (one
bounded line per message; a malformed one answered with a JSON-RPC error): the only modules of the
library that import the SDK.
The boundary is the list itself: every tool reads and checks, none acquires a source, registers
text, or writes a snapshot, an event, a result or a missingness record (see ``docs/agents.md``).
"""
