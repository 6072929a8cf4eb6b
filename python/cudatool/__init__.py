"""cudatool: the truth about CUDA GPUs and kernels, from Python.

PyCUDA's names where PyCUDA has them (``DeviceData``, ``OccupancyRecord``), exact where
PyCUDA guesses, and no GPU needed for an architecture: ``DeviceData("sm_90")`` reads
cudatool's compiled-in architecture table. Every call binds the library's request and result
directly (no command line is run), and every document (``to_dict()``) is the one
``cudatool ... --json`` prints, made by the same renderer.

Importing loads no CUDA library: the driver (libcuda.so.1) is opened by the first call that
needs a GPU (``devices()``, ``attributes()``, ``DeviceData(device=0)``, ``check()``), which
raises ``DriverNotFound`` with the command's message where there is none.

Memory pools stay in C++ (``cudatool bench-pool``): CuPy and cuda.core own allocation in
Python.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing is not imported at run time (importing stays cheap)
if TYPE_CHECKING:
    from typing import Iterable, Sequence, Union

    PathLike = Union[str, os.PathLike]

from . import _cudatool
from ._errors import (
    CheckFailed,
    CompileError,
    DriverNotFound,
    Error,
    InputError,
    LaunchError,
    LogicError,
    MemoryError,
    NoDevice,
    RequirementError,
    RuntimeError,
    UnknownValueError,
    UsageError,
)
from ._results import (
    Attributes,
    CheckReport,
    CompatReport,
    Compiled,
    Devices,
    KernelComparison,
    Kernels,
    KernelSizes,
    Occupancy,
    Result,
)

__version__: str = _cudatool.__version__

DeviceData = _cudatool.DeviceData
OccupancyRecord = _cudatool.OccupancyRecord

__all__ = [
    "__version__",
    "DeviceData",
    "OccupancyRecord",
    "sweep_block_sizes",
    "sweep_registers",
    "sweep_shared_memory",
    "suggest_block_size",
    "kernel_occupancy",
    "devices",
    "attributes",
    "kernels",
    "compare_kernels",
    "kernel_sizes",
    "compile",
    "check",
    "Result",
    "Devices",
    "Attributes",
    "Occupancy",
    "Kernels",
    "KernelComparison",
    "KernelSizes",
    "Compiled",
    "CheckReport",
    "CompatReport",
    "compat",
    "Error",
    "LogicError",
    "UsageError",
    "InputError",
    "RuntimeError",
    "DriverNotFound",
    "NoDevice",
    "RequirementError",
    "UnknownValueError",
    "MemoryError",
    "LaunchError",
    "CompileError",
    "CheckFailed",
]

# Kept lean: importing costs a few milliseconds (json and tempfile load where used).


def _argument(value) -> str:
    # A path given as bytes is a file name, not "b'...'"; a NUL would cut the argument short
    # in C (the library would read another file), so it is refused as os functions refuse it.
    text = os.fsdecode(value) if isinstance(value, (bytes, os.PathLike)) else str(value)
    if "\0" in text:
        raise ValueError(f"embedded null byte in {text!r}")
    return text


def _arguments(values) -> list[str]:
    return [_argument(v) for v in values]


def _number(value) -> str | None:
    # Numbers go to the library as the command line gives them, through its one strict parser
    # (the same checks and messages as the CLI's).
    return None if value is None else str(int(value))


def _devdata(devdata: DeviceData) -> DeviceData:
    if not isinstance(devdata, DeviceData):
        raise TypeError("devdata must be a cudatool.DeviceData")
    return devdata


def _arch_list(arch) -> list[str]:
    if arch is None:
        return []
    return [_argument(a) for a in ([arch] if isinstance(arch, str) else arch)]


def _paths(paths) -> list[str]:
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    return _arguments(paths)


def sweep_block_sizes(
    devdata: DeviceData,
    block_sizes: Sequence[int] | None = None,
    shared_mem: int = 0,
    registers: int = 0,
    block_barriers: int = 1,
) -> Occupancy:
    """Occupancy at every block size (every multiple of the warp size, or ``block_sizes``),
    with the block size ``cudaOccupancyMaxPotentialBlockSize`` would choose
    (``suggestion``): ``cudatool occupancy --sweep [LIST] --json``."""
    if isinstance(block_sizes, (str, bytes)):
        # Iterated, "64" would be the block sizes 6 and 4.
        raise TypeError("block_sizes must be a sequence of integers, not a string")
    sweep = ",".join(str(int(b)) for b in block_sizes) if block_sizes else "all"
    return Occupancy(
        _cudatool.occupancy(_devdata(devdata), sweep=sweep, smem=_number(shared_mem),
                            regs=_number(registers), barriers=_number(block_barriers))
    )


def sweep_registers(
    devdata: DeviceData, threads: int, shared_mem: int = 0, registers: int | None = None,
    block_barriers: int = 1,
) -> Occupancy:
    """Occupancy for every register count per thread, with ``steps`` (where the cliffs are)
    and, given ``registers``, the smallest cut that fits more blocks (``improvement``):
    ``cudatool occupancy --sweep-regs --json``."""
    return Occupancy(
        _cudatool.occupancy(_devdata(devdata), sweep_regs=True, threads=_number(threads),
                            smem=_number(shared_mem), regs=_number(registers),
                            barriers=_number(block_barriers))
    )


def sweep_shared_memory(
    devdata: DeviceData, threads: int, registers: int = 0, shared_mem: int | None = None,
    block_barriers: int = 1,
) -> Occupancy:
    """Occupancy for every shared-memory size per block up to the opt-in limit, with
    ``steps`` and, given ``shared_mem``, the smallest cut that fits more blocks:
    ``cudatool occupancy --sweep-smem --json``."""
    return Occupancy(
        _cudatool.occupancy(_devdata(devdata), sweep_smem=True, threads=_number(threads),
                            regs=_number(registers), barriers=_number(block_barriers),
                            smem=_number(shared_mem))
    )


def suggest_block_size(
    devdata: DeviceData, shared_mem: int = 0, registers: int = 0, block_barriers: int = 1
) -> Result:
    """The block size ``cudaOccupancyMaxPotentialBlockSize`` chooses (``block_size``,
    ``tb_per_mp``, ``occupancy``, ``smallest_block_size``, ``min_grid_size``): the
    ``suggestion`` of ``sweep_block_sizes``."""
    return sweep_block_sizes(devdata, None, shared_mem, registers, block_barriers).suggestion


def kernel_occupancy(
    path: PathLike,
    kernel: str,
    threads: int,
    arch: str | None = None,
    device: int | str | None = None,
    dynamic_shared_mem: int = 0,
) -> Occupancy:
    """The occupancy of one kernel of a compiled binary (its registers, static shared memory
    and barriers, plus ``dynamic_shared_mem``): ``cudatool occupancy --kernel-from PATH
    --kernel REGEX --threads N --json``. With neither ``arch`` nor ``device`` the image's
    own architecture (no GPU)."""
    return Occupancy(
        _cudatool.occupancy(
            None, kernel_from=_argument(path), kernel=_argument(kernel), threads=_number(threads),
            arch=None if arch is None else _argument(arch),
            device=None if device is None else _argument(device),
            smem=_number(dynamic_shared_mem) if dynamic_shared_mem else None,
        )
    )


def devices(memory_usage: bool = False) -> Devices:
    """Every visible device (``cudatool devices --json``); creates no context.
    ``memory_usage`` adds free and used memory from NVML (10-30 ms)."""
    return Devices(_cudatool.devices(bool(memory_usage)))


def attributes(device: int | str | None = None, names: Iterable[str] = ()) -> Attributes:
    """Every attribute the driver answers for a device, by its PyCUDA-style name
    (``cudatool attrs --json``), or only ``names``. ``device``: an ordinal, PCI bus id or UUID
    (default: CUDA_DEVICE, ~/.cuda-device, 0)."""
    return Attributes(
        _cudatool.attributes(None if device is None else str(device), [str(n) for n in names])
    )


def kernels(
    paths: PathLike | Iterable[PathLike],
    arch: str | Iterable[str] | None = None,
    kernel: str | None = None,
    threads: int | None = None,
    relocatable: bool = False,
    jobs: int | None = None,
) -> Kernels:
    """Every kernel in compiled CUDA binaries (CUBIN, fatbin, object, archive, executable,
    shared library) and its resources; with ``threads`` its occupancy on the image's
    architecture. ``cudatool kernels --json``; no GPU. ``arch`` keeps those architectures,
    ``kernel`` the kernels whose name matches the regular expression. Raises UsageError where
    no file holds CUDA code; an unreadable entry sets ``unreadable_entries`` and a warning."""
    status, out, warnings = _cudatool.kernels(
        _paths(paths), arch=_arch_list(arch), kernel=None if kernel is None else _argument(kernel),
        threads=_number(threads), jobs=_number(jobs), relocatable=bool(relocatable))
    if status == 2:
        raise UsageError("; ".join(warnings) if warnings else "no CUDA code in the files")
    return Kernels(out, warnings, status == 10)


def compare_kernels(
    baseline: PathLike,
    paths: PathLike | Iterable[PathLike],
    threads: int | None = None,
    fail_on: str | Iterable[str] | None = None,
    arch: str | Iterable[str] | None = None,
    kernel: str | None = None,
    jobs: int | None = None,
) -> KernelComparison:
    """What changed from ``baseline`` (a binary or a saved ``kernels --json``) to ``paths``,
    kernel by kernel: ``cudatool kernels --baseline --json``; occupancy at ``threads`` per
    block (256). ``fail_on`` names the regressions (``"registers"``, ``"spills"``,
    ``"occupancy=5"``, ``"size=2%"``, ``"removed"``, ...): ``passed`` is False where one is
    broken. Raises UsageError for a bad file, document or rule."""
    if fail_on is not None and not isinstance(fail_on, str):
        fail_on = ",".join(fail_on)
    status, out, warnings = _cudatool.kernels(
        _paths(paths), arch=_arch_list(arch), kernel=None if kernel is None else _argument(kernel),
        jobs=_number(jobs), threads=_number(threads), baseline=_argument(baseline),
        fail_on=None if fail_on is None else _argument(fail_on))
    if status not in (0, 10, 13):
        raise UsageError("; ".join(warnings) if warnings else f"cudatool exited {status}")
    return KernelComparison(out, warnings, status != 13)


def kernel_sizes(
    paths: PathLike | Iterable[PathLike],
    top: int | None = None,
    arch: str | Iterable[str] | None = None,
    kernel: str | None = None,
    jobs: int | None = None,
) -> KernelSizes:
    """Where the bytes of compiled CUDA binaries go: ``cudatool kernels --sizes --json`` (per
    file and architecture, what dropping one saves, the ``top`` largest kernels and template
    families, duplicates). Raises UsageError where no file holds CUDA code."""
    status, out, warnings = _cudatool.kernels(
        _paths(paths), arch=_arch_list(arch), kernel=None if kernel is None else _argument(kernel),
        jobs=_number(jobs), top=_number(top), sizes=True)
    if status not in (0, 10):
        raise UsageError("; ".join(warnings) if warnings else f"cudatool exited {status}")
    return KernelSizes(out, warnings)


def compile(  # noqa: A001 - the command's name
    source_or_path: PathLike,
    arch: str | Iterable[str] | None = None,
    options: Sequence[str] = (),
    threads: int | None = None,
    name: str = "kernel.cu",
) -> Compiled:
    """Compiles CUDA C++ (NVRTC or nvcc, chosen for the file; cached) and returns each
    kernel's resources, and with ``threads`` its occupancy: ``cudatool compile --json``.
    ``source_or_path`` is a path to an existing file, or the source text itself (then
    written for the compiler to ``name`` in a private folder named after the text, kept in
    the temporary directory, so that the same text is the same file and a cache hit).
    ``options`` are further flags of
    ``cudatool compile`` (``["-DN=4", "--std", "c++17", "--maxrregcount", "64"]``).
    Raises CompileError (``log``) where the code does not compile."""
    arguments = []
    if arch is not None:
        arguments += ["--arch", arch if isinstance(arch, str) else ",".join(arch)]
    if threads is not None:
        arguments += ["--threads", str(int(threads))]
    arguments += [str(o) for o in options]
    text = os.fspath(source_or_path) if isinstance(source_or_path, os.PathLike) else source_or_path
    if isinstance(source_or_path, os.PathLike) or ("\n" not in text and os.path.isfile(text)):
        return _compiled(arguments + ["--", text])
    return _compiled(arguments + ["--", _source_file(text, os.path.basename(name))])


def _source_file(text: str, name: str) -> str:
    """`text` in a file whose path depends only on the text and the name: the compile cache's
    key names the source's path, so a new temporary path for each call made every call a
    miss and a new entry. The folder is the user's own (mode 0700, checked: a folder another
    user made or a link is not used), each file written whole and renamed into place."""
    import hashlib
    import stat
    import tempfile

    root = os.path.join(tempfile.gettempdir(), f"cudatool-sources-{os.getuid()}")
    try:
        os.mkdir(root, 0o700)
    except FileExistsError:
        pass
    info = os.lstat(root)
    if (not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid()
            or info.st_mode & 0o077):
        raise Error(f"{root}: not a private folder of this user; remove it")
    digest = hashlib.sha256(name.encode() + b"\0" + text.encode("utf-8", "surrogatepass"))
    folder = os.path.join(root, digest.hexdigest()[:32])
    os.makedirs(folder, 0o700, exist_ok=True)
    path = os.path.join(folder, name)
    try:
        with open(path, encoding="utf-8", newline="") as file:
            if file.read() == text:
                return path
    except (OSError, UnicodeError):
        pass
    fd, temporary = tempfile.mkstemp(dir=folder, prefix=".partial-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as file:
            file.write(text)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise
    return path


def _compiled(arguments: list[str]) -> Compiled:
    status, document, warnings = _cudatool.compile(_arguments(arguments))
    return Compiled(document, warnings)


def check(
    device: int | str | Iterable[int | str] | None = None,
    only: Iterable[str] | None = None,
    skip: Iterable[str] | None = None,
    strict: bool = False,
    raise_on_failure: bool = False,
    options: Sequence[str] = (),
) -> CheckReport:
    """The GPU smoke check of every device (``cudatool check --json``): identity, NVML
    health, a verified kernel, bandwidths. ``passed`` is False where the command exits 9
    (with ``raise_on_failure``, CheckFailed is raised). ``options``: further flags
    (``["--min-h2d-gbps", "10"]``)."""
    arguments = []
    if device is not None:
        for d in [device] if isinstance(device, (int, str)) else device:
            arguments += ["--device", str(d)]
    if only:
        arguments += ["--only", ",".join(only)]
    if skip:
        arguments += ["--skip", ",".join(skip)]
    if strict:
        arguments.append("--strict")
    arguments += [str(o) for o in options]
    status, document = _cudatool.check(_arguments(arguments))
    report = CheckReport(document, status == 0)
    if status == 9 and raise_on_failure:
        error = CheckFailed(_check_failure_message(report.to_dict()))
        error.report = report
        raise error
    return report


def _check_failure_message(document: dict) -> str:
    # The message names the failing checks with their reasons from the report (under
    # --strict, the warnings where nothing failed).
    def checks(verdict: str) -> list[str]:
        found = [f"node {c.get('name')}: {c.get('reason')}"
                 for c in document.get("node_checks", []) if c.get("verdict") == verdict]
        for device in document.get("devices", []):
            found += [f"device {device.get('ordinal')} {c.get('name')}: {c.get('reason')}"
                      for c in device.get("checks", []) if c.get("verdict") == verdict]
        return found

    failing = checks("fail") or checks("warn")
    return "check failed: " + "; ".join(failing) if failing else "check failed"


def compat(
    paths: PathLike | Iterable[PathLike] = (),
    arch: str | Iterable[str] | None = None,
    driver: str | None = None,
    cuda: str | None = None,
    require_native: bool = False,
    ptx_jit: str | None = None,
    python: bool = False,
    containers: bool = False,
) -> CompatReport:
    """Will the CUDA code in these files, directories, wheels or Python environments run on
    these GPUs (``cudatool compat --json``): the visible GPUs, or ``arch`` (architectures,
    compute capabilities or products: ``"H100"``, ``["sm_80", "8.6"]``); this machine's
    driver, or ``driver`` (``"535.104.05"``) or ``cuda`` (``"12.2"``). ``python``: the
    active environment. ``ptx_jit``: ``"normal"``, ``"force"`` or ``"disable"`` (default:
    as CUDA_FORCE_PTX_JIT / CUDA_DISABLE_PTX_JIT are set). Headers only; no GPU with
    ``arch``. ``exit_status`` is 11 where some code cannot run."""
    if arch is not None and not isinstance(arch, str):
        arch = ",".join(arch)
    status, document = _cudatool.compat(
        _paths(paths), arch=[] if arch is None else [_argument(arch)],
        driver=None if driver is None else str(driver), cuda=None if cuda is None else str(cuda),
        require="native" if require_native else None,
        ptx_jit=None if ptx_jit is None else str(ptx_jit), python=bool(python),
        containers=bool(containers))
    return CompatReport(document, status)
