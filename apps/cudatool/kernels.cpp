// cudatool kernels: every kernel in compiled CUDA binaries (CUBIN, fatbin, host objects,
// static archives, executables, shared libraries), what it costs, and with --threads its
// occupancy on the image's architecture from the offline table. No driver, no GPU.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "command.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/base/numbers.hpp"
#include "cudatool/base/parallel.hpp"
#include "cudatool/base/text.hpp"
#include "cudatool/binary/kernel_filter.hpp"
#include "cudatool/binary/kernel_scan.hpp"
#include "cudatool/occupancy/device_data.hpp"
#include "cudatool/occupancy/kernel_occupancy.hpp"
#include "cudatool/occupancy/occupancy.hpp"
#include "json_stream.hpp"
#include "kernel_occupancy_json.hpp"
#include "render.hpp"

namespace cudatool::app {
namespace {

struct KernelsOptions {
  std::vector<std::string> files;
  std::vector<std::string> arch_lists;  // each --arch as given: comma-separated
  std::vector<Arch> arch;
  std::optional<std::string> kernel;
  // Numbers go through the strict parser (base/numbers.hpp), as in every other command.
  std::optional<std::string> threads_text, jobs_text;
  std::optional<int> threads;
  std::optional<unsigned> jobs;
  std::optional<std::string> sort;
  bool wide = false;
  bool no_progress = false;
  bool relocatable = false;  // list the relocatable leftovers of linked files too
};

// A kernel's occupancy at the --threads block size, or why there is none.
std::string percent(double fraction) {
  char text[16];
  std::snprintf(text, sizeof text, "%.1f%%", fraction * 100.0);
  return text;
}

// Long (demangled) names cut in the middle, so that the start (namespace, template) and
// the end (the parameter list) both stay readable.
std::string cut(const std::string& name, std::size_t width) {
  if (name.size() <= width || width < 12) return name;
  const std::size_t tail = width / 3;
  const std::size_t head = width - tail - 3;
  return name.substr(0, head) + "..." + name.substr(name.size() - tail);
}

// Right-aligned in `width`, always with a space before it (a number wider than its column
// pushes the row right rather than running into the column before).
std::string right(const std::string& text, std::size_t width) {
  return text.size() >= width ? " " + text : std::string(width - text.size(), ' ') + text;
}

std::string dims_text(const std::array<int, 3>& d) {
  return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

void dims_json(JsonStream& out, const std::optional<std::array<int, 3>>& d) {
  if (!d) {
    out.value(nullptr);
    return;
  }
  out.begin_array().value((*d)[0]).value((*d)[1]).value((*d)[2]).end_array();
}

// One element of the kernels array; `occupancy` under --threads, nullptr otherwise.
void write_kernel_json(JsonStream& out, const ScannedKernel& k, const ScannedImage& image,
                       const ScannedFile& file, const KernelOccupancy* occupancy) {
  const KernelResources& r = k.resources;
  // Keys in sorted order, as print_json writes them.
  out.begin_object().member("arch", image.arch).key("cluster_dims").after_key();
  dims_json(out, k.bounds.cluster);
  out.member("const_size_bytes", r.const_size_bytes)
      .member("demangled", r.demangled)
      .member("file", file.path)
      .member("image", k.image)
      .member("launch_bounds_max_threads", k.bounds.max_threads)
      .member("local_size_bytes", r.local_size_bytes)
      .member("max_registers", k.bounds.max_registers)
      .member("max_threads_per_block", r.max_threads_per_block);
  out.text_or_null("member", image.member)
      .member("name", r.name)
      .member("num_barriers", r.num_barriers)
      .member("num_regs", r.num_regs);
  if (occupancy) {
    out.key("occupancy").after_key();
    write_kernel_occupancy(out, *occupancy);
  }
  out.member("relocatable", image.relocatable).key("required_block_size").after_key();
  dims_json(out, k.bounds.reqntid);
  out.member("shared_size_bytes", r.shared_size_bytes)
      .member("stack_unknown", r.stack_unknown)
      .end_object();
}

// The kernels array from the images' texts (each element preceded by a comma), in image
// order, each text freed once written.
void write_rendered_array(std::ostream& out,
                          std::vector<std::pair<std::size_t, std::string>>& rendered) {
  if (rendered.empty()) {
    out << "[]";
    return;
  }
  std::sort(rendered.begin(), rendered.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  out << '[';
  bool first = true;
  for (auto& [image, text] : rendered) {
    const std::size_t skip = first ? 1 : 0;  // the first element has no comma before it
    out.write(text.data() + skip, static_cast<std::streamsize>(text.size() - skip));
    first = false;
    std::string().swap(text);
  }
  out << "\n  ]";
}

// Sorting: numeric columns largest first, names alphabetically.
const std::vector<std::string>& sort_columns() {
  static const std::vector<std::string> columns = {"name",  "regs",    "shared",   "local",
                                                   "const", "threads", "barriers", "occupancy"};
  return columns;
}

class Progress {
 public:
  explicit Progress(bool enabled) : enabled_(enabled), start_(std::chrono::steady_clock::now()) {}
  void operator()(std::size_t done, std::size_t total) {
    if (!enabled_ || total == 0) return;
    const auto elapsed = std::chrono::steady_clock::now() - start_;
    if (!shown_ && (elapsed < std::chrono::milliseconds(500) || done == total)) return;
    shown_ = true;
    const int width = 30;
    const int filled = static_cast<int>(width * done / total);
    std::fprintf(stderr, "\rreading %zu/%zu images [%s%s]", done, total,
                 std::string(static_cast<std::size_t>(filled), '#').c_str(),
                 std::string(static_cast<std::size_t>(width - filled), '.').c_str());
    if (done == total) std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
  }

 private:
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_;
};

// Text from the file or the command line (kernel and member names, paths) as the terminal
// gets it: control characters and bytes that are not UTF-8 escaped (base/text.hpp), not cut.
std::string for_terminal(const std::string& text) {
  return printable(text, text.size());
}

// A line on stderr for an entry or file that could not be read: its text (paths, names
// from the file) made printable, as main.cpp does for the errors it reports.
void report_line(const std::string& text) {
  print_message(text);
}

ExitStatus run_kernels(KernelsOptions o, GlobalOptions& global) {
  const TableFormat format = table_format(global);
  const bool csv = format == TableFormat::csv || format == TableFormat::csv_noheader;
  // Split here, not by CLI11 (which drops empty entries): "sm_90," is an error, as in
  // compile --arch.
  for (const std::string& list : o.arch_lists)
    for (const std::string& item : split_list(list, "--arch", "sm_80,sm_90"))
      o.arch.push_back(Arch::parse(item, "--arch"));
  if (o.threads_text) o.threads = parse_int(*o.threads_text, "--threads", 1, 1024);
  if (o.jobs_text) o.jobs = static_cast<unsigned>(parse_int(*o.jobs_text, "--jobs", 1, 1024));
  if (o.sort &&
      std::find(sort_columns().begin(), sort_columns().end(), *o.sort) == sort_columns().end()) {
    std::string names;
    for (const auto& c : sort_columns()) names += (names.empty() ? "" : ", ") + c;
    throw UsageError("--sort " + quote_input(*o.sort) + ": unknown column (columns: " + names +
                     ")");
  }
  if (o.sort == "occupancy" && !o.threads) throw UsageError("--sort occupancy needs --threads N");
  std::optional<KernelNameFilter> pattern;
  if (o.kernel) pattern.emplace(*o.kernel, "--kernel");

  ScanOptions scan;
  scan.arch = o.arch;
  scan.relocatable_leftovers = o.relocatable;
  if (o.jobs) scan.threads = *o.jobs;
  Progress progress(!o.no_progress && isatty(STDERR_FILENO));
  if (!o.no_progress && isatty(STDERR_FILENO)) scan.progress = std::ref(progress);
  // Names are matched on all threads (KernelNameFilter is safe to share).
  const auto kept = [&](const KernelResources& k) { return !pattern || pattern->matches(k); };
  ArchitectureTable architectures;

  // --json in image order (no --sort): each image's kernels are filtered, measured and
  // rendered on the thread that read the image, while the other images are still being
  // read; the kernels array is then their text in image order.
  const bool render_while_reading = global.json && !o.sort;
  std::mutex rendered_mutex;
  std::vector<std::pair<std::size_t, std::string>> rendered;  // (image, its kernels' text)
  scan.keep_kernels = !render_while_reading;
  if (render_while_reading)
    scan.on_image = [&](const ImageKernels& done) {
      std::string text;
      // About 1 KB a kernel, grown once rather than often (not under --kernel, which may
      // keep few: the text is held until the scan ends, capacity and all).
      if (!pattern) text.reserve(done.kernels.size() * 1024);
      JsonStream out(text, 2, false);  // each element preceded by a comma, the first's cut
      for (const ScannedKernel& k : done.kernels) {
        if (!kept(k.resources)) continue;
        std::optional<KernelOccupancy> occupancy;
        if (o.threads)
          occupancy = occupancy_for_kernel(architectures, done.info.arch, k.resources, k.bounds,
                                           done.info.relocatable, *o.threads);
        write_kernel_json(out, k, done.info, done.file, occupancy ? &*occupancy : nullptr);
      }
      if (text.empty()) return;
      const std::lock_guard<std::mutex> lock(rendered_mutex);
      rendered.emplace_back(done.image, std::move(text));
    };

  const ScanResult result = scan_binaries(o.files, scan);

  // Otherwise the kernels to show are chosen, measured and sorted here. The names are
  // matched in blocks on all threads, each block writing its own flags.
  std::vector<std::size_t> shown;
  std::vector<KernelOccupancy> occupancy;
  if (!render_while_reading) {
    if (pattern) {
      std::vector<char> keep(result.kernels.size());
      parallel_for_blocks(keep.size(), 256, o.jobs ? *o.jobs : 0,
                          [&](std::size_t, std::size_t begin, std::size_t end) {
                            for (std::size_t i = begin; i < end; ++i)
                              keep[i] = kept(result.kernels[i].resources);
                          });
      for (std::size_t i = 0; i < keep.size(); ++i)
        if (keep[i]) shown.push_back(i);
    } else {
      shown.resize(result.kernels.size());
      std::iota(shown.begin(), shown.end(), std::size_t{0});
    }
    occupancy.resize(result.kernels.size());
    if (o.threads)
      parallel_for_blocks(shown.size(), 512, o.jobs ? *o.jobs : 0,
                          [&](std::size_t, std::size_t begin, std::size_t end) {
                            for (std::size_t n = begin; n < end; ++n) {
                              const std::size_t i = shown[n];
                              const ScannedKernel& k = result.kernels[i];
                              const ScannedImage& image = result.images[k.image];
                              occupancy[i] =
                                  occupancy_for_kernel(architectures, image.arch, k.resources,
                                                       k.bounds, image.relocatable, *o.threads);
                            }
                          });
  }
  if (o.sort) {
    const auto key = [&](std::size_t i) -> long long {
      const auto& k = result.kernels[i].resources;
      if (o.sort == "regs") return k.num_regs;
      if (o.sort == "shared") return k.shared_size_bytes;
      if (o.sort == "local") return k.local_size_bytes;
      if (o.sort == "const") return k.const_size_bytes;
      if (o.sort == "threads") return k.max_threads_per_block;
      if (o.sort == "barriers") return k.num_barriers;
      const auto& r = occupancy[i].record;
      return r ? static_cast<long long>(r->occupancy * 1e6) : -1;
    };
    std::stable_sort(shown.begin(), shown.end(), [&](std::size_t a, std::size_t b) {
      if (o.sort == "name")
        return result.kernels[a].resources.demangled < result.kernels[b].resources.demangled;
      return key(a) > key(b);
    });
  }

  bool bad_entry = false;
  for (const auto& image : result.images) {
    if (!image.error.empty()) {
      report_line(image.error);
      bad_entry = true;
    }
  }
  bool any_cuda = false;
  for (const auto& f : result.files) {
    if (f.has_cuda_code)
      any_cuda = true;
    else
      report_line(f.path + ": " + f.note);
  }

  const auto file_of = [&](const ScannedKernel& k) -> const ScannedFile& {
    return result.files[result.images[k.image].file];
  };
  if (global.json) {
    const unsigned threads = o.jobs ? *o.jobs : 0;
    const auto write_kernel = [&](JsonStream& out, std::size_t n) {
      const ScannedKernel& k = result.kernels[shown[n]];
      write_kernel_json(out, k, result.images[k.image], file_of(k),
                        o.threads ? &occupancy[shown[n]] : nullptr);
    };
    const auto write_image = [&](JsonStream& out, std::size_t i) {
      const ScannedImage& image = result.images[i];
      out.begin_object();
      out.text_or_null("arch", image.arch);
      out.member("compression", image.compression)
          .member("container_offset", image.container_offset);
      out.text_or_null("error", image.error);
      out.member("file", result.files[image.file].path)
          .member("kernel_count", image.kernel_count)
          .member("kind", image.kind);
      out.text_or_null("member", image.member);
      out.member("offset", image.offset).member("relocatable", image.relocatable);
      out.text_or_null("section", image.section);
      out.member("size", image.size)
          .member("skipped", image.skipped)
          .member("stored_size", image.stored_size)
          .end_object();
    };
    print_json_streamed(
        {{"files",
          [&](std::ostream& os) {
            std::string text;
            JsonStream out(text, 1);
            out.after_key().begin_array();
            for (const auto& f : result.files) {
              out.begin_object()
                  .member("has_cuda_code", f.has_cuda_code)
                  .text_or_null("note", f.note)
                  .member("path", f.path)
                  .member("relocatable_leftovers_skipped", f.relocatable_leftovers_skipped)
                  .member("size", f.size)
                  .end_object();
            }
            out.end_array();
            os << text;
          }},
         {"images",
          [&](std::ostream& os) {
            write_json_array_parallel(os, result.images.size(), threads, write_image);
          }},
         {"kernels", [&](std::ostream& os) {
            if (render_while_reading)
              write_rendered_array(os, rendered);
            else
              write_json_array_parallel(os, shown.size(), threads, write_kernel);
          }}});
  } else if (csv) {
    // One line per kernel, every value unformatted and whole (names never cut).
    std::vector<std::string> columns = {
        "file",   "member", "arch",  "relocatable", "kernel",   "mangled",      "regs",
        "shared", "local",  "const", "threads",     "barriers", "stack_unknown"};
    if (o.threads)
      for (const char* c : {"block_threads", "blocks_per_sm", "occupancy", "limited_by"})
        columns.push_back(c);
    if (format == TableFormat::csv) print_csv_row(columns);
    for (std::size_t i : shown) {
      const ScannedKernel& k = result.kernels[i];
      const KernelResources& r = k.resources;
      const ScannedImage& image = result.images[k.image];
      std::vector<std::string> row = {file_of(k).path,
                                      image.member,
                                      image.arch,
                                      image.relocatable ? "true" : "false",
                                      r.demangled,
                                      r.name,
                                      std::to_string(r.num_regs),
                                      std::to_string(r.shared_size_bytes),
                                      std::to_string(r.local_size_bytes),
                                      std::to_string(r.const_size_bytes),
                                      std::to_string(r.max_threads_per_block),
                                      std::to_string(r.num_barriers),
                                      r.stack_unknown ? "true" : "false"};
      if (o.threads) {
        const KernelOccupancy& oc = occupancy[i];
        row.push_back(std::to_string(*o.threads));
        if (oc.record) {
          char fraction[32];
          std::snprintf(fraction, sizeof fraction, "%.6g", oc.record->occupancy);
          row.push_back(std::to_string(oc.record->tb_per_mp));
          row.push_back(fraction);
          row.push_back(std::string(oc.record->limited_by));
        } else {
          // No occupancy: the reason stands where the limit would.
          row.insert(row.end(), {"", "", oc.reason});
        }
      }
      print_csv_row(row);
    }
  } else {
    // One table per file, architecture and relocatability, in the order they first appear.
    using GroupKey = std::tuple<std::size_t, std::string, bool>;
    std::vector<GroupKey> groups;
    std::map<GroupKey, std::vector<std::size_t>> rows;
    for (std::size_t i : shown) {
      const auto& image = result.images[result.kernels[i].image];
      const GroupKey key{image.file, image.arch, image.relocatable};
      if (!rows.count(key)) groups.push_back(key);
      rows[key].push_back(i);
    }
    // The names as printed (escaped, cut unless --wide) and the rows are made on all
    // threads, in blocks of rows, and written in order.
    const unsigned threads = o.jobs ? *o.jobs : 0;
    constexpr std::size_t kBlock = 512;
    // Cut only for a terminal, as ps does: a pipe or a file gets whole names.
    const bool cut_names = !o.wide && isatty(STDOUT_FILENO);
    std::vector<std::string> names(result.kernels.size());
    parallel_for_blocks(
        shown.size(), kBlock, threads, [&](std::size_t, std::size_t begin, std::size_t end) {
          for (std::size_t n = begin; n < end; ++n) {
            const std::string name = for_terminal(result.kernels[shown[n]].resources.demangled);
            names[shown[n]] = cut_names ? cut(name, 60) : name;
          }
        });
    const auto row_text = [&](std::size_t i, std::size_t width, std::string& out) {
      const ScannedKernel& k = result.kernels[i];
      const KernelResources& r = k.resources;
      out += pad(names[i], width);
      // Each column keeps at least one space before it, however wide its number.
      out += right(std::to_string(r.num_regs), 6);
      out += right(std::to_string(r.shared_size_bytes), 8);
      out += right(std::to_string(r.local_size_bytes) + (r.stack_unknown ? "?" : ""), 7);
      out += right(std::to_string(r.const_size_bytes), 7);
      out += right(std::to_string(r.max_threads_per_block), 9);
      out += right(std::to_string(r.num_barriers), 5);
      if (o.threads) {
        const KernelOccupancy& oc = occupancy[i];
        if (oc.record) {
          out += right(std::to_string(oc.record->tb_per_mp), 11);
          out += right(percent(oc.record->occupancy), 11);
          out += "  ";
          out += oc.record->limited_by;
        } else {
          out += right("-", 11) + right("-", 11) + "  " + oc.reason;
        }
      }
      if (k.bounds.cluster) out += "  [cluster " + dims_text(*k.bounds.cluster) + "]";
      if (k.bounds.reqntid) out += "  [block " + dims_text(*k.bounds.reqntid) + "]";
      if (r.stack_unknown) out += "  [stack unknown: recursion; runs on the stack limit]";
      out += '\n';
    };
    for (std::size_t g = 0; g < groups.size(); ++g) {
      const auto& list = rows[groups[g]];
      const auto& [group_file, group_arch, group_relocatable] = groups[g];
      std::size_t images = 0;
      for (const auto& image : result.images)
        if (image.file == group_file && image.arch == group_arch &&
            image.relocatable == group_relocatable && image.kind == "elf" && !image.skipped)
          ++images;
      if (g > 0) std::cout << '\n';
      std::cout << for_terminal(result.files[group_file].path) << "  " << group_arch
                << (group_relocatable ? " relocatable" : "") << "  (" << list.size()
                << (list.size() == 1 ? " kernel" : " kernels") << ", " << images
                << (images == 1 ? " image" : " images") << ")\n";
      if (group_relocatable)
        std::cout << "(relocatable -dc code: registers, stack and shared memory are final only "
                     "after the device link; the driver does not load it as it is)\n";
      std::size_t width = 6;
      for (std::size_t i : list) width = std::max(width, names[i].size());
      std::cout << pad("kernel", width) << "  regs  shared  local  const  threads  bar";
      if (o.threads) std::cout << "  blocks/SM  occupancy  limited by";
      std::cout << '\n';
      std::vector<std::string> blocks((list.size() + kBlock - 1) / kBlock);
      parallel_for_blocks(list.size(), kBlock, threads,
                          [&](std::size_t b, std::size_t begin, std::size_t end) {
                            for (std::size_t n = begin; n < end; ++n)
                              row_text(list[n], width, blocks[b]);
                          });
      for (std::string& block : blocks) {
        std::cout.write(block.data(), static_cast<std::streamsize>(block.size()));
        std::string().swap(block);
      }
    }
    // PTX and unknown entries, which have no kernels to list.
    for (const auto& image : result.images) {
      if (image.kind == "elf" || image.skipped) continue;
      std::cout << (groups.empty() ? "" : "\n") << for_terminal(result.files[image.file].path);
      if (!image.member.empty()) std::cout << "(" << for_terminal(image.member) << ")";
      if (image.kind == "ptx")
        std::cout << "  " << image.arch << "  PTX only (no machine code to measure)\n";
      else
        std::cout << "  entry at offset " << image.offset << " of unknown kind: skipped\n";
    }
    for (const auto& f : result.files)
      if (f.relocatable_leftovers_skipped > 0)
        std::cout << (groups.empty() ? "" : "\n") << for_terminal(f.path) << "  "
                  << f.relocatable_leftovers_skipped << " relocatable leftover image"
                  << (f.relocatable_leftovers_skipped == 1 ? "" : "s")
                  << " in __nv_relfatbin not listed (the driver never loads them; "
                     "--relocatable lists them)\n";
    if (shown.empty() && any_cuda)
      std::cout << (pattern          ? "no kernel matches --kernel"
                    : o.arch.empty() ? "no kernels"
                                     : "no kernels for --arch")
                << '\n';
  }
  if (!any_cuda) return ExitStatus::usage;
  if (bad_entry) return ExitStatus::unreadable_entry;
  return ExitStatus::success;
}

}  // namespace

Command add_kernels(CLI::App& root, GlobalOptions& global) {
  auto o = std::make_shared<KernelsOptions>();
  CLI::App* sub = root.add_subcommand(
      "kernels", "Every kernel in compiled CUDA binaries, its resources and occupancy (no GPU)");
  sub->add_option("FILE", o->files,
                  "CUBIN, fatbin, object (.o, -dc too), archive (.a), executable or shared library")
      ->required();
  // One value per --arch (a list is comma-separated), so that `kernels --arch sm_90 FILE`
  // takes FILE as a file, not as a second architecture.
  sub->add_option("--arch", o->arch_lists,
                  "Keep these architectures (sm_90 also keeps sm_90a; comma-separated)")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->check(completion_choices(architecture_names()));
  sub->add_option("--kernel", o->kernel,
                  "Keep kernels whose mangled or demangled name matches this regular expression "
                  "(RE2 syntax, anywhere in the name)");
  sub->add_option("--threads", o->threads_text,
                  "Add each kernel's occupancy at N threads per block (1 to 1024)");
  sub->add_option(
         "--sort", o->sort,
         "Sort by a column: name, regs, shared, local, const, threads, barriers, occupancy")
      ->check(completion_choices(sort_columns()));
  sub->add_flag("--wide", o->wide,
                "Print whole kernel names on a terminal too (they are cut to 60 characters only "
                "where standard output is a terminal)");
  sub->add_flag("--relocatable", o->relocatable,
                "Also list the relocatable leftovers (__nv_relfatbin) of executables and shared "
                "libraries, apart from the linked kernels");
  sub->add_option("--jobs", o->jobs_text,
                  "Worker threads, 1 to 1024 (default: one per CPU this process may use)");
  sub->add_flag("--no-progress", o->no_progress, "No progress bar on stderr");
  add_json_flag(*sub, global);
  add_table_format_option(*sub, global);
  return {sub, [o, &global] { return run_kernels(*o, global); }};
}

}  // namespace cudatool::app
