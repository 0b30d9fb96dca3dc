from almanac.cli.spec import app, main

__all__ = ["app", "main"]
