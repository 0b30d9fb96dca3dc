"""Almanac's control plane: the ``almanac`` command line, settings and the Python client."""
