// The executable's standard streams: descriptors 0-2 kept open, and std::cout written
// through a buffer that remembers why a write failed, so that every command's output is
// checked once it ends (main.cpp).
#pragma once

namespace cudatool::app {

// A closed standard descriptor would be reused by the next open(): an output file would
// then receive what is meant for stdout. Each closed one is opened on /dev/null, stdout
// and stderr read-only, so that writing to them still fails and is reported.
void guard_standard_descriptors();

// Points std::cout at a buffer that writes to descriptor 1 and keeps the errno of the
// first write that failed, for finish() to report.
void use_standard_output();

// Standard output, flushed and checked: everything a command printed must have been
// written. A failure (a full disk, a closed or read-only stdout) is one line on stderr with
// the first failed write's reason, and exit 1 unless the command failed already (its own
// status stands, and its own line comes first).
int finish(int status);

}  // namespace cudatool::app
