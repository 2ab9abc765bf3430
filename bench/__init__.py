"""mcpcore's benchmarks: ``python -m bench`` (see bench/README.md).

Every layer measures mcpcore side by side with the official SDK and with plain JSON
libraries on the same bytes, variants interleaved, medians of several repetitions.
"""
