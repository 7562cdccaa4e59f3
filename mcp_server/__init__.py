"""The MCP server at ``/mcp`` (Model Context Protocol, the official ``mcp`` SDK): the user's
memory for any MCP client, opened by a personal API key. ``endpoint`` is the ASGI app (the key,
the SDK's session manager), ``tools`` the tools, ``memories`` what they do."""
