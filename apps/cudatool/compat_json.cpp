// compat's JSON document (share/schemas/compat.schema.json).
#include <algorithm>

#include "compat_report.hpp"
#include "json_stream.hpp"
#include "render.hpp"

namespace cudatool::app {
namespace {

std::vector<std::string> arch_names(const std::vector<Arch>& archs) {
  std::vector<std::string> names;
  for (const Arch& a : archs) names.push_back(a.str());
  return names;
}

std::optional<std::string> ptx_text(const std::optional<PtxVersion>& version) {
  if (!version) return std::nullopt;
  return ptx_version_text(*version);
}

JsonObject entry_json(const ScannedImage& e) {
  JsonObject j;
  j.set("kind", image_kind_name(e.kind))
      .set("ptx_version", ptx_text(e.ptx_version))
      .set("ptx_text_version", ptx_text(e.ptx_text_version))
      .set("relocatable", e.relocatable)
      .set("size", e.size)
      .text_or_null("error", e.error);
  if (e.arch)
    j.set("arch", e.arch->str());
  else
    j.set("arch", nullptr);
  return j;
}

JsonObject verdict_json(const CompatAnswer& a, const CompatFile& f, std::size_t t) {
  const CompatFileTarget& v = f.targets[t];
  JsonObject j;
  j.set("target", t)
      .set("verdict", verdict_name(v.verdict))
      .set("native", v.native)
      .set("jit", v.jit)
      .set("other_gpus", v.other_gpus)
      .set("failed", v.failed)
      .set("unloadable", v.unloadable)
      .set("empty", v.empty)
      .set("kernels", v.kernels)
      .set("jit_ptx_bytes", v.jit_ptx_bytes)
      .set("ptx_needed", ptx_text(v.ptx_needed))
      .set("detail", verdict_detail(a, f, t))
      .text_or_null("fix", verdict_fix(a, f, t));
  if (v.gap == CompatGap::none)
    j.set("reason", nullptr);
  else
    j.set("reason", gap_name(v.gap));
  return j;
}

}  // namespace

JsonObject compat_json(const CompatAnswer& a) {
  const CompatReport& r = a.report;
  std::vector<JsonObject> targets;
  for (const CompatTarget& t : r.targets)
    targets.push_back(JsonObject()
                          .set("name", t.name)
                          .set("arch", t.cc.sm())
                          .set("compute_capability", t.cc.str())
                          .set("source", t.source));
  JsonObject driver;
  driver.set("cuda_version", r.driver.cuda.str())
      .text_or_null("release", r.driver.release)
      .set("max_ptx_version", ptx_version_text(r.driver.cuda.ptx))
      .set("source", r.driver.source);
  // Each file's containers, where --containers kept them.
  std::vector<std::vector<JsonObject>> detail(r.files.size());
  for (const CompatContainer& c : r.containers) {
    std::vector<JsonObject> entries, decisions;
    for (const ScannedImage& e : c.entries) entries.push_back(entry_json(e));
    for (const ContainerDecision& d : c.decisions)
      decisions.push_back(JsonObject()
                              .set("outcome", outcome_name(d.outcome))
                              .set("entry", d.entry)
                              .set("holds_code_for_target", d.holds_code_for_target));
    detail[c.file].push_back(JsonObject()
                                 .set("member", c.member)
                                 .set("section", c.section)
                                 .set("offset", c.offset)
                                 .set("registered", c.registered)
                                 .set("entries", entries)
                                 .set("decisions", decisions));
  }
  std::vector<JsonObject> files;
  std::size_t counts[4] = {0, 0, 0, 0}, unreadable = 0;
  for (std::size_t i = 0; i < r.files.size(); ++i) {
    const CompatFile& f = r.files[i];
    if (f.error.empty())
      ++counts[static_cast<int>(worst_verdict(f))];
    else
      ++unreadable;
    if (!a.all_files && !f.has_cuda_code && f.error.empty()) continue;
    std::vector<JsonObject> verdicts;
    for (std::size_t t = 0; t < f.targets.size() && f.error.empty(); ++t)
      verdicts.push_back(verdict_json(a, f, t));
    JsonObject file;
    file.set("path", f.path)
        .set("size", f.size)
        .text_or_null("error", f.error)
        .set("has_cuda_code", f.has_cuda_code)
        .set("verdict",
             f.error.empty() ? verdict_name(worst_verdict(f)) : std::string_view("unreadable"))
        .set("containers", f.containers)
        .set("unreadable_entries", f.unreadable_entries)
        .set("sass", arch_names(f.sass))
        .set("ptx", arch_names(f.ptx))
        .set("lto_ir", arch_names(f.lto_ir))
        .set("cuda_runtimes", f.cuda_runtimes)
        .set("verdicts", verdicts);
    if (f.package == SIZE_MAX)
      file.set("package", nullptr);
    else
      file.set("package", f.package);
    if (!r.containers.empty()) file.set("container_detail", detail[i]);
    files.push_back(std::move(file));
  }
  // Each package's roll-up: its files with CUDA code, and the worst verdict among them.
  std::vector<std::size_t> package_files(r.packages.size(), 0);
  std::vector<std::string> package_verdict(r.packages.size(), "no_cuda_code");
  for (const CompatFile& f : r.files) {
    if (f.package == SIZE_MAX || (!f.has_cuda_code && f.error.empty())) continue;
    ++package_files[f.package];
    const std::string v =
        f.error.empty() ? std::string(verdict_name(worst_verdict(f))) : "unreadable";
    static const std::vector<std::string> order = {"cannot_run", "unreadable", "jit", "native",
                                                   "no_cuda_code"};
    if (std::find(order.begin(), order.end(), v) <
        std::find(order.begin(), order.end(), package_verdict[f.package]))
      package_verdict[f.package] = v;
  }
  std::vector<JsonObject> packages;
  for (std::size_t i = 0; i < r.packages.size(); ++i) {
    const CompatPackage& p = r.packages[i];
    packages.push_back(JsonObject()
                           .set("name", p.name)
                           .set("version", p.version)
                           .set("location", p.location)
                           .text_or_null("cuda_runtime", p.cuda_runtime)
                           .set("files_with_cuda_code", package_files[i])
                           .set("verdict", package_verdict[i]));
  }
  const ExitStatus status = compat_exit_status(a);
  return JsonObject()
      .set("targets", targets)
      .set("driver", driver)
      .set("ptx_jit", jit_policy_name(r.policy))
      .set("require", a.require_native ? "native" : "any")
      .set("files", files)
      .set("packages", packages)
      .set("summary", JsonObject()
                          .set("files_examined", r.files_examined)
                          .set("cannot_run", counts[0])
                          .set("jit", counts[1])
                          .set("native", counts[2])
                          .set("no_cuda_code", counts[3])
                          .set("unreadable", unreadable)
                          .set("exit_status", to_int(status))
                          .set("verdict", exit_status_name(status)));
}

void print_compat_json(const CompatAnswer& a) {
  print_json(compat_json(a));
}

}  // namespace cudatool::app
