"""A zygote warm-up for the tests: it records the process that ran it, which workers inherit."""
import os

WARMED_IN = None


def warm() -> None:
    global WARMED_IN
    WARMED_IN = os.getpid()


def warmed_in() -> "tuple[int | None, int, int]":
    """(the pid the warm-up ran in, this worker's pid, this worker's niceness)."""
    return WARMED_IN, os.getpid(), os.nice(0)
