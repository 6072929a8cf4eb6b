// A GPU architecture as every flag and file names one: the one grammar, for `occupancy
// --arch`, `kernels --arch`, `compile --arch`, `--min-cc`, compile_commands.json targets and
// the architectures of fatbin images.
//
//   sm_90, sm_100, sm_121     machine code (SASS) for compute capability 9.0, 10.0, 12.1
//   sm_90a, sm_100f           the architecture-specific (a) and family-specific (f) variants
//   compute_90, compute_100a  PTX (virtual architecture), with the same optional variant
//   9.0, 10.0, 12.1           a compute capability: the same as sm_90, sm_100, sm_121
//
// Two or three digits after the prefix, the first not 0 (sm_9 and sm_1234 are no
// architecture); a dotted form has a major of 1-99 without a leading 0 and one digit of
// minor. Lower case, nothing around it: nvcc takes no other spelling. What a toolkit can
// compile (CUDA 13: sm_75 and up) and what cudatool's architecture table holds are policy,
// checked by their users, not here.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace cudatool {

struct ComputeCapability {
  int major = 0;
  int minor = 0;
  std::string str() const { return std::to_string(major) + "." + std::to_string(minor); }
  std::string sm() const { return "sm_" + std::to_string(major) + std::to_string(minor); }
  friend bool operator==(const ComputeCapability&, const ComputeCapability&) = default;
  friend auto operator<=>(const ComputeCapability&, const ComputeCapability&) = default;
};

struct Arch {
  enum class Code { sass, ptx };      // sm_ (a CUBIN), compute_ (PTX)
  enum class Variant { none, a, f };  // sm_90a: architecture-specific; sm_100f: family

  Code code = Code::sass;
  ComputeCapability cc;
  Variant variant = Variant::none;

  bool real() const { return code == Code::sass; }
  // 90 for sm_90, 100 for sm_100.
  int number() const { return cc.major * 10 + cc.minor; }
  // "sm_90a", "compute_90": the canonical spelling (9.0 is written sm_90).
  std::string str() const;

  // nullopt for anything outside the grammar above.
  static std::optional<Arch> try_parse(std::string_view text);
  // UsageError `<source> "<text>": expected an architecture such as ...` outside the grammar.
  static Arch parse(std::string_view text, std::string_view source);

  // Whether an image of this architecture passes `filter` (kernels --arch): the same number
  // and prefix, and the filter's variant unless it has none; a plain sm_XX filter also
  // passes compute_XX (the PTX a driver would compile for that GPU).
  bool passes(const Arch& filter) const;

  friend bool operator==(const Arch&, const Arch&) = default;
  // An order for containers (by kind, then compute capability, then variant).
  friend auto operator<=>(const Arch&, const Arch&) = default;
};

}  // namespace cudatool
