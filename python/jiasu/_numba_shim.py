"""``python -m jiasu numba SCRIPT.py [args]``: run a program written for Numba-CUDA with jiasu serving
``numba`` and ``numba.cuda`` for that run (the real Numba, installed or not, is not imported)."""
import __future__
import builtins
import contextlib
import itertools
import linecache
import runpy
import sys
import types


def _module():
    from . import cuda

    numba = types.ModuleType("numba", "jiasu serving Numba's names for `python -m jiasu numba`")
    numba.cuda = cuda

    def jit(*args, **kwargs):
        raise NotImplementedError("numba.jit (Numba's CPU compiler) is not served by jiasu; use numba.cuda.jit, "
                                  "which runs on jiasu's CPU backend too")

    numba.jit = numba.njit = jit

    def vectorize(*args, target="cpu", **options):
        if target != "cuda":
            raise NotImplementedError(f"numba.vectorize(target={target!r}) is not served by jiasu; target='cuda' is")
        return cuda.vectorize(*args, **options)

    def guvectorize(*args, target="cpu", **options):
        if target != "cuda":
            raise NotImplementedError(f"numba.guvectorize(target={target!r}) is not served by jiasu; target='cuda' is")
        return cuda.guvectorize(*args, **options)

    numba.vectorize, numba.guvectorize = vectorize, guvectorize

    def missing(name):
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            return getattr(cuda, name)  # the type names: float32, int64, ...
        except AttributeError:
            raise NotImplementedError(f"numba.{name} is not served by jiasu (python -m jiasu numba)") from None

    numba.__getattr__ = missing
    return numba


_FUTURE_FLAGS = sum(getattr(__future__, name).compiler_flag for name in __future__.all_feature_names)


@contextlib.contextmanager
def exec_sources_kept():
    """Numba compiles from bytecode, so Numba programs may make kernels with ``exec(text)``; jiasu compiles from
    source text, so while this is active each text given to ``exec`` is kept in ``linecache`` under a name of its
    own (``<exec-N>``), where ``inspect.getsource`` finds it, as IPython does for its cells."""
    real_exec, numbers = builtins.exec, itertools.count()

    def exec_keeping_source(source, globals=None, locals=None, /, **options):
        caller = sys._getframe(1)
        if globals is None:
            globals, locals = caller.f_globals, caller.f_locals if locals is None else locals
        if isinstance(source, bytes):
            source = source.decode()
        if isinstance(source, str):
            name = f"<exec-{next(numbers)}>"
            linecache.cache[name] = (len(source), None, source.splitlines(True), name)
            source = compile(source, name, "exec", flags=caller.f_code.co_flags & _FUTURE_FLAGS, dont_inherit=True)
        return real_exec(source, globals, locals, **options)

    builtins.exec = exec_keeping_source
    try:
        yield
    finally:
        builtins.exec = real_exec


def main(script, args):
    numba = _module()
    from . import cuda_random

    served = {"numba": numba, "numba.cuda": numba.cuda, "numba.cuda.random": cuda_random}
    saved = {name: sys.modules.get(name) for name in served}
    saved_argv = sys.argv
    sys.modules.update(served)
    sys.argv = [script] + list(args)
    try:
        with exec_sources_kept():
            runpy.run_path(script, run_name="__main__")
    finally:
        sys.argv = saved_argv
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
    return 0
