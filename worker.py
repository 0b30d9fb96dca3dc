"""``python -m worker``: the Almanac worker, the same command as ``almanac worker``.

The worker itself is ``almanac.worker``; its command line is ``almanac.cli.worker``.
"""

from almanac.cli.worker import main

if __name__ == "__main__":
    main()
