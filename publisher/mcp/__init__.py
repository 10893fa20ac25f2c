"""The agents' tool server: the Model Context Protocol on stdio (``publisher mcp``).

:mod:`.tools` holds the tools as plain functions and :data:`.tools.TOOLS`, the allow-list;
:mod:`.server` adapts them to the official MCP SDK, the only module of the library that imports it.
The boundary is the list itself: every tool reads and checks, none acquires a source, registers
text, or writes a snapshot, an event, a result or a missingness record (see ``docs/agents.md``).
"""
