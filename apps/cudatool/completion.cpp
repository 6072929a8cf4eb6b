// cudatool completion bash|zsh|fish: prints a completion script generated from the parser
// itself (CLI11 has none), so it always knows every command and flag of this build. One
// description (CompletionSpec, read from the parser) feeds the three generators.
// Installed by `cmake --install` to bash-completion/completions, zsh/vendor-completions and
// fish/vendor_completions.d; by hand: cudatool completion bash >
// ~/.local/share/bash-completion/completions/cudatool
#include <algorithm>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "command.hpp"
#include "cudatool/base/error.hpp"
#include "render.hpp"

namespace cudatool::app {
namespace {

const std::vector<std::string> kShells = {"bash", "zsh", "fish"};

// What a value completes to.
enum class ValueKind { none, file, directory, choice };

struct OptionSpec {
  std::vector<std::string> long_names;   // without "--"
  std::vector<std::string> short_names;  // without "-"
  std::string description;
  bool takes_value = false;
  bool repeatable = false;
  ValueKind value = ValueKind::none;
  std::vector<std::string> choices;
};

struct CommandSpec {
  std::string name;  // "" for the root
  std::string description;
  std::vector<OptionSpec> options;
  bool has_positional = false;
  bool positional_repeats = false;
  std::string positional_name;
  ValueKind positional = ValueKind::none;
  std::vector<std::string> positional_choices;
};

// The values a shell completes for an option: those its validator lists, either
// completion_choices' "{a|b|c}" (command.hpp) or CLI::IsMember's "{a,b,c}"; none otherwise.
std::vector<std::string> option_choices(CLI::Option& option) {
  for (int i = 0;; ++i) {
    const CLI::Validator* validator = nullptr;
    try {
      validator = option.get_validator(i);
    } catch (const CLI::OptionNotFound&) {
      return {};
    }
    const std::string text = validator->get_description();
    if (text.size() < 3 || text.front() != '{' || text.back() != '}') continue;
    const char separator = text.find('|') != std::string::npos ? '|' : ',';
    std::vector<std::string> values;
    std::size_t start = 1;
    while (start < text.size()) {
      const std::size_t end = std::min(text.find(separator, start), text.size() - 1);
      values.push_back(text.substr(start, end - start));
      start = end + 1;
    }
    return values;
  }
}

// What the parser cannot tell: which values are files and directories. Everything else that
// takes a value completes to its validator's choices, or to nothing.
ValueKind value_kind(const std::string& name) {
  if (name == "output" || name == "file" || name == "FILE" || name == "kernel-from")
    return ValueKind::file;
  if (name == "include-dir" || name == "cache-dir" || name == "build-dir")
    return ValueKind::directory;
  return ValueKind::none;
}

CommandSpec describe(CLI::App& app, const std::string& name) {
  CommandSpec spec{name, app.get_description(), {}, false, false, "", ValueKind::none, {}};
  for (CLI::Option* option : app.get_options()) {
    const bool many = option->get_expected_max() > 1;
    std::vector<std::string> choices = option_choices(*option);
    if (!option->nonpositional()) {
      spec.has_positional = true;
      spec.positional_repeats = many;
      spec.positional_name = option->get_name();
      spec.positional = value_kind(option->get_name());
      if (!choices.empty()) spec.positional = ValueKind::choice;
      spec.positional_choices = std::move(choices);
      continue;
    }
    OptionSpec o;
    o.long_names = option->get_lnames();
    o.short_names = option->get_snames();
    o.description = option->get_description();
    o.takes_value = option->get_expected_max() > 0;  // flags expect 0 values
    o.repeatable = many;
    if (!o.long_names.empty()) o.value = value_kind(o.long_names.front());
    if (!choices.empty()) o.value = ValueKind::choice;
    o.choices = std::move(choices);
    spec.options.push_back(std::move(o));
  }
  return spec;
}

struct CompletionSpec {
  CommandSpec root;
  std::vector<CommandSpec> commands;
};

CompletionSpec describe_tool(CLI::App& root) {
  CompletionSpec spec{describe(root, ""), {}};
  for (CLI::App* sub : root.get_subcommands({}))
    spec.commands.push_back(describe(*sub, sub->get_name()));
  return spec;
}

std::string join(const std::vector<std::string>& words, const std::string& separator = " ") {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : separator) + w;
  return out;
}

std::vector<std::string> flag_words(const CommandSpec& c) {
  std::vector<std::string> words;
  for (const auto& o : c.options) {
    for (const auto& n : o.long_names) words.push_back("--" + n);
    for (const auto& n : o.short_names) words.push_back("-" + n);
  }
  std::sort(words.begin(), words.end());
  return words;
}

// ---- bash ----

// Words for compgen -W, single-quoted for the script.
std::string bash_words(const std::vector<std::string>& words) {
  return "'" + join(words) + "'";
}

// The COMPREPLY line of a value kind (a file, a directory, a choice, or nothing to offer).
std::string bash_values(ValueKind kind, const std::vector<std::string>& choices) {
  switch (kind) {
    case ValueKind::file:
      return "compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- \"$cur\"))";
    case ValueKind::directory:
      return "compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- \"$cur\"))";
    case ValueKind::choice:
      return "COMPREPLY=($(compgen -W " + bash_words(choices) + " -- \"$cur\"))";
    case ValueKind::none:
      break;
  }
  return "COMPREPLY=()";
}

// Each command completes, in this order: the value of the option before the cursor (its
// choices, files, or nothing: never the flags, whose common "-" bash would insert); a flag
// where the word starts with "-"; otherwise its positional argument (files, choices), or its
// flags where it takes none. "--opt=value" is taken apart as bash splits it at "=".
std::string bash_script(const CompletionSpec& spec) {
  std::vector<std::string> names;
  for (const auto& c : spec.commands) names.push_back(c.name);
  std::ostringstream s;
  s << "# bash completion for cudatool (generated by `cudatool completion bash`)\n"
    << "_cudatool() {\n"
    << "  local cur prev cmd i\n"
    << "  cur=${COMP_WORDS[COMP_CWORD]}\n"
    << "  prev=${COMP_WORDS[COMP_CWORD-1]}\n"
    << "  if [[ $cur == = ]]; then\n"
    << "    cur=\n"
    << "  elif [[ $prev == = ]]; then\n"
    << "    prev=${COMP_WORDS[COMP_CWORD-2]}\n"
    << "  fi\n"
    << "  cmd=\n"
    << "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
    << "    case ${COMP_WORDS[i]} in -*) ;; *) cmd=${COMP_WORDS[i]}; break ;; esac\n"
    << "  done\n"
    << "  case $cmd in\n"
    << "    '')\n"
    << "      if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W "
    << bash_words(flag_words(spec.root)) << " -- \"$cur\"))\n"
    << "      else COMPREPLY=($(compgen -W " << bash_words(names) << " -- \"$cur\")); fi ;;\n";
  for (const auto& c : spec.commands) {
    s << "    " << c.name << ")\n";
    std::vector<std::pair<std::vector<std::string>, std::string>> value_cases;
    for (const auto& o : c.options) {
      if (!o.takes_value) continue;
      std::vector<std::string> spellings;
      for (const auto& n : o.long_names) spellings.push_back("--" + n);
      for (const auto& n : o.short_names) spellings.push_back("-" + n);
      value_cases.emplace_back(spellings, bash_values(o.value, o.choices));
    }
    if (!value_cases.empty()) {
      s << "      case $prev in\n";
      for (const auto& [spellings, action] : value_cases)
        s << "        " << join(spellings, "|") << ") " << action << "; return ;;\n";
      s << "      esac\n";
    }
    const std::string flags =
        "COMPREPLY=($(compgen -W " + bash_words(flag_words(c)) + " -- \"$cur\"))";
    if (c.has_positional)
      s << "      if [[ $cur == -* ]]; then " << flags << "\n"
        << "      else " << bash_values(c.positional, c.positional_choices) << "; fi ;;\n";
    else
      s << "      " << flags << " ;;\n";
  }
  s << "  esac\n"
    << "}\n"
    << "complete -F _cudatool cudatool\n";
  return s.str();
}

// ---- zsh ----

// Text inside a single-quoted _arguments spec's [description].
std::string zsh_description(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '\'')
      out += "'\\''";
    else if (c == '[' || c == ']' || c == ':' || c == '\\')
      out += std::string("\\") + c;
    else
      out += c;
  }
  return out;
}

std::string zsh_action(ValueKind kind, const std::vector<std::string>& choices) {
  switch (kind) {
    case ValueKind::file:
      return "_files";
    case ValueKind::directory:
      return "_files -/";
    case ValueKind::choice:
      return "(" + join(choices) + ")";
    case ValueKind::none:
      break;
  }
  return " ";
}

// One _arguments spec per name of an option; its names exclude each other unless it repeats.
std::string zsh_option_specs(const OptionSpec& o, const std::string& indent) {
  std::vector<std::string> names;
  for (const auto& n : o.long_names) names.push_back("--" + n);
  for (const auto& n : o.short_names) names.push_back("-" + n);
  std::string exclusion = o.repeatable ? "*" : "(" + join(names) + ")";
  if (!o.repeatable && names.size() == 1) exclusion = "";
  if (o.long_names == std::vector<std::string>{"help"} ||
      o.long_names == std::vector<std::string>{"version"})
    exclusion = "(- *)";
  std::string out;
  for (const auto& n : names) {
    std::string spec = exclusion + n;
    // The value in the next word, as --help spells it: one Tab completes "--arch " and the
    // next its values ("--arch=" would stop at the "=").
    if (o.takes_value && !(n.size() > 2 && n[1] == '-')) spec += "+";
    spec += "[" + zsh_description(o.description) + "]";
    if (o.takes_value) spec += ":value:" + zsh_action(o.value, o.choices);
    out += indent + "'" + spec + "' \\\n";
  }
  return out;
}

std::string zsh_script(const CompletionSpec& spec) {
  std::ostringstream s;
  s << "#compdef cudatool\n"
    << "# zsh completion for cudatool (generated by `cudatool completion zsh`)\n"
    << "_cudatool() {\n"
    << "  local curcontext=\"$curcontext\" state line ret=1\n"
    << "  typeset -A opt_args\n"
    << "  _arguments -C \\\n";
  for (const auto& o : spec.root.options) s << zsh_option_specs(o, "    ");
  s << "    '1:command:->command' \\\n"
    << "    '*::argument:->argument' && ret=0\n"
    << "  case $state in\n"
    << "    command)\n"
    << "      local -a commands\n"
    << "      commands=(\n";
  for (const auto& c : spec.commands) {
    std::string description = c.description;
    for (auto& ch : description)
      if (ch == '\'') ch = '`';
    s << "        '" << c.name << ":" << description << "'\n";
  }
  s << "      )\n"
    << "      _describe -t commands 'cudatool command' commands && ret=0\n"
    << "      ;;\n"
    << "    argument)\n"
    << "      curcontext=\"${curcontext%:*:*}:cudatool-$words[1]:\"\n"
    << "      case $words[1] in\n";
  for (const auto& c : spec.commands) {
    s << "        " << c.name << ")\n"
      << "          _arguments \\\n";
    for (const auto& o : c.options) s << zsh_option_specs(o, "            ");
    if (c.has_positional)
      s << "            '" << (c.positional_repeats ? "*" : "1") << ":" << c.positional_name << ":"
        << zsh_action(c.positional, c.positional_choices) << "' \\\n";
    s << "            && ret=0\n"
      << "          ;;\n";
  }
  s << "      esac\n"
    << "      ;;\n"
    << "  esac\n"
    << "  return ret\n"
    << "}\n"
    << "if [[ $zsh_eval_context[-1] == loadautofunc ]]; then\n"
    << "  _cudatool \"$@\"\n"
    << "else\n"
    << "  compdef _cudatool cudatool\n"
    << "fi\n";
  return s.str();
}

// ---- fish ----

std::string fish_quote(const std::string& text) {
  std::string out = "'";
  for (const char c : text) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

std::string fish_script(const CompletionSpec& spec) {
  std::ostringstream s;
  std::vector<std::string> names;
  for (const auto& c : spec.commands) names.push_back(c.name);
  s << "# fish completion for cudatool (generated by `cudatool completion fish`)\n"
    << "complete -c cudatool -f\n";
  auto option_line = [&s](const std::string& condition, const OptionSpec& o) {
    s << "complete -c cudatool -n " << fish_quote(condition);
    for (const auto& n : o.short_names) s << " -s " << n;
    for (const auto& n : o.long_names) s << " -l " << n;
    // -r -F: a file or directory; -x (a value, no files): a choice or anything typed.
    if (o.takes_value) {
      if (o.value == ValueKind::file || o.value == ValueKind::directory)
        s << " -r -F";
      else
        s << " -x";
      if (o.value == ValueKind::choice) s << " -a " << fish_quote(join(o.choices));
    }
    s << " -d " << fish_quote(o.description) << '\n';
  };
  for (const auto& o : spec.root.options) option_line("__fish_use_subcommand", o);
  for (const auto& c : spec.commands)
    s << "complete -c cudatool -n __fish_use_subcommand -a " << c.name << " -d "
      << fish_quote(c.description) << '\n';
  for (const auto& c : spec.commands) {
    const std::string condition = "__fish_seen_subcommand_from " + c.name;
    for (const auto& o : c.options) option_line(condition, o);
    if (c.positional == ValueKind::file || c.positional == ValueKind::directory)
      s << "complete -c cudatool -n " << fish_quote(condition) << " -F\n";
    else if (c.positional == ValueKind::choice)
      s << "complete -c cudatool -n " << fish_quote(condition) << " -a "
        << fish_quote(join(c.positional_choices)) << '\n';
  }
  return s.str();
}

}  // namespace

Command add_completion(CLI::App& root, GlobalOptions& global) {
  auto* sub =
      root.add_subcommand("completion", "Print a shell completion script (bash, zsh, fish)");
  auto shell = std::make_shared<std::string>();
  add_json_flag(*sub, global);
  sub->add_option("shell", *shell, "Shell: bash, zsh or fish")
      ->required()
      ->check(completion_choices(kShells));
  return {sub, [shell, &root, &global]() {
            if (std::find(kShells.begin(), kShells.end(), *shell) == kShells.end())
              throw UsageError("completion: unsupported shell '" + *shell +
                               "' (supported: " + join(kShells, ", ") + ")");
            const CompletionSpec spec = describe_tool(root);
            const std::string script = *shell == "bash"  ? bash_script(spec)
                                       : *shell == "zsh" ? zsh_script(spec)
                                                         : fish_script(spec);
            if (global.json)
              print_json({{"shell", *shell}, {"script", script}});
            else
              std::cout << script;
            return ExitStatus::success;
          }};
}

}  // namespace cudatool::app
