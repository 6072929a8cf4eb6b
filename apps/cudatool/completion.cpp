// cudatool completion bash|zsh|fish: prints a completion script generated from the parser
// itself (CLI11 has none), so it always knows every command and flag of this build. One
// description (CompletionSpec, read from the parser: completion_spec.hpp) feeds the three
// generators; --json wraps the script in the document of share/schemas/completion.schema.json.
// Installed by `cmake --install` to bash-completion/completions, zsh/vendor-completions and
// fish/vendor_completions.d; by hand: cudatool completion bash >
// ~/.local/share/bash-completion/completions/cudatool
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "command.hpp"
#include "completion_spec.hpp"
#include "cudatool/base/error.hpp"
#include "json_stream.hpp"
#include "render.hpp"

namespace cudatool::app {
namespace {

const std::vector<std::string> kShells = {"bash", "zsh", "fish"};

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
                               "' (supported: " + join_words(kShells, ", ") + ")");
            const CompletionSpec spec = describe_tool(root);
            const std::string script = *shell == "bash"  ? bash_script(spec)
                                       : *shell == "zsh" ? zsh_script(spec)
                                                         : fish_script(spec);
            if (global.json())
              print_json(JsonObject().set("shell", *shell).set("script", script));
            else
              command_out() << script;
            return ExitStatus::success;
          }};
}

}  // namespace cudatool::app
