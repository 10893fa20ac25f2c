"""Sub-command groups of the ``publisher`` command line."""
