// The baseline of `kernels --baseline`: a binary, scanned, or a saved `kernels --json`
// document read back into the scan it describes (--fail-on's rules: kernels_fail_on.cpp).
#include <array>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "cudatool/base/error.hpp"
#include "cudatool/base/file_io.hpp"
#include "cudatool/base/numbers.hpp"
#include "cudatool/base/text.hpp"
#include "kernels_compare.hpp"

namespace cudatool::app {
namespace {

using nlohmann::json;

// Whether the file's first non-blank byte opens a JSON object (a binary never starts so).
bool looks_like_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char c = 0;
  for (int n = 0; n < 64 && in.get(c); ++n)
    if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return c == '{';
  return false;
}

std::optional<std::array<int, 3>> dims(const json& j) {
  if (j.is_null()) return std::nullopt;
  const auto d = j.get<std::vector<int>>();
  if (d.size() != 3) throw UsageError("a block or cluster size that is not 3 numbers");
  return std::array<int, 3>{d[0], d[1], d[2]};
}

template <typename T>
std::optional<T> optional_value(const json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::nullopt;
  return it->get<T>();
}

std::string text_or_empty(const json& j) {
  return j.is_null() ? std::string() : j.get<std::string>();
}

ImageKind kind_of(const std::string& text) {
  if (text == "elf") return ImageKind::elf;
  if (text == "ptx") return ImageKind::ptx;
  return ImageKind::unknown;
}

FatbinCompression compression_of(const std::string& text) {
  if (text == "lz4") return FatbinCompression::lz4;
  if (text == "zstd") return FatbinCompression::zstd;
  return FatbinCompression::none;
}

ScanResult scan_of_document(const json& doc, const ScanOptions& options) {
  if (!doc.is_object() || doc.value("schema_version", 0) != 1 || !doc.contains("kernels") ||
      !doc.contains("images") || !doc.contains("files"))
    throw UsageError("not a kernels --json document of schema_version 1");
  ScanResult scan;
  std::map<std::string, std::size_t> file_index;
  for (const json& f : doc.at("files")) {
    ScannedFile file;
    file.path = f.at("path").get<std::string>();
    file.size = f.at("size").get<std::uint64_t>();
    file.has_cuda_code = f.at("has_cuda_code").get<bool>();
    file.note = text_or_empty(f.at("note"));
    if (const auto it = f.find("fatbin_sections"); it != f.end())
      for (const json& s : *it)
        file.fatbin_sections.push_back(
            {text_or_empty(s.at("member")), s.at("name").get<std::string>(),
             s.at("size").get<std::uint64_t>(), s.at("container_bytes").get<std::uint64_t>(),
             s.at("containers").get<std::size_t>()});
    file_index.emplace(file.path, scan.files.size());
    scan.files.push_back(std::move(file));
  }
  for (const json& i : doc.at("images")) {
    ScannedImage image;
    const auto file = file_index.find(i.at("file").get<std::string>());
    if (file == file_index.end()) throw UsageError("an image of a file the document does not list");
    image.file = file->second;
    image.member = text_or_empty(i.at("member"));
    image.section = text_or_empty(i.at("section"));
    image.kind = kind_of(i.at("kind").get<std::string>());
    if (const auto arch = optional_value<std::string>(i, "arch")) {
      image.arch = Arch::try_parse(*arch);
      if (!image.arch) throw UsageError("an image of architecture " + quote_input(*arch));
    }
    image.compression = compression_of(i.at("compression").get<std::string>());
    image.stored_size = i.at("stored_size").get<std::uint64_t>();
    image.size = i.at("size").get<std::uint64_t>();
    image.file_bytes = optional_value<std::uint64_t>(i, "file_bytes").value_or(0);
    image.same_bytes_as = optional_value<std::size_t>(i, "same_bytes_as");
    if (image.same_bytes_as && *image.same_bytes_as >= scan.images.size())
      throw UsageError("an image's same_bytes_as is not an earlier image");
    image.relocatable = i.at("relocatable").get<bool>();
    image.skipped = i.at("skipped").get<bool>() ||
                    (!options.arch.empty() && !arch_matches(image.arch, options.arch));
    image.error = text_or_empty(i.at("error"));
    scan.images.push_back(std::move(image));
  }
  for (const json& k : doc.at("kernels")) {
    ScannedKernel kernel;
    kernel.image = k.at("image").get<std::size_t>();
    if (kernel.image >= scan.images.size())
      throw UsageError("a kernel of an image the document does not list");
    if (scan.images[kernel.image].skipped) continue;
    KernelResources& r = kernel.resources;
    r.name = k.at("name").get<std::string>();
    r.demangled = k.at("demangled").get<std::string>();
    r.num_regs = k.at("num_regs").get<int>();
    r.shared_size_bytes = k.at("shared_size_bytes").get<int>();
    r.local_size_bytes = k.at("local_size_bytes").get<int>();
    r.const_size_bytes = k.at("const_size_bytes").get<int>();
    r.max_threads_per_block = k.at("max_threads_per_block").get<int>();
    r.num_barriers = k.at("num_barriers").get<int>();
    r.stack_unknown = k.at("stack_unknown").get<bool>();
    r.code_size_bytes = optional_value<std::uint64_t>(k, "code_size_bytes").value_or(0);
    r.spill_store_bytes = optional_value<int>(k, "spill_store_bytes");
    r.spill_load_bytes = optional_value<int>(k, "spill_load_bytes");
    kernel.bounds.max_threads = optional_value<int>(k, "launch_bounds_max_threads");
    kernel.bounds.max_registers = optional_value<int>(k, "max_registers");
    kernel.bounds.reqntid = dims(k.at("required_block_size"));
    kernel.bounds.cluster = dims(k.at("cluster_dims"));
    if (r.num_regs < 0 || r.shared_size_bytes < 0 || r.local_size_bytes < 0 || r.num_barriers < 0 ||
        r.spill_store_bytes.value_or(0) < 0 || r.spill_load_bytes.value_or(0) < 0)
      throw UsageError("a kernel with a negative resource");
    scan.kernels.push_back(std::move(kernel));
  }
  for (ScannedImage& image : scan.images) image.kernel_count = 0;
  for (const ScannedKernel& k : scan.kernels) ++scan.images[k.image].kernel_count;
  return scan;
}

}  // namespace

ScanResult read_baseline(const std::string& path, const ScanOptions& options) {
  if (!looks_like_json(path)) {
    ScanOptions plain = options;
    plain.on_image = nullptr;
    plain.keep_kernels = true;
    return scan_binaries({path}, plain);
  }
  const std::string what = "--baseline " + quote_input(path);
  const std::string text = read_input_file(path, "--baseline");
  try {
    return read_kernels_document(text, options);
  } catch (const UsageError& e) {
    throw UsageError(what + ": " + e.what());
  }
}

ScanResult read_kernels_document(std::string_view text, const ScanOptions& options) {
  try {
    return scan_of_document(json::parse(text), options);
  } catch (const json::exception& e) {
    throw UsageError(std::string("not a kernels --json document (") + e.what() + ")");
  }
}

}  // namespace cudatool::app
