"""MCP over stdio: the server (`server`) and the client (`client`).

`server` serves this process's stdin and stdout (`serve_stdio`), `client` runs a server as a
subprocess (`open_stdio_client`); both read their pipe with `lines` and write it with
`pipes`.
"""
