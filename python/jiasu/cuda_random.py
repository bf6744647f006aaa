"""Numba's ``cuda.random``: xoroshiro128+ random numbers, one generator state per thread.

The states are a structured array of ``xoroshiro128p_dtype`` records (two uint64 words each); the device
functions below are ordinary jiasu device functions that read and advance ``states[index]``. State ``i`` is
the seed's state advanced by ``subsequence_start + i`` jumps of 2**64 steps, so threads draw from
non-overlapping subsequences, as Numba's do. The generator is xoroshiro128+ (Blackman and Vigna) with the
rotations (55, 14, 36), and the seed is spread over the state with splitmix64.
"""
import math

import numpy as np

import jiasu

xoroshiro128p_dtype = np.dtype([("s0", np.uint64), ("s1", np.uint64)], align=True)



@jiasu.func
def rotl(x, k):
    return (x << k) | (x >> (64 - k))


@jiasu.func
def xoroshiro128p_next(states, index):
    """The next 64 random bits of thread `index`'s generator (its state advances)."""
    s0 = states[index].s0
    s1 = states[index].s1
    result = s0 + s1
    s1 ^= s0
    states[index].s0 = rotl(s0, np.uint64(55)) ^ s1 ^ (s1 << np.uint64(14))
    states[index].s1 = rotl(s1, np.uint64(36))
    return result


@jiasu.func
def xoroshiro128p_uniform_float64(states, index):
    """A float64 uniform in [0, 1): the top 53 bits of the next draw."""
    return np.float64(xoroshiro128p_next(states, index) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@jiasu.func
def xoroshiro128p_uniform_float32(states, index):
    """A float32 uniform in [0, 1): the top 24 bits of the next draw."""
    return np.float32(np.float64(xoroshiro128p_next(states, index) >> np.uint64(40)) * (1.0 / 16777216.0))


@jiasu.func
def xoroshiro128p_normal_float64(states, index):
    """A standard normal float64 (Box-Muller, one of the pair)."""
    u1 = xoroshiro128p_uniform_float64(states, index)
    u2 = xoroshiro128p_uniform_float64(states, index)
    return math.sqrt(-2.0 * math.log(1.0 - u1)) * math.cos(2.0 * math.pi * u2)  # 1 - u1 > 0: no log(0)


@jiasu.func
def xoroshiro128p_normal_float32(states, index):
    """A standard normal float32 (Box-Muller, one of the pair)."""
    u1 = xoroshiro128p_uniform_float32(states, index)
    u2 = xoroshiro128p_uniform_float32(states, index)
    return np.float32(math.sqrt(-2.0 * math.log(1.0 - u1)) * math.cos(2.0 * math.pi * u2))


@jiasu.kernel
def _seed_states(states, seed, subsequence_start):
    # One thread: each state is the one before jumped, which is sequential work.
    z = seed + np.uint64(0x9E3779B97F4A7C15)  # splitmix64 of the seed
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    states[0].s0 = z
    states[0].s1 = z
    for _ in range(subsequence_start):
        _jump(states)
    for i in range(1, states.shape[0]):
        states[i] = states[i - 1]
        _jump(states[i:])


@jiasu.func
def _jump(states):
    # The jump polynomial's two words: xoring the states met at its set bits advances the generator 2**64 steps.
    s0 = np.uint64(0)
    s1 = np.uint64(0)
    for w in range(2):
        word = np.uint64(0xBEAC0467EBA5FACB) if w == 0 else np.uint64(0xD86B048B86AA9922)
        for bit in range(64):
            if (word >> np.uint64(bit)) & np.uint64(1):
                s0 ^= states[0].s0
                s1 ^= states[0].s1
            xoroshiro128p_next(states, 0)
    states[0].s0 = s0
    states[0].s1 = s1


class States(np.ndarray):
    """Generator states: a NumPy structured array that kernels take as they take any NumPy array (copied to the
    GPU and back around each launch there), with the device array's ``copy_to_host``."""

    def copy_to_host(self, ary=None, stream=0):
        if ary is None:
            return np.array(self)
        ary[...] = self
        return ary


def init_xoroshiro128p_states(states, seed, subsequence_start=0, stream=0):
    """Seeds `states` in place (Numba's signature; `stream` is accepted and not needed)."""
    if states.dtype != xoroshiro128p_dtype or states.ndim != 1:
        raise TypeError(f"states must be a 1-D array of xoroshiro128p_dtype, not {states.dtype} with {states.ndim} axes")
    if len(states):
        seed = np.uint64(int(seed) & (2 ** 64 - 1))
        _seed_states[1, 1](states, seed, int(subsequence_start), device="cpu")


def create_xoroshiro128p_states(n, seed, subsequence_start=0, stream=0):
    """`n` generator states, seeded (Numba's ``cuda.random.create_xoroshiro128p_states``)."""
    states = np.zeros(int(n), xoroshiro128p_dtype).view(States)
    init_xoroshiro128p_states(states, seed, subsequence_start, stream)
    return states
