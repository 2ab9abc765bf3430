"""MCP over stdio: the servers (`server`, `asyncio_server`) and the client (`client`).

`server` serves this process's stdin and stdout under trio (`serve_stdio`),
`asyncio_server` under asyncio (`serve_stdio_asyncio`); both are `serving` with their
own descriptor streams. `client` runs a server as a subprocess (`open_stdio_client`).
All read their pipe with `lines` and write it with `pipes`.
"""
