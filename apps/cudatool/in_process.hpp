// A command line run inside this process, as the executable runs it, with what it writes to
// standard output and standard error captured: how the Python module (python/) gets the
// same documents as `cudatool ... --json`, made by the same code.
#pragma once

#include <streambuf>
#include <string>
#include <vector>

#include "exit_status.hpp"

namespace cudatool::app {

struct InProcessRun {
  ExitStatus status = ExitStatus::success;
  std::string out;  // what the command wrote as its output (empty where `out` was given)
  std::string err;  // its messages (the lines the executable prints on stderr)
};

// `arguments` without the program's name: {"occupancy", "--json", "--arch", "sm_90", ...}.
// A command line that does not parse throws UsageError with the executable's message; an
// exception the command throws is not reported but propagates (the caller maps it, as main
// does). The command writes to streams of its own (render.hpp's command_out() and
// command_err()), never to std::cout or std::cerr, which other threads of the process may
// use meanwhile; one call at a time runs (a process-wide lock). With `out`, the output goes
// into that buffer instead of InProcessRun::out (the Python module's, which is the bytes
// object handed to Python: a 50 MB document is then written once, never copied).
InProcessRun run_in_process(const std::vector<std::string>& arguments,
                            std::streambuf* out = nullptr);

}  // namespace cudatool::app
