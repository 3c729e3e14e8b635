"""What travels between the server and the client: bodies, roles and error codes.

``models`` (the JSON shapes of the REST API's requests and answers), ``roles`` (what a
token may do) and ``codes`` (every stable error code, defined once with its HTTP status, its
Iceberg REST exception type and the client's exception class).

May import: pydantic and the catalog's model modules (``codes`` and ``roles``: the standard
library only). Never the server, the client or FastAPI: both sides import this.
"""
