// What `cudatool completion` generates its scripts from: one description of every command
// and flag (CompletionSpec), read from the CLI11 parser itself, and the three generators
// that turn it into a bash, zsh or fish script (completion_bash.cpp, completion_zsh.cpp,
// completion_fish.cpp).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace cudatool::app {

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

struct CompletionSpec {
  CommandSpec root;
  std::vector<CommandSpec> commands;
};

// The root command's options and every subcommand's.
CompletionSpec describe_tool(CLI::App& root);

// The words joined by `separator`.
std::string join_words(const std::vector<std::string>& words, const std::string& separator = " ");
// Every spelling of a command's flags ("--arch", "-a"), sorted.
std::vector<std::string> flag_words(const CommandSpec& c);

std::string bash_script(const CompletionSpec& spec);
std::string zsh_script(const CompletionSpec& spec);
std::string fish_script(const CompletionSpec& spec);

}  // namespace cudatool::app
