"""jiasu.distributed: one process per GPU, bootstrapped like torchrun."""
from ._store import TCPStore  # noqa: F401
