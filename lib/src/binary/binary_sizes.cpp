#include "cudatool/binary/binary_sizes.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>

namespace cudatool {
namespace {

// The end of `text` before a final parameter list: the position of its '(' at depth 0 of
// <> and (), or text.size() where the text does not end with one.
std::size_t parameter_list(std::string_view text) {
  if (text.empty() || text.back() != ')') return text.size();
  int depth = 0;
  for (std::size_t i = text.size(); i-- > 0;) {
    const char c = text[i];
    if (c == ')' || c == '>') ++depth;
    if (c == '(' || c == '<') --depth;
    if (depth == 0) return c == '(' ? i : text.size();
  }
  return text.size();
}

}  // namespace

std::string template_family(std::string_view demangled) {
  const std::string_view head = demangled.substr(0, parameter_list(demangled));
  // Template arguments out, at every depth; a space at depth 0 ends a return type.
  std::string name;
  int depth = 0;
  for (std::size_t i = 0; i < head.size(); ++i) {
    const char c = head[i];
    // "operator<" and "operator<<" are names, not argument lists.
    if (c == '<' && depth == 0 && name.ends_with("operator")) {
      name += c;
      continue;
    }
    if (c == '<') {
      ++depth;
      continue;
    }
    if (c == '>') {
      if (depth > 0) --depth;
      continue;
    }
    if (depth > 0) continue;
    if (c == ' ') {
      // What came before was the return type; not so before an argument list
      // ("operator< <int>").
      if (i + 1 >= head.size() || head[i + 1] != '<') name.clear();
      continue;
    }
    name += c;
  }
  return name.empty() ? std::string(demangled) : name;
}

SizeReport size_report(const ScanResult& scan, std::size_t top) {
  SizeReport report;
  // Kernels per image, for the architectures' counts.
  std::vector<std::size_t> kernels_in(scan.images.size(), 0);
  for (const ScannedKernel& k : scan.kernels) ++kernels_in[k.image];

  for (std::size_t f = 0; f < scan.files.size(); ++f) {
    const ScannedFile& file = scan.files[f];
    FileSizes sizes;
    sizes.file = f;
    sizes.size = file.size;
    std::set<std::pair<std::string_view, std::string_view>> sections;  // (member, name)
    for (const FatbinSection& s : file.fatbin_sections) {
      sizes.fatbin_section_bytes += s.size;
      sections.emplace(s.member, s.name);
    }
    std::map<std::optional<Arch>, ArchitectureSize> by_arch;
    for (std::size_t i = 0; i < scan.images.size(); ++i) {
      const ScannedImage& image = scan.images[i];
      if (image.file != f) continue;
      if (sections.contains({image.member, image.section}))
        sizes.entry_bytes += image.file_bytes;
      else
        sizes.other_image_bytes += image.file_bytes;
      ArchitectureSize& a = by_arch[image.arch];
      a.arch = image.arch;
      ++a.images;
      a.kernels += kernels_in[i];
      a.stored_bytes += image.stored_size;
      a.uncompressed_bytes += image.size;
      a.file_bytes += image.file_bytes;
    }
    sizes.overhead_bytes =
        sizes.fatbin_section_bytes - std::min(sizes.fatbin_section_bytes, sizes.entry_bytes);
    for (auto& [arch, a] : by_arch) sizes.architectures.push_back(a);
    std::stable_sort(sizes.architectures.begin(), sizes.architectures.end(),
                     [](const ArchitectureSize& a, const ArchitectureSize& b) {
                       return a.file_bytes > b.file_bytes;
                     });
    report.files.push_back(std::move(sizes));
  }

  for (const ScannedImage& image : scan.images)
    if (image.same_bytes_as) {
      ++report.identical_images;
      report.identical_image_bytes += image.file_bytes;
    }

  // The largest kernels, counting each image once (an identical image's kernels are its
  // original's).
  std::vector<std::size_t> distinct;
  distinct.reserve(scan.kernels.size());
  for (std::size_t i = 0; i < scan.kernels.size(); ++i)
    if (!scan.images[scan.kernels[i].image].same_bytes_as) distinct.push_back(i);
  const auto code = [&](std::size_t i) { return scan.kernels[i].resources.code_size_bytes; };
  report.largest_kernels = distinct;
  const std::size_t shown = std::min(top, distinct.size());
  std::partial_sort(report.largest_kernels.begin(), report.largest_kernels.begin() + shown,
                    report.largest_kernels.end(), [&](std::size_t a, std::size_t b) {
                      return std::tuple(code(a), b) > std::tuple(code(b), a);
                    });
  report.largest_kernels.resize(shown);

  // Families, from each distinct demangled name once (a name repeats in every architecture).
  std::unordered_map<std::string_view, std::string> family_of;
  std::unordered_map<std::string, TemplateFamily> families;
  for (const std::size_t i : distinct) {
    const std::string& demangled = scan.kernels[i].resources.demangled;
    auto it = family_of.find(demangled);
    if (it == family_of.end()) it = family_of.emplace(demangled, template_family(demangled)).first;
    TemplateFamily& family = families[it->second];
    family.name = it->second;
    ++family.kernels;
    family.code_bytes += code(i);
  }
  for (auto& [name, family] : families) report.families.push_back(std::move(family));
  std::sort(report.families.begin(), report.families.end(),
            [](const TemplateFamily& a, const TemplateFamily& b) {
              return std::tie(b.code_bytes, a.name) < std::tie(a.code_bytes, b.name);
            });
  if (report.families.size() > top) report.families.resize(top);

  // The same kernel in several distinct images of one file and architecture.
  std::map<std::tuple<std::size_t, Arch, std::string_view>, DuplicateKernel> copies;
  for (const std::size_t i : distinct) {
    const ScannedKernel& k = scan.kernels[i];
    const ScannedImage& image = scan.images[k.image];
    if (!image.arch) continue;
    auto [it, first] = copies.try_emplace({image.file, *image.arch, k.resources.name},
                                          DuplicateKernel{image.file, *image.arch, i, 0, 0});
    ++it->second.copies;
    if (!first) it->second.extra_code_bytes += code(i);
  }
  for (auto& [key, d] : copies)
    if (d.copies > 1) {
      report.duplicate_kernel_copies += d.copies - 1;
      report.duplicate_kernel_bytes += d.extra_code_bytes;
      report.duplicate_kernels.push_back(d);
    }
  std::stable_sort(report.duplicate_kernels.begin(), report.duplicate_kernels.end(),
                   [](const DuplicateKernel& a, const DuplicateKernel& b) {
                     return a.extra_code_bytes > b.extra_code_bytes;
                   });
  if (report.duplicate_kernels.size() > top) report.duplicate_kernels.resize(top);
  return report;
}

}  // namespace cudatool
