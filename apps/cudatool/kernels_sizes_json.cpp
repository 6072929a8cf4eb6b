// `kernels --sizes --json` (share/schemas/kernels-sizes.schema.json).
#include <string>
#include <vector>

#include "json_stream.hpp"
#include "kernels_compare.hpp"

namespace cudatool::app {

std::string arch_kind(const ArchitectureSize& a) {
  if (!a.arch) return "unknown";
  return a.arch->code == Arch::Code::ptx ? "ptx" : "sass";
}

void print_sizes_json(const SizeReport& report, const ScanResult& scan, std::ostream& out) {
  std::vector<JsonObject> files;
  for (const FileSizes& f : report.files) {
    const ScannedFile& file = scan.files[f.file];
    std::vector<JsonObject> architectures;
    for (const ArchitectureSize& a : f.architectures)
      architectures.push_back(JsonObject()
                                  .text_or_null("arch", a.arch ? a.arch->str() : std::string())
                                  .set("kind", arch_kind(a))
                                  .set("images", a.images)
                                  .set("kernels", a.kernels)
                                  .set("stored_bytes", a.stored_bytes)
                                  .set("uncompressed_bytes", a.uncompressed_bytes)
                                  .set("file_bytes", a.file_bytes));
    std::vector<JsonObject> sections;
    for (const FatbinSection& s : file.fatbin_sections)
      sections.push_back(JsonObject()
                             .text_or_null("member", s.member)
                             .set("name", s.name)
                             .set("size", s.size)
                             .set("container_bytes", s.container_bytes)
                             .set("containers", s.containers));
    files.push_back(JsonObject()
                        .set("path", file.path)
                        .set("size", f.size)
                        .set("fatbin_section_bytes", f.fatbin_section_bytes)
                        .set("entry_bytes", f.entry_bytes)
                        .set("overhead_bytes", f.overhead_bytes)
                        .set("other_image_bytes", f.other_image_bytes)
                        .set("fatbin_sections", sections)
                        .set("architectures", architectures));
  }
  const auto kernel_json = [&](std::size_t i) {
    const ScannedKernel& k = scan.kernels[i];
    const ScannedImage& image = scan.images[k.image];
    return JsonObject()
        .set("name", k.resources.name)
        .set("demangled", k.resources.demangled)
        .set("arch", arch_text(image.arch))
        .set("file", scan.files[image.file].path)
        .set("image", k.image)
        .set("code_size_bytes", k.resources.code_size_bytes);
  };
  std::vector<JsonObject> largest;
  for (const std::size_t i : report.largest_kernels) largest.push_back(kernel_json(i));
  std::vector<JsonObject> families;
  for (const TemplateFamily& t : report.families)
    families.push_back(
        JsonObject().set("name", t.name).set("kernels", t.kernels).set("code_bytes", t.code_bytes));
  std::vector<JsonObject> duplicates;
  for (const DuplicateKernel& d : report.duplicate_kernels)
    duplicates.push_back(
        kernel_json(d.kernel).set("copies", d.copies).set("extra_code_bytes", d.extra_code_bytes));
  out << json_document(
      JsonObject()
          .set("files", files)
          .set("largest_kernels", largest)
          .set("template_families", families)
          .set("duplicates", JsonObject()
                                 .set("identical_images", report.identical_images)
                                 .set("identical_image_bytes", report.identical_image_bytes)
                                 .set("kernel_copies", report.duplicate_kernel_copies)
                                 .set("kernel_copy_bytes", report.duplicate_kernel_bytes)
                                 .set("kernels", duplicates)));
}

}  // namespace cudatool::app
