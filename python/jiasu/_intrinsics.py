"""The kernel language's jiasu.* names as Python objects (jiasu.grid, jiasu.threadIdx.x, jiasu.atomic.add, ...),
built from the front end's table of builtins, so that they can be imported, listed and documented. Used on
the host they raise a TypeError saying that they work inside kernels."""
from . import _core


class KernelName:
    """A name of the kernel language: a function (jiasu.grid) or a namespace of them (jiasu.atomic)."""

    def __init__(self, path):
        self._path = path
        self._members = {}
        self.__name__ = self.__qualname__ = path.rsplit(".", 1)[-1]
        self.__doc__ = (f"{path}: part of jiasu's kernel language (docs/kernel-language.md); it works inside "
                        "@jiasu.kernel and @jiasu.func functions, not on the host.")

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self._path} works inside kernels only (@jiasu.kernel, @jiasu.func, @cuda.jit), not on "
                        "the host")

    def __getattr__(self, name):
        members = self.__dict__.get("_members", {})
        if name in members:
            return members[name]
        raise AttributeError(f"{self.__dict__.get('_path', 'jiasu')} has no kernel name {name!r}")

    def __dir__(self):
        return sorted(self._members)

    def __repr__(self):
        return f"<jiasu kernel name {self._path}>"


def _tree():
    roots = {}
    for path in _core.kernel_names():
        parts = path.split(".")[1:]
        node = roots.setdefault(parts[0], KernelName("jiasu." + parts[0]))
        for depth, part in enumerate(parts[1:], start=2):
            node = node._members.setdefault(part, KernelName("jiasu." + ".".join(parts[:depth])))
    return roots


NAMES = _tree()
