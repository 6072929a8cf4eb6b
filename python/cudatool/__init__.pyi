# Type stubs of the cudatool package (the module is cudatool/_cudatool, C++).
import os
from typing import Any, Iterable, Sequence, Union

__version__: str
PathLike = Union[str, os.PathLike[str]]

class DeviceData:
    """What occupancy depends on: DeviceData("sm_90") from cudatool's architecture table (no
    GPU), or DeviceData(device=0) from a live device's attributes (no context). PyCUDA's
    fields are None where the table does not know a value."""
    def __init__(self, arch: str | None = None, *, device: int | str | None = None) -> None: ...
    max_threads: int | None
    warp_size: int | None
    warps_per_mp: int | None
    thread_blocks_per_mp: int | None
    registers: int | None
    shared_memory: int | None
    smem_granularity: int | None
    smem_alloc_granularity: int | None
    name: str
    family: str | None
    compute_capability: tuple[int, int]
    origin: str
    sm_count: int | None
    sm_count_part: str | None
    unknown_fields: list[str]
    unknown_reason: str | None
    def column(self, name: str) -> int | None: ...
    def align_bytes(self, word_size: int = 4) -> int: ...
    def align(self, bytes: int, word_size: int = 4) -> int: ...
    def align_words(self, word_size: int) -> int: ...
    def align_dtype(self, elements: int, dtype_size: int) -> int: ...
    @staticmethod
    def make_valid_tex_channel_count(size: int) -> int: ...
    def to_dict(self) -> dict[str, Any]: ...

class OccupancyRecord:
    """Exact occupancy (the toolkit's cuda_occupancy.h, what
    cuOccupancyMaxActiveBlocksPerMultiprocessor answers) of a block of `threads` threads,
    `shared_mem` bytes of shared memory (static plus dynamic) and `registers` per thread."""
    def __init__(self, devdata: DeviceData, threads: int, shared_mem: int = 0,
                 registers: int = 0, block_barriers: int = 1) -> None: ...
    devdata: DeviceData
    threads: int
    shared_mem: int
    registers: int
    block_barriers: int
    tb_per_mp: int
    limited_by: str
    limiting_factors: list[str]
    warps_per_mp: int
    max_warps_per_mp: int
    occupancy: float
    block_limits: dict[str, int | None]
    allocated_registers_per_block: int
    allocated_shared_mem_per_block: int
    opted_in: bool
    improvements: list[dict[str, Any]]
    def to_dict(self) -> dict[str, Any]: ...

class Result:
    def __init__(self, document: dict[str, Any] | None = None, *, text: bytes | None = None) -> None: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __getattr__(self, name: str) -> Any: ...
    def __getitem__(self, key: str) -> Any: ...
    def __contains__(self, key: str) -> bool: ...

class Devices(Result): ...
class Attributes(Result): ...
class Occupancy(Result): ...

class Kernels(Result):
    warnings: list[str]
    unreadable_entries: bool

class Compiled(Result):
    warnings: list[str]

class CheckReport(Result):
    passed: bool

def sweep_block_sizes(devdata: DeviceData, block_sizes: Sequence[int] | None = None,
                      shared_mem: int = 0, registers: int = 0,
                      block_barriers: int = 1) -> Occupancy: ...
def sweep_registers(devdata: DeviceData, threads: int, shared_mem: int = 0,
                    registers: int | None = None, block_barriers: int = 1) -> Occupancy: ...
def sweep_shared_memory(devdata: DeviceData, threads: int, registers: int = 0,
                        shared_mem: int | None = None, block_barriers: int = 1) -> Occupancy: ...
def suggest_block_size(devdata: DeviceData, shared_mem: int = 0, registers: int = 0,
                       block_barriers: int = 1) -> Result: ...
def kernel_occupancy(path: PathLike, kernel: str, threads: int, arch: str | None = None,
                     device: int | str | None = None,
                     dynamic_shared_mem: int = 0) -> Occupancy: ...
def devices(memory_usage: bool = False) -> Devices: ...
def attributes(device: int | str | None = None, names: Iterable[str] = ()) -> Attributes: ...
def kernels(paths: PathLike | Iterable[PathLike], arch: str | Iterable[str] | None = None,
            kernel: str | None = None, threads: int | None = None, relocatable: bool = False,
            jobs: int | None = None) -> Kernels: ...
def compile(source_or_path: PathLike, arch: str | Iterable[str] | None = None,
            options: Sequence[str] = (), threads: int | None = None,
            name: str = "kernel.cu") -> Compiled: ...
def check(device: int | str | Iterable[int | str] | None = None,
          only: Iterable[str] | None = None, skip: Iterable[str] | None = None,
          strict: bool = False, raise_on_failure: bool = False,
          options: Sequence[str] = ()) -> CheckReport: ...

class Error(Exception):
    exit_code: int
    status: str
    call: str | None
    cuda_error: str | None
    cuda_error_code: int | None
class LogicError(Error): ...
class UsageError(LogicError, ValueError): ...
import builtins
class RuntimeError(Error, builtins.RuntimeError): ...  # noqa: A001
class DriverNotFound(RuntimeError):
    library: str | None
class NoDevice(RuntimeError): ...
class RequirementError(RuntimeError): ...
class UnknownValueError(RequirementError):
    unknown: dict[str, Any] | None
class MemoryError(Error, builtins.MemoryError): ...  # noqa: A001
class LaunchError(Error): ...
class CompileError(Error):
    log: str
    options: list[str]
    compiler_version: str
class CheckFailed(Error):
    report: CheckReport | None
