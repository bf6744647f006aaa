"""The Communicator class and the collectives of the default communicator (made by init()). The work is done by
the C++ core (core/distributed); this layer keeps the default communicator and names the arguments."""
import contextlib

from .. import _core

_native = _core.distributed


class Communicator:
    """One rank's membership of a group of processes, one GPU each (an NCCL communicator). Collectives are
    queued on ``stream`` (None: the default stream, in order with other jiasu work) and return at once; a
    collective that does not finish within ``timeout`` seconds, or an NCCL error, aborts the communicator, and
    every later call raises that error (jiasu.DistributedTimeoutError / jiasu.DistributedError)."""

    __slots__ = ("_comm",)

    def __init__(self, native):
        self._comm = native

    rank = property(lambda self: self._comm.rank, doc="This process's rank in the communicator.")
    world_size = property(lambda self: self._comm.world_size, doc="The number of ranks.")
    device = property(lambda self: self._comm.device, doc="The GPU ordinal this rank uses.")
    timeout = property(lambda self: self._comm.timeout, doc="Seconds a collective may take before it fails.")

    def __repr__(self):
        state = "alive" if self._comm.alive else "closed"
        return f"<jiasu.distributed.Communicator rank {self.rank} of {self.world_size} on GPU {self.device}, {state}>"

    def all_reduce(self, x, op="sum", out=None, *, stream=None):
        """Reduces x over all ranks (op: 'sum', 'prod', 'max', 'min' or 'avg') into out, or into x itself."""
        return self._comm.all_reduce(x, op, out, stream)

    def broadcast(self, x, root=0, *, stream=None):
        """Copies root's x into x on every rank."""
        return self._comm.broadcast(x, root, stream)

    def reduce(self, x, root=0, op="sum", out=None, *, stream=None):
        """Reduces x over all ranks into root's out (or x); other ranks' out is left as it was."""
        return self._comm.reduce(x, root, op, out, stream)

    def all_gather(self, x, out=None, *, stream=None):
        """Every rank's x stacked by rank: shape (world_size, *x.shape)."""
        return self._comm.all_gather(x, out, stream)

    def reduce_scatter(self, x, op="sum", out=None, *, stream=None):
        """x reduced over all ranks, then split by rows: rank r gets rows [r*n, (r+1)*n), n = x.shape[0] // world_size."""
        return self._comm.reduce_scatter(x, op, out, stream)

    def all_to_all(self, x, out=None, *, stream=None):
        """Rank r's i-th block of rows goes to rank i, as its r-th block (x.shape[0] divisible by world_size)."""
        return self._comm.all_to_all(x, out, stream)

    def send(self, x, peer, *, stream=None):
        """Sends x to rank peer, which receives it with recv()."""
        return self._comm.send(x, peer, stream)

    def recv(self, x, peer, *, stream=None):
        """Receives into x what rank peer sent."""
        return self._comm.recv(x, peer, stream)

    def barrier(self, *, stream=None):
        """Waits until every rank has reached the barrier and this rank's queued work has finished."""
        self._comm.barrier(stream)

    def synchronize(self):
        """Waits (polling, Ctrl-C ends it) for this rank's queued collectives; raises if the communicator failed."""
        self._comm.synchronize()

    wait = synchronize

    def split(self, color, key=None):
        """A new communicator of the ranks passing the same color, ordered by key (default: rank); every rank
        must call it. A negative color leaves this rank out and returns None."""
        child = self._comm.split(color, self.rank if key is None else key)
        return None if child is None else Communicator(child)

    def abort(self):
        """Stops this rank's part at once: queued work is dropped and later calls raise."""
        self._comm.abort()

    def destroy(self):
        """Waits for queued work, then frees the communicator; later calls raise."""
        self._comm.destroy()


@contextlib.contextmanager
def group():
    """Collectives inside the block (on any communicator) are issued together (ncclGroupStart/ncclGroupEnd),
    e.g. sends and receives that would otherwise wait for each other."""
    _native.group_start()
    try:
        yield
    finally:
        _native.group_end()
