// Running nvcc as a child process: the one place where cudatool starts another program.
//
// nvcc runs its sub-steps (the host preprocessor, cicc, ptxas) as /bin/sh command lines
// that it builds from its own arguments. It puts -D values, include directories and file
// names inside double quotes, where `$`, backquotes, `"` and `\` still act (it escapes a
// `"` of a -D value itself), and passes -Xptxas values and other pass-through options bare.
// So every argument is checked before nvcc starts, by the quoting nvcc gives it; one that a
// shell would not take as plain text is refused (UsageError), never run: a compilation
// database or a directory name must not run commands.
//
// The child runs in its own process group with stdin on /dev/null. SIGINT, SIGTERM, SIGHUP
// and SIGQUIT that reach cudatool meanwhile are forwarded to that group (nvcc and every
// sub-step it started); once the child has ended, InterruptedError is thrown, so the
// callers' cleanups (temporary directories) run on the way out and main exits 128 + N.
//
// Its output (stdout and stderr together) is kept up to kMaxChildOutputBytes: the head and
// the tail, with a line in between saying how much was left out.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudatool {

// How nvcc writes an argument's value into the shell command lines of its sub-steps.
enum class NvccQuoting {
  double_quoted,  // -I, -isystem, -o, --keep-dir and file names: inside "..."
  define,         // -D: inside "...", with nvcc escaping `"` itself
  bare,           // anything else (-Xptxas values, pass-through options): as it is
};

// Why `value` would not reach the sub-step as plain text under `quoting` (one short
// phrase naming the character), or nullopt when it is inert.
std::optional<std::string> nvcc_shell_hazard(std::string_view value, NvccQuoting quoting);

// The first argument of an nvcc command line (argv without argv[0]) that nvcc would hand to
// /bin/sh in a form a shell acts on: "<argument>: <hazard>", or nullopt. File names are
// also checked as absolute paths (nvcc passes the source's real path to cicc).
std::optional<std::string> nvcc_argument_hazard(const std::vector<std::string>& arguments);

inline constexpr std::size_t kMaxChildOutputBytes = std::size_t{4} << 20;  // 4 MiB

// `text` cut to at most `max_bytes` (plus the note): its first and last halves kept, and
// "[cudatool: N bytes of compiler output left out]" between them.
std::string cap_compiler_output(std::string text, std::size_t max_bytes = kMaxChildOutputBytes);

struct ChildResult {
  int status = -1;     // the exit status, or 128 + signal when the child was killed
  std::string output;  // stdout and stderr together, capped as above
};

// Runs argv (argv[0] an executable path, run without a shell) as described above. Throws
// UsageError when nvcc_argument_hazard finds one, InterruptedError when a forwarded signal
// arrived, std::system_error when the process cannot be started.
ChildResult run_nvcc_process(const std::vector<std::string>& argv);

}  // namespace cudatool
