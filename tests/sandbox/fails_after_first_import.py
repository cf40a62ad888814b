"""A preload module that imports once (in the zygote) and fails in every later interpreter.

The marker file is named by the environment variable SANDBOX_TEST_MARKER.
"""
import os

_marker = os.environ["SANDBOX_TEST_MARKER"]
if os.path.exists(_marker):
    raise RuntimeError("broken on purpose: this module imports only once")
with open(_marker, "w") as _handle:
    _handle.write("imported once")
