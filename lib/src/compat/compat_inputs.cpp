#include "compat/compat_inputs.hpp"
#include "compat/wheel.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "cudatool/base/error.hpp"
#include "cudatool/base/text.hpp"

namespace fs = std::filesystem;

namespace cudatool::detail {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The files of a .dist-info's RECORD, read whole if small enough (a RECORD is a list of
// paths; 64 MiB is far beyond any real one).
std::string read_small_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::string text;
  char buffer[65536];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<std::size_t>(in.gcount()));
    if (text.size() > (64u << 20)) return {};
  }
  return text;
}

// "torch-2.11.0.dist-info" -> {"torch", "2.11.0"}; a wheel "torch-2.11.0-cp312-...whl" too.
std::pair<std::string, std::string> name_and_version(std::string_view stem) {
  const auto dash = stem.find('-');
  if (dash == std::string_view::npos) return {std::string(stem), ""};
  std::string_view version = stem.substr(dash + 1);
  version = version.substr(0, version.find('-'));
  return {std::string(stem.substr(0, dash)), std::string(version)};
}

struct FileId {
  dev_t dev;
  ino_t ino;
  friend auto operator<=>(const FileId&, const FileId&) = default;
};

class Expander {
 public:
  Inputs run(const std::vector<std::string>& paths) {
    for (const std::string& p : paths) add_path(p);
    attribute();
    return std::move(inputs_);
  }

 private:
  void add_path(const std::string& p) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0)
      throw UsageError(quote_input(p) + ": " + std::string(std::strerror(errno)));
    if (S_ISDIR(st.st_mode)) {
      walk(p);
    } else if (!S_ISREG(st.st_mode)) {
      throw UsageError(quote_input(p) + ": not a regular file or directory");
    } else if (ends_with(p, ".whl")) {
      add_wheel(p);
    } else if (is_interpreter(p, st)) {
      const auto dirs = python_site_packages(p);
      if (dirs.empty())
        throw UsageError(quote_input(p) +
                         ": a Python interpreter without a site-packages directory");
      for (const std::string& d : dirs) walk(d);
    } else if (seen_files_.insert({st.st_dev, st.st_ino}).second) {
      inputs_.files.push_back({p, "", p, static_cast<std::uint64_t>(st.st_size), true, SIZE_MAX});
    }
  }

  static bool is_interpreter(const std::string& p, const struct stat& st) {
    const std::string name = fs::path(p).filename().string();
    return name.starts_with("python") && (st.st_mode & 0111) != 0 &&
           name.find_first_not_of("python0123456789.") == std::string::npos;
  }

  // Depth first, in name order; every directory (by device and inode) and file once, so a
  // symbolic link to a directory already walked (or to one of its parents) is not followed
  // again.
  void walk(const std::string& root) {
    std::vector<std::string> stack{root};
    while (!stack.empty()) {
      const std::string dir = std::move(stack.back());
      stack.pop_back();
      // POSIX calls on names relative to the open directory, not std::filesystem: a Python
      // environment has tens of thousands of files, and path objects cost more than the scan.
      const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (fd < 0) continue;
      DIR* stream = ::fdopendir(fd);
      if (stream == nullptr) {
        ::close(fd);
        continue;
      }
      struct stat st {};
      if (::fstat(fd, &st) != 0 || !seen_dirs_.insert({st.st_dev, st.st_ino}).second) {
        ::closedir(stream);
        continue;
      }
      struct Entry {
        std::string name;
        unsigned char type;
      };
      std::vector<Entry> found;
      while (const dirent* d = ::readdir(stream)) {
        const std::string_view name = d->d_name;
        if (name == "." || name == "..") continue;
        found.push_back({std::string(name), d->d_type});
      }
      std::sort(found.begin(), found.end(),
                [](const Entry& a, const Entry& b) { return a.name < b.name; });
      const std::string prefix = dir.ends_with('/') ? dir : dir + '/';
      std::vector<std::string> subdirs;
      for (const Entry& entry : found) {
        const std::string& name = entry.name;
        // The type readdir gives where it is one (no stat for most); links are followed.
        bool directory = entry.type == DT_DIR, regular = entry.type == DT_REG;
        if (entry.type == DT_LNK || entry.type == DT_UNKNOWN) {
          struct stat s {};
          if (::fstatat(fd, name.c_str(), &s, 0) != 0) continue;  // a dangling link
          directory = S_ISDIR(s.st_mode);
          regular = S_ISREG(s.st_mode);
        }
        if (directory) {
          if (ends_with(name, ".dist-info")) dist_infos_.push_back(prefix + name);
          subdirs.push_back(prefix + name);
          continue;
        }
        // A name that no CUDA binary has (source, text, data) is never opened; an executable
        // without such an extension needs its mode.
        if (!regular || !may_hold_cuda_code(name, true)) continue;
        struct stat s {};
        if (::fstatat(fd, name.c_str(), &s, 0) != 0 ||
            !may_hold_cuda_code(name, (s.st_mode & 0111) != 0) ||
            !seen_files_.insert({s.st_dev, s.st_ino}).second)
          continue;
        const std::string path = prefix + name;
        inputs_.files.push_back(
            {path, "", path, static_cast<std::uint64_t>(s.st_size), false, SIZE_MAX});
      }
      ::closedir(stream);
      for (auto it = subdirs.rbegin(); it != subdirs.rend(); ++it) stack.push_back(std::move(*it));
    }
  }

  void add_wheel(const std::string& wheel) {
    const std::vector<WheelMember> members = list_wheel(wheel);
    const auto [name, version] = name_and_version(fs::path(wheel).stem().string());
    const std::size_t package = inputs_.packages.size();
    inputs_.packages.push_back({name, version, wheel, ""});
    inputs_.runtime_files.emplace_back();
    for (const WheelMember& m : members) {
      const std::string base = fs::path(m.name).filename().string();
      if (base.starts_with("libcudart.so")) inputs_.runtime_files[package].push_back(base);
      if (!may_hold_cuda_code(base, m.executable)) continue;
      inputs_.files.push_back({wheel, m.name, wheel + "!" + m.name, m.size, false, package});
    }
  }

  // Each walked file's package, from the RECORD of every .dist-info met: the paths there are
  // relative to the directory holding the .dist-info.
  void attribute() {
    std::map<std::string, std::size_t> owner;
    for (const fs::path& info : dist_infos_) {
      std::string stem = info.filename().string();
      stem.resize(stem.size() - std::string_view(".dist-info").size());
      const auto [name, version] = name_and_version(stem);
      const std::size_t package = inputs_.packages.size();
      inputs_.packages.push_back({name, version, info.string(), ""});
      inputs_.runtime_files.emplace_back();
      const fs::path base = info.parent_path();
      for (const std::string& rel : record_paths(read_small_file(info / "RECORD"))) {
        // Only rows that may name a walked file (most are sources and text) are resolved.
        const std::string_view file = std::string_view(rel).substr(rel.rfind('/') + 1);
        if (file.starts_with("libcudart.so"))
          inputs_.runtime_files[package].push_back(std::string(file));
        if (!may_hold_cuda_code(std::string(file), true)) continue;
        owner.emplace((base / rel).lexically_normal().string(), package);
      }
    }
    // By the path walked, else by the file it names (a link reached first).
    for (Input& in : inputs_.files) {
      if (in.package != SIZE_MAX || owner.empty()) continue;
      auto it = owner.find(fs::path(in.path).lexically_normal().string());
      if (it == owner.end()) {
        std::error_code ec;
        const fs::path real = fs::canonical(in.path, ec);
        if (!ec) it = owner.find(real.string());
      }
      if (it != owner.end()) in.package = it->second;
    }
  }

  Inputs inputs_;
  std::set<FileId> seen_dirs_, seen_files_;
  std::vector<fs::path> dist_infos_;
};

}  // namespace

bool may_hold_cuda_code(const std::string& name, bool executable) {
  if (ends_with(name, ".so") || name.find(".so.") != std::string::npos) return true;
  for (const std::string_view ext : {".o", ".a", ".cubin", ".fatbin", ".node", ".bin"})
    if (ends_with(name, ext)) return true;
  if (!executable) return false;
  // Executables: any but scripts and data.
  const auto dot = name.rfind('.');
  if (dot == std::string::npos) return true;
  static const std::set<std::string_view> text{".py",  ".pyi", ".pyc", ".sh",   ".txt", ".json",
                                               ".md",  ".h",   ".hpp", ".cuh",  ".pl",  ".rb",
                                               ".cfg", ".ini", ".csv", ".html", ".js",  ".yaml"};
  return text.count(std::string_view(name).substr(dot)) == 0;
}

std::vector<std::string> record_paths(std::string_view record) {
  // RFC 4180-style CSV: a quoted field may hold commas and doubled quotes.
  std::vector<std::string> paths;
  while (!record.empty()) {
    std::string field;
    std::size_t p = 0;
    if (record[0] == '"') {
      p = 1;
      while (p < record.size()) {
        if (record[p] == '"') {
          if (p + 1 < record.size() && record[p + 1] == '"') {
            field += '"';
            p += 2;
            continue;
          }
          ++p;
          break;
        }
        field += record[p++];
      }
    } else {
      while (p < record.size() && record[p] != ',' && record[p] != '\n' && record[p] != '\r')
        field += record[p++];
    }
    const auto eol = record.find('\n', p);
    record = eol == std::string_view::npos ? std::string_view() : record.substr(eol + 1);
    if (!field.empty() && field.find('\0') == std::string::npos) paths.push_back(std::move(field));
  }
  return paths;
}

Inputs expand_inputs(const std::vector<std::string>& paths) {
  return Expander().run(paths);
}

}  // namespace cudatool::detail

namespace cudatool {

std::vector<std::string> python_site_packages(const std::string& interpreter) {
  namespace fs = std::filesystem;
  std::vector<std::string> dirs;
  const auto add = [&](const fs::path& p) {
    std::error_code ec;
    if (fs::is_directory(p, ec) && std::find(dirs.begin(), dirs.end(), p.string()) == dirs.end())
      dirs.push_back(p.string());
  };
  // The version: from the interpreter's own name once links are resolved (python3.12).
  std::error_code ec;
  const fs::path real = fs::canonical(interpreter, ec);
  std::string version;
  for (const fs::path& p : {fs::path(interpreter), real}) {
    const std::string name = p.filename().string();
    if (name.starts_with("python3.")) version = name.substr(6);
  }
  const auto versioned = [&](const fs::path& lib, const char* leaf) {
    if (!version.empty()) {
      add(lib / ("python" + version) / leaf);
      return;
    }
    for (fs::directory_iterator it(lib, ec), end; !ec && it != end; it.increment(ec))
      if (it->path().filename().string().starts_with("python3")) add(it->path() / leaf);
  };
  // A venv: <prefix>/bin/python beside <prefix>/pyvenv.cfg (not resolved: the link is the venv's).
  const fs::path prefix = fs::path(interpreter).parent_path().parent_path();
  if (fs::exists(prefix / "pyvenv.cfg", ec)) {
    versioned(prefix / "lib", "site-packages");
    const std::string cfg = [&] {
      std::ifstream in(prefix / "pyvenv.cfg");
      std::stringstream s;
      s << in.rdbuf();
      return s.str();
    }();
    if (cfg.find("include-system-site-packages = true") == std::string::npos) return dirs;
  }
  // A conda environment or a system interpreter: <prefix>/lib/pythonX.Y/site-packages, and
  // Debian's dist-packages.
  for (const fs::path& p : {prefix, real.parent_path().parent_path()}) {
    versioned(p / "lib", "site-packages");
    versioned(p / "lib", "dist-packages");
    if (p == "/usr") {
      add("/usr/lib/python3/dist-packages");
      versioned("/usr/local/lib", "dist-packages");
      versioned("/usr/local/lib", "site-packages");
    }
  }
  if (const char* home = std::getenv("HOME"); home && *home && !version.empty())
    add(fs::path(home) / ".local/lib" / ("python" + version) / "site-packages");
  return dirs;
}

std::string active_python() {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"})
    if (const char* v = std::getenv(var); v && *v)
      for (const char* name : {"bin/python3", "bin/python"})
        if (fs::exists(fs::path(v) / name, ec)) return (fs::path(v) / name).string();
  if (const char* path = std::getenv("PATH")) {
    std::string_view rest = path;
    while (!rest.empty()) {
      const auto colon = rest.find(':');
      const std::string dir(rest.substr(0, colon));
      rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
      if (!dir.empty() && ::access((fs::path(dir) / "python3").c_str(), X_OK) == 0)
        return (fs::path(dir) / "python3").string();
    }
  }
  return "";
}

}  // namespace cudatool
