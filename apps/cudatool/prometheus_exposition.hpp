// The Prometheus text exposition format as node_exporter's textfile collector reads it:
// metric families written whole, label values and sample values escaped and formatted as
// its parsers take them. check's document (check_prometheus.cpp) is made with it.
#pragma once

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace cudatool::app {

// The parts appended in order: GCC 12's -O3 -Wrestrict reports false positives on
// `"literal" + std::string` temporaries (CHANGELOG, issue 22 item 7).
template <class... Parts>
std::string concat(const Parts&... parts) {
  std::string out;
  (out.append(parts), ...);
  return out;
}

// A label value: valid UTF-8 (a byte that is not is U+FFFD, as in the JSON of the same run:
// the format takes nothing else, and its parsers reject the whole file), with backslash,
// double quote and newline escaped.
std::string label_value(const std::string& text);

// A sample value: a whole number as one (below 2^53, where every integer is exact), else
// the shortest text that reads back as the same double.
std::string sample_value(double v);

using Labels = std::vector<std::pair<std::string, std::string>>;

// The metric families in the order they are first given; each written whole, with its HELP
// and TYPE lines (every metric here is a gauge). Every sample of a family carries the same
// label names, in one order (a label a sample lacks is written empty, which Prometheus reads
// as absent): node_exporter's textfile collector and the Pushgateway have refused families
// whose "label dimensions" differ.
class Exposition {
 public:
  void add(const std::string& name, const std::string& help, Labels labels,
           const std::string& value) {
    Family* family = nullptr;
    for (auto& f : families_)
      if (f.name == name) family = &f;
    if (family == nullptr) family = &families_.emplace_back(Family{name, help, {}});
    family->samples.push_back({std::move(labels), value});
  }
  std::string str() const {
    std::string out;
    for (const auto& f : families_) {
      out += concat("# HELP ", f.name, " ", f.help, "\n# TYPE ", f.name, " gauge\n");
      std::vector<std::string> names;
      for (const auto& sample : f.samples)
        for (const auto& label : sample.labels)
          if (std::find(names.begin(), names.end(), label.first) == names.end())
            names.push_back(label.first);
      std::stable_sort(names.begin(), names.end(),
                       [](const auto& a, const auto& b) { return label_rank(a) < label_rank(b); });
      for (const auto& sample : f.samples) {
        out += f.name;
        for (std::size_t i = 0; i < names.size(); ++i) {
          std::string value;
          for (const auto& label : sample.labels)
            if (label.first == names[i]) value = label.second;
          out += concat(i == 0 ? "{" : ",", names[i], "=\"", label_value(value), "\"");
        }
        out += concat(names.empty() ? " " : "} ", sample.value, "\n");
      }
    }
    return out;
  }

 private:
  // The labels' order: the GPU's (dcgm-exporter's first), then the check's.
  static std::size_t label_rank(const std::string& name) {
    static const std::vector<std::string> order = {"gpu",       "UUID",        "pci_bus_id",
                                                   "modelName", "cuda_device", "peer_gpu",
                                                   "check",     "name",        "verdict"};
    const auto at = std::find(order.begin(), order.end(), name);
    return static_cast<std::size_t>(at - order.begin());  // others after, in given order
  }
  struct Sample {
    Labels labels;
    std::string value;
  };
  struct Family {
    std::string name, help;
    std::vector<Sample> samples;
  };
  std::vector<Family> families_;
};

}  // namespace cudatool::app
