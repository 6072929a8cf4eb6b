#include "cudatool/compile/source_scan.hpp"

#include <cctype>
#include <map>
#include <optional>
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

namespace detail {

IncludeDirectives include_directives(std::string_view text) {
  IncludeDirectives found;
  const auto skip_blanks = [](std::string_view line, std::size_t i) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    return i;
  };
  const auto identifier_at = [](std::string_view line, std::size_t i) {
    std::size_t end = i;
    if (end < line.size() && !std::isdigit(static_cast<unsigned char>(line[end])))
      while (end < line.size() && identifier_char(line[end])) ++end;
    return line.substr(i, end - i);
  };
  // A header name, "x" or <x>, at `i`: {name, quoted}, or nullopt.
  const auto header_name_at = [](std::string_view line,
                                 std::size_t i) -> std::optional<std::pair<std::string, bool>> {
    if (i >= line.size()) return std::nullopt;
    const char close = line[i] == '"' ? '"' : line[i] == '<' ? '>' : 0;
    if (close == 0) return std::nullopt;
    const std::size_t stop = line.find(close, i + 1);
    if (stop == std::string_view::npos || stop == i + 1) return std::nullopt;
    return std::pair{std::string(line.substr(i + 1, stop - i - 1)), close == '"'};
  };
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    std::size_t i = skip_blanks(line, 0);
    if (i >= line.size() || line[i] != '#') continue;
    i = skip_blanks(line, i + 1);
    const std::string_view directive = identifier_at(line, i);
    i = skip_blanks(line, i + directive.size());
    if (directive == "include" || directive == "include_next") {
      if (auto name = header_name_at(line, i)) {
        found.includes.push_back({std::move(name->first), name->second, {}});
        continue;
      }
      const std::string_view macro = identifier_at(line, i);
      // A name made by a macro: a plain identifier is looked up in the definitions; anything
      // else (a function-like macro, pasting) the scan cannot follow.
      const bool plain = !macro.empty() && skip_blanks(line, i + macro.size()) >= line.size();
      found.includes.push_back({{}, false, plain ? std::string(macro) : std::string()});
    } else if (directive == "define") {
      const std::string_view name = identifier_at(line, i);
      if (name.empty() || i + name.size() >= line.size() || line[i + name.size()] == '(') continue;
      const std::size_t value = skip_blanks(line, i + name.size());
      if (auto header = header_name_at(line, value)) {
        found.definitions.push_back(
            {std::string(name), std::move(header->first), header->second, {}});
      } else if (const std::string_view other = identifier_at(line, value); !other.empty()) {
        found.definitions.push_back({std::string(name), {}, false, std::string(other)});
      }
    }
  }
  return found;
}

}  // namespace detail

SourceScan scan_source(const CompileRequest& r, const IncludeReader& read) {
  SourceScan scan;
  const fs::path source_dir = r.source_dir.empty() ? fs::path(".") : r.source_dir;
  // The search path as the engine is given it (engine_inputs.cpp's build_options): the
  // source's directory first (NVRTC and nvcc on a copy get it as the first -I; nvcc on the
  // file where it is finds "..." includes there), the -I directories, then CUDA's.
  std::vector<fs::path> search{source_dir};
  for (const auto& dir : r.include_dirs) search.emplace_back(dir);
  const std::size_t project_dirs = search.size();
  for (const auto& dir : toolkit_include_dirs()) search.emplace_back(dir);

  struct Pending {
    std::string text;
    fs::path dir;
    int depth;
  };
  std::set<std::string> seen, checked, unresolved;
  // A macro's values: every definition seen in any file (the scan does not evaluate #if,
  // so all of them are taken; recording more headers only costs a needless recompile).
  std::multimap<std::string, detail::IncludeDefinition> macros;
  for (const std::string& define : r.defines) {
    const std::size_t equals = define.find('=');
    if (equals == std::string::npos) continue;
    for (auto& d : detail::include_directives("#define " + define.substr(0, equals) + " " +
                                              define.substr(equals + 1))
                       .definitions)
      macros.emplace(d.name, std::move(d));
  }
  // Includes through a macro wait until every file is scanned (a definition may come from a
  // header read later).
  struct Deferred {
    std::string macro;
    fs::path dir;
    int depth;
  };
  std::vector<Deferred> deferred;
  std::size_t files = 0;

  std::vector<Pending> stack;
  // One header name from a file in `dir`, looked up as the compiler does: every place it
  // looks is recorded, the first file there is read.
  const auto include = [&](const std::string& name, bool quoted, const fs::path& dir, int depth) {
    std::vector<fs::path> dirs;
    if (quoted) dirs.push_back(dir);
    dirs.insert(dirs.end(), search.begin(), search.end());
    const std::size_t project = project_dirs + (quoted ? 1 : 0);
    std::optional<fs::path> first;
    for (std::size_t i = 0; i < dirs.size(); ++i) {
      const fs::path candidate = (dirs[i] / name).lexically_normal();
      std::optional<std::string> text;
      if (!first) text = read(candidate);
      if (!first && text) {
        first = candidate;
        if (i >= project) {
          // CUDA's own header: recorded (an update changes what is compiled), not followed.
          if (seen.insert("<toolkit>" + name).second) scan.toolkit.push_back(name);
          if (checked.insert(candidate.string()).second) scan.checked.push_back(candidate);
          continue;
        }
        if (!seen.insert(candidate.string()).second) continue;
        if (++files > kMaxScannedFiles) {
          scan.complete = false;
          continue;
        }
        scan.found.push_back(candidate);
        if (!scan.has_main) scan.has_main = defines_main(*text);
        scan_linkage(*text, scan);
        stack.push_back({std::move(*text), candidate.parent_path(), depth + 1});
      } else if (candidate != first && checked.insert(candidate.string()).second) {
        // A place looked at before the file (a header put there later shadows it) or after
        // it (the other engine's order, or a file that may be read instead).
        scan.checked.push_back(candidate);
      }
    }
    if (!first && unresolved.insert(name).second) scan.unresolved.push_back(name);
  };
  const auto scan_text = [&](const std::string& text, const fs::path& dir, int depth) {
    if (depth > kMaxIncludeDepth) {
      scan.complete = false;
      return;
    }
    detail::IncludeDirectives directives = detail::include_directives(text);
    for (auto& d : directives.definitions) macros.emplace(d.name, std::move(d));
    for (const auto& i : directives.includes) {
      if (!i.macro.empty())
        deferred.push_back({i.macro, dir, depth});
      else if (!i.name.empty())
        include(i.name, i.quoted, dir, depth);
      else
        scan.complete = false;  // a name the scan cannot work out
    }
  };

  scan.has_main = defines_main(r.source);
  scan_linkage(r.source, scan);
  scan_text(r.source, source_dir, 0);
  // Every header name each macro include may stand for, through other macros; again after
  // new files were read (they may define the macro too), until nothing new is found.
  std::set<std::string> expanded;
  std::vector<Deferred> all_deferred;
  for (bool more = true; more;) {
    while (!stack.empty()) {
      Pending current = std::move(stack.back());
      stack.pop_back();
      scan_text(current.text, current.dir, current.depth);
    }
    for (Deferred& d : deferred) all_deferred.push_back(std::move(d));
    deferred.clear();
    more = false;
    bool complete = true;
    for (const Deferred& d : all_deferred) {
      std::set<std::string> visited{d.macro};
      std::vector<std::string> names{d.macro};
      bool any = false;
      while (!names.empty()) {
        std::vector<std::string> next;
        for (const std::string& macro : names) {
          const auto [begin, end] = macros.equal_range(macro);
          for (auto it = begin; it != end; ++it) {
            const detail::IncludeDefinition& def = it->second;
            if (def.header.empty()) {
              if (visited.insert(def.other).second) next.push_back(def.other);
              continue;
            }
            any = true;
            if (expanded.insert(def.header + (def.quoted ? "\"" : ">") + d.dir.string()).second) {
              include(def.header, def.quoted, d.dir, d.depth);
              more = true;
            }
          }
        }
        names = std::move(next);
      }
      if (!any) complete = false;  // a macro defined as no header name anywhere
    }
    if (!more && !complete) scan.complete = false;
  }
  // A file read through one name may also be a place looked at for another: it is read.
  std::set<fs::path> read_paths(scan.found.begin(), scan.found.end());
  std::erase_if(scan.checked, [&](const fs::path& p) { return read_paths.count(p) > 0; });
  return scan;
}

SourceScan scan_source(const CompileRequest& request) {
  return scan_source(request, [](const fs::path& path) -> std::optional<std::string> {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) return std::nullopt;
    return detail::read_file(path);
  });
}

std::vector<fs::path> find_includes(const CompileRequest& request) {
  return scan_source(request).found;
}

}  // namespace cudatool
