"""The everything server over stdio, run by plain asyncio: no trio anywhere.

`transports.serve_stdio_asyncio` is `transports.serve_stdio` for asyncio programs: the
same runtime (a reader that never runs user code, a task per request, cancellation,
bounded queues, stdout kept for the protocol), on asyncio's loop. The handlers of the
everything server sleep with `asyncio.sleep`.

    python examples/asyncio_stdio_server.py
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from examples.everything import build_server
from transports import serve_stdio_asyncio


def main() -> None:
    """Run the everything server on stdio until stdin ends."""
    asyncio.run(serve_stdio_asyncio(build_server(asyncio.sleep)))


if __name__ == "__main__":
    main()
