#include "cudatool/compile/compile_commands.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cudatool/base/error.hpp"
#include "cudatool/base/file_io.hpp"
#include "cudatool/base/numbers.hpp"
#include "cudatool/base/text.hpp"
#include "cudatool/compile/process.hpp"

namespace cudatool {
namespace fs = std::filesystem;
namespace {

fs::path absolute_in(const std::string& directory, const std::string& path) {
  fs::path p(path);
  if (p.is_relative()) p = fs::path(directory) / p;
  return p.lexically_normal();
}

fs::path canonical_or_normal(const fs::path& p) {
  std::error_code ec;
  fs::path c = fs::weakly_canonical(fs::absolute(p, ec), ec);
  return ec ? p.lexically_normal() : c;
}

// `option` names where `text` came from: "-arch", "--generate-code", "-code".
Arch parse_arch(const ProjectFlags& f, std::string_view option, const std::string& text) {
  return Arch::parse(text, entry_source(f) + ": " + std::string(option));
}

void add_arch(ProjectFlags& f, const Arch& arch) {
  if (std::find(f.archs.begin(), f.archs.end(), arch) == f.archs.end()) f.archs.push_back(arch);
}

// A machine-code target (sm_XX); PTX (compute_XX), lto_XX and nvcc's names (all, native)
// are no target of their own.
void add_machine_code(ProjectFlags& f, std::string_view option, const std::string& text) {
  if (text.rfind("sm_", 0) == 0) add_arch(f, parse_arch(f, option, text));
}

// "arch=compute_80,code=[compute_80,sm_80]" or "arch=compute_80,code=sm_80".
void add_gencode(ProjectFlags& f, std::string_view option, const std::string& value) {
  const auto code = value.find("code=");
  if (code == std::string::npos) return;
  std::string list = value.substr(code + 5);
  list.erase(std::remove_if(list.begin(), list.end(), [](char c) { return c == '[' || c == ']'; }),
             list.end());
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t end = std::min(list.find(',', start), list.size());
    add_machine_code(f, option, list.substr(start, end - start));
    start = end + 1;
  }
}

// -arch=compute_80 compiles for sm_80 too (nvcc's shorthand).
void add_gpu_architecture(ProjectFlags& f, std::string_view option, const std::string& value) {
  if (value.rfind("compute_", 0) != 0) return add_machine_code(f, option, value);
  Arch arch = parse_arch(f, option, value);
  arch.code = Arch::Code::sass;
  add_arch(f, arch);
}

void add_comma_list(std::vector<std::string>& out, const std::string& value) {
  std::size_t start = 0;
  while (start <= value.size()) {
    const std::size_t end = std::min(value.find(',', start), value.size());
    if (end > start) out.push_back(value.substr(start, end - start));
    start = end + 1;
  }
}

void read_arguments(ProjectFlags& f, const std::vector<std::string>& args, int depth);

void read_options_file(ProjectFlags& f, const std::string& name, int depth) {
  const fs::path path = absolute_in(f.directory, name);
  const auto text = detail::read_file(path);
  if (!text || depth > 4) return;
  read_arguments(f, split_command_line(*text), depth + 1);
}

void read_arguments(ProjectFlags& f, const std::vector<std::string>& args, int depth) {
  auto value_of = [&](std::size_t& i, const std::string& arg,
                      std::initializer_list<const char*> names) -> std::optional<std::string> {
    for (const char* name : names) {
      const std::string n = name;
      if (arg == n) {
        if (i + 1 < args.size()) return args[++i];
        return std::nullopt;
      }
      if (arg.rfind(n + "=", 0) == 0) return arg.substr(n.size() + 1);
      // Attached short forms: -Idir, -DX.
      if (n.size() == 2 && arg.rfind(n, 0) == 0 && arg.size() > 2) return arg.substr(2);
    }
    return std::nullopt;
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (auto v = value_of(i, a, {"--options-file", "-optf"})) {
      read_options_file(f, *v, depth);
    } else if (auto inc =
                   value_of(i, a, {"-I", "--include-path", "-isystem", "--system-include"})) {
      f.include_dirs.push_back(absolute_in(f.directory, *inc).string());
    } else if (auto def = value_of(i, a, {"-D", "--define-macro"})) {
      f.defines.push_back(*def);
    } else if (auto std = value_of(i, a, {"-std", "--std"})) {
      f.std = *std;
    } else if (auto gen = value_of(i, a, {"--generate-code", "-gencode"})) {
      add_gencode(f, "--generate-code", *gen);
    } else if (auto arch = value_of(i, a, {"-arch", "--gpu-architecture"})) {
      add_gpu_architecture(f, "-arch", *arch);
    } else if (auto code = value_of(i, a, {"-code", "--gpu-code"})) {
      add_gencode(f, "-code", "code=" + *code);
    } else if (a == "-rdc=true" || a == "--relocatable-device-code=true" || a == "-dc" ||
               a == "--device-c") {
      f.rdc = true;
    } else if (a == "-rdc" || a == "--relocatable-device-code") {
      if (i + 1 < args.size()) f.rdc = args[++i] == "true";
    } else if (a == "-G" || a == "--device-debug") {
      f.device_debug = true;
    } else if (a == "-lineinfo" || a == "--generate-line-info") {
      f.lineinfo = true;
    } else if (a == "--use_fast_math" || a == "-use_fast_math") {
      f.fast_math = true;
    } else if (auto px = value_of(i, a, {"-Xptxas", "--ptxas-options"})) {
      add_comma_list(f.ptxas_options, *px);
    } else if (auto m = value_of(i, a, {"-maxrregcount", "--maxrregcount"})) {
      f.maxrregcount = parse_int(
          *m, "--maxrregcount of the compile_commands.json entry for " + quote_input(f.file), 1,
          255);
    } else if (a == "--expt-relaxed-constexpr" || a == "-expt-relaxed-constexpr" ||
               a == "--extended-lambda" || a == "-extended-lambda" ||
               a == "--expt-extended-lambda" || a == "-expt-extended-lambda") {
      const std::string canonical =
          a.find("relaxed") != std::string::npos ? "--expt-relaxed-constexpr" : "--extended-lambda";
      if (std::find(f.nvcc_language_options.begin(), f.nvcc_language_options.end(), canonical) ==
          f.nvcc_language_options.end())
        f.nvcc_language_options.push_back(canonical);
    }
  }
}

// Refuses what nvcc would hand to a shell in a form it acts on (process.hpp), naming the
// entry, the field and the value.
void refuse_shell_hazards(const ProjectFlags& f) {
  auto check = [&](std::string_view field, const std::string& value, NvccQuoting quoting) {
    if (auto why = nvcc_shell_hazard(value, quoting))
      throw InputError(entry_source(f) + ": " + std::string(field) + " " + quote_input(value) +
                       " holds " + *why +
                       "; nvcc hands it to /bin/sh, so cudatool refuses the entry");
  };
  check("directory", f.directory, NvccQuoting::double_quoted);
  check("file", f.file, NvccQuoting::double_quoted);
  for (const auto& d : f.defines) check("-D", d, NvccQuoting::define);
  for (const auto& i : f.include_dirs) check("-I", i, NvccQuoting::double_quoted);
  for (const auto& p : f.ptxas_options) check("-Xptxas", p, NvccQuoting::bare);
}

}  // namespace

std::vector<std::string> split_command_line(const std::string& command) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (std::size_t i = 0; i < command.size(); ++i) {
    const char c = command[i];
    if (quote == '\'') {
      if (c == '\'')
        quote = 0;
      else
        word += c;
    } else if (quote == '"') {
      if (c == '"') {
        quote = 0;
      } else if (c == '\\' && i + 1 < command.size() &&
                 std::string_view("\"\\$`").find(command[i + 1]) != std::string_view::npos) {
        word += command[++i];
      } else {
        word += c;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < command.size()) {
      word += command[++i];
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

ProjectFlags project_flags(const fs::path& build_dir, const fs::path& source,
                           std::string_view build_dir_source) {
  const fs::path file = build_dir / "compile_commands.json";
  std::error_code ec;
  if (!fs::is_regular_file(file, ec))
    throw UsageError(std::string(build_dir_source) + " " + build_dir.string() +
                     ": no compile_commands.json there (configure the project with "
                     "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON)");
  const auto text = detail::read_file(file);
  if (!text) throw UsageError(file.string() + ": cannot read it");
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(*text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(file.string() + ": not JSON (" + std::string(e.what()) + ")");
  }
  if (!document.is_array())
    throw InputError(file.string() + ": not a compilation database (expected a list of entries)");
  const fs::path wanted = canonical_or_normal(source);
  for (const auto& entry : document) {
    if (!entry.is_object() || !entry.contains("file") || !entry["file"].is_string() ||
        !entry.contains("directory") || !entry["directory"].is_string())
      continue;
    const std::string directory = entry["directory"].get<std::string>();
    const fs::path entry_file = absolute_in(directory, entry["file"].get<std::string>());
    if (canonical_or_normal(entry_file) != wanted) continue;
    ProjectFlags flags;
    flags.file = entry_file.string();
    flags.directory = directory;
    flags.database = file.string();
    std::vector<std::string> args;
    if (entry.contains("arguments") && entry["arguments"].is_array()) {
      for (const auto& a : entry["arguments"])
        if (a.is_string()) args.push_back(a.get<std::string>());
    } else if (entry.contains("command") && entry["command"].is_string()) {
      args = split_command_line(entry["command"].get<std::string>());
    }
    if (!args.empty()) args.erase(args.begin());  // the compiler itself
    read_arguments(flags, args, 0);
    refuse_shell_hazards(flags);
    return flags;
  }
  throw UsageError(file.string() + ": no entry for " + source.string() +
                   " (is it a source of that build?)");
}

std::string entry_source(const ProjectFlags& flags) {
  return flags.database + ": the entry for " + quote_input(flags.file);
}

CompileRequest project_request(const ProjectFlags& flags) {
  CompileRequest r;
  r.include_dirs = flags.include_dirs;
  r.defines = flags.defines;
  r.std = flags.std;
  r.rdc = flags.rdc;
  r.device_debug = flags.device_debug;
  r.lineinfo = flags.lineinfo;
  r.fast_math = flags.fast_math;
  r.ptxas_options = flags.ptxas_options;
  r.maxrregcount = flags.maxrregcount;
  r.nvcc_options = flags.nvcc_language_options;
  return r;
}

}  // namespace cudatool
