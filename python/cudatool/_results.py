"""The results: a document of ``cudatool ... --json`` as a typed object.

Each result class (``Kernels``, ``Devices``, ...) and each record in it (a kernel, a device,
a check: ``cudatool.results``) declares its fields, the document's keys, as attributes
(``_Field``; the types are in the stubs, __init__.pyi and results.pyi, all written from
share/schemas by tools/gen_python_results.py). ``to_dict()`` gives the document itself
(equal to the command's ``--json`` output, ``schema_version`` included), ``repr()`` shows the
keys, and a key no schema names is still an attribute. A large document (the kernels of a big
library) stays text until first read, and records are made as they are read, not before.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    from typing import Any


def _wrap(value: Any) -> Any:
    # A key no schema declares: objects become plain results.
    if isinstance(value, dict):
        return Result(value)
    if isinstance(value, list):
        return [_wrap(v) for v in value]
    return value


def _record_class(name: str) -> type:
    # The records live in cudatool.results, imported at the first read of one (importing
    # cudatool stays cheap).
    from . import results

    return getattr(results, name)


class _Field:
    """A declared field: the document's ``key``, read-only; an object is wrapped in its
    record class, a list of objects in a list of them (``list_of``); an absent key is None.
    A class given by name is looked up in cudatool.results at the first read."""

    __slots__ = ("key", "record", "many")

    def __init__(self, key: str, record: Any = None, *, list_of: Any = None) -> None:
        self.key = key
        self.record = record if list_of is None else list_of
        self.many = list_of is not None

    def _class(self) -> Any:
        record = self.record
        if record.__class__ is str:
            record = self.record = _record_class(record)
        return record

    def __get__(self, result: Any, owner: Any = None) -> Any:
        if result is None:
            return self
        value = result.to_dict().get(self.key)
        if value is None:
            return None
        if self.record is None:
            # A list is a copy (of lists): appending to it leaves the document as it is.
            return _wrap(value) if value.__class__ is list else value
        record = self._class()
        return [record(v) for v in value] if self.many else record(value)

    def __set__(self, result: Any, value: Any) -> None:
        raise AttributeError(f"{self.key!r} is read-only (a result is the command's document)")

    def items(self, result: Any) -> Any:
        """The records of a list field one at a time (iterating a result makes none ahead)."""
        values = result.to_dict().get(self.key) or ()
        return map(self._class(), values) if self.record is not None else iter(values)


class Result:
    """A JSON object as attributes; ``to_dict()`` is the object. A result that is a collection
    (``_items`` names its list: a listing's devices, a scan's kernels) iterates over it."""

    __slots__ = ("_document", "_text")
    _items: str | None = None

    def __init__(self, document: dict | None = None, *, text: bytes | None = None) -> None:
        # A large document (kernels of a big library) is kept as text until first read.
        self._document = document
        self._text = text

    def to_dict(self) -> dict:
        """The document, as ``json.loads`` of the command's ``--json`` output gives it."""
        if self._document is None:
            import json

            self._document = json.loads(self._text) if self._text else {}
            self._text = None
        return self._document

    def __getattr__(self, name: str) -> Any:
        # Only for keys that are not declared fields (those are class attributes).
        if name.startswith("__"):
            raise AttributeError(name)
        document = self.to_dict()
        try:
            return _wrap(document[name])
        except KeyError:
            raise AttributeError(
                f"{type(self).__name__} has no {name!r} (keys: {', '.join(sorted(document))})"
            ) from None

    def __getitem__(self, key: str) -> Any:
        value = self.to_dict()[key]
        # The declared field of this key, typed (a key that is a Python keyword, "pass", is
        # the attribute pass_).
        field = getattr(type(self), key, None)
        if type(field) is not _Field:
            field = getattr(type(self), key + "_", None)
        if type(field) is _Field and field.key == key:
            return field.__get__(self)
        return _wrap(value)

    def __contains__(self, key: str) -> bool:
        return key in self.to_dict()

    def __iter__(self):
        # Without this, Python would iterate by __getitem__(0), __getitem__(1), ...: KeyError 0.
        if self._items is None:
            raise TypeError(f"{type(self).__name__} is not a collection")
        return getattr(type(self), self._items).items(self)

    def keys(self):
        return self.to_dict().keys()

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self.to_dict()))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Result):
            return self.to_dict() == other.to_dict()
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        document = self.to_dict()
        parts = []
        for key in sorted(document):
            value = document[key]
            if isinstance(value, list):
                text = f"[{len(value)} item{'s' if len(value) != 1 else ''}]"
            elif isinstance(value, dict):
                text = "{...}"
            else:
                text = repr(value)
                if len(text) > 40:
                    text = text[:37] + "..."
            parts.append(f"{key}={text}")
        return f"{type(self).__name__}({', '.join(parts)})"


class Devices(Result):
    """``cudatool devices --json``: ``devices``, ``device_count``, ``cuda_version``, ...;
    iterates over ``devices``."""

    _items = "devices"

    # fields: devices.schema.json (tools/gen_python_results.py writes these lines)
    schema_version = _Field("schema_version")
    cuda_version = _Field("cuda_version")
    driver_version = _Field("driver_version")
    device_count = _Field("device_count")
    devices = _Field("devices", list_of="Device")
    peer_access = _Field("peer_access")
    requirements = _Field("requirements", "DeviceRequirements")
    # end of fields


class Attributes(Result):
    """``cudatool attrs --json``: ``device``, ``name`` and ``attributes`` (name -> value)."""

    # fields: attrs.schema.json (tools/gen_python_results.py writes these lines)
    schema_version = _Field("schema_version")
    device = _Field("device")
    name = _Field("name")
    attributes = _Field("attributes", "AttributeValues")
    # end of fields


class Occupancy(Result):
    """``cudatool occupancy --json`` with a sweep or a kernel of a binary."""

    # fields: occupancy.schema.json (tools/gen_python_results.py writes these lines)
    schema_version = _Field("schema_version")
    device = _Field("device", "OccupancyDevice")
    parameter = _Field("parameter")
    records = _Field("records", list_of="SweepRecord")
    suggestion = _Field("suggestion", "BlockSizeSuggestion")
    kernel = _Field("kernel", "OccupancyKernel")
    steps = _Field("steps", list_of="SweepStep")
    improvement = _Field("improvement", "Improvement")
    max_active_clusters = _Field("max_active_clusters")
    max_potential_cluster_size = _Field("max_potential_cluster_size")
    cluster = _Field("cluster", "ClusterOccupancy")
    improvements = _Field("improvements", list_of="Improvement")
    tb_per_mp = _Field("tb_per_mp")
    limited_by = _Field("limited_by")
    occupancy = _Field("occupancy")
    unknown = _Field("unknown", "UnknownLimits")
    threads = _Field("threads")
    shared_mem = _Field("shared_mem")
    registers = _Field("registers")
    block_barriers = _Field("block_barriers")
    limiting_factors = _Field("limiting_factors")
    warps_per_mp = _Field("warps_per_mp")
    max_warps_per_mp = _Field("max_warps_per_mp")
    block_limits = _Field("block_limits", "BlockLimits")
    allocated_registers_per_block = _Field("allocated_registers_per_block")
    allocated_shared_mem_per_block = _Field("allocated_shared_mem_per_block")
    opted_in = _Field("opted_in")
    # end of fields


class Kernels(Result):
    """``cudatool kernels --json``: ``files``, ``images`` and ``kernels``.

    ``warnings`` holds the lines the command prints on stderr (an unreadable entry, a file
    without CUDA code); ``unreadable_entries`` is True where it exits 10. Iterates over
    ``kernels``.
    """

    __slots__ = ("warnings", "unreadable_entries")
    _items = "kernels"

    # fields: kernels.schema.json (tools/gen_python_results.py writes these lines)
    schema_version = _Field("schema_version")
    kernels = _Field("kernels", list_of="Kernel")
    images = _Field("images", list_of="Image")
    files = _Field("files", list_of="ScannedFile")
    # end of fields

    def __init__(self, text: bytes, warnings: list[str], unreadable_entries: bool) -> None:
        super().__init__(text=text)
        self.warnings = warnings
        self.unreadable_entries = unreadable_entries


class KernelComparison(Result):
    """``cudatool kernels --baseline OLD FILE... --json``: ``changes``, ``architectures``,
    ``summary``. ``passed`` is False where a ``fail_on`` rule is broken (the command exits 13);
    ``warnings`` holds its stderr lines. Iterates over ``changes``."""

    __slots__ = ("warnings", "passed")
    _items = "changes"

    # fields: kernels-compare.schema.json (tools/gen_python_results.py writes these lines)
    schema_version = _Field("schema_version")
    baseline = _Field("baseline")
    files = _Field("files")
    threads = _Field("threads")
    changes = _Field("changes", list_of="KernelChange")
    architectures = _Field("architectures", list_of="ArchitectureChange")
    summary = _Field("summary", "ComparisonSummary")
    # end of fields

    def __init__(self, text: bytes, warnings: list[str], passed: bool) -> None:
        super().__init__(text=text)
        self.warnings = warnings
        self.passed = passed


class KernelSizes(Result):
    """``cudatool kernels --sizes --json``: ``files`` (per architecture), ``largest_kernels``,
    ``template_families``, ``duplicates``; ``warnings`` holds its stderr lines."""

    __slots__ = ("warnings",)

    # fields: kernels-sizes.schema.json (tools/gen_python_results.py writes these lines)
    schema_version = _Field("schema_version")
    files = _Field("files", list_of="FileSizes")
    largest_kernels = _Field("largest_kernels", list_of="KernelSize")
    template_families = _Field("template_families", list_of="TemplateFamily")
    duplicates = _Field("duplicates", "Duplicates")
    # end of fields

    def __init__(self, text: bytes, warnings: list[str]) -> None:
        super().__init__(text=text)
        self.warnings = warnings


class Compiled(Result):
    """``cudatool compile --json``: ``kernels`` (resources, occupancy), ``arch``, ``cache``, ...;
    iterates over ``kernels`` (of a compile for one architecture)."""

    __slots__ = ("warnings",)
    _items = "kernels"

    # fields: compile.schema.json (tools/gen_python_results.py writes these lines)
    schema_version = _Field("schema_version")
    source = _Field("source")
    arch = _Field("arch")
    output = _Field("output")
    size_bytes = _Field("size_bytes")
    output_path = _Field("output_path")
    compiler_version = _Field("compiler_version")
    options = _Field("options")
    log = _Field("log")
    memo_hit = _Field("memo_hit")
    compile_seconds = _Field("compile_seconds")
    includes = _Field("includes")
    kept_files = _Field("kept_files")
    kept_dir = _Field("kept_dir")
    cache = _Field("cache", "CompileCache")
    removed_entries = _Field("removed_entries")
    trimmed_entries = _Field("trimmed_entries")
    kernels = _Field("kernels", list_of="CompiledKernel")
    differences = _Field("differences", list_of="LoadDifference")
    engine = _Field("engine")
    engine_reason = _Field("engine_reason")
    targets = _Field("targets", list_of="CompileTarget")
    # end of fields

    def __init__(self, document: dict, warnings: list[str]) -> None:
        super().__init__(document)
        self.warnings = warnings


class CheckReport(Result):
    """``cudatool check --json``: the verdict and every check of every device.

    ``passed`` is False where the command exits 9. Iterates over ``devices``.
    """

    __slots__ = ("passed",)
    _items = "devices"

    # fields: check.schema.json (tools/gen_python_results.py writes these lines)
    schema_version = _Field("schema_version")
    hostname = _Field("hostname")
    driver_version = _Field("driver_version")
    cuda_version = _Field("cuda_version")
    cudatool_version = _Field("cudatool_version")
    kernels = _Field("kernels")
    verdict = _Field("verdict")
    remediation = _Field("remediation")
    remediation_reason = _Field("remediation_reason")
    kernel_log = _Field("kernel_log", "KernelLog")
    exit_code = _Field("exit_code")
    duration_s = _Field("duration_s")
    summary = _Field("summary", "CheckSummary")
    node_checks = _Field("node_checks", list_of="Check")
    devices = _Field("devices", list_of="CheckedDevice")
    # end of fields

    def __init__(self, document: dict, passed: bool) -> None:
        super().__init__(document)
        self.passed = passed


class CompatReport(Result):
    """``cudatool compat --json``: per file, whether its CUDA code runs on each target GPU
    (``native``, ``jit``, ``cannot_run``), why not, and the fix.

    ``exit_status`` is the command's: 0 all can run, 11 some cannot, 12 some only by JIT
    under ``require_native``, 10 something could not be read. ``ok`` is ``exit_status == 0``.
    Iterates over ``files``.
    """

    __slots__ = ("exit_status",)
    _items = "files"

    # fields: compat.schema.json (tools/gen_python_results.py writes these lines)
    schema_version = _Field("schema_version")
    targets = _Field("targets", list_of="CompatTarget")
    driver = _Field("driver", "CompatDriver")
    ptx_jit = _Field("ptx_jit")
    require = _Field("require")
    files = _Field("files", list_of="CompatFile")
    packages = _Field("packages", list_of="CompatPackage")
    summary = _Field("summary", "CompatSummary")
    # end of fields

    def __init__(self, document: dict, exit_status: int) -> None:
        super().__init__(document)
        self.exit_status = exit_status

    @property
    def ok(self) -> bool:
        return self.exit_status == 0
