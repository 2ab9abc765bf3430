"""The everything server's MCP endpoint mounted in host applications, as embedders do.

Issue 17: the app is "mountable in Starlette and FastAPI at any path prefix
(``root_path`` handled), beside ordinary routes, sharing the app's lifespan". Mounted
apps get no ASGI lifespan of their own, so each host enters the MCP app's
(`transports.AsgiApp.lifespan`), in both of the ways its docstring gives:

* `fastapi_app`: FastAPI, the endpoint mounted at ``/api`` (so at ``/api/mcp``) beside
  ``GET /health``; the host's own lifespan enters the MCP app's around its own work,
  hands ``{"mcp": "running"}`` to its requests as lifespan state (what ``/health``
  reports), and prints `STARTED` and `STOPPED` so that a test can see the shutdown;
* `starlette_app`: Starlette, mounted deeper at ``/v1/tools`` (``/v1/tools/mcp``),
  with ``lifespan=mcp.lifespan`` as it is;
* `fastapi_auth_app`: FastAPI with the endpoint at ``/api/mcp`` behind bearer tokens
  (`AUTH_TOKEN` passes) and an authorization server, so that it answers 401 with a
  ``resource_metadata`` challenge and serves the RFC 9728 metadata.

Served by uvicorn in the tests (`tests.asgi.servers`, from the repository's root):
``uvicorn tests.asgi.fastapi_app:fastapi_app``. Each app has its own `AsgiApp` (a
lifespan runs once at a time).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Final

import anyio
from fastapi import FastAPI, Request
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Mount, Route

from examples.everything import build_server
from transports import AsgiApp, BearerAuth, Principal

__all__ = [
    "AUTH_TOKEN",
    "HEALTH",
    "STARTED",
    "STOPPED",
    "fastapi_app",
    "fastapi_auth_app",
    "starlette_app",
]

#: Printed by the FastAPI host's lifespan once the MCP app's lifespan runs...
STARTED: Final = "host lifespan: the MCP app's lifespan is running"
#: ...and once it has ended without an error.
STOPPED: Final = "host lifespan: the MCP app's lifespan has ended"
#: What ``GET /health`` answers while the MCP app's lifespan runs.
HEALTH: Final = {"status": "ok", "mcp": "running"}

fastapi_mcp = AsgiApp(build_server(anyio.sleep))


@asynccontextmanager
async def _host_lifespan(app: FastAPI) -> AsyncIterator[dict[str, str]]:
    """The host's own lifespan, the MCP app's inside it."""
    async with fastapi_mcp.lifespan(app):
        print(STARTED, flush=True)
        yield {"mcp": "running"}
    print(STOPPED, flush=True)


fastapi_app = FastAPI(lifespan=_host_lifespan)


@fastapi_app.get("/health")
def health(request: Request) -> dict[str, str]:
    """An ordinary JSON route beside the mounted endpoint."""
    return {"status": "ok", "mcp": request.state.mcp}


fastapi_app.mount("/api", fastapi_mcp)

starlette_mcp = AsgiApp(build_server(anyio.sleep))


async def _starlette_health(request: Request) -> JSONResponse:
    return JSONResponse({"status": "ok", "mcp": "running"})


starlette_app = Starlette(
    routes=[Route("/health", _starlette_health), Mount("/v1/tools", app=starlette_mcp)],
    lifespan=starlette_mcp.lifespan,
)

#: The one token `fastapi_auth_app` accepts.
AUTH_TOKEN: Final = "good-token"


def _verify(token: str) -> Principal | None:
    return Principal("ada") if token == AUTH_TOKEN else None


fastapi_auth_mcp = AsgiApp(
    build_server(anyio.sleep),
    auth=BearerAuth(_verify, authorization_servers=["https://as.example"]),
)
fastapi_auth_app = FastAPI(lifespan=fastapi_auth_mcp.lifespan)
fastapi_auth_app.mount("/api", fastapi_auth_mcp)
