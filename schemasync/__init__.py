"""Time for the catalog: the hybrid logical clock, delay/skew settings, safe time, schema sync.

May import: updatelog (for the safe-time key). Never imports catalog, api or spark.
"""
