"""@jiasu.kernel and @jiasu.func: hand a function's source text to the C++ front end.

The C++ core parses and type-checks the source itself; Python only supplies the text, where it came from,
and what the function's global names refer to (through ``resolve``).
"""
from __future__ import annotations

import builtins
import sys
import types

from . import _core, _intrinsics

TYPE_CHECKING = False  # typing's own, without importing typing at `import jiasu`
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

_NUMBER_TYPES = (bool, int, float)
_MAX_CONSTANT_BYTES = 64 * 1024  # a NumPy array global is embedded in the kernel (CUDA's constant memory size)


class _Description:
    """What the front end needs to know about one Python function."""

    def __init__(self, fn, link=()):
        if not isinstance(fn, types.FunctionType):
            raise TypeError(f"jiasu kernels and functions must be Python functions, not {type(fn).__name__}")
        import inspect  # here, not at `import jiasu`: it is slow to import

        try:
            lines, first_line = inspect.getsourcelines(fn)
        except (OSError, TypeError) as error:
            raise TypeError(f"cannot read the source of {fn.__qualname__}: {error}; jiasu compiles a function "
                            f"from its source text, so it must be defined in a file (or made by exec() under "
                            f"`python -m jiasu numba`, which keeps the texts)") from None
        self.fn = fn
        self.name = fn.__name__
        self.source = "".join(lines)
        if fn.__name__ == "<lambda>":  # Numba's examples pass lambdas: cuda.reduce(lambda a, b: a + b)
            self.name = "lambda_"
            self.source, first_line = _lambda_as_def(fn, self.source, first_line)
        self.file = inspect.getsourcefile(fn) or fn.__code__.co_filename
        self.first_line = first_line
        self.identity = f"{fn.__module__}.{fn.__qualname__}@{id(fn):x}"
        self.link = link  # paths of CUDA C++ files (checked by linked_paths)

    def resolve(self, name):
        """Describe what `name` means inside the function: a closure variable, a global, or nothing."""
        code = self.fn.__code__
        if name in code.co_freevars and self.fn.__closure__:
            cell = self.fn.__closure__[code.co_freevars.index(name)]
            try:
                return _describe(cell.cell_contents)
            except ValueError:  # an empty cell
                return ("missing",)
        if name in self.fn.__globals__:
            return _describe(self.fn.__globals__[name])
        if isinstance(getattr(builtins, name, None), type) and issubclass(getattr(builtins, name), BaseException):
            return ("exception", getattr(builtins, name))  # raise ValueError(...)
        return ("missing",)  # builtins such as range, len, min are the front end's own


def _lambda_as_def(fn, text, first_line):
    """The lambda `fn` in the statement `text` (from line `first_line`) as the def the front end reads:
    ``def lambda_(a, b):`` returning its body. The lambda is the one with fn's parameters."""
    import ast
    import textwrap

    text = textwrap.dedent(text)
    params = fn.__code__.co_varnames[:fn.__code__.co_argcount]
    try:
        tree = ast.parse(text)
    except SyntaxError:
        tree = ast.Module(body=[], type_ignores=[])
    for node in ast.walk(tree):
        if isinstance(node, ast.Lambda) and tuple(a.arg for a in node.args.args) == params:
            body = ast.get_source_segment(text, node.body)
            return f"def lambda_({', '.join(params)}):\n    return {body}\n", first_line + node.lineno - 1
    raise TypeError(f"cannot find the lambda of {fn.__qualname__} in its source line; define it with def")


def _dtype_name(value):
    """The dtype name of a NumPy scalar type, a np.dtype instance, ml_dtypes' bfloat16 or a Numba scalar type;
    None otherwise."""
    np = sys.modules.get("numpy")  # a value can only be NumPy's when NumPy is loaded
    if np is None:
        return None
    if isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, np.generic)):
        return np.dtype(value).name
    if isinstance(value, type) and value.__name__ == "bfloat16":
        return "bfloat16"
    if type(value).__module__.startswith("numba."):  # Numba's scalar types (numba.float32, ...), for Numba-CUDA code
        try:
            return np.dtype(str(value)).name
        except (TypeError, ValueError):  # not a scalar type: array(float32, 1d, C), void, a record, ...
            return None
    return None


_numba_functions = {}  # id(py_func) -> (py_func, its _Description): one description per @njit function


def _numba_function_description(fn):
    entry = _numba_functions.get(id(fn))
    if entry is None or entry[0] is not fn:
        entry = _numba_functions[id(fn)] = (fn, _Description(fn))
    return entry[1]


def _enum_value(member):
    """An enum member's value in kernels: an IntEnum's own, another enum's position among its class's members."""
    return int(member) if isinstance(member, int) else list(type(member)).index(member)


def _enum_description(cls):
    """An enum class as the front end reads it: name, identity, whether its members are ints, and each member's
    value in kernels by name (aliases included). The launch gives an enum argument the same value."""
    members = [(name, _enum_value(member)) for name, member in cls.__members__.items()]
    if any(not -2**63 <= value < 2**63 for _, value in members):
        return ("unsupported", f"enum {cls.__qualname__} with values beyond int64")
    return ("enum", cls.__qualname__, id(cls), issubclass(cls, int), members)


def _describe(value):
    enum = sys.modules.get("enum")  # a value can only be an enum when the enum module is loaded
    if enum is not None and isinstance(value, type) and issubclass(value, enum.Enum):
        return _enum_description(value)
    if enum is not None and isinstance(value, enum.Enum):
        description = _enum_description(type(value))
        return description if description[0] != "enum" else ("enum_member", description, _enum_value(value))
    if isinstance(value, bool):
        return ("bool", bool(value))
    if isinstance(value, int):  # also IntEnum and other int subclasses
        return ("int", int(value))
    if isinstance(value, float):
        return ("float", float(value))
    if isinstance(value, tuple) and all(isinstance(v, _NUMBER_TYPES) or isinstance(v, tuple) for v in value):
        return ("tuple", [_describe(v) for v in value])
    if isinstance(value, str):  # an exception's message
        return ("string", value)
    if isinstance(value, type) and issubclass(value, BaseException):
        return ("exception", value)
    if isinstance(value, types.ModuleType):
        if value.__name__ == "jiasu.cuda":  # Numba's spelling: cuda.grid(1) is jiasu.grid(1)
            return ("module", "jiasu")
        return ("module", value.__name__) if value.__name__ in ("math", "cmath", "numpy", "jiasu") else (
            "unsupported", f"module {value.__name__}")
    if isinstance(value, (DeviceFunction, _core.KernelFunction)):  # a kernel called from a kernel
        return ("function", value._description)
    if isinstance(value, ExternalFunction):
        return ("external", value)
    if type(value).__module__.startswith("numba.") and isinstance(getattr(value, "py_func", None), types.FunctionType):
        return ("function", _numba_function_description(value.py_func))  # @numba.njit: a device function, as in Numba
    if isinstance(value, _intrinsics.KernelName):  # from jiasu import grid
        return ("builtin", value._path)
    if isinstance(value, types.BuiltinFunctionType) and value.__module__ in ("_operator", "operator"):
        return ("builtin", "operator." + value.__name__)  # operator.add as a value, as Numba takes it
    np = sys.modules.get("numpy")
    if np is not None and isinstance(value, np.ndarray):  # embedded as a constant, as Numba does
        if value.ndim == 0 or value.nbytes > _MAX_CONSTANT_BYTES:
            return ("unsupported", f"NumPy array of shape {value.shape} ({value.nbytes} bytes); kernels embed "
                                   f"global arrays of 1 to 8 dimensions and at most {_MAX_CONSTANT_BYTES} bytes")
        return ("array", value.dtype.name, list(value.shape), np.ascontiguousarray(value).tobytes())
    name = _dtype_name(value)  # NumPy 2's dtype instances are of classes such as Float32DType
    if name:
        return ("dtype", name)
    import numbers

    if isinstance(value, numbers.Integral):
        return ("int", int(value))
    if isinstance(value, numbers.Real):
        return ("float", float(value))
    return ("unsupported", type(value).__name__)


class DeviceFunction:
    """A function callable from kernels and other device functions (@jiasu.func)."""

    def __init__(self, fn):
        self._description = _Description(fn)
        self.__wrapped__ = self.py_func = fn  # py_func: Numba's name for it
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self.__name__} is a jiasu device function: call it from a @jiasu.kernel")

    def __repr__(self):
        return f"<jiasu device function {self.__name__}>"


class ExternalFunction:
    """A device function written in CUDA C++ (Numba's ``cuda.declare_device``): kernels call it by its Python name;
    its definition comes from the ``link=`` files (its own, or the calling kernel's). ``params`` and ``result``
    are dtype names; ``abi`` is ``"numba"`` (``int name(result*, params...)``) or ``"c"``
    (``result name(params...)``)."""

    def __init__(self, name, params, result, abi="numba", link=()):
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"an external function's name must be a C identifier, not {name!r}")
        if abi not in ("numba", "c"):
            raise NotImplementedError(f"Unsupported ABI: {abi}")
        self.name, self.params, self.result, self.abi = name, tuple(params), result, abi
        self.link = linked_paths(link)

    def __call__(self, *args):
        raise TypeError(f"{self.name} is an external device function: call it from a kernel")

    def __repr__(self):
        return f"<jiasu external device function {self.result} {self.name}({', '.join(self.params)})>"


def linked_paths(link):
    """The absolute paths of a ``link=`` argument (a path or a list of them): CUDA C++ source files, which both
    backends compile into the kernel. Other kinds (PTX, cubin, libraries) need a device linker jiasu does not use."""
    import os

    paths = [link] if isinstance(link, (str, os.PathLike)) else list(link or ())
    out = []
    for path in paths:
        path = os.path.abspath(os.fspath(path))
        if os.path.splitext(path)[1] not in (".cu", ".cuh"):
            raise NotImplementedError(f"link={path!r}: jiasu links CUDA C++ source files (.cu); PTX, cubin, fatbin, "
                                      f"LTO-IR and libraries are not supported")
        if not os.path.isfile(path):
            raise FileNotFoundError(f"link: no such file: {path!r}")
        out.append(path)
    return tuple(out)


def kernel(fn: Callable[..., object] | None = None, *, debug: bool = False, link: str | Sequence[str] = (),
           **options: object) -> _core.KernelFunction | Callable[[Callable[..., object]], _core.KernelFunction]:
    """Compile a Python function into a kernel, launched as ``k[blocks, threads](args...)``.

    It runs on a GPU or, on the CPU backend, compiled for the host. ``debug=True`` (or ``JIASU_DEBUG=1`` in the
    environment, for every kernel) checks every array and tuple index, raising IndexError at the first one out of
    bounds, and every integer divisor, raising ZeroDivisionError for 0, on both backends; the GPU build then reports
    a ``raise`` too. ``link``: CUDA C++ files defining the external functions the kernel calls (``cuda.declare_device``).
    """
    if options:
        raise TypeError(f"unsupported kernel option(s): {', '.join(sorted(options))}")
    if not isinstance(debug, bool):
        raise TypeError(f"debug must be True or False, not {type(debug).__name__}")
    link = linked_paths(link)

    def wrap(f):
        return _core.KernelFunction(_Description(f, link), debug)

    return wrap if fn is None else wrap(fn)


def func(fn: Callable[..., object]) -> DeviceFunction:
    """Mark a Python function as a device function, callable from kernels."""
    return DeviceFunction(fn)
