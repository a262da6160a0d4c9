"""What a run keeps on disk: atomic writes, the run store, overlays and patches, lock files."""
