"""jiasu's exceptions. The C++ core raises these through one translator (bindings/errors.cpp)."""


class JiasuError(RuntimeError):
    """Base class of every error jiasu raises itself."""


class CudaError(JiasuError):
    """A CUDA operation failed. ``name`` is the driver's error name (e.g. ``CUDA_ERROR_INVALID_VALUE``)."""

    name: str = "CUDA_ERROR_UNKNOWN"
    code: int = 999


class CudaOutOfMemoryError(CudaError, MemoryError):
    """Device (or pinned host) memory ran out."""


class LaunchError(CudaError):
    """A launch configuration the device cannot run: too many threads, too much shared memory, ..."""


class InvalidArrayError(CudaError):
    """An array that was freed, or that lives on another device than the kernel."""


class NvrtcError(JiasuError):
    """NVRTC rejected CUDA C++ source; ``log`` holds its messages with line numbers."""

    log: str = ""


class LibraryNotFoundError(JiasuError):
    """A CUDA library (driver, NVRTC, cuDNN, ...) is missing; the message says what to install."""


class CompileError(JiasuError):
    """A Python kernel jiasu cannot compile. The message is "file:line:column: error: ..." followed by the
    source line and a caret; ``file``, ``line``, ``column`` and ``reason`` hold the parts."""

    file: str = ""
    line: int = 0
    column: int = 0
    reason: str = ""


class DistributedError(JiasuError):
    """A collective, a communicator or the rendezvous store failed. ``code`` is NCCL's result code where
    there is one (0 otherwise)."""

    code: int = 0


class DistributedTimeoutError(DistributedError, TimeoutError):
    """A peer did not answer within the timeout: it died, hung, or never joined."""


class PerformanceWarning(UserWarning):
    """Something that works but costs time, such as NumPy arrays copied at every kernel launch."""


ALL = {cls.__name__: cls for cls in (JiasuError, CudaError, CudaOutOfMemoryError, LaunchError,
                                     InvalidArrayError, NvrtcError, LibraryNotFoundError, CompileError,
                                     DistributedError, DistributedTimeoutError)}
