#include "cudatool/compile/source_scan.hpp"

#include <cctype>
#include <set>
#include <string_view>
#include <utility>

#include "cudatool/base/file_io.hpp"
#include "cudatool/compile/compiler.hpp"

namespace cudatool {
namespace fs = std::filesystem;
namespace {

bool identifier_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// Whether a `__global__` of `text` is declared static: the word `static` in the same
// declaration (back to the previous ';', '{', '}' or line start of a directive).
bool declares_static_kernel(const std::string& text) {
  std::size_t pos = 0;
  while ((pos = text.find("__global__", pos)) != std::string::npos) {
    const std::size_t begin = text.find_last_of(";{}#", pos) == std::string::npos
                                  ? 0
                                  : text.find_last_of(";{}#", pos) + 1;
    std::size_t end = text.find('(', pos);
    if (end == std::string::npos) end = text.size();
    for (std::size_t s = text.find("static", begin); s != std::string::npos && s < end;
         s = text.find("static", s + 6)) {
      const bool whole = (s == 0 || !identifier_char(text[s - 1])) &&
                         (s + 6 >= text.size() || !identifier_char(text[s + 6]));
      if (whole) return true;
    }
    pos += 10;
  }
  return false;
}

// Whether `text` opens an anonymous namespace (`namespace {`).
bool opens_anonymous_namespace(const std::string& text) {
  std::size_t pos = 0;
  while ((pos = text.find("namespace", pos)) != std::string::npos) {
    const bool start = pos == 0 || !identifier_char(text[pos - 1]);
    std::size_t after = pos + 9;
    while (after < text.size() && std::isspace(static_cast<unsigned char>(text[after]))) ++after;
    if (start && after < text.size() && text[after] == '{') return true;
    pos += 9;
  }
  return false;
}

void scan_linkage(const std::string& text, SourceScan& scan) {
  if (text.find("__global__") == std::string::npos) return;
  if (!scan.static_kernels) scan.static_kernels = declares_static_kernel(text);
  if (!scan.anonymous_namespace_kernels)
    scan.anonymous_namespace_kernels = opens_anonymous_namespace(text);
}

// `#include "x"` / `#include <x>` names of one file, in order.
std::vector<std::pair<std::string, bool>> include_lines(const std::string& text) {
  std::vector<std::pair<std::string, bool>> names;  // (name, quoted)
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    std::size_t i = line.find_first_not_of(" \t");
    if (i == std::string_view::npos || line[i] != '#') continue;
    i = line.find_first_not_of(" \t", i + 1);
    if (i == std::string_view::npos || line.substr(i, 7) != "include") continue;
    i = line.find_first_not_of(" \t", i + 7);
    if (i == std::string_view::npos) continue;
    const char open = line[i];
    const char close = open == '"' ? '"' : open == '<' ? '>' : 0;
    if (close == 0) continue;
    const std::size_t stop = line.find(close, i + 1);
    if (stop == std::string_view::npos) continue;
    names.emplace_back(std::string(line.substr(i + 1, stop - i - 1)), open == '"');
  }
  return names;
}

// A `main(` at the start of a declaration: `int main(`, `int main (void)`.
bool defines_main(const std::string& text) {
  std::size_t pos = 0;
  while ((pos = text.find("main", pos)) != std::string::npos) {
    const bool start = pos == 0 || !(std::isalnum(static_cast<unsigned char>(text[pos - 1])) ||
                                     text[pos - 1] == '_');
    std::size_t after = pos + 4;
    while (after < text.size() && (text[after] == ' ' || text[after] == '\t')) ++after;
    if (start && after < text.size() && text[after] == '(') {
      std::size_t before = pos;
      while (before > 0 && (text[before - 1] == ' ' || text[before - 1] == '\t')) --before;
      if (before >= 3 && text.compare(before - 3, 3, "int") == 0) return true;
    }
    pos += 4;
  }
  return false;
}

}  // namespace

SourceScan scan_source(const CompileRequest& r) {
  SourceScan scan;
  const fs::path source_dir = r.source_dir.empty() ? fs::path(".") : r.source_dir;
  const std::vector<std::string> toolkit = toolkit_include_dirs();
  std::set<std::string> seen;
  struct Pending {
    std::string text;
    fs::path dir;
    int depth;
  };
  scan.has_main = defines_main(r.source);
  scan_linkage(r.source, scan);
  std::vector<Pending> stack{{r.source, source_dir, 0}};
  while (!stack.empty()) {
    Pending current = std::move(stack.back());
    stack.pop_back();
    if (current.depth > 64) continue;
    for (const auto& [name, quoted] : include_lines(current.text)) {
      std::vector<fs::path> dirs;
      if (quoted) dirs.push_back(current.dir);
      for (const auto& dir : r.include_dirs) dirs.emplace_back(dir);
      dirs.push_back(source_dir);
      bool resolved = false;
      for (const auto& dir : dirs) {
        const fs::path candidate = (dir / name).lexically_normal();
        std::error_code ec;
        if (!fs::is_regular_file(candidate, ec)) continue;
        resolved = true;
        if (!seen.insert(candidate.string()).second) break;
        scan.found.push_back(candidate);
        if (auto text = detail::read_file(candidate)) {
          if (!scan.has_main) scan.has_main = defines_main(*text);
          scan_linkage(*text, scan);
          stack.push_back({std::move(*text), candidate.parent_path(), current.depth + 1});
        }
        break;
      }
      if (resolved) continue;
      for (const auto& dir : toolkit) {
        std::error_code ec;
        if (fs::is_regular_file(fs::path(dir) / name, ec)) {
          resolved = true;
          if (seen.insert("<toolkit>" + name).second) scan.toolkit.push_back(name);
          break;
        }
      }
      if (!resolved && seen.insert("<unresolved>" + name).second) scan.unresolved.push_back(name);
    }
  }
  return scan;
}

std::vector<fs::path> find_includes(const CompileRequest& request) {
  return scan_source(request).found;
}

}  // namespace cudatool
