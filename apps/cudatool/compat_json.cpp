// compat's JSON document (share/schemas/compat.schema.json).
#include <algorithm>

#include "compat_report.hpp"
#include "render.hpp"

namespace cudatool::app {
namespace {

nlohmann::json arch_array(const std::vector<Arch>& archs) {
  nlohmann::json j = nlohmann::json::array();
  for (const Arch& a : archs) j.push_back(a.str());
  return j;
}

nlohmann::json entry_json(const ScannedImage& e) {
  return {{"kind", image_kind_name(e.kind)},
          {"arch", e.arch ? nlohmann::json(e.arch->str()) : nlohmann::json(nullptr)},
          {"ptx_version", e.ptx_version ? nlohmann::json(ptx_version_text(*e.ptx_version))
                                        : nlohmann::json(nullptr)},
          {"ptx_text_version", e.ptx_text_version
                                   ? nlohmann::json(ptx_version_text(*e.ptx_text_version))
                                   : nlohmann::json(nullptr)},
          {"relocatable", e.relocatable},
          {"size", e.size},
          {"error", e.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.error)}};
}

}  // namespace

void print_compat_json(const CompatAnswer& a) {
  const CompatReport& r = a.report;
  nlohmann::json targets = nlohmann::json::array();
  for (const CompatTarget& t : r.targets)
    targets.push_back({{"name", t.name},
                       {"arch", t.cc.sm()},
                       {"compute_capability", t.cc.str()},
                       {"source", t.source}});
  nlohmann::json driver = {{"cuda_version", r.driver.cuda.str()},
                           {"release", r.driver.release.empty() ? nlohmann::json(nullptr)
                                                                : nlohmann::json(r.driver.release)},
                           {"max_ptx_version", ptx_version_text(r.driver.cuda.ptx)},
                           {"source", r.driver.source}};
  // Each file's containers, where --containers kept them.
  std::vector<nlohmann::json> detail(r.files.size(), nlohmann::json::array());
  for (const CompatContainer& c : r.containers) {
    nlohmann::json entries = nlohmann::json::array(), decisions = nlohmann::json::array();
    for (const ScannedImage& e : c.entries) entries.push_back(entry_json(e));
    for (const ContainerDecision& d : c.decisions)
      decisions.push_back({{"outcome", outcome_name(d.outcome)},
                           {"entry", d.entry ? nlohmann::json(*d.entry) : nlohmann::json(nullptr)},
                           {"holds_code_for_target", d.holds_code_for_target}});
    detail[c.file].push_back({{"member", c.member},
                              {"section", c.section},
                              {"offset", c.offset},
                              {"registered", c.registered},
                              {"entries", std::move(entries)},
                              {"decisions", std::move(decisions)}});
  }
  nlohmann::json files = nlohmann::json::array();
  std::size_t counts[4] = {0, 0, 0, 0}, unreadable = 0;
  for (std::size_t i = 0; i < r.files.size(); ++i) {
    const CompatFile& f = r.files[i];
    if (f.error.empty())
      ++counts[static_cast<int>(worst_verdict(f))];
    else
      ++unreadable;
    if (!a.all_files && !f.has_cuda_code && f.error.empty()) continue;
    nlohmann::json verdicts = nlohmann::json::array();
    for (std::size_t t = 0; t < f.targets.size() && f.error.empty(); ++t) {
      const CompatFileTarget& v = f.targets[t];
      const std::string fix = verdict_fix(a, f, t);
      verdicts.push_back(
          {{"target", t},
           {"verdict", verdict_name(v.verdict)},
           {"reason",
            v.gap == CompatGap::none ? nlohmann::json(nullptr) : nlohmann::json(gap_name(v.gap))},
           {"native", v.native},
           {"jit", v.jit},
           {"other_gpus", v.other_gpus},
           {"failed", v.failed},
           {"unloadable", v.unloadable},
           {"empty", v.empty},
           {"kernels", v.kernels},
           {"jit_ptx_bytes", v.jit_ptx_bytes},
           {"ptx_needed", v.ptx_needed ? nlohmann::json(ptx_version_text(*v.ptx_needed))
                                       : nlohmann::json(nullptr)},
           {"detail", verdict_detail(a, f, t)},
           {"fix", fix.empty() ? nlohmann::json(nullptr) : nlohmann::json(fix)}});
    }
    nlohmann::json file = {
        {"path", f.path},
        {"package", f.package == SIZE_MAX ? nlohmann::json(nullptr) : nlohmann::json(f.package)},
        {"size", f.size},
        {"error", f.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.error)},
        {"has_cuda_code", f.has_cuda_code},
        {"verdict", f.error.empty() ? nlohmann::json(verdict_name(worst_verdict(f)))
                                    : nlohmann::json("unreadable")},
        {"containers", f.containers},
        {"unreadable_entries", f.unreadable_entries},
        {"sass", arch_array(f.sass)},
        {"ptx", arch_array(f.ptx)},
        {"lto_ir", arch_array(f.lto_ir)},
        {"cuda_runtimes", f.cuda_runtimes},
        {"verdicts", std::move(verdicts)}};
    if (!r.containers.empty()) file["container_detail"] = std::move(detail[i]);
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
  nlohmann::json packages = nlohmann::json::array();
  for (std::size_t i = 0; i < r.packages.size(); ++i) {
    const CompatPackage& p = r.packages[i];
    packages.push_back({{"name", p.name},
                        {"version", p.version},
                        {"location", p.location},
                        {"cuda_runtime", p.cuda_runtime.empty() ? nlohmann::json(nullptr)
                                                                : nlohmann::json(p.cuda_runtime)},
                        {"files_with_cuda_code", package_files[i]},
                        {"verdict", package_verdict[i]}});
  }
  const ExitStatus status = compat_exit_status(a);
  print_json({{"targets", std::move(targets)},
              {"driver", std::move(driver)},
              {"ptx_jit", jit_policy_name(r.policy)},
              {"require", a.require_native ? "native" : "any"},
              {"files", std::move(files)},
              {"packages", std::move(packages)},
              {"summary",
               {{"files_examined", r.files_examined},
                {"cannot_run", counts[0]},
                {"jit", counts[1]},
                {"native", counts[2]},
                {"no_cuda_code", counts[3]},
                {"unreadable", unreadable},
                {"exit_status", to_int(status)},
                {"verdict", exit_status_name(status)}}}});
}

}  // namespace cudatool::app
