"""Runnable examples: the conformance "everything" server and embedding drivers."""
