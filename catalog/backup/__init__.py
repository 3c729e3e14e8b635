"""Backups of a catalog and restores of one as a new cluster (``take``, ``restore``, ``file``)."""
