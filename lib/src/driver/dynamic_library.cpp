#include "driver/dynamic_library.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <iterator>
#include <mutex>
#include <utility>

#include "cudatool/base/error.hpp"
#include "cudatool/base/text.hpp"

namespace cudatool {
namespace {

// The signals whose handling is the process's (cudatool's, or its host's: Python's SIGINT
// handler raises KeyboardInterrupt): a library opened here never changes them. libnvrtc
// installs handlers for SIGINT and SIGTERM while its front end runs, which exit(4): a
// Ctrl-C then ended cudatool with "requirement unmet" and no message, and ended a Python
// interpreter with no KeyboardInterrupt and no `finally` run. Its calls of signal() and
// sigaction() for these signals are answered from a shadow table instead, so that its own
// save-and-restore stays consistent, and the process's handlers (or the default action)
// stay in place.
constexpr int kOwnedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

struct Shadow {
  std::mutex mutex;
  bool known[std::size(kOwnedSignals)] = {};
  struct sigaction action[std::size(kOwnedSignals)] = {};
};

Shadow& shadow() {
  static Shadow* const s = new Shadow;  // never destroyed: a library may call at exit
  return *s;
}

int owned_index(int sig) {
  for (std::size_t i = 0; i < std::size(kOwnedSignals); ++i)
    if (kOwnedSignals[i] == sig) return static_cast<int>(i);
  return -1;
}

int library_sigaction(int sig, const struct sigaction* act, struct sigaction* old) {
  const int i = owned_index(sig);
  if (i < 0) return ::sigaction(sig, act, old);
  Shadow& s = shadow();
  std::lock_guard lock(s.mutex);
  if (!s.known[i]) {
    // What the library sees first is what is there.
    if (::sigaction(sig, nullptr, &s.action[i]) != 0) return -1;
    s.known[i] = true;
  }
  if (old) *old = s.action[i];
  if (act) s.action[i] = *act;
  return 0;
}

sighandler_t library_signal(int sig, sighandler_t handler) {
  if (owned_index(sig) < 0) return ::signal(sig, handler);
  struct sigaction action {
  }, old{};
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  if (library_sigaction(sig, &action, &old) != 0) return SIG_ERR;
  return old.sa_handler;
}

// The library's PT_GNU_RELRO range, found by its load address.
struct Relro {
  ElfW(Addr) base = 0;
  ElfW(Addr) begin = 0, end = 0;
};

int find_relro(struct dl_phdr_info* info, std::size_t, void* data) {
  auto* relro = static_cast<Relro*>(data);
  if (info->dlpi_addr != relro->base) return 0;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i)
    if (info->dlpi_phdr[i].p_type == PT_GNU_RELRO) {
      relro->begin = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
      relro->end = relro->begin + info->dlpi_phdr[i].p_memsz;
    }
  return 1;
}

// Points the library's imports of signal() and sigaction() (their GOT slots, bound at load:
// RTLD_NOW) at the functions above. A library without such imports is left as it is.
void keep_signals_from(void* handle) {
  struct link_map* map = nullptr;
  if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr || map->l_ld == nullptr)
    return;
  const ElfW(Addr) base = map->l_addr;
  // The loader has already added the load address to these on the targets built for
  // (x86-64, AArch64); an address below it has not been.
  const auto at = [base](ElfW(Addr) a) { return a < base ? a + base : a; };
  const ElfW(Sym)* symbols = nullptr;
  const char* names = nullptr;
  std::size_t names_size = 0;
  const ElfW(Rela) * tables[2] = {};
  std::size_t sizes[2] = {};
  for (const ElfW(Dyn)* d = map->l_ld; d->d_tag != DT_NULL; ++d) {
    switch (d->d_tag) {
      case DT_SYMTAB:
        symbols = reinterpret_cast<const ElfW(Sym)*>(at(d->d_un.d_ptr));
        break;
      case DT_STRTAB:
        names = reinterpret_cast<const char*>(at(d->d_un.d_ptr));
        break;
      case DT_STRSZ:
        names_size = d->d_un.d_val;
        break;
      case DT_JMPREL:
        tables[0] = reinterpret_cast<const ElfW(Rela)*>(at(d->d_un.d_ptr));
        break;
      case DT_PLTRELSZ:
        sizes[0] = d->d_un.d_val;
        break;
      case DT_RELA:
        tables[1] = reinterpret_cast<const ElfW(Rela)*>(at(d->d_un.d_ptr));
        break;
      case DT_RELASZ:
        sizes[1] = d->d_un.d_val;
        break;
      default:
        break;
    }
  }
  if (symbols == nullptr || names == nullptr) return;
#if defined(__x86_64__)
  constexpr unsigned kSlotTypes[] = {R_X86_64_JUMP_SLOT, R_X86_64_GLOB_DAT};
#elif defined(__aarch64__)
  constexpr unsigned kSlotTypes[] = {R_AARCH64_JUMP_SLOT, R_AARCH64_GLOB_DAT};
#else
  return;  // no other target is built for
#endif
  Relro relro;
  relro.base = base;
  ::dl_iterate_phdr(find_relro, &relro);
  const auto page = static_cast<ElfW(Addr)>(::sysconf(_SC_PAGESIZE));
  for (int t = 0; t < 2; ++t) {
    if (tables[t] == nullptr) continue;
    for (std::size_t k = 0; k < sizes[t] / sizeof(ElfW(Rela)); ++k) {
      const ElfW(Rela)& r = tables[t][k];
      const auto type = static_cast<unsigned>(ELF64_R_TYPE(r.r_info));
      if (type != kSlotTypes[0] && type != kSlotTypes[1]) continue;
      const std::size_t name = symbols[ELF64_R_SYM(r.r_info)].st_name;
      if (name >= names_size) continue;
      void* replacement = nullptr;
      if (std::strcmp(names + name, "sigaction") == 0)
        replacement = reinterpret_cast<void*>(&library_sigaction);
      else if (std::strcmp(names + name, "signal") == 0 ||
               std::strcmp(names + name, "__sysv_signal") == 0 ||
               std::strcmp(names + name, "bsd_signal") == 0)
        replacement = reinterpret_cast<void*>(&library_signal);
      if (replacement == nullptr) continue;
      const ElfW(Addr) slot = base + r.r_offset;
      const ElfW(Addr) first = slot & ~(page - 1);
      const bool read_only = slot >= relro.begin && slot < relro.end;
      if (read_only && ::mprotect(reinterpret_cast<void*>(first), page, PROT_READ | PROT_WRITE))
        continue;
      std::memcpy(reinterpret_cast<void*>(slot), &replacement, sizeof replacement);
      if (read_only) ::mprotect(reinterpret_cast<void*>(first), page, PROT_READ);
    }
  }
}

}  // namespace

DynamicLibrary DynamicLibrary::open_first(const std::vector<std::string>& candidates,
                                          const std::string& what) {
  std::string reasons;
  for (const auto& candidate : candidates) {
    // A path (CUDATOOL_LIBCUDA=...) must name a regular file: dlopen on a FIFO would wait
    // for a writer forever, on /dev/zero read without end.
    if (candidate.find('/') != std::string::npos) {
      struct stat st {};
      if (::stat(candidate.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
        if (!reasons.empty()) reasons += "; ";
        reasons += quote_input(candidate) + ": not a regular file";
        continue;
      }
    }
    if (void* handle = ::dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      keep_signals_from(handle);
      DynamicLibrary lib;
      lib.handle_ = handle;
      lib.path_ = candidate;
      return lib;
    }
    const char* message = ::dlerror();
    if (!reasons.empty()) reasons += "; ";
    reasons += message ? printable(message, 300) : quote_input(candidate) + ": cannot open";
  }
  throw LibraryNotFoundError(what + ": " + reasons, what);
}

DynamicLibrary::DynamicLibrary(DynamicLibrary&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), path_(std::move(other.path_)) {}

DynamicLibrary& DynamicLibrary::operator=(DynamicLibrary&& other) noexcept {
  if (this != &other) {
    if (handle_) ::dlclose(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

DynamicLibrary::~DynamicLibrary() {
  if (handle_) ::dlclose(handle_);
}

void* DynamicLibrary::symbol(const char* name) const {
  return handle_ ? ::dlsym(handle_, name) : nullptr;
}

}  // namespace cudatool
