"""`transports.AsgiApp` under real ASGI servers and mounted in real frameworks (issue 17)."""
