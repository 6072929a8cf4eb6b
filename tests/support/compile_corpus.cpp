#include "compile_corpus.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "driver/nvrtc.hpp"

namespace cudatool::testing {

std::vector<CorpusFile> compile_corpus() {
  std::vector<CorpusFile> files;
  const std::filesystem::path dir =
      std::filesystem::path(CUDATOOL_SOURCE_DIR) / "tests/data/compile";
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".cu") continue;
    CorpusFile f{entry.path().filename().string(), entry.path().string(), 0};
    if (f.name == "maxrreg_spill.cu") f.maxrregcount = 32;
    files.push_back(f);
  }
  std::sort(files.begin(), files.end(),
            [](const CorpusFile& a, const CorpusFile& b) { return a.name < b.name; });
  return files;
}

std::optional<std::string> nvrtc_unavailable() {
  try {
    driver::nvrtc::api();
    return std::nullopt;
  } catch (const std::exception& e) {
    return std::string("NVRTC is not available: ") + e.what();
  }
}

std::map<std::string, PtxasFigures> parse_ptxas_report(const std::string& log) {
  std::map<std::string, PtxasFigures> figures;
  std::string entry, properties_of;
  std::stringstream lines(log);
  std::string line;
  auto number_before = [](const std::string& text, const std::string& word) -> int {
    const auto pos = text.find(word);
    if (pos == std::string::npos || pos == 0) return -1;
    auto start = text.find_last_not_of(' ', pos - 1);
    const auto end = start + 1;
    while (start > 0 && std::isdigit(static_cast<unsigned char>(text[start - 1]))) --start;
    return std::stoi(text.substr(start, end - start));
  };
  while (std::getline(lines, line)) {
    if (auto pos = line.find("Compiling entry function '"); pos != std::string::npos) {
      const auto start = pos + 26;
      entry = line.substr(start, line.find('\'', start) - start);
      figures[entry];
    } else if (auto props = line.find("Function properties for "); props != std::string::npos) {
      properties_of = line.substr(props + 24);
    } else if (line.find("bytes stack frame") != std::string::npos) {
      if (properties_of == entry && !entry.empty())
        figures[entry].stack_frame = number_before(line, " bytes stack frame");
    } else if (line.find("Used ") != std::string::npos && !entry.empty()) {
      figures[entry].registers = number_before(line, " registers");
      if (line.find(" bytes smem") != std::string::npos)
        figures[entry].shared = number_before(line, " bytes smem");
    }
  }
  return figures;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

CompileResult compile_corpus_file(const CorpusFile& file, const Arch& arch) {
  CompileRequest r;
  r.source = read_file(file.path);
  r.source_name = file.name;
  r.arch = arch;
  r.extern_c = false;
  r.maxrregcount = file.maxrregcount;
  return compile_uncached(r);
}

}  // namespace cudatool::testing
