"""``python -m jiasu numba SCRIPT.py [args]``: run a program written for Numba-CUDA with jiasu serving
``numba`` and ``numba.cuda`` for that run (the real Numba, installed or not, is not imported)."""
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

    def missing(name):
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            return getattr(cuda, name)  # the type names: float32, int64, ...
        except AttributeError:
            raise NotImplementedError(f"numba.{name} is not served by jiasu (python -m jiasu numba)") from None

    numba.__getattr__ = missing
    return numba


def main(script, args):
    numba = _module()
    saved = {name: sys.modules.get(name) for name in ("numba", "numba.cuda")}
    saved_argv = sys.argv
    sys.modules["numba"], sys.modules["numba.cuda"] = numba, numba.cuda
    sys.argv = [script] + list(args)
    try:
        runpy.run_path(script, run_name="__main__")
    finally:
        sys.argv = saved_argv
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
    return 0
