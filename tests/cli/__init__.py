"""Tests of mcpcore_cli: the mcpcore command and the folder server."""
