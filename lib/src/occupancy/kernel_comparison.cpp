#include "cudatool/occupancy/kernel_comparison.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>
#include <tuple>

#include "cudatool/base/error.hpp"
#include "cudatool/base/parallel.hpp"

namespace cudatool {
namespace {

constexpr std::size_t index(KernelMetric m) {
  return static_cast<std::size_t>(m);
}

// How much worse `after` is than `before` (positive: worse), in the metric's unit
// (occupancy in points of 0-100).
double worsening(KernelMetric m, double before, double after) {
  return m == KernelMetric::occupancy ? (before - after) * 100 : after - before;
}

// Whether a worsening breaks a rule's threshold.
bool breaks(const RegressionRule& rule, double before, double worse) {
  if (worse <= 0) return false;
  if (!rule.relative) return worse > rule.threshold;
  const double base =
      rule.kind == RegressionRule::Kind::metric && rule.metric == KernelMetric::occupancy
          ? before * 100
          : before;
  if (base <= 0) return true;  // anything from nothing is more than any percentage
  return worse / base * 100 > rule.threshold;
}

// The distinct kernels of a scan (not those of an identical image), by (name, arch,
// relocatable), then in scan order: the k-th copy of a kernel is matched with the k-th.
struct Distinct {
  std::vector<std::size_t> kernels;  // indices into the scan's kernels, sorted
};

using MatchKey = std::tuple<std::string_view, Arch, bool>;

MatchKey key_of(const ScanResult& scan, std::size_t i) {
  const ScannedKernel& k = scan.kernels[i];
  const ScannedImage& image = scan.images[k.image];
  return {k.resources.name, image.arch.value_or(Arch{}), image.relocatable};
}

std::vector<std::size_t> distinct_kernels(const ScanResult& scan) {
  std::vector<std::size_t> list;
  list.reserve(scan.kernels.size());
  for (std::size_t i = 0; i < scan.kernels.size(); ++i)
    if (!scan.images[scan.kernels[i].image].same_bytes_as) list.push_back(i);
  std::stable_sort(list.begin(), list.end(),
                   [&](std::size_t a, std::size_t b) { return key_of(scan, a) < key_of(scan, b); });
  return list;
}

std::vector<KernelMeasures> measure_all(const ScanResult& scan,
                                        const std::vector<std::size_t>& list,
                                        ArchitectureTable& table, int threads) {
  std::vector<KernelMeasures> measures(list.size());
  parallel_for_blocks(list.size(), 512, 0, [&](std::size_t, std::size_t begin, std::size_t end) {
    for (std::size_t n = begin; n < end; ++n)
      measures[n] = measure_kernel(scan, list[n], table, threads);
  });
  return measures;
}

}  // namespace

const char* metric_name(KernelMetric metric) {
  static constexpr const char* kNames[kKernelMetricCount] = {
      "registers", "spill_stores", "spill_loads", "local",
      "shared",    "barriers",     "occupancy",   "code_size"};
  return kNames[index(metric)];
}

KernelMeasures measure_kernel(const ScanResult& scan, std::size_t kernel, ArchitectureTable& table,
                              int threads) {
  const ScannedKernel& k = scan.kernels[kernel];
  const ScannedImage& image = scan.images[k.image];
  const KernelResources& r = k.resources;
  KernelMeasures m;
  m.values[index(KernelMetric::registers)] = r.num_regs;
  if (r.spill_store_bytes) m.values[index(KernelMetric::spill_stores)] = *r.spill_store_bytes;
  if (r.spill_load_bytes) m.values[index(KernelMetric::spill_loads)] = *r.spill_load_bytes;
  m.values[index(KernelMetric::local)] = r.local_size_bytes;
  m.values[index(KernelMetric::shared)] = r.shared_size_bytes;
  m.values[index(KernelMetric::barriers)] = r.num_barriers;
  KernelOccupancy occupancy;
  try {
    occupancy = occupancy_for_kernel(table, image.arch.value_or(Arch{}), r, k.bounds,
                                     image.relocatable, threads);
  } catch (const UsageError& e) {
    // Values no CUBIN holds (a hand-edited baseline document): no occupancy, and why.
    occupancy.reason = e.what();
  }
  if (occupancy.record)
    m.values[index(KernelMetric::occupancy)] = occupancy.record->occupancy;
  else
    m.occupancy_reason = occupancy.reason;
  m.values[index(KernelMetric::code_size)] = static_cast<double>(r.code_size_bytes);
  return m;
}

KernelComparison compare_kernels(const ScanResult& old_scan, const ScanResult& new_scan,
                                 const ComparisonOptions& options, ArchitectureTable& table) {
  KernelComparison out;
  out.threads = options.threads;
  const std::vector<std::size_t> old_list = distinct_kernels(old_scan);
  const std::vector<std::size_t> new_list = distinct_kernels(new_scan);
  const std::vector<KernelMeasures> old_measures =
      measure_all(old_scan, old_list, table, options.threads);
  const std::vector<KernelMeasures> new_measures =
      measure_all(new_scan, new_list, table, options.threads);
  out.old_kernels = old_list.size();
  out.new_kernels = new_list.size();
  std::vector<char> rule_broken(options.rules.size(), 0);

  const auto change_for = [&](KernelChange::Kind kind, const ScanResult& scan, std::size_t i) {
    KernelChange c;
    c.kind = kind;
    const ScannedKernel& k = scan.kernels[i];
    const ScannedImage& image = scan.images[k.image];
    c.name = k.resources.name;
    c.demangled = k.resources.demangled;
    c.arch = image.arch.value_or(Arch{});
    c.relocatable = image.relocatable;
    return c;
  };
  const auto removed_rules = [&](KernelChange& c) {
    for (std::size_t r = 0; r < options.rules.size(); ++r)
      if (options.rules[r].kind == RegressionRule::Kind::kernels_removed) {
        c.regressions.push_back(options.rules[r].name);
        rule_broken[r] = 1;
      }
  };

  std::size_t a = 0, b = 0;
  while (a < old_list.size() || b < new_list.size()) {
    // One key's copies on each side.
    const bool take_old =
        b == new_list.size() ||
        (a < old_list.size() && key_of(old_scan, old_list[a]) <= key_of(new_scan, new_list[b]));
    const MatchKey key = take_old ? key_of(old_scan, old_list[a]) : key_of(new_scan, new_list[b]);
    std::size_t a_end = a, b_end = b;
    while (a_end < old_list.size() && key_of(old_scan, old_list[a_end]) == key) ++a_end;
    while (b_end < new_list.size() && key_of(new_scan, new_list[b_end]) == key) ++b_end;
    for (std::size_t n = 0; n < std::max(a_end - a, b_end - b); ++n) {
      const bool has_old = a + n < a_end, has_new = b + n < b_end;
      if (has_old && has_new) {
        const KernelMeasures& before = old_measures[a + n];
        const KernelMeasures& after = new_measures[b + n];
        bool differs = false, better = false, worse = false;
        for (std::size_t m = 0; m < kKernelMetricCount; ++m) {
          if (before.values[m] != after.values[m]) differs = true;
          if (!before.values[m] || !after.values[m]) continue;
          const double w = worsening(KernelMetric(m), *before.values[m], *after.values[m]);
          if (w > 0) worse = true;
          if (w < 0) better = true;
        }
        if (!differs) {
          ++out.unchanged;
          continue;
        }
        ++out.changed;
        if (worse) ++out.worsened;
        if (better) ++out.improved;
        KernelChange c = change_for(KernelChange::Kind::changed, new_scan, new_list[b + n]);
        c.old_kernel = old_list[a + n];
        c.new_kernel = new_list[b + n];
        c.old_measures = before;
        c.new_measures = after;
        for (std::size_t r = 0; r < options.rules.size(); ++r) {
          const RegressionRule& rule = options.rules[r];
          std::vector<KernelMetric> metrics;
          if (rule.kind == RegressionRule::Kind::metric) metrics = {rule.metric};
          if (rule.kind == RegressionRule::Kind::spills)
            metrics = {KernelMetric::spill_stores, KernelMetric::spill_loads};
          for (const KernelMetric m : metrics) {
            const auto& x = before[m];
            const auto& y = after[m];
            if (x && y && breaks(rule, *x, worsening(m, *x, *y))) {
              c.regressions.push_back(rule.name);
              rule_broken[r] = 1;
              break;
            }
          }
        }
        out.changes.push_back(std::move(c));
      } else if (has_old) {
        ++out.removed;
        KernelChange c = change_for(KernelChange::Kind::removed, old_scan, old_list[a + n]);
        c.old_kernel = old_list[a + n];
        c.old_measures = old_measures[a + n];
        removed_rules(c);
        out.changes.push_back(std::move(c));
      } else {
        ++out.added;
        KernelChange c = change_for(KernelChange::Kind::added, new_scan, new_list[b + n]);
        c.new_kernel = new_list[b + n];
        c.new_measures = new_measures[b + n];
        out.changes.push_back(std::move(c));
      }
    }
    a = a_end;
    b = b_end;
  }
  for (const KernelChange& c : out.changes)
    if (!c.regressions.empty()) ++out.regressions;

  // Architectures, and the device code in all.
  std::map<std::optional<Arch>, ArchitectureChange> archs;
  for (const ScannedImage& image : old_scan.images) {
    ArchitectureChange& x = archs[image.arch];
    x.arch = image.arch;
    ++x.old_images;
    x.old_bytes += image.file_bytes;
    out.old_bytes += image.file_bytes;
  }
  for (const ScannedImage& image : new_scan.images) {
    ArchitectureChange& x = archs[image.arch];
    x.arch = image.arch;
    ++x.new_images;
    x.new_bytes += image.file_bytes;
    out.new_bytes += image.file_bytes;
  }
  for (auto& [arch, x] : archs) {
    out.architectures.push_back(x);
    if (x.old_images > 0 && x.new_images == 0)
      for (std::size_t r = 0; r < options.rules.size(); ++r)
        if (options.rules[r].kind == RegressionRule::Kind::kernels_removed) {
          rule_broken[r] = 1;
          ++out.regressions;
        }
  }
  for (std::size_t r = 0; r < options.rules.size(); ++r) {
    const RegressionRule& rule = options.rules[r];
    if (rule.kind == RegressionRule::Kind::total_size &&
        breaks(rule, static_cast<double>(out.old_bytes),
               static_cast<double>(out.new_bytes) - static_cast<double>(out.old_bytes))) {
      rule_broken[r] = 1;
      ++out.regressions;
    }
    if (rule_broken[r]) out.broken_rules.push_back(rule.name);
  }

  // Most impact first.
  const auto delta = [](const KernelChange& c, KernelMetric m) {
    if (!c.old_measures || !c.new_measures) return 0.0;
    const auto& x = (*c.old_measures)[m];
    const auto& y = (*c.new_measures)[m];
    return x && y ? worsening(m, *x, *y) : 0.0;
  };
  const auto impact = [&](const KernelChange& c) {
    const int kind = c.kind == KernelChange::Kind::changed   ? 0
                     : c.kind == KernelChange::Kind::removed ? 1
                                                             : 2;
    return std::make_tuple(
        c.regressions.empty(), kind, -delta(c, KernelMetric::occupancy),
        -(delta(c, KernelMetric::spill_stores) + delta(c, KernelMetric::spill_loads)),
        -delta(c, KernelMetric::registers), -std::abs(delta(c, KernelMetric::code_size)));
  };
  std::stable_sort(
      out.changes.begin(), out.changes.end(),
      [&](const KernelChange& x, const KernelChange& y) { return impact(x) < impact(y); });
  return out;
}

}  // namespace cudatool
