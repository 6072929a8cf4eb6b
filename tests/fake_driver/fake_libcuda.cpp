// A fake CUDA driver (libfakecuda.so) for tests of error paths and of the CLI on machines
// without a GPU. cudatool loads it when CUDATOOL_LIBCUDA names it. It never replaces runs
// on a real GPU: every value it reports is made up, as configured by these variables:
//   FAKE_CUDA_INIT_RESULT    CUresult that cuInit returns (default 0; 100 = no device)
//   FAKE_CUDA_DEVICES        comma-separated compute capabilities, one per device
//                            (default "9.0,8.0"; "" for none)
//   FAKE_CUDA_REJECT_ATTRS   comma-separated attribute numbers cuDeviceGetAttribute rejects
//   FAKE_CUDA_DRIVER_VERSION cuDriverGetVersion's answer (default 13000)
//   FAKE_CUDA_MEMORY         bytes each fake device has (default 80 GiB); cuMemAlloc
//                            fails with CUDA_ERROR_OUT_OF_MEMORY beyond it
//   FAKE_CUDA_CTX_FAIL       comma-separated ordinals whose cuDevicePrimaryCtxRetain fails
//                            with CUDA_ERROR_UNKNOWN (a device failing mid-check)
//   FAKE_CUDA_UNTERMINATED   "1": cuDeviceGetName and cuDeviceGetPCIBusId fill the whole
//                            buffer and leave no NUL (a misbehaving driver)
//   FAKE_CUDA_DEVICE_COUNT   what cuDeviceGetCount answers instead of the devices' number
//                            (a misbehaving driver: "-1")
//   FAKE_CUDA_CTX_BUSY       comma-separated ordinals whose cuDevicePrimaryCtxRetain fails
//                            with CUDA_ERROR_DEVICE_UNAVAILABLE (an exclusive-process device
//                            held by another process)
//   FAKE_CUDA_CTX_OOM        comma-separated ordinals whose cuDevicePrimaryCtxRetain fails
//                            with CUDA_ERROR_OUT_OF_MEMORY (a device others have filled)
//   FAKE_CUDA_PCI_BUSES      comma-separated PCI bus numbers (hex), one per device (default
//                            1, 2, ...): "0000:BB:00.0"
//   FAKE_CUDA_COMPUTE_MODE   the compute_mode attribute of every device (default 200)
//   FAKE_CUDA_INIT_LOG       a file cuInit appends a line to (tests count driver starts)
//   FAKE_CUDA_BROKEN         comma-separated ordinals for which the driver answers only the
//                            PCI bus id and UUID: name, memory, attributes and contexts fail
//                            with CUDA_ERROR_UNKNOWN (a GPU that answers NVML but not CUDA)
// The devices above are the machine's; what the driver enumerates follows CUDA's rules:
// CUDA_DEVICE_ORDER=PCI_BUS_ID sorts them by bus (the default, FASTEST_FIRST, keeps the
// list's order), then CUDA_VISIBLE_DEVICES picks and orders them by index or UUID prefix,
// stopping at the first entry that names none ("" hides all). Device i's UUID, name and
// memory are those of the machine's device it is ("Fake GPU 0" is the first listed).
// Entry points are exported under the symbols cuda.h declares (cuDeviceTotalMem_v2, ...),
// as the real driver does. Built with -DFAKE_CUDA_OLD it lacks cuDeviceGetUuid_v2 (a
// driver too old for an entry point cudatool uses). Built with -DFAKE_CUDA_STREAMS it has
// streams and events (host-side records, nothing runs) and counts what is alive, for the
// unit tests of the library's handles (fake_cuda_count below); the plain build has none, so
// check and bench-pool stop where they need one.
#include <cuda.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace {

std::string env(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value ? value : fallback;
}

bool listed(const char* variable, std::string_view item) {
  const std::string list = "," + env(variable, "") + ",";
  return list.find("," + std::string(item) + ",") != std::string::npos;
}

struct FakeDevice {
  int major, minor;
};

std::vector<FakeDevice> devices() {
  std::vector<FakeDevice> out;
  const std::string list = env("FAKE_CUDA_DEVICES", "9.0,8.0");
  std::size_t start = 0;
  while (start < list.size()) {
    std::size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    const std::string item = list.substr(start, end - start);
    int major = 0, minor = 0;
    if (std::sscanf(item.c_str(), "%d.%d", &major, &minor) >= 1) out.push_back({major, minor});
    start = end + 1;
  }
  return out;
}

std::vector<unsigned> buses(std::size_t count) {
  std::vector<unsigned> out;
  const std::string list = env("FAKE_CUDA_PCI_BUSES", "");
  std::size_t start = 0;
  while (start < list.size()) {
    std::size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    out.push_back(
        static_cast<unsigned>(std::strtoul(list.substr(start, end - start).c_str(), nullptr, 16)));
    start = end + 1;
  }
  for (std::size_t i = out.size(); i < count; ++i) out.push_back(static_cast<unsigned>(i + 1));
  return out;
}

void fill_uuid(unsigned char (&bytes)[16], int machine_index) {
  for (int i = 0; i < 16; ++i)
    bytes[i] = static_cast<unsigned char>(i == 15 ? machine_index : 0x10 * (machine_index + 1) + i);
}

std::string uuid_text(int machine_index) {
  unsigned char b[16];
  fill_uuid(b, machine_index);
  char text[48];
  std::snprintf(text, sizeof text,
                "gpu-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return text;
}

// The machine's device behind each CUDA ordinal.
std::vector<int> visible() {
  const std::size_t count = devices().size();
  const std::vector<unsigned> bus = buses(count);
  std::vector<int> order;
  for (std::size_t i = 0; i < count; ++i) order.push_back(static_cast<int>(i));
  if (env("CUDA_DEVICE_ORDER", "") == "PCI_BUS_ID")
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return bus[a] < bus[b]; });
  const char* list = std::getenv("CUDA_VISIBLE_DEVICES");
  if (list == nullptr) return order;
  std::vector<int> picked;
  std::string text = list;
  std::size_t start = 0;
  while (start <= text.size() && !text.empty()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(start, end - start);
    for (auto& c : item) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    int found = -1;
    if (!item.empty() && item.find_first_not_of("0123456789") == std::string::npos) {
      const unsigned long index = std::strtoul(item.c_str(), nullptr, 10);
      if (index < order.size()) found = order[index];
    } else if (item.starts_with("gpu-") && item.size() > 4) {
      for (int m : order)
        if (uuid_text(m).starts_with(item)) {
          if (found >= 0) {  // ambiguous prefix: names none
            found = -1;
            break;
          }
          found = m;
        }
    }
    if (found < 0 || std::find(picked.begin(), picked.end(), found) != picked.end()) break;
    picked.push_back(found);
    start = end + 1;
  }
  return picked;
}

int machine_index(CUdevice d) {
  return visible()[static_cast<std::size_t>(d)];
}

std::atomic<bool> g_initialised{false};
std::atomic<unsigned long long> g_allocated{0};
thread_local CUcontext g_current = nullptr;
std::atomic<long long> g_host_allocations{0};

unsigned long long memory_per_device() {
  return std::strtoull(env("FAKE_CUDA_MEMORY", "85899345920").c_str(), nullptr, 10);
}

CUresult check_device(CUdevice d) {
  if (!g_initialised) return CUDA_ERROR_NOT_INITIALIZED;
  return d >= 0 && d < static_cast<int>(visible().size()) ? CUDA_SUCCESS
                                                          : CUDA_ERROR_INVALID_DEVICE;
}

}  // namespace

extern "C" {

CUresult CUDAAPI cuInit(unsigned int) {
  const auto result = static_cast<CUresult>(std::atoi(env("FAKE_CUDA_INIT_RESULT", "0").c_str()));
  if (const char* log = std::getenv("FAKE_CUDA_INIT_LOG")) {
    if (FILE* f = std::fopen(log, "a")) {
      std::fputs("cuInit\n", f);
      std::fclose(f);
    }
  }
  if (result == CUDA_SUCCESS && visible().empty()) return CUDA_ERROR_NO_DEVICE;
  if (result == CUDA_SUCCESS) g_initialised = true;
  return result;
}
CUresult CUDAAPI cuDriverGetVersion(int* v) {
  *v = std::atoi(env("FAKE_CUDA_DRIVER_VERSION", "13000").c_str());
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGetErrorName(CUresult r, const char** s) {
  switch (r) {
    case CUDA_SUCCESS:
      *s = "CUDA_SUCCESS";
      return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_VALUE:
      *s = "CUDA_ERROR_INVALID_VALUE";
      return CUDA_SUCCESS;
    case CUDA_ERROR_OUT_OF_MEMORY:
      *s = "CUDA_ERROR_OUT_OF_MEMORY";
      return CUDA_SUCCESS;
    case CUDA_ERROR_NOT_INITIALIZED:
      *s = "CUDA_ERROR_NOT_INITIALIZED";
      return CUDA_SUCCESS;
    case CUDA_ERROR_NO_DEVICE:
      *s = "CUDA_ERROR_NO_DEVICE";
      return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_DEVICE:
      *s = "CUDA_ERROR_INVALID_DEVICE";
      return CUDA_SUCCESS;
    case CUDA_ERROR_UNKNOWN:
      *s = "CUDA_ERROR_UNKNOWN";
      return CUDA_SUCCESS;
    case CUDA_ERROR_DEVICE_UNAVAILABLE:
      *s = "CUDA_ERROR_DEVICE_UNAVAILABLE";
      return CUDA_SUCCESS;
    case CUDA_ERROR_LAUNCH_FAILED:
      *s = "CUDA_ERROR_LAUNCH_FAILED";
      return CUDA_SUCCESS;
    default:
      *s = nullptr;
      return CUDA_ERROR_INVALID_VALUE;
  }
}
CUresult CUDAAPI cuGetErrorString(CUresult r, const char** s) {
  switch (r) {
    case CUDA_ERROR_INVALID_VALUE:
      *s = "invalid argument";
      return CUDA_SUCCESS;
    case CUDA_ERROR_OUT_OF_MEMORY:
      *s = "out of memory";
      return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_DEVICE:
      *s = "invalid device ordinal";
      return CUDA_SUCCESS;
    case CUDA_ERROR_UNKNOWN:
      *s = "unknown error";
      return CUDA_SUCCESS;
    case CUDA_ERROR_DEVICE_UNAVAILABLE:
      *s = "CUDA-capable device(s) is/are busy or unavailable";
      return CUDA_SUCCESS;
    case CUDA_ERROR_LAUNCH_FAILED:
      *s = "unspecified launch failure";
      return CUDA_SUCCESS;
    default:
      *s = nullptr;
      return CUDA_ERROR_INVALID_VALUE;
  }
}
CUresult CUDAAPI cuDeviceGetCount(int* n) {
  if (!g_initialised) return CUDA_ERROR_NOT_INITIALIZED;
  const std::string count = env("FAKE_CUDA_DEVICE_COUNT", "");
  *n = count.empty() ? static_cast<int>(visible().size()) : std::atoi(count.c_str());
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGet(CUdevice* d, int ordinal) {
  if (CUresult r = check_device(ordinal)) return r;
  *d = ordinal;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGetName(char* name, int len, CUdevice d) {
  if (CUresult r = check_device(d)) return r;
  if (listed("FAKE_CUDA_BROKEN", std::to_string(d))) return CUDA_ERROR_UNKNOWN;
  std::snprintf(name, static_cast<std::size_t>(len), "Fake GPU %d", machine_index(d));
  // FAKE_CUDA_UNTERMINATED=1: a driver that fills the whole buffer and leaves no NUL.
  if (env("FAKE_CUDA_UNTERMINATED", "") == "1")
    std::memset(name + std::strlen(name), 'N', static_cast<std::size_t>(len) - std::strlen(name));
  return CUDA_SUCCESS;
}
#ifndef FAKE_CUDA_OLD
CUresult CUDAAPI cuDeviceGetUuid(CUuuid* uuid, CUdevice d) {
  if (CUresult r = check_device(d)) return r;
  unsigned char bytes[16];
  fill_uuid(bytes, machine_index(d));
  for (int i = 0; i < 16; ++i) uuid->bytes[i] = static_cast<char>(bytes[i]);
  return CUDA_SUCCESS;
}
#endif
CUresult CUDAAPI cuDeviceTotalMem(size_t* bytes, CUdevice d) {
  if (CUresult r = check_device(d)) return r;
  if (listed("FAKE_CUDA_BROKEN", std::to_string(d))) return CUDA_ERROR_UNKNOWN;
  *bytes = memory_per_device();
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGetAttribute(int* value, CUdevice_attribute a, CUdevice d) {
  if (CUresult r = check_device(d)) return r;
  if (a <= 0 || a >= CU_DEVICE_ATTRIBUTE_MAX || listed("FAKE_CUDA_REJECT_ATTRS", std::to_string(a)))
    return CUDA_ERROR_INVALID_VALUE;
  // A broken GPU still tells where it is (cuDeviceGetPCIBusId asks these).
  if (listed("FAKE_CUDA_BROKEN", std::to_string(d)) && a != CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID &&
      a != CU_DEVICE_ATTRIBUTE_PCI_BUS_ID && a != CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID)
    return CUDA_ERROR_UNKNOWN;
  const int m = machine_index(d);
  const FakeDevice dev = devices()[static_cast<std::size_t>(m)];
  const unsigned bus = buses(devices().size())[static_cast<std::size_t>(m)];
  switch (a) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
      *value = dev.major;
      break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
      *value = dev.minor;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
      *value = 1024;
      break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
      *value = 32;
      break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
      *value = 100 + m;
      break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_MODE:
      *value = std::atoi(env("FAKE_CUDA_COMPUTE_MODE", "200").c_str());
      break;
    case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID:
      *value = 0;
      break;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID:
      *value = static_cast<int>(bus);
      break;
    case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID:
      *value = 0;
      break;
    default:
      *value = static_cast<int>(a) * 10;
      break;  // recognisable, never a real value
  }
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGetPCIBusId(char* id, int len, CUdevice d) {
  if (CUresult r = check_device(d)) return r;
  std::snprintf(id, static_cast<std::size_t>(len), "0000:%02X:00.0",
                buses(devices().size())[static_cast<std::size_t>(machine_index(d))]);
  if (env("FAKE_CUDA_UNTERMINATED", "") == "1")
    std::memset(id + std::strlen(id), 'P', static_cast<std::size_t>(len) - std::strlen(id));
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGetByPCIBusId(CUdevice* d, const char* id) {
  unsigned domain = 0, bus = 0, dev = 0, fn = 0;
  if (std::sscanf(id, "%x:%x:%x.%x", &domain, &bus, &dev, &fn) != 4)
    return CUDA_ERROR_INVALID_VALUE;
  if (check_device(static_cast<CUdevice>(bus) - 1)) return CUDA_ERROR_INVALID_DEVICE;
  *d = static_cast<CUdevice>(bus) - 1;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceCanAccessPeer(int* can, CUdevice a, CUdevice b) {
  if (CUresult r = check_device(a)) return r;
  if (CUresult r = check_device(b)) return r;
  *can = a != b;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice d) {
  if (CUresult r = check_device(d)) return r;
  if (listed("FAKE_CUDA_CTX_FAIL", std::to_string(d)) ||
      listed("FAKE_CUDA_BROKEN", std::to_string(d)))
    return CUDA_ERROR_UNKNOWN;
  if (listed("FAKE_CUDA_CTX_BUSY", std::to_string(d))) return CUDA_ERROR_DEVICE_UNAVAILABLE;
  if (listed("FAKE_CUDA_CTX_OOM", std::to_string(d))) return CUDA_ERROR_OUT_OF_MEMORY;
  *ctx = reinterpret_cast<CUcontext>(static_cast<std::uintptr_t>(0x1000 + d));
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice d) {
  return check_device(d);
}
CUresult CUDAAPI cuCtxSetCurrent(CUcontext c) {
  g_current = c;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuCtxGetCurrent(CUcontext* c) {
  *c = g_current;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuCtxSynchronize() {
  return g_current ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}
CUresult CUDAAPI cuMemGetInfo(size_t* free_bytes, size_t* total) {
  if (!g_current) return CUDA_ERROR_INVALID_CONTEXT;
  *total = memory_per_device();
  *free_bytes = *total - g_allocated.load();
  return CUDA_SUCCESS;
}
// Device memory is host memory here, counted against FAKE_CUDA_MEMORY.
CUresult CUDAAPI cuMemAlloc(CUdeviceptr* p, size_t bytes) {
  if (!g_current) return CUDA_ERROR_INVALID_CONTEXT;
  if (bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  if (g_allocated.load() + bytes > memory_per_device()) return CUDA_ERROR_OUT_OF_MEMORY;
  auto* block = static_cast<size_t*>(std::malloc(bytes + sizeof(size_t)));
  if (!block) return CUDA_ERROR_OUT_OF_MEMORY;
  block[0] = bytes;
  g_allocated += bytes;
  *p = reinterpret_cast<CUdeviceptr>(block + 1);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemFree(CUdeviceptr p) {
  if (!p) return CUDA_SUCCESS;
  auto* block = reinterpret_cast<size_t*>(p) - 1;
  g_allocated -= block[0];
  std::free(block);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemHostAlloc(void** p, size_t bytes, unsigned int) {
  if (!g_current) return CUDA_ERROR_INVALID_CONTEXT;
  *p = std::malloc(bytes ? bytes : 1);
  if (*p) ++g_host_allocations;
  return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
CUresult CUDAAPI cuMemFreeHost(void* p) {
  if (p) --g_host_allocations;
  std::free(p);
  return CUDA_SUCCESS;
}

#ifdef FAKE_CUDA_STREAMS
// A stream or event: the context it was made in; an event's recorded state.
struct FakeHandle {
  CUcontext context;
  bool recorded = false;
};
std::atomic<long long> g_streams{0}, g_events{0}, g_wrong_context{0};

CUresult CUDAAPI cuStreamCreate(CUstream* s, unsigned int) {
  if (!g_current) return CUDA_ERROR_INVALID_CONTEXT;
  *s = reinterpret_cast<CUstream>(new FakeHandle{g_current});
  ++g_streams;
  return CUDA_SUCCESS;
}
// The real driver wants the stream's context current (or its device's); counted here.
CUresult CUDAAPI cuStreamDestroy(CUstream s) {
  if (!s) return CUDA_ERROR_INVALID_HANDLE;
  auto* h = reinterpret_cast<FakeHandle*>(s);
  if (h->context != g_current) ++g_wrong_context;
  delete h;
  --g_streams;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuStreamSynchronize(CUstream s) {
  return s ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
CUresult CUDAAPI cuEventCreate(CUevent* e, unsigned int) {
  if (!g_current) return CUDA_ERROR_INVALID_CONTEXT;
  *e = reinterpret_cast<CUevent>(new FakeHandle{g_current});
  ++g_events;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuEventDestroy(CUevent e) {
  if (!e) return CUDA_ERROR_INVALID_HANDLE;
  delete reinterpret_cast<FakeHandle*>(e);
  --g_events;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuEventRecord(CUevent e, CUstream s) {
  if (!e || !s) return CUDA_ERROR_INVALID_HANDLE;
  reinterpret_cast<FakeHandle*>(e)->recorded = true;
  return CUDA_SUCCESS;
}
// As the driver: an event never recorded is an invalid handle. Every interval is 1.5 ms.
CUresult CUDAAPI cuEventElapsedTime(float* ms, CUevent start, CUevent end) {
  if (!start || !end || !reinterpret_cast<FakeHandle*>(start)->recorded ||
      !reinterpret_cast<FakeHandle*>(end)->recorded)
    return CUDA_ERROR_INVALID_HANDLE;
  *ms = 1.5f;
  return CUDA_SUCCESS;
}

// What is alive, for tests: "streams", "events", "host_allocations" (cuMemHostAlloc),
// "device_bytes" (cuMemAlloc), "wrong_context_destroys" (streams destroyed while another
// context was current); -1 for anything else.
__attribute__((visibility("default"))) long long fake_cuda_count(const char* what) {
  const std::string_view w = what;
  if (w == "streams") return g_streams;
  if (w == "events") return g_events;
  if (w == "host_allocations") return g_host_allocations;
  if (w == "device_bytes") return static_cast<long long>(g_allocated.load());
  if (w == "wrong_context_destroys") return g_wrong_context;
  return -1;
}
#endif

}  // extern "C"
