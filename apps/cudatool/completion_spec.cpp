#include "completion_spec.hpp"

#include <algorithm>

namespace cudatool::app {
namespace {

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
  if (name == "output" || name == "file" || name == "FILE" || name == "PATH" ||
      name == "kernel-from")
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

}  // namespace

CompletionSpec describe_tool(CLI::App& root) {
  CompletionSpec spec{describe(root, ""), {}};
  for (CLI::App* sub : root.get_subcommands({}))
    spec.commands.push_back(describe(*sub, sub->get_name()));
  return spec;
}

std::string join_words(const std::vector<std::string>& words, const std::string& separator) {
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

}  // namespace cudatool::app
