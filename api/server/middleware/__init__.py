"""ASGI middleware of the server: what runs around every request, before any route.

``host_check`` (loopback names only when auth is off), ``security_headers`` (CSP and
friends on every answer), ``limits`` (the request body limit and the request timeout).

May import: the server's ``errors``; nothing of the routes.
"""
