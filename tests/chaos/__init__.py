"""Chaos tests: a real cluster (etcd members and catalog processes), faults, a history check."""
