"""The type stubs jiasu ships for IDEs and type checkers (PEP 561): the installed package has py.typed and the
extension module's generated stubs beside the module; the hand-written stubs of Python modules whose names are
made at run time (cuda.pyi, _ufuncs.pyi) name what the modules serve, no more and no less. Checked by reading
the stubs (no type checker is needed)."""
import ast
import pathlib

import pytest

import jiasu
from jiasu import _ufuncs, cuda

PACKAGE = pathlib.Path(jiasu.__file__).resolve().parent


def stub_names(path):
    """The public names a stub defines at its top level, each with its node."""
    names = {}
    for node in ast.parse(path.read_text(), str(path)).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names[node.name] = node
        elif isinstance(node, ast.AnnAssign):
            names[node.target.id] = node
        elif isinstance(node, ast.Assign):
            names.update((target.id, node) for target in node.targets)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):  # a stub re-exports what it imports `as` itself
            names.update((alias.asname, node) for alias in node.names if alias.asname == alias.name)
    return {name: node for name, node in names.items() if not name.startswith("_")}


def stub_classes(path):
    tree = ast.parse(path.read_text(), str(path))
    return {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}


def test_the_installed_package_ships_py_typed_and_the_extension_stubs():
    module = pathlib.Path(jiasu._core.__file__).resolve()
    assert module.parent == PACKAGE
    assert (PACKAGE / "py.typed").is_file()
    stubs = PACKAGE / "_core"
    assert (stubs / "__init__.pyi").is_file() and (stubs / "nn.pyi").is_file(), sorted(PACKAGE.iterdir())
    assert not (stubs / "__init__.py").exists()  # a stub folder only: Python imports the module beside it
    for path, runtime in ((stubs / "__init__.pyi", jiasu._core), (stubs / "nn.pyi", jiasu._core.nn)):
        names = stub_names(path)
        public = {name for name in dir(runtime) if not name.startswith("_")}
        assert public <= set(names), f"{path.name} lacks {sorted(public - set(names))}"
    core = stub_names(stubs / "__init__.pyi")
    assert {"Array", "Device", "Stream", "HostDeviceMemory", "empty", "matmul", "nn"} <= set(core)
    assert "def mapped(nbytes: int, portable: bool = False, write_combined: bool = False) -> HostDeviceMemory" in (
        stubs / "__init__.pyi").read_text()


def test_cuda_stub_names_exactly_what_jiasu_cuda_serves():
    path = PACKAGE / "cuda.pyi"
    names = stub_names(path)
    classes = stub_classes(path)
    for name, node in names.items():
        value = getattr(cuda, name)  # AttributeError for a name the module does not serve
        if isinstance(node, ast.AnnAssign) and isinstance(node.annotation, ast.Name) and node.annotation.id in classes:
            # A namespace of the kernel language (cuda.atomic, cuda.threadIdx): its members too.
            for member in classes[node.annotation.id].body:
                member_name = member.name if isinstance(member, ast.FunctionDef) else member.target.id
                getattr(value, member_name)
    for name in cuda._UNSERVED:
        assert name not in names, f"cuda.pyi lists {name}, which jiasu does not serve"
    served = set(cuda._TYPE_NAMES) | set(cuda._ALIASES) | set(jiasu._kernel_names()) | {"random", "gpus"}
    defined = {name for name, value in vars(cuda).items()
               if not name.startswith("_") and getattr(value, "__module__", None) == "jiasu.cuda"}
    assert {"jit", "to_device", "mapped_array", "managed_array", "Reduce"} <= defined
    missing = (served | defined) - set(names)
    assert not missing, f"cuda.pyi lacks {sorted(missing)}"


def test_kernel_names_in_the_cuda_stub_work_inside_kernels_only():
    for name in ("grid", "syncthreads"):
        with pytest.raises(TypeError, match="works inside kernels only"):
            getattr(cuda, name)(1)
    with pytest.raises(TypeError, match="works inside kernels only"):
        cuda.atomic.add(None, 0, 1)


def test_ufuncs_stub_names_exactly_what_the_module_exports():
    names = stub_names(PACKAGE / "_ufuncs.pyi")
    assert set(names) == set(_ufuncs.__all__)
    for name in names:
        assert getattr(jiasu, name) is getattr(_ufuncs, name)
