"""The server's LSP handlers, one module per group of requests and notifications (as ruff_server's ``api``).

Each module has a ``register(server)`` that adds its features to the pygls
server; the handlers work on the server's ``Session``.
"""
