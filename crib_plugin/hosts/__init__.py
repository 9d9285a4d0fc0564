"""Layer 9, the hosts: the ``crib`` command, Claude Code hooks, the MCP server, display, and
the admin tools (doctor, calibrate, bytecode, progress)."""
