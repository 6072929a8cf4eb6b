// Which device a command uses, after PyCUDA's make_default_context: the caller's own choice
// (cudatool's --device flag) first; else the CUDA_DEVICE environment variable; else the content of
// ~/.cuda-device (or ~/.cuda_device, the name PyCUDA's code reads); else device 0. Where a context
// is needed and nothing was chosen explicitly, the first device that accepts one.
// CUDA_VISIBLE_DEVICES is applied by the driver before any of this.
//
// Parsing and precedence are pure functions of their inputs, so they are tested without
// a GPU; resolving a spec to a Device needs the driver.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "cudatool/device/device.hpp"

namespace cudatool {

struct DeviceSpec {
  enum class Kind { ordinal, pci_bus_id, uuid };
  Kind kind = Kind::ordinal;
  int ordinal = 0;   // for Kind::ordinal
  std::string text;  // the value as given (trimmed)
};

// Parses "1", "0000:07:00.0" / "07:00.0", or "GPU-8a5b..." (a UUID or unique prefix).
// Throws UsageError naming `source` and the value: `--device "abc": ...`.
DeviceSpec parse_device_spec(std::string_view text, std::string_view source);

struct DeviceChoice {
  DeviceSpec spec;
  // What gave it: the caller's flag_source (cudatool's "--device"), "CUDA_DEVICE",
  // "~/.cuda-device", "default".
  std::string source;
  // Chosen by the user, not the fallback to device 0.
  bool explicit_choice() const { return source != "default"; }
};

// Where the inputs come from; a test fills them in by hand.
struct SelectionInputs {
  std::optional<std::string> flag;       // the caller's choice, if given
  std::optional<std::string> env_value;  // CUDA_DEVICE, if set
  std::string home;                      // $HOME ("" when unset)
  // What gave `flag`, as messages and DeviceChoice::source name it (cudatool: "--device").
  std::string flag_source = "device";
  static SelectionInputs from_environment(std::optional<std::string> flag, std::string flag_source);
};

// Applies the precedence above. Throws UsageError for a malformed value, an empty or
// unreadable ~/.cuda-device.
DeviceChoice choose_device(const SelectionInputs& inputs);

// The device a spec names. Throws DeviceNotFoundError naming the source, the value and
// (for an ordinal) the valid range.
Device resolve_device(const DeviceChoice& choice);

// choose_device + resolve_device, from the real environment; `flag_source` names `flag`.
Device select_device(const std::optional<std::string>& flag, std::string_view flag_source);

}  // namespace cudatool
