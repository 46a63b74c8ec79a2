"""What the ``negagraph`` commands print: each command's text and JSON, built from the
solver's and the database's results, apart from the commands (:mod:`api.commands`) that
parse the arguments and do the work. Nothing here reads arguments or touches a database.
"""
