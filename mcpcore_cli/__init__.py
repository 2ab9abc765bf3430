"""The ``mcpcore`` command and the applications it runs.

`cli` is the command line (``mcpcore serve``, ``mcpcore bench``); `folder` is the folder
server ``mcpcore serve`` runs, usable from Python too (`mcpcore_cli.folder.serve_folder`).
It builds on `transports`, which builds on `mcpcore`; nothing below imports it.
"""
