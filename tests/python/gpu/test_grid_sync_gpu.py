"""Grid sync on a GPU (cuda.cg.this_grid().sync()): a cooperative launch of as many blocks as the device holds
at once, several per multiprocessor, whose threads read after each barrier what other blocks wrote before it;
the occupancy answer of max_cooperative_grid_blocks; a grid larger than that refused instead of hanging; and
repeat launches (the barrier's counter is reused without a reset)."""
import numpy as np
import pytest

import jiasu

from kernels.grid_sync_kernels import reverse_rounds, reversed_rounds
from kernels.kernels_support import assert_same, poisoned

pytestmark = pytest.mark.gpu


def test_a_full_cooperative_grid_of_several_blocks_per_multiprocessor():
    threads, rounds = 128, 9
    reverse_rounds.specialize(jiasu.zeros(1, np.int64), jiasu.zeros(1, np.int64), rounds)
    blocks = reverse_rounds.max_cooperative_grid_blocks(threads)
    assert blocks >= 2 * jiasu.get_device().multiprocessor_count
    assert reverse_rounds.max_cooperative_grid_blocks((8, 16)) == blocks
    n = blocks * threads
    a = jiasu.zeros(n, np.int64)
    for launch in range(3):  # the module's barrier counter serves launch after launch
        out = poisoned(n, np.int64)
        reverse_rounds[blocks, threads](a, out, rounds + launch)
        assert_same(out, reversed_rounds(n, rounds + launch))


def test_a_grid_larger_than_the_device_holds_is_refused():
    reverse_rounds.specialize(jiasu.zeros(1, np.int64), jiasu.zeros(1, np.int64), 1)
    most = reverse_rounds.max_cooperative_grid_blocks(256)
    assert most > 0
    n = (most + 1) * 256
    with pytest.raises(jiasu.LaunchError, match=f"a grid of {most + 1} blocks is more than the {most} blocks of 256 "
                                                "threads that .* holds at once") as raised:
        reverse_rounds[most + 1, 256](jiasu.zeros(n, np.int64), jiasu.zeros(n, np.int64), 1)
    assert raised.value.name == "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE"
    out = poisoned(most * 256, np.int64)  # the device is fine, and the largest grid runs
    reverse_rounds[most, 256](jiasu.zeros(most * 256, np.int64), out, 1)
    assert_same(out, reversed_rounds(most * 256, 1))
