"""libworklog_steps.so through ctypes: the steps of the build, their variants and launches, with no
PyTorch. The C ABI is python/c_api/worklog_c_api.h; every call that fails raises WorklogError with
the library's one-line reason and its status, one of the worklog's exit codes (common/exit_codes.hpp).

The library is looked for at $WORKLOG_LIBRARY, else at build/lib/libworklog_steps.so of this
repository (what `cmake --build build --target worklog_steps` makes).
"""
import ctypes
import importlib.util
import os
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
DEFAULT_LIBRARY = REPOSITORY / "build" / "lib" / "libworklog_steps.so"
API_VERSION = 1  # WORKLOG_C_API_VERSION of the header this module was written for
FP32, FP16 = 1, 2  # WORKLOG_FP32 and WORKLOG_FP16: a step's input precision
PRECISION_NAMES = {FP32: "fp32", FP16: "fp16"}


def _load_exit_codes():
    """common/exit_codes.py, the codes' one reading of the header, loaded from its file so that this
    package puts nothing on sys.path."""
    spec = importlib.util.spec_from_file_location("worklog_exit_codes", REPOSITORY / "common" / "exit_codes.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


exit_codes = _load_exit_codes()


class WorklogError(RuntimeError):
    """A call the library refused or that failed: `code` is its status (an exit code of the worklog),
    the message its one-line reason."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


class NoCudaDevice(WorklogError):
    """No CUDA device can be used (status 77): the reason is the one the steps' executables give."""


def _error(code, message):
    return (NoCudaDevice if code == exit_codes.EXIT_NO_DEVICE else WorklogError)(code, message)


class Library:
    """The C ABI of one libworklog_steps.so, each function checked and returning Python values."""

    def __init__(self, path):
        self.path = Path(path)
        if not self.path.is_file():
            raise WorklogError(exit_codes.EXIT_TOOL_MISSING,
                               f"no worklog library at {self.path}: build it (cmake --build build --target "
                               f"worklog_steps) or point WORKLOG_LIBRARY to it")
        self._dll = ctypes.CDLL(str(self.path))
        c_int, c_int64, c_char_p, c_void_p = ctypes.c_int, ctypes.c_int64, ctypes.c_char_p, ctypes.c_void_p
        p_int, p_str = ctypes.POINTER(c_int), ctypes.POINTER(c_char_p)
        signatures = {
            "worklog_api_version": [],
            "worklog_step_count": [p_int],
            "worklog_step_name": [c_int, p_str],
            "worklog_variant_count": [c_char_p, p_int],
            "worklog_variant_name": [c_char_p, c_int, p_str],
            "worklog_step_precision": [c_char_p, p_int],
            "worklog_step_description": [c_char_p, p_str],
            "worklog_step_compute_capability": [c_char_p, p_int, p_int],
            "worklog_error_scale": [c_char_p, c_int64, ctypes.POINTER(ctypes.c_double)],
            "worklog_check_device": [c_int],
            "worklog_workspace_bytes": [c_char_p, c_int] + [c_int64] * 6 + [ctypes.POINTER(ctypes.c_size_t)],
            "worklog_gemm": [c_char_p, c_int, c_int64, c_int64, c_int64, ctypes.c_float, c_void_p, c_int64, c_void_p,
                             c_int64, ctypes.c_float, c_void_p, c_int64, c_void_p, ctypes.c_size_t, c_void_p],
        }
        for name, arguments in signatures.items():
            function = getattr(self._dll, name)
            function.argtypes, function.restype = arguments, c_int
        self._dll.worklog_last_error.argtypes, self._dll.worklog_last_error.restype = [], c_char_p
        version = self._dll.worklog_api_version()
        if version != API_VERSION:
            raise WorklogError(exit_codes.EXIT_BAD_ARGUMENT,
                               f"{self.path} has C ABI version {version}; this package was written for {API_VERSION}: "
                               f"rebuild the library from this checkout")

    def _call(self, name, *arguments):
        status = getattr(self._dll, name)(*arguments)
        if status != exit_codes.EXIT_OK:
            raise _error(status, self._dll.worklog_last_error().decode("utf-8", "replace"))

    def last_error(self):
        return self._dll.worklog_last_error().decode("utf-8", "replace")

    def steps(self):
        """Every step of the library, in the worklog's order."""
        count = ctypes.c_int()
        self._call("worklog_step_count", ctypes.byref(count))
        names = []
        for index in range(count.value):
            name = ctypes.c_char_p()
            self._call("worklog_step_name", index, ctypes.byref(name))
            names.append(name.value.decode())
        return names

    def variants(self, step):
        """A step's variants, by their names after the step's ("stages2"), in their order of registration."""
        count = ctypes.c_int()
        self._call("worklog_variant_count", step.encode(), ctypes.byref(count))
        names = []
        for index in range(count.value):
            name = ctypes.c_char_p()
            self._call("worklog_variant_name", step.encode(), index, ctypes.byref(name))
            names.append(name.value.decode())
        return names

    def precision(self, step):
        """FP32 (A and B in FP32) or FP16 (FP16 in, FP32 accumulated) for a step or "<step>/<variant>"."""
        precision = ctypes.c_int()
        self._call("worklog_step_precision", step.encode(), ctypes.byref(precision))
        return precision.value

    def description(self, step):
        text = ctypes.c_char_p()
        self._call("worklog_step_description", step.encode(), ctypes.byref(text))
        return text.value.decode()

    def compute_capability(self, step):
        """(lowest, highest) as major·10 + minor; highest is 0 when there is no upper limit."""
        lowest, highest = ctypes.c_int(), ctypes.c_int()
        self._call("worklog_step_compute_capability", step.encode(), ctypes.byref(lowest), ctypes.byref(highest))
        return lowest.value, highest.value

    def error_scale(self, step, k):
        """The factor of the step's error bound against an exact result at this K (worklog_c_api.h)."""
        scale = ctypes.c_double()
        self._call("worklog_error_scale", step.encode(), k, ctypes.byref(scale))
        return scale.value

    def check_device(self, device=0):
        """Returns when CUDA device `device` can be used; raises NoCudaDevice (or WorklogError) otherwise."""
        self._call("worklog_check_device", device)

    def workspace_bytes(self, step, device, m, n, k, lda, ldb, ldc):
        size = ctypes.c_size_t()
        self._call("worklog_workspace_bytes", step.encode(), device, m, n, k, lda, ldb, ldc, ctypes.byref(size))
        return size.value

    def gemm(self, step, device, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, workspace, workspace_bytes, stream):
        """Enqueues C = alpha·A·B + beta·C on `stream`; a, b, c, workspace and stream are addresses (ints)."""
        self._call("worklog_gemm", step.encode(), device, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, workspace,
                   workspace_bytes, stream)


_library = None


def library():
    """The process's Library, loaded on first use from $WORKLOG_LIBRARY or build/lib/."""
    global _library
    if _library is None:
        _library = Library(os.environ.get("WORKLOG_LIBRARY") or DEFAULT_LIBRARY)
    return _library


def steps():
    return library().steps()


def variants(step):
    return library().variants(step)


def require_cuda_device(device=0, program=None):
    """Returns when CUDA device `device` can be used. Otherwise prints "<program>: error: <reason>" on
    stderr, as the steps' executables do, and exits with their code for it (77 without a device)."""
    try:
        library().check_device(device)
    except WorklogError as e:
        name = program or Path(sys.argv[0]).name or "python"
        print(f"{name}: error: {e}", file=sys.stderr)
        sys.exit(e.code)
