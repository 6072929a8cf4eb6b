#include "compat/wheel.hpp"

#if __has_include(<zip.h>)
#include <zip.h>
#define CUDATOOL_HAVE_ZIP_H 1
#else
#define CUDATOOL_HAVE_ZIP_H 0
#endif

#include <mutex>

#include "cudatool/base/error.hpp"
#include "cudatool/base/text.hpp"
#include "cudatool/compat/compat.hpp"
#include "driver/dynamic_library.hpp"

namespace cudatool {

bool compat_reads_wheels() {
  return CUDATOOL_HAVE_ZIP_H != 0;
}

namespace detail {

#if CUDATOOL_HAVE_ZIP_H
namespace {

// libzip's entry points, from the library opened once (its API is stable across sonames 4
// and 5: every function here exists since libzip 1.0).
struct ZipApi {
  DynamicLibrary library;
  decltype(&::zip_open) open;
  decltype(&::zip_get_num_entries) num_entries;
  decltype(&::zip_stat_index) stat_index;
  decltype(&::zip_stat) stat;
  decltype(&::zip_fopen) fopen;
  decltype(&::zip_fread) fread;
  decltype(&::zip_fclose) fclose;
  decltype(&::zip_discard) discard;
  decltype(&::zip_file_get_external_attributes) external_attributes;
  decltype(&::zip_error_init_with_code) error_init;
  decltype(&::zip_error_strerror) error_strerror;
  decltype(&::zip_error_fini) error_fini;
  decltype(&::zip_strerror) strerror;
};

const ZipApi& zip_api() {
  static std::once_flag once;
  static ZipApi api;
  static std::string failure;
  std::call_once(once, [] {
    try {
      api.library =
          DynamicLibrary::open_first({"libzip.so.5", "libzip.so.4", "libzip.so"},
                                     "libzip (to read wheels; Debian: libzip4 or libzip5)");
    } catch (const std::exception& e) {
      failure = e.what();
      return;
    }
    const auto load = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(api.library.symbol(name));
      if (fn == nullptr && failure.empty())
        failure = api.library.path() + " has no " + name + ": too old a libzip to read wheels";
    };
    load(api.open, "zip_open");
    load(api.num_entries, "zip_get_num_entries");
    load(api.stat_index, "zip_stat_index");
    load(api.stat, "zip_stat");
    load(api.fopen, "zip_fopen");
    load(api.fread, "zip_fread");
    load(api.fclose, "zip_fclose");
    load(api.discard, "zip_discard");
    load(api.external_attributes, "zip_file_get_external_attributes");
    load(api.error_init, "zip_error_init_with_code");
    load(api.error_strerror, "zip_error_strerror");
    load(api.error_fini, "zip_error_fini");
    load(api.strerror, "zip_strerror");
  });
  if (!failure.empty()) throw LibraryNotFoundError(failure, "libzip");
  return api;
}

// An open archive, discarded (never written) when it goes.
class ZipArchive {
 public:
  explicit ZipArchive(const std::string& path) : api_(zip_api()) {
    int error = 0;
    zip_ = api_.open(path.c_str(), ZIP_RDONLY, &error);
    if (zip_ == nullptr) {
      zip_error_t e;
      api_.error_init(&e, error);
      const std::string why = api_.error_strerror(&e);
      api_.error_fini(&e);
      throw InputError(quote_input(path) + ": not a readable wheel (zip: " + why + ")");
    }
  }
  ~ZipArchive() { api_.discard(zip_); }
  ZipArchive(const ZipArchive&) = delete;
  ZipArchive& operator=(const ZipArchive&) = delete;
  zip_t* get() const { return zip_; }
  const ZipApi& api() const { return api_; }

 private:
  const ZipApi& api_;
  zip_t* zip_ = nullptr;
};

}  // namespace

std::vector<WheelMember> list_wheel(const std::string& wheel) {
  ZipArchive zip(wheel);
  const ZipApi& api = zip.api();
  std::vector<WheelMember> members;
  const zip_int64_t count = api.num_entries(zip.get(), 0);
  for (zip_int64_t i = 0; i < count; ++i) {
    zip_stat_t st;
    if (api.stat_index(zip.get(), static_cast<zip_uint64_t>(i), 0, &st) != 0 || st.name == nullptr)
      continue;
    WheelMember m;
    m.name = st.name;
    if (m.name.empty() || m.name.back() == '/') continue;
    m.size = (st.valid & ZIP_STAT_SIZE) ? st.size : 0;
    // The mode is in the high 16 bits of the external attributes of zips made on Unix.
    zip_uint8_t system = 0;
    zip_uint32_t attributes = 0;
    if (api.external_attributes(zip.get(), static_cast<zip_uint64_t>(i), 0, &system, &attributes) ==
            0 &&
        system == ZIP_OPSYS_UNIX)
      m.executable = ((attributes >> 16) & 0111) != 0;
    members.push_back(std::move(m));
  }
  return members;
}

std::vector<std::uint8_t> read_wheel_member(const std::string& wheel, const std::string& member) {
  ZipArchive zip(wheel);
  const ZipApi& api = zip.api();
  const std::string shown = quote_input(wheel + "!" + member);
  zip_stat_t st;
  if (api.stat(zip.get(), member.c_str(), 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE))
    throw InputError(shown + ": not in the wheel");
  // The declared size is the zip's word: capped before anything is allocated.
  if (st.size > (4ull << 30))
    throw InputError(shown + ": declares " + std::to_string(st.size) +
                     " bytes, more than the 4 GiB cudatool reads of a member");
  zip_file_t* f = api.fopen(zip.get(), member.c_str(), 0);
  if (f == nullptr) throw InputError(shown + ": " + api.strerror(zip.get()));
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(st.size));
  std::size_t got = 0;
  bool failed = false;
  while (got < bytes.size()) {
    const zip_int64_t n = api.fread(f, bytes.data() + got, bytes.size() - got);
    if (n < 0) failed = true;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  // libzip checks the CRC on the read that reaches the end of the data: one more read, which
  // must find nothing (a member longer than it declares is corrupt too).
  if (!failed && got == bytes.size()) {
    std::uint8_t past_end = 0;
    failed = api.fread(f, &past_end, 1) != 0;
  }
  if (api.fclose(f) != 0 || failed || got != bytes.size())
    throw InputError(shown + ": corrupt or truncated in the wheel");
  return bytes;
}

#else

std::vector<WheelMember> list_wheel(const std::string& wheel) {
  throw UsageError(quote_input(wheel) +
                   ": this build of cudatool reads no wheels (built without libzip's zip.h): "
                   "unpack it and name the directory");
}

std::vector<std::uint8_t> read_wheel_member(const std::string& wheel, const std::string&) {
  return (void)list_wheel(wheel), std::vector<std::uint8_t>();
}

#endif

}  // namespace detail
}  // namespace cudatool
