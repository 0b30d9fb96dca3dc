"""``python -m worker``: the Almanac worker (``almanac.worker``), the same as ``almanac worker``."""

from almanac.worker import main

if __name__ == "__main__":
    main()
