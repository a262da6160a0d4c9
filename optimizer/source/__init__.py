"""Source patches: a candidate's texts rewritten where they stand in the server's own Python or TypeScript code.
`source_patch` is the entry point; `python.py` and `typescript.py` find the declarations, `sites.py` holds what
they report."""

from optimizer.source.patch import NAMESPACE_NOTE, SourcePatch, source_patch

__all__ = ["NAMESPACE_NOTE", "SourcePatch", "source_patch"]
