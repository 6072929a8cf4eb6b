#include "kernels_json.hpp"

#include <algorithm>

#include "json_streamed.hpp"
#include "kernel_occupancy_json.hpp"
#include "kernel_resources_json.hpp"
#include "render.hpp"

namespace cudatool::app {
namespace {

// One element of the kernels array; `occupancy` under --threads, nullptr otherwise. `arch`
// is the image's architecture as text, made once per image (arch_text), not per kernel.
// The kernel's resources go between its other members (kernel_resources_json.hpp), every
// key in sorted order, as print_json writes them.
void write_kernel(JsonStream& out, const ScannedKernel& k, const std::string& arch,
                  const ScannedImage& image, const ScannedFile& file,
                  const KernelOccupancy* occupancy) {
  out.begin_object();
  ResourceMembers members(out, k.resources, ResourceKeys::image);
  members.member("arch", arch)
      .member("cluster_dims", k.bounds.cluster)
      .member("file", file.path)
      .member("image", k.image)
      .member("launch_bounds_max_threads", k.bounds.max_threads)
      .member("max_registers", k.bounds.max_registers)
      .text_or_null("member", image.member);
  if (occupancy) members.member("occupancy", *occupancy);
  members.member("relocatable", image.relocatable)
      .member("required_block_size", k.bounds.reqntid)
      .finish();
  out.end_object();
}

void write_image(JsonStream& out, const ScannedImage& image, const ScannedFile& file) {
  out.begin_object();
  out.text_or_null("arch", arch_text(image.arch));
  out.member("compression", compression_name(image.compression))
      .member("container_offset", image.container_offset);
  out.text_or_null("error", image.error);
  out.member("file", file.path)
      .member("file_bytes", image.file_bytes)
      .member("kernel_count", image.kernel_count)
      .member("kind", image_kind_name(image.kind));
  out.text_or_null("member", image.member);
  out.member("offset", image.offset)
      .member("relocatable", image.relocatable)
      .member("same_bytes_as", image.same_bytes_as);
  out.text_or_null("section", image.section);
  out.member("size", image.size)
      .member("skipped", image.skipped)
      .member("stored_size", image.stored_size)
      .end_object();
}

void write_files(std::ostream& os, const std::vector<ScannedFile>& files) {
  std::string text;
  JsonStream out(text, 1);
  out.after_key().begin_array();
  for (const auto& f : files) {
    out.begin_object().key("fatbin_sections").after_key().begin_array();
    for (const FatbinSection& s : f.fatbin_sections)
      out.begin_object()
          .member("container_bytes", s.container_bytes)
          .member("containers", s.containers)
          .text_or_null("member", s.member)
          .member("name", s.name)
          .member("size", s.size)
          .end_object();
    out.end_array()
        .member("has_cuda_code", f.has_cuda_code)
        .text_or_null("note", f.note)
        .member("path", f.path)
        .member("relocatable_leftovers_skipped", f.relocatable_leftovers_skipped)
        .member("size", f.size)
        .end_object();
  }
  out.end_array();
  os << text;
}

}  // namespace

void KernelsJsonWhileReading::add(const ImageKernels& image) {
  std::string text;
  // About 1 KB a kernel, grown once rather than often (not under --kernel, which may keep
  // few: the text is held until the scan ends, capacity and all).
  if (!request_.pattern) text.reserve(image.kernels.size() * 1024);
  JsonStream out(text, 2, false);  // each element preceded by a comma, the first's cut
  // An image with kernels is a CUBIN, which always has an architecture.
  const std::string arch_name = image.info.arch.value_or(Arch{}).str();
  for_each_selected_kernel(
      request_, architectures_, image.kernels,
      [&](const ScannedKernel&) -> const ScannedImage& { return image.info; },
      [&](std::size_t i, const KernelOccupancy* occupancy) {
        write_kernel(out, image.kernels[i], arch_name, image.info, image.file, occupancy);
      });
  if (text.empty()) return;
  const std::lock_guard<std::mutex> lock(mutex_);
  rendered_.emplace_back(image.image, std::move(text));
}

void KernelsJsonWhileReading::write(std::ostream& out) {
  if (rendered_.empty()) {
    out << "[]";
    return;
  }
  std::sort(rendered_.begin(), rendered_.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  out << '[';
  bool first = true;
  for (auto& [image, text] : rendered_) {
    const std::size_t skip = first ? 1 : 0;  // the first element has no comma before it
    out.write(text.data() + skip, static_cast<std::streamsize>(text.size() - skip));
    first = false;
    std::string().swap(text);
  }
  out << "\n  ]";
}

void print_kernels_json(const ScanResult& result, const KernelRows& rows,
                        const KernelsRequest& request, KernelsJsonWhileReading* while_reading,
                        std::ostream& out) {
  // Each image's architecture as text, made once (not per kernel).
  std::vector<std::string> arch_names;
  if (!while_reading) {
    arch_names.reserve(result.images.size());
    for (const ScannedImage& image : result.images) arch_names.push_back(arch_text(image.arch));
  }
  const auto kernel = [&](JsonStream& out, std::size_t n) {
    const std::size_t i = rows.shown[n];
    const ScannedKernel& k = result.kernels[i];
    const ScannedImage& image = result.images[k.image];
    write_kernel(out, k, arch_names[k.image], image, result.files[image.file],
                 request.threads ? &rows.occupancy[i] : nullptr);
  };
  const auto image = [&](JsonStream& out, std::size_t i) {
    write_image(out, result.images[i], result.files[result.images[i].file]);
  };
  print_json_streamed({{"files", [&](std::ostream& os) { write_files(os, result.files); }},
                       {"images",
                        [&](std::ostream& os) {
                          write_json_array_parallel(os, result.images.size(), request.jobs, image);
                        }},
                       {"kernels",
                        [&](std::ostream& os) {
                          if (while_reading)
                            while_reading->write(os);
                          else
                            write_json_array_parallel(os, rows.shown.size(), request.jobs, kernel);
                        }}},
                      out);
}

}  // namespace cudatool::app
