"""Ways to run the catalog as a cluster: a local launcher and production manifests.

``deploy.local_cluster`` starts a 3-member etcd cluster and N ``catalog serve`` processes on
loopback ports (for development and the chaos tests). The Dockerfile, ``docker-compose.yml``
and ``k8s/`` manifests beside it describe the same topology for real machines.

It may import ``updatelog`` (to start etcd) and ``api`` (only through the ``catalog`` command
line, in child processes); nothing imports ``deploy``.
"""
