// `kernels --sizes` in its three forms: text tables, --json (kernels_sizes_json.cpp),
// --markdown.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <string>

#include "cudatool/base/units.hpp"
#include "kernels_compare.hpp"
#include "render.hpp"
#include "terminal_text.hpp"

namespace cudatool::app {
namespace {

std::string share(std::uint64_t part, std::uint64_t whole) {
  return whole == 0 ? std::string("-") : percent(double(part) / double(whole));
}

std::string printable_name(const std::string& text, bool cut) {
  const std::string n = for_terminal(text);
  return cut ? cut_middle(n, 100, 27) : n;
}

void print_text(const SizeReport& report, const ScanResult& scan, bool wide, bool markdown,
                std::ostream& os) {
  const bool cut = !markdown && !wide && isatty(STDOUT_FILENO);
  std::string out;
  const auto row = [&](const std::vector<std::string>& cells, const std::vector<std::size_t>& w) {
    if (markdown) {
      out += "|";
      for (const std::string& c : cells) out += " " + c + " |";
    } else {
      for (std::size_t i = 0; i < cells.size(); ++i)
        out += i == 0 ? pad(cells[i], w[i]) : right_aligned(cells[i], w[i]);
    }
    out += '\n';
  };
  const auto rule = [&](std::size_t columns) {
    if (!markdown) return;
    out += "|";
    for (std::size_t i = 0; i < columns; ++i) out += "---|";
    out += '\n';
  };
  for (const FileSizes& f : report.files) {
    const ScannedFile& file = scan.files[f.file];
    const std::string path = markdown ? markdown_code(file.path) : for_terminal(file.path);
    out += (markdown ? "### " : "") + path + ": " + format_bytes(f.size) + " (" +
           std::to_string(f.size) + " B)";
    if (!file.fatbin_sections.empty())
      out += ", fatbin sections " + format_bytes(f.fatbin_section_bytes) + " (" +
             std::to_string(f.fatbin_section_bytes) + " B, " +
             share(f.fatbin_section_bytes, f.size) + " of the file)";
    out += markdown ? "\n\n" : "\n";
    const std::vector<std::size_t> w = {14, 8, 9, 12, 14, 14, 8};
    row({"architecture", "images", "kernels", "stored", "uncompressed", "in file", "share"}, w);
    rule(7);
    const std::uint64_t device_bytes = f.entry_bytes + f.other_image_bytes;
    for (const ArchitectureSize& a : f.architectures)
      row({a.arch ? a.arch->str() : std::string("unknown"), std::to_string(a.images),
           std::to_string(a.kernels), format_bytes(a.stored_bytes),
           format_bytes(a.uncompressed_bytes), format_bytes(a.file_bytes),
           share(a.file_bytes, device_bytes)},
          w);
    if (!file.fatbin_sections.empty())
      row({"headers, padding", "", "", "", "", format_bytes(f.overhead_bytes),
           share(f.overhead_bytes, device_bytes + f.overhead_bytes)},
          w);
    out += markdown ? "\n" : "";
    out += "(\"in file\": an architecture's entries with their headers, what dropping it saves";
    if (!file.fatbin_sections.empty())
      out += "; with the headers and padding they add up to the fatbin sections";
    out += ")\n\n";
  }
  const std::vector<std::size_t> kw = {12, 10};
  out += markdown ? "#### Largest kernels\n\n" : "largest kernels (machine code)\n";
  if (markdown) {
    row({"code", "arch", "kernel"}, {});
    rule(3);
  }
  for (const std::size_t i : report.largest_kernels) {
    const ScannedKernel& k = scan.kernels[i];
    const std::string arch = arch_text(scan.images[k.image].arch);
    const std::string name = markdown ? markdown_code(k.resources.demangled)
                                      : printable_name(k.resources.demangled, cut);
    if (markdown)
      row({format_bytes(k.resources.code_size_bytes), arch, name}, {});
    else
      out += right_aligned(format_bytes(k.resources.code_size_bytes), 12) + "  " + pad(arch, 9) +
             name + '\n';
  }
  out += markdown ? "\n#### Largest template families\n\n" : "\nlargest template families\n";
  if (markdown) {
    row({"code", "kernels", "family"}, {});
    rule(3);
  }
  for (const TemplateFamily& t : report.families) {
    const std::string name = markdown ? markdown_code(t.name) : printable_name(t.name, cut);
    if (markdown)
      row({format_bytes(t.code_bytes), std::to_string(t.kernels), name}, {});
    else
      out += right_aligned(format_bytes(t.code_bytes), 12) +
             right_aligned(std::to_string(t.kernels), 9) + "  " + name + '\n';
  }
  out += markdown ? "\n#### Duplicates\n\n" : "\nduplicates: ";
  out += std::to_string(report.identical_images) + " image" +
         (report.identical_images == 1 ? "" : "s") + " identical to another (" +
         format_bytes(report.identical_image_bytes) + " in the files); " +
         std::to_string(report.duplicate_kernel_copies) + " extra cop" +
         (report.duplicate_kernel_copies == 1 ? "y" : "ies") +
         " of kernels compiled into several images of one file and architecture (" +
         format_bytes(report.duplicate_kernel_bytes) + " of machine code)\n";
  if (!report.duplicate_kernels.empty()) {
    if (markdown) {
      out += '\n';
      row({"extra code", "copies", "arch", "kernel"}, {});
      rule(4);
    }
    for (const DuplicateKernel& d : report.duplicate_kernels) {
      const std::string& demangled = scan.kernels[d.kernel].resources.demangled;
      if (markdown)
        row({format_bytes(d.extra_code_bytes), std::to_string(d.copies), d.arch.str(),
             markdown_code(demangled)},
            {});
      else
        out += right_aligned(format_bytes(d.extra_code_bytes), 12) +
               right_aligned(std::to_string(d.copies), 7) + "  " + pad(d.arch.str(), 9) +
               printable_name(demangled, cut) + '\n';
    }
  }
  os << out;
}

}  // namespace

void print_sizes(const SizeReport& report, const ScanResult& scan, ReportFormat format, bool wide,
                 std::ostream& out) {
  if (format == ReportFormat::json)
    print_sizes_json(report, scan, out);
  else
    print_text(report, scan, wide, format == ReportFormat::markdown, out);
}

}  // namespace cudatool::app
