"""``python -m xamt.catalog --worker LIB --result FILE``: the mining worker that
:func:`xamt.catalog.worker.mine_in_child` starts (one child interpreter per library)."""
import sys

from xamt.catalog.worker import main

if __name__ == "__main__":
    sys.exit(main())
