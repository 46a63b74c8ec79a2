"""negagraph's outer layer: the command line (``api.cli``) and, later, the HTTP API."""
