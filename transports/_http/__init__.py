"""Streamable HTTP (and 2024-11-05 HTTP+SSE): `server` (`serve_http`) and `client`."""
