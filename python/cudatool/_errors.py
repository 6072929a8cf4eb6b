"""cudatool's exceptions: one hierarchy, after PyCUDA's (``Error`` at the root; ``LogicError``,
``RuntimeError``, ``MemoryError``, ``LaunchError``, ``CompileError``), mirroring the C++
library's (lib/include/cudatool/base/error.hpp). Each carries the one-line message the
``cudatool`` command prints after ``cudatool: `` and the exit code it exits with.
"""

import builtins


class Error(Exception):
    """Any cudatool error.

    ``exit_code`` and ``status`` are the command's exit code and its name ("usage",
    "no_driver", ...). A failed driver call adds ``call`` ("cuDeviceGetName"),
    ``cuda_error`` ("CUDA_ERROR_INVALID_DEVICE") and ``cuda_error_code`` (the CUresult).
    """

    exit_code = 1
    status = "failure"
    call = None
    cuda_error = None
    cuda_error_code = None


class LogicError(Error):
    """A call made wrongly: an invalid value, handle or context."""


class UsageError(LogicError, builtins.ValueError):
    """A malformed value: an argument, an environment variable, a file's content (exit 2)."""

    exit_code = 2
    status = "usage"


class InputError(UsageError):
    """A file whose contents are malformed: a truncated or corrupt binary, a JSON document of
    the wrong shape, an empty file (exit 2, as every UsageError)."""


class RuntimeError(Error, builtins.RuntimeError):  # noqa: A001 - PyCUDA's name
    """Something in the environment failed: the driver, the device, the file system."""


class DriverNotFound(RuntimeError):
    """The CUDA driver (libcuda.so.1), or NVRTC for a compile, is missing or too old (exit 3).

    ``library`` names it.
    """

    exit_code = 3
    status = "no_driver"
    library = None


class NoDevice(RuntimeError):
    """No CUDA device is visible, or the one asked for does not exist (exit 4)."""

    exit_code = 4
    status = "no_device"


class RequirementError(RuntimeError):
    """A device set, or an architecture, does not meet what was required of it (exit 4)."""

    exit_code = 4
    status = "no_device"


class UnknownValueError(RequirementError):
    """Occupancy on an architecture whose limits cudatool's table does not know (sm_88).

    ``unknown`` is {"architecture", "unknown_fields", "reason"}: no number rather than a guess.
    """

    unknown = None


class MemoryError(Error, builtins.MemoryError):  # noqa: A001 - PyCUDA's name
    """Device or page-locked host memory exhausted (exit 7)."""

    exit_code = 7
    status = "out_of_memory"


class LaunchError(Error):
    """A kernel launch, or the work it started, failed (exit 5, as every failed driver call)."""

    exit_code = 5
    status = "cuda_error"


class CompileError(Error):
    """A kernel did not compile (exit 6): ``log``, ``options`` and ``compiler_version``."""

    exit_code = 6
    status = "compile_error"
    log = ""
    options = ()
    compiler_version = ""


class CheckFailed(Error):
    """Raised by ``check(raise_on_failure=True)`` where the check failed (exit 9);
    ``report`` is the report. The command prints no error line then: the message names the
    failing checks and their reasons ("check failed: device 1 identity: ...")."""

    exit_code = 9
    status = "check_failed"
    report = None
