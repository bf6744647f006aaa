"""The rendezvous store (jiasu._core.TCPStore, written in C++) and how ranks find it from torchrun's variables."""
import os

from .. import _core

TCPStore = _core.TCPStore


def _variable(name, default=None):
    value = os.environ.get(name, default)
    if value is None:
        raise ValueError(f"{name} is not set: start the program with `python -m jiasu.launch --nproc-per-node N` or "
                         f"torchrun, or set RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT")
    return value


def store_from_environment(rank, world_size, timeout=None):
    """The store at MASTER_ADDR:MASTER_PORT, served by rank 0."""
    host = _variable("MASTER_ADDR", "127.0.0.1")
    text = _variable("MASTER_PORT")
    try:
        port = int(text)
    except ValueError:
        raise ValueError(f"MASTER_PORT must be a port number, not {text!r}") from None
    return TCPStore(host, port, world_size=world_size, is_master=rank == 0, timeout=timeout)
