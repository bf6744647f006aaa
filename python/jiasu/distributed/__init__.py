"""jiasu.distributed: collectives between processes, one GPU each, through NCCL (docs/distributed.md).

    import jiasu, jiasu.distributed as dist
    dist.init()                      # RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT, as torchrun sets
    x = jiasu.ones(1024, "float32")
    dist.all_reduce(x)               # in place, on the default stream

Start one process per GPU with ``python -m jiasu.launch --nproc-per-node N script.py``.
"""
import atexit
import os

from .. import _core
from ._collectives import Communicator, group
from ._store import TCPStore, store_from_environment

__all__ = ["Communicator", "TCPStore", "all_gather", "all_reduce", "all_to_all", "barrier", "broadcast", "destroy",
           "destroy_process_group", "get_rank", "get_world_size", "group", "init", "is_initialized", "recv",
           "reduce", "reduce_scatter", "send", "default_communicator"]

_default = None  # the Communicator made by init()
_inits = 0  # init() calls so far: each shares its id under a key of its own, as every rank counts the same
# The TCPStore init() made from the environment, kept for the process: closing rank 0's after destroy() would race a
# peer's next init(), which could reach the old store before it closed.
_own_store = None


def _env_int(name, given):
    if given is not None:
        return given
    value = os.environ.get(name)
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"the environment variable {name} must be an integer, not {value!r}") from None


def _exchange_id(rank, world_size, how, store, timeout):
    """The NCCL unique id, made by rank 0 and shared with the others."""
    global _own_store
    if world_size == 1:
        return _core.distributed.unique_id()
    if how == "torch":
        import torch.distributed
        box = [_core.distributed.unique_id() if rank == 0 else None]
        torch.distributed.broadcast_object_list(box, src=0)
        return box[0]
    if how == "mpi":
        from mpi4py import MPI
        return MPI.COMM_WORLD.bcast(_core.distributed.unique_id() if rank == 0 else None, root=0)
    if store is None:
        if _own_store is None:
            _own_store = store_from_environment(rank, world_size, timeout)
        store = _own_store
    key = f"jiasu/nccl/unique_id/{_inits}"  # a store passed again must not hand out the last init's id
    if rank == 0:
        unique_id = _core.distributed.unique_id()
        store.set(key, unique_id)
        return unique_id
    return bytes(store.get(key))


def _id_exchange(how):
    if how not in (None, "store", "torch", "mpi"):
        raise ValueError(f"id_exchange must be 'store', 'torch', 'mpi' or None (automatic), not {how!r}")
    if how is None:
        import sys
        torch_distributed = sys.modules.get("torch.distributed")
        if torch_distributed is not None and torch_distributed.is_available() and torch_distributed.is_initialized():
            return "torch"
        return "store"
    return how


def _debug_from_environment(debug):
    if debug is not None:
        return bool(debug)
    return os.environ.get("JIASU_DISTRIBUTED_DEBUG", "0") not in ("", "0")


def init(rank=None, world_size=None, device=None, *, timeout=300.0, store=None, id_exchange=None, debug=None):
    """Joins the default communicator: this process is ``rank`` of ``world_size`` (default: $RANK and
    $WORLD_SIZE, or a world of one), on GPU ``device`` (default: $LOCAL_RANK, else rank modulo the GPU count).
    Rank 0 makes NCCL's unique id and shares it through ``store`` (a TCPStore; default: one at $MASTER_ADDR:
    $MASTER_PORT), an initialised torch.distributed (id_exchange="torch", the default when it is initialised) or
    MPI (id_exchange="mpi", through mpi4py). ``timeout`` (seconds or a timedelta) bounds joining and every
    collective. ``debug`` (default: $JIASU_DISTRIBUTED_DEBUG=1) compares every collective's arguments across the
    ranks before it runs, and raises ValueError on all of them when they disagree."""
    global _default, _inits
    if _default is not None:
        raise RuntimeError("jiasu.distributed is already initialised; call destroy() first")
    rank = _env_int("RANK", rank)
    world_size = _env_int("WORLD_SIZE", world_size)
    if world_size is None:
        world_size = 1
    if rank is None:
        if world_size != 1:
            raise ValueError("rank is not given and $RANK is not set")
        rank = 0
    if hasattr(timeout, "total_seconds"):
        timeout = timeout.total_seconds()
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or not timeout > 0:
        raise ValueError(f"timeout must be a positive number of seconds, not {timeout!r}")
    if world_size < 1 or not 0 <= rank < world_size:
        raise ValueError(f"rank {rank} is outside a world of {world_size}")
    if device is None:
        local_rank = _env_int("LOCAL_RANK", None)
        count = _core.device_count()
        device = local_rank if local_rank is not None else rank % max(count, 1)
    _inits += 1
    unique_id = _exchange_id(rank, world_size, _id_exchange(id_exchange), store, float(timeout))
    _default = Communicator(_core.distributed.Communicator.create(unique_id, rank, world_size, device, float(timeout),
                                                                  _debug_from_environment(debug)))
    _core.set_device(device)
    return _default


def is_initialized():
    return _default is not None


def default_communicator():
    """The communicator made by init(); RuntimeError before."""
    if _default is None:
        raise RuntimeError("jiasu.distributed is not initialised: call jiasu.distributed.init() first")
    return _default


def get_rank():
    return default_communicator().rank


def get_world_size():
    return default_communicator().world_size


def destroy():
    """Waits for the default communicator's queued work and frees it; init() may be called again."""
    global _default
    if _default is not None:
        comm, _default = _default, None
        comm.destroy()


destroy_process_group = destroy


def all_reduce(x, op="sum", out=None, *, stream=None):
    return default_communicator().all_reduce(x, op, out, stream=stream)


def broadcast(x, root=0, *, stream=None):
    return default_communicator().broadcast(x, root, stream=stream)


def reduce(x, root=0, op="sum", out=None, *, stream=None):
    return default_communicator().reduce(x, root, op, out, stream=stream)


def all_gather(x, out=None, *, stream=None):
    return default_communicator().all_gather(x, out, stream=stream)


def reduce_scatter(x, op="sum", out=None, *, stream=None):
    return default_communicator().reduce_scatter(x, op, out, stream=stream)


def all_to_all(x, out=None, *, stream=None):
    return default_communicator().all_to_all(x, out, stream=stream)


def send(x, peer, *, stream=None):
    return default_communicator().send(x, peer, stream=stream)


def recv(x, peer, *, stream=None):
    return default_communicator().recv(x, peer, stream=stream)


def barrier(*, stream=None):
    default_communicator().barrier(stream=stream)


for _f in (all_reduce, broadcast, reduce, all_gather, reduce_scatter, all_to_all, send, recv, barrier):
    _f.__doc__ = f"{getattr(Communicator, _f.__name__).__doc__} (On the default communicator.)"


@atexit.register
def _at_exit():
    # Finish the default communicator's work, then stop the watchdog thread before the interpreter (and the CUDA
    # driver) go away; communicators still alive are aborted.
    global _own_store
    try:
        destroy()
    except Exception:  # noqa: BLE001  (a failed communicator was aborted already; exit goes on)
        pass
    finally:  # also after Ctrl-C in destroy()
        _core.distributed.shutdown()
        if _own_store is not None:
            _own_store, store = None, _own_store
            store.close()  # rank 0's waits (at most 10 s) for the other ranks to hang up
