// `kernels --baseline --json` (share/schemas/kernels-compare.schema.json).
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "json_streamed.hpp"
#include "kernels_compare.hpp"

namespace cudatool::app {

std::string architecture_status(const ArchitectureChange& a) {
  if (a.old_images == 0) return "added";
  if (a.new_images == 0) return "removed";
  return "kept";
}

namespace {

// One side's measures (keys sorted, as every document writes them), or null.
void write_measures(JsonStream& out, const std::optional<KernelMeasures>& m) {
  if (!m) {
    out.value(nullptr);
    return;
  }
  const auto count = [&](const char* key, KernelMetric metric) {
    const auto& v = (*m)[metric];
    if (v)
      out.member(key, static_cast<std::int64_t>(std::llround(*v)));
    else
      out.member(key, nullptr);
  };
  out.begin_object();
  count("barriers", KernelMetric::barriers);
  count("code_size", KernelMetric::code_size);
  count("local", KernelMetric::local);
  out.member("occupancy", (*m)[KernelMetric::occupancy]);
  out.text_or_null("occupancy_reason", m->occupancy_reason);
  count("registers", KernelMetric::registers);
  count("shared", KernelMetric::shared);
  count("spill_loads", KernelMetric::spill_loads);
  count("spill_stores", KernelMetric::spill_stores);
  out.end_object();
}

const char* kind_name(KernelChange::Kind kind) {
  return kind == KernelChange::Kind::added     ? "added"
         : kind == KernelChange::Kind::removed ? "removed"
                                               : "changed";
}

// Streamed (json_streamed.hpp): a comparison of two large libraries has tens of thousands of
// changes, rendered in chunks on all threads.
}  // namespace

void print_comparison_json(const KernelComparison& c, const ComparisonInputs& in,
                           std::ostream& out) {
  const auto paths = [](const ScanResult& scan) {
    std::vector<std::string> list;
    for (const ScannedFile& f : scan.files) list.push_back(f.path);
    return list;
  };
  std::vector<JsonObject> architectures;
  for (const ArchitectureChange& a : c.architectures)
    architectures.push_back(JsonObject()
                                .text_or_null("arch", a.arch ? a.arch->str() : std::string())
                                .set("old_images", a.old_images)
                                .set("new_images", a.new_images)
                                .set("old_bytes", a.old_bytes)
                                .set("new_bytes", a.new_bytes)
                                .set("status", architecture_status(a)));
  JsonObject summary;
  summary.set("old_kernels", c.old_kernels)
      .set("new_kernels", c.new_kernels)
      .set("unchanged", c.unchanged)
      .set("changed", c.changed)
      .set("improved", c.improved)
      .set("worsened", c.worsened)
      .set("added", c.added)
      .set("removed", c.removed)
      .set("old_bytes", c.old_bytes)
      .set("new_bytes", c.new_bytes)
      .set("regressions", c.regressions)
      .set("broken_rules", c.broken_rules)
      .set("passed", c.broken_rules.empty());
  const auto change = [&](JsonStream& out, std::size_t i) {
    const KernelChange& k = c.changes[i];
    out.begin_object()
        .member("arch", k.arch.str())
        .member("demangled", k.demangled)
        .member("kind", kind_name(k.kind))
        .member("name", k.name)
        .key("new")
        .after_key();
    write_measures(out, k.new_measures);
    out.key("old").after_key();
    write_measures(out, k.old_measures);
    out.key("regressions").after_key().begin_array();
    for (const std::string& r : k.regressions) out.value(r);
    out.end_array().member("relocatable", k.relocatable).end_object();
  };
  print_json_streamed(
      {streamed_value("architectures", std::move(architectures)),
       streamed_value("baseline", paths(in.old_scan)),
       {"changes",
        [&](std::ostream& os) { write_json_array_parallel(os, c.changes.size(), 0, change); }},
       streamed_value("files", paths(in.new_scan)),
       streamed_value("summary", std::move(summary)),
       streamed_value("threads", c.threads)},
      out);
}

}  // namespace cudatool::app
