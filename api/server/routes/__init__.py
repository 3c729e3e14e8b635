"""REST routes, one module per resource: ddl, catalog reads, versions, events, operations.

May import: the rest of api.server, api.wire, api.sql, catalog, schemasync, updatelog.
Nothing but ``api.server.app`` imports them.
"""
