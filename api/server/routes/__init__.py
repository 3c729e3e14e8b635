"""REST routes, one module per resource: ddl, catalog reads, versions, events, operations."""
