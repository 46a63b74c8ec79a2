"""The ``negagraph`` commands, a module each: they parse their arguments, call the
solver and the database, and hand what they get to :mod:`api.console` to print.
:mod:`api.cli` gathers them into the command group."""
