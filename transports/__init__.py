"""Trio drivers for mcpcore: stdio, Streamable HTTP (h11) and WebSocket (wsproto).

Needs the ``trio`` extra (``pip install 'mcpcore[trio]'``). The drivers only move
bytes: every protocol decision is made by `mcpcore.Connection`.
"""
