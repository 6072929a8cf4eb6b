"""The records of the results: each object of a `--json` document as a class whose
attributes are its keys (see share/schemas and the stubs, results.pyi). Each is a
`cudatool.Result`: `to_dict()` is the object itself, `record["key"]` and `in` work
as on the result. A key the document lacks reads None."""

# Written by tools/gen_python_results.py from share/schemas/*.schema.json: edit the schemas
# (or the class names in the script) and run it, not this file.

from ._results import Result, _Field

__all__ = [
    "ArchitectureChange", "ArchitectureSizes", "AttributeValues", "BlockLimits",
    "BlockSizeSuggestion", "Check", "CheckSummary", "CheckedDevice", "ClusterDriverAnswer",
    "ClusterOccupancy", "ClusterSize", "ComparisonSummary", "CompatContainer", "CompatDecision",
    "CompatDriver", "CompatEntry", "CompatFile", "CompatPackage", "CompatSummary", "CompatTarget",
    "CompatVerdict", "CompileCache", "CompileTarget", "CompiledKernel", "Device", "DeviceProcess",
    "DeviceRequirements", "DeviceUse", "DuplicateKernel", "Duplicates", "FatbinSection",
    "FileSizes", "Image", "Improvement", "Kernel", "KernelChange", "KernelLog", "KernelMeasures",
    "KernelOccupancy", "KernelResources", "KernelSize", "LoadDifference", "OccupancyDevice",
    "OccupancyKernel", "OtherGpuXids", "ScannedFile", "SweepRecord", "SweepStep",
    "TemplateFamily", "UnknownLimits", "Xid"
]


class ArchitectureChange(Result):
    """An architecture's images in the two builds."""

    __slots__ = ()

    arch = _Field("arch")
    old_images = _Field("old_images")
    new_images = _Field("new_images")
    old_bytes = _Field("old_bytes")
    new_bytes = _Field("new_bytes")
    status = _Field("status")


class ArchitectureSizes(Result):
    """The bytes of one architecture in a file."""

    __slots__ = ()

    arch = _Field("arch")
    kind = _Field("kind")
    images = _Field("images")
    kernels = _Field("kernels")
    stored_bytes = _Field("stored_bytes")
    uncompressed_bytes = _Field("uncompressed_bytes")
    file_bytes = _Field("file_bytes")


class AttributeValues(Result):
    """Every attribute the driver answers, by its lower-case name: an int."""

    __slots__ = ()


class BlockLimits(Result):
    """Blocks per SM each resource allows (None: no limit)."""

    __slots__ = ()

    device = _Field("device")
    warps = _Field("warps")
    regs = _Field("regs")
    smem = _Field("smem")
    barriers = _Field("barriers")


class BlockSizeSuggestion(Result):
    """The block size cudaOccupancyMaxPotentialBlockSize chooses."""

    __slots__ = ()

    block_size = _Field("block_size")
    tb_per_mp = _Field("tb_per_mp")
    occupancy = _Field("occupancy")
    smallest_block_size = _Field("smallest_block_size")
    min_grid_size = _Field("min_grid_size")


class Check(Result):
    """One check's verdict, value and reason."""

    __slots__ = ()

    check = _Field("check")
    name = _Field("name")
    verdict = _Field("verdict")
    value = _Field("value")
    threshold = _Field("threshold")
    unit = _Field("unit")
    comparison = _Field("comparison")
    reason = _Field("reason")
    remediation = _Field("remediation")
    peer = _Field("peer")
    shared_with = _Field("shared_with")


class CheckSummary(Result):
    """How many checks passed, warned, failed, skipped."""

    __slots__ = ()

    pass_ = _Field("pass")
    warn = _Field("warn")
    fail = _Field("fail")
    skipped = _Field("skipped")


class Xid(Result):
    """One XID of the kernel log: how often, what, what to do."""

    __slots__ = ()

    xid = _Field("xid")
    count = _Field("count")
    mnemonic = _Field("mnemonic")
    description = _Field("description")
    nvidia_action = _Field("nvidia_action")
    remediation = _Field("remediation")
    latest_uptime_s = _Field("latest_uptime_s")
    latest_time = _Field("latest_time")
    latest_text = _Field("latest_text")


class DeviceProcess(Result):
    """Another process with a context on the device."""

    __slots__ = ()

    pid = _Field("pid")
    name = _Field("name")
    used_memory_bytes = _Field("used_memory_bytes")
    compute = _Field("compute")
    graphics = _Field("graphics")


class DeviceUse(Result):
    """Who else used the device (NVML), before cudatool's context."""

    __slots__ = ()

    processes = _Field("processes", list_of=DeviceProcess)
    used_memory_bytes = _Field("used_memory_bytes")
    total_memory_bytes = _Field("total_memory_bytes")
    used_excludes_reserved = _Field("used_excludes_reserved")
    gpu_utilization_percent = _Field("gpu_utilization_percent")
    memory_utilization_percent = _Field("memory_utilization_percent")
    utilization_readings = _Field("utilization_readings")
    utilization_window_s = _Field("utilization_window_s")
    compute_mode = _Field("compute_mode")
    context_refused = _Field("context_refused")


class CheckedDevice(Result):
    """A device and its checks."""

    __slots__ = ()

    ordinal = _Field("ordinal")
    name = _Field("name")
    compute_capability = _Field("compute_capability")
    compute_capability_major = _Field("compute_capability_major")
    compute_capability_minor = _Field("compute_capability_minor")
    arch = _Field("arch")
    max_threads_per_block = _Field("max_threads_per_block")
    max_shared_memory_per_block_optin = _Field("max_shared_memory_per_block_optin")
    l2_cache_size_bytes = _Field("l2_cache_size_bytes")
    clock_rate_khz = _Field("clock_rate_khz")
    total_memory_bytes = _Field("total_memory_bytes")
    multiprocessor_count = _Field("multiprocessor_count")
    pci_bus_id = _Field("pci_bus_id")
    pci_bus_id_nvml = _Field("pci_bus_id_nvml")
    nvml_index = _Field("nvml_index")
    uuid = _Field("uuid")
    error = _Field("error")
    memory_clock_rate_khz = _Field("memory_clock_rate_khz")
    global_memory_bus_width_bits = _Field("global_memory_bus_width_bits")
    verdict = _Field("verdict")
    remediation = _Field("remediation")
    xids = _Field("xids", list_of=Xid)
    occupancy = _Field("occupancy", DeviceUse)
    checks = _Field("checks", list_of=Check)


class ClusterDriverAnswer(Result):
    """The driver's own cluster answers (--device)."""

    __slots__ = ()

    max_active_clusters = _Field("max_active_clusters")
    max_potential_cluster_size = _Field("max_potential_cluster_size")
    sizes = _Field("sizes")
    stand_in_blocks_per_sm = _Field("stand_in_blocks_per_sm")
    stand_in_shared_memory = _Field("stand_in_shared_memory")


class ClusterSize(Result):
    """Active clusters at one cluster size."""

    __slots__ = ()

    size = _Field("size")
    max_active_clusters = _Field("max_active_clusters")
    active_blocks = _Field("active_blocks")
    limited_by = _Field("limited_by")


class ClusterOccupancy(Result):
    """The parts of a thread-block-cluster answer (--cluster)."""

    __slots__ = ()

    dims = _Field("dims")
    size = _Field("size")
    non_portable = _Field("non_portable")
    product = _Field("product")
    gpc_sms = _Field("gpc_sms")
    measured = _Field("measured")
    reason = _Field("reason")
    blocks_per_sm = _Field("blocks_per_sm")
    cluster_blocks_per_sm = _Field("cluster_blocks_per_sm")
    active_blocks = _Field("active_blocks")
    gpcs_used = _Field("gpcs_used")
    limited_by = _Field("limited_by")
    source = _Field("source")
    measured_max_active_clusters = _Field("measured_max_active_clusters")
    driver = _Field("driver", ClusterDriverAnswer)
    driver_error = _Field("driver_error")
    sizes = _Field("sizes", list_of=ClusterSize)


class ComparisonSummary(Result):
    """Counts of the comparison and the --fail-on verdict."""

    __slots__ = ()

    old_kernels = _Field("old_kernels")
    new_kernels = _Field("new_kernels")
    unchanged = _Field("unchanged")
    changed = _Field("changed")
    improved = _Field("improved")
    worsened = _Field("worsened")
    added = _Field("added")
    removed = _Field("removed")
    old_bytes = _Field("old_bytes")
    new_bytes = _Field("new_bytes")
    regressions = _Field("regressions")
    broken_rules = _Field("broken_rules")
    passed = _Field("passed")


class CompatEntry(Result):
    """An image of a fatbin container."""

    __slots__ = ()

    kind = _Field("kind")
    arch = _Field("arch")
    ptx_version = _Field("ptx_version")
    ptx_text_version = _Field("ptx_text_version")
    relocatable = _Field("relocatable")
    size = _Field("size")
    error = _Field("error")


class CompatDecision(Result):
    """What the driver would load from the container for a target."""

    __slots__ = ()

    outcome = _Field("outcome")
    entry = _Field("entry")
    holds_code_for_target = _Field("holds_code_for_target")


class CompatContainer(Result):
    """A fatbin container and the driver's choices."""

    __slots__ = ()

    member = _Field("member")
    section = _Field("section")
    offset = _Field("offset")
    registered = _Field("registered")
    entries = _Field("entries", list_of=CompatEntry)
    decisions = _Field("decisions", list_of=CompatDecision)


class CompatDriver(Result):
    """The driver the verdicts assume."""

    __slots__ = ()

    cuda_version = _Field("cuda_version")
    release = _Field("release")
    max_ptx_version = _Field("max_ptx_version")
    source = _Field("source")


class CompatVerdict(Result):
    """Whether a file runs on one target, and why."""

    __slots__ = ()

    target = _Field("target")
    verdict = _Field("verdict")
    reason = _Field("reason")
    native = _Field("native")
    jit = _Field("jit")
    other_gpus = _Field("other_gpus")
    failed = _Field("failed")
    unloadable = _Field("unloadable")
    empty = _Field("empty")
    kernels = _Field("kernels")
    jit_ptx_bytes = _Field("jit_ptx_bytes")
    ptx_needed = _Field("ptx_needed")
    detail = _Field("detail")
    fix = _Field("fix")


class CompatFile(Result):
    """A file's CUDA code and whether it runs on each target."""

    __slots__ = ()

    path = _Field("path")
    package = _Field("package")
    size = _Field("size")
    error = _Field("error")
    has_cuda_code = _Field("has_cuda_code")
    verdict = _Field("verdict")
    containers = _Field("containers")
    unreadable_entries = _Field("unreadable_entries")
    sass = _Field("sass")
    ptx = _Field("ptx")
    lto_ir = _Field("lto_ir")
    cuda_runtimes = _Field("cuda_runtimes")
    verdicts = _Field("verdicts", list_of=CompatVerdict)
    container_detail = _Field("container_detail", list_of=CompatContainer)


class CompatPackage(Result):
    """A Python package and its CUDA code."""

    __slots__ = ()

    name = _Field("name")
    version = _Field("version")
    location = _Field("location")
    cuda_runtime = _Field("cuda_runtime")
    files_with_cuda_code = _Field("files_with_cuda_code")
    verdict = _Field("verdict")


class CompatSummary(Result):
    """Counts of the verdicts and the exit status."""

    __slots__ = ()

    files_examined = _Field("files_examined")
    cannot_run = _Field("cannot_run")
    jit = _Field("jit")
    native = _Field("native")
    no_cuda_code = _Field("no_cuda_code")
    unreadable = _Field("unreadable")
    exit_status = _Field("exit_status")
    verdict = _Field("verdict")


class CompatTarget(Result):
    """A GPU the code must run on."""

    __slots__ = ()

    name = _Field("name")
    arch = _Field("arch")
    compute_capability = _Field("compute_capability")
    source = _Field("source")


class CompileCache(Result):
    """The compile cache: this compile's entry, or its state."""

    __slots__ = ()

    enabled = _Field("enabled")
    dir = _Field("dir")
    hit = _Field("hit")
    key = _Field("key")
    path = _Field("path")
    entries = _Field("entries")
    bytes = _Field("bytes")
    max_bytes = _Field("max_bytes")


class KernelOccupancy(Result):
    """A kernel's occupancy at --threads."""

    __slots__ = ()

    threads = _Field("threads")
    tb_per_mp = _Field("tb_per_mp")
    warps_per_mp = _Field("warps_per_mp")
    occupancy = _Field("occupancy")
    limited_by = _Field("limited_by")
    reason = _Field("reason")
    max_active_clusters = _Field("max_active_clusters")
    cluster_reason = _Field("cluster_reason")


class KernelResources(Result):
    """A kernel's resources as the driver loaded them."""

    __slots__ = ()

    name = _Field("name")
    demangled = _Field("demangled")
    num_regs = _Field("num_regs")
    shared_size_bytes = _Field("shared_size_bytes")
    local_size_bytes = _Field("local_size_bytes")
    const_size_bytes = _Field("const_size_bytes")
    max_threads_per_block = _Field("max_threads_per_block")
    num_barriers = _Field("num_barriers")
    stack_unknown = _Field("stack_unknown")


class CompiledKernel(Result):
    """A compiled kernel and its resources."""

    __slots__ = ()

    occupancy = _Field("occupancy", KernelOccupancy)
    loaded = _Field("loaded", KernelResources)
    name = _Field("name")
    demangled = _Field("demangled")
    num_regs = _Field("num_regs")
    shared_size_bytes = _Field("shared_size_bytes")
    local_size_bytes = _Field("local_size_bytes")
    const_size_bytes = _Field("const_size_bytes")
    max_threads_per_block = _Field("max_threads_per_block")
    num_barriers = _Field("num_barriers")
    stack_unknown = _Field("stack_unknown")


class LoadDifference(Result):
    """An attribute where the offline reading and the driver differ."""

    __slots__ = ()

    kernel = _Field("kernel")
    attribute = _Field("attribute")
    offline = _Field("offline")
    loaded = _Field("loaded")


class CompileTarget(Result):
    """The compile for one of several architectures."""

    __slots__ = ()

    source = _Field("source")
    arch = _Field("arch")
    output = _Field("output")
    size_bytes = _Field("size_bytes")
    output_path = _Field("output_path")
    compiler = _Field("compiler")
    compiler_version = _Field("compiler_version")
    options = _Field("options")
    log = _Field("log")
    memo_hit = _Field("memo_hit")
    compile_seconds = _Field("compile_seconds")
    includes = _Field("includes")
    kept_files = _Field("kept_files")
    kept_dir = _Field("kept_dir")
    engine_reason = _Field("engine_reason")
    engine = _Field("engine")
    cache = _Field("cache", CompileCache)
    kernels = _Field("kernels", list_of=CompiledKernel)
    differences = _Field("differences", list_of=LoadDifference)


class Device(Result):
    """A device of `devices`: its identity and limits."""

    __slots__ = ()

    ordinal = _Field("ordinal")
    name = _Field("name")
    compute_capability = _Field("compute_capability")
    compute_capability_major = _Field("compute_capability_major")
    compute_capability_minor = _Field("compute_capability_minor")
    arch = _Field("arch")
    total_memory_bytes = _Field("total_memory_bytes")
    multiprocessor_count = _Field("multiprocessor_count")
    pci_bus_id = _Field("pci_bus_id")
    pci_bus_id_nvml = _Field("pci_bus_id_nvml")
    uuid = _Field("uuid")
    error = _Field("error")
    max_threads_per_block = _Field("max_threads_per_block")
    max_shared_memory_per_block_optin = _Field("max_shared_memory_per_block_optin")
    l2_cache_size_bytes = _Field("l2_cache_size_bytes")
    clock_rate_khz = _Field("clock_rate_khz")
    memory_clock_rate_khz = _Field("memory_clock_rate_khz")
    global_memory_bus_width_bits = _Field("global_memory_bus_width_bits")
    free_memory_bytes = _Field("free_memory_bytes")
    used_memory_bytes = _Field("used_memory_bytes")


class DeviceRequirements(Result):
    """Whether the devices meet --min-cc/--min-memory/--min-count."""

    __slots__ = ()

    met = _Field("met")
    qualifying_devices = _Field("qualifying_devices")
    problems = _Field("problems")


class DuplicateKernel(Result):
    """A kernel with identical copies: how many, and the bytes they add."""

    __slots__ = ()

    name = _Field("name")
    demangled = _Field("demangled")
    arch = _Field("arch")
    file = _Field("file")
    image = _Field("image")
    code_size_bytes = _Field("code_size_bytes")
    copies = _Field("copies")
    extra_code_bytes = _Field("extra_code_bytes")


class Duplicates(Result):
    """Identical images and kernel copies."""

    __slots__ = ()

    identical_images = _Field("identical_images")
    identical_image_bytes = _Field("identical_image_bytes")
    kernel_copies = _Field("kernel_copies")
    kernel_copy_bytes = _Field("kernel_copy_bytes")
    kernels = _Field("kernels", list_of=DuplicateKernel)


class FatbinSection(Result):
    """A section of fatbin containers in a file."""

    __slots__ = ()

    member = _Field("member")
    name = _Field("name")
    size = _Field("size")
    container_bytes = _Field("container_bytes")
    containers = _Field("containers")


class FileSizes(Result):
    """Where the bytes of one file go."""

    __slots__ = ()

    path = _Field("path")
    size = _Field("size")
    fatbin_section_bytes = _Field("fatbin_section_bytes")
    entry_bytes = _Field("entry_bytes")
    overhead_bytes = _Field("overhead_bytes")
    other_image_bytes = _Field("other_image_bytes")
    fatbin_sections = _Field("fatbin_sections", list_of=FatbinSection)
    architectures = _Field("architectures", list_of=ArchitectureSizes)


class Image(Result):
    """A CUDA image (CUBIN, PTX, LTO IR) of a file."""

    __slots__ = ()

    file = _Field("file")
    member = _Field("member")
    section = _Field("section")
    container_offset = _Field("container_offset")
    offset = _Field("offset")
    kind = _Field("kind")
    arch = _Field("arch")
    compression = _Field("compression")
    stored_size = _Field("stored_size")
    size = _Field("size")
    skipped = _Field("skipped")
    relocatable = _Field("relocatable")
    kernel_count = _Field("kernel_count")
    file_bytes = _Field("file_bytes")
    same_bytes_as = _Field("same_bytes_as")
    error = _Field("error")


class Improvement(Result):
    """The smallest cut of one resource that fits more blocks per SM."""

    __slots__ = ()

    resource = _Field("resource")
    value = _Field("value")
    reduction = _Field("reduction")
    tb_per_mp = _Field("tb_per_mp")
    occupancy = _Field("occupancy")


class Kernel(Result):
    """A kernel of an image and its resources."""

    __slots__ = ()

    file = _Field("file")
    member = _Field("member")
    arch = _Field("arch")
    image = _Field("image")
    name = _Field("name")
    demangled = _Field("demangled")
    num_regs = _Field("num_regs")
    shared_size_bytes = _Field("shared_size_bytes")
    local_size_bytes = _Field("local_size_bytes")
    const_size_bytes = _Field("const_size_bytes")
    max_threads_per_block = _Field("max_threads_per_block")
    num_barriers = _Field("num_barriers")
    launch_bounds_max_threads = _Field("launch_bounds_max_threads")
    required_block_size = _Field("required_block_size")
    cluster_dims = _Field("cluster_dims")
    max_registers = _Field("max_registers")
    relocatable = _Field("relocatable")
    stack_unknown = _Field("stack_unknown")
    code_size_bytes = _Field("code_size_bytes")
    spill_store_bytes = _Field("spill_store_bytes")
    spill_load_bytes = _Field("spill_load_bytes")
    occupancy = _Field("occupancy", KernelOccupancy)


class KernelMeasures(Result):
    """A kernel's measures in one build (None: unknown)."""

    __slots__ = ()

    registers = _Field("registers")
    spill_stores = _Field("spill_stores")
    spill_loads = _Field("spill_loads")
    local = _Field("local")
    shared = _Field("shared")
    barriers = _Field("barriers")
    occupancy = _Field("occupancy")
    code_size = _Field("code_size")
    occupancy_reason = _Field("occupancy_reason")


class KernelChange(Result):
    """A kernel added, removed or changed."""

    __slots__ = ()

    kind = _Field("kind")
    name = _Field("name")
    demangled = _Field("demangled")
    arch = _Field("arch")
    relocatable = _Field("relocatable")
    old = _Field("old", KernelMeasures)
    new = _Field("new", KernelMeasures)
    regressions = _Field("regressions")


class OtherGpuXids(Result):
    """XIDs of a GPU that is not one of the devices."""

    __slots__ = ()

    pci_device = _Field("pci_device")
    xids = _Field("xids", list_of=Xid)


class KernelLog(Result):
    """Where the xid check read the kernel log."""

    __slots__ = ()

    readable = _Field("readable")
    source = _Field("source")
    note = _Field("note")
    xid_catalog = _Field("xid_catalog")
    other_gpus = _Field("other_gpus", list_of=OtherGpuXids)


class KernelSize(Result):
    """A kernel's code size (and, as a duplicate, its copies)."""

    __slots__ = ()

    name = _Field("name")
    demangled = _Field("demangled")
    arch = _Field("arch")
    file = _Field("file")
    image = _Field("image")
    code_size_bytes = _Field("code_size_bytes")
    copies = _Field("copies")
    extra_code_bytes = _Field("extra_code_bytes")


class OccupancyDevice(Result):
    """What occupancy depends on (DeviceData.to_dict(); None: unknown)."""

    __slots__ = ()

    origin = _Field("origin")
    max_threads = _Field("max_threads")
    warps_per_mp = _Field("warps_per_mp")
    thread_blocks_per_mp = _Field("thread_blocks_per_mp")
    registers = _Field("registers")
    shared_memory = _Field("shared_memory")
    smem_granularity = _Field("smem_granularity")
    smem_alloc_granularity = _Field("smem_alloc_granularity")
    name = _Field("name")
    family = _Field("family")
    compute_capability = _Field("compute_capability")
    max_threads_per_block = _Field("max_threads_per_block")
    warp_size = _Field("warp_size")
    max_threads_per_multiprocessor = _Field("max_threads_per_multiprocessor")
    max_blocks_per_multiprocessor = _Field("max_blocks_per_multiprocessor")
    registers_per_multiprocessor = _Field("registers_per_multiprocessor")
    registers_per_block = _Field("registers_per_block")
    max_registers_per_thread = _Field("max_registers_per_thread")
    register_allocation_granularity = _Field("register_allocation_granularity")
    shared_memory_per_multiprocessor = _Field("shared_memory_per_multiprocessor")
    shared_memory_per_block = _Field("shared_memory_per_block")
    shared_memory_per_block_optin = _Field("shared_memory_per_block_optin")
    reserved_shared_memory_per_block = _Field("reserved_shared_memory_per_block")
    shared_memory_allocation_granularity = _Field("shared_memory_allocation_granularity")
    shared_memory_banks = _Field("shared_memory_banks")
    cache_line_size = _Field("cache_line_size")
    sm_count = _Field("sm_count")
    sm_count_part = _Field("sm_count_part")
    unknown_fields = _Field("unknown_fields")
    unknown_reason = _Field("unknown_reason")


class OccupancyKernel(Result):
    """The kernel of --kernel-from: its resources and where it is."""

    __slots__ = ()

    name = _Field("name")
    demangled = _Field("demangled")
    num_regs = _Field("num_regs")
    shared_size_bytes = _Field("shared_size_bytes")
    local_size_bytes = _Field("local_size_bytes")
    const_size_bytes = _Field("const_size_bytes")
    max_threads_per_block = _Field("max_threads_per_block")
    num_barriers = _Field("num_barriers")
    stack_unknown = _Field("stack_unknown")
    file = _Field("file")
    arch = _Field("arch")


class ScannedFile(Result):
    """A file that was read."""

    __slots__ = ()

    path = _Field("path")
    size = _Field("size")
    has_cuda_code = _Field("has_cuda_code")
    note = _Field("note")
    relocatable_leftovers_skipped = _Field("relocatable_leftovers_skipped")
    fatbin_sections = _Field("fatbin_sections", list_of=FatbinSection)


class SweepRecord(Result):
    """The occupancy at one point of a sweep."""

    __slots__ = ()

    threads = _Field("threads")
    shared_mem = _Field("shared_mem")
    registers = _Field("registers")
    block_barriers = _Field("block_barriers")
    tb_per_mp = _Field("tb_per_mp")
    limited_by = _Field("limited_by")
    limiting_factors = _Field("limiting_factors")
    warps_per_mp = _Field("warps_per_mp")
    max_warps_per_mp = _Field("max_warps_per_mp")
    occupancy = _Field("occupancy")
    block_limits = _Field("block_limits", BlockLimits)
    allocated_registers_per_block = _Field("allocated_registers_per_block")
    allocated_shared_mem_per_block = _Field("allocated_shared_mem_per_block")
    opted_in = _Field("opted_in")


class SweepStep(Result):
    """A run of sweep points with the same occupancy."""

    __slots__ = ()

    first = _Field("first")
    last = _Field("last")
    tb_per_mp = _Field("tb_per_mp")
    warps_per_mp = _Field("warps_per_mp")
    occupancy = _Field("occupancy")
    limited_by = _Field("limited_by")


class TemplateFamily(Result):
    """The instantiations of one template."""

    __slots__ = ()

    name = _Field("name")
    kernels = _Field("kernels")
    code_bytes = _Field("code_bytes")


class UnknownLimits(Result):
    """Why the architecture's limits are unknown, and which."""

    __slots__ = ()

    architecture = _Field("architecture")
    reason = _Field("reason")
    unknown_fields = _Field("unknown_fields")
