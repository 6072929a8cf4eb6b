"""Plain result objects: a document of ``cudatool ... --json`` as attributes.

Each wraps the parsed document: its keys are attributes (nested objects are results too,
lists of objects lists of results), ``to_dict()`` gives the document itself (equal to the
command's ``--json`` output, ``schema_version`` included) and ``repr()`` shows the keys.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    from typing import Any


def _wrap(value: Any) -> Any:
    if isinstance(value, dict):
        return Result(value)
    if isinstance(value, list):
        return [_wrap(v) for v in value]
    return value


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
        return _wrap(self.to_dict()[key])

    def __contains__(self, key: str) -> bool:
        return key in self.to_dict()

    def __iter__(self):
        # Without this, Python would iterate by __getitem__(0), __getitem__(1), ...: KeyError 0.
        if self._items is None:
            raise TypeError(f"{type(self).__name__} is not a collection")
        return iter(_wrap(self.to_dict().get(self._items, [])))

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


class Attributes(Result):
    """``cudatool attrs --json``: ``device``, ``name`` and ``attributes`` (name -> value)."""


class Occupancy(Result):
    """``cudatool occupancy --json`` with a sweep or a kernel of a binary."""


class Kernels(Result):
    """``cudatool kernels --json``: ``files``, ``images`` and ``kernels``.

    ``warnings`` holds the lines the command prints on stderr (an unreadable entry, a file
    without CUDA code); ``unreadable_entries`` is True where it exits 10. Iterates over
    ``kernels``.
    """

    __slots__ = ("warnings", "unreadable_entries")
    _items = "kernels"

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

    def __init__(self, text: bytes, warnings: list[str], passed: bool) -> None:
        super().__init__(text=text)
        self.warnings = warnings
        self.passed = passed


class KernelSizes(Result):
    """``cudatool kernels --sizes --json``: ``files`` (per architecture), ``largest_kernels``,
    ``template_families``, ``duplicates``; ``warnings`` holds its stderr lines."""

    __slots__ = ("warnings",)

    def __init__(self, text: bytes, warnings: list[str]) -> None:
        super().__init__(text=text)
        self.warnings = warnings


class Compiled(Result):
    """``cudatool compile --json``: ``kernels`` (resources, occupancy), ``arch``, ``cache``, ...;
    iterates over ``kernels`` (of a compile for one architecture)."""

    __slots__ = ("warnings",)
    _items = "kernels"

    def __init__(self, document: dict, warnings: list[str]) -> None:
        super().__init__(document)
        self.warnings = warnings


class CheckReport(Result):
    """``cudatool check --json``: the verdict and every check of every device.

    ``passed`` is False where the command exits 9. Iterates over ``devices``.
    """

    __slots__ = ("passed",)
    _items = "devices"

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

    def __init__(self, document: dict, exit_status: int) -> None:
        super().__init__(document)
        self.exit_status = exit_status

    @property
    def ok(self) -> bool:
        return self.exit_status == 0
