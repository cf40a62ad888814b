"""The execution layer's tests run on the groups tests' adapters (numpy, torch when installed, a
fake library backed by numpy) and one sandbox pool of them."""
from tests.groups.conftest import adapters, pool  # noqa: F401  (fixtures)
