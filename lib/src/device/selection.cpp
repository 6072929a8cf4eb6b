#include "cudatool/device/selection.hpp"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "cudatool/base/error.hpp"
#include "cudatool/base/file_io.hpp"
#include "cudatool/base/text.hpp"

namespace cudatool {
namespace {

std::string trim(std::string_view text) {
  std::size_t b = 0, e = text.size();
  while (b < e && std::isspace(static_cast<unsigned char>(text[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(text[e - 1]))) --e;
  return std::string(text.substr(b, e - b));
}

bool all_of(std::string_view s, int (*predicate)(int)) {
  for (char c : s)
    if (!predicate(static_cast<unsigned char>(c))) return false;
  return !s.empty();
}

// [domain:]bus:device.function, all hex: "0000:07:00.0" or "07:00.0".
bool looks_like_pci_bus_id(std::string_view s) {
  const auto dot = s.rfind('.');
  if (dot == std::string_view::npos || dot + 1 >= s.size()) return false;
  if (!all_of(s.substr(dot + 1), isxdigit)) return false;
  std::string_view head = s.substr(0, dot);
  int parts = 0;
  while (!head.empty()) {
    const auto colon = head.find(':');
    const std::string_view part = head.substr(0, colon);
    if (!all_of(part, isxdigit) || part.size() > 8) return false;
    ++parts;
    head = colon == std::string_view::npos ? std::string_view{} : head.substr(colon + 1);
    if (colon != std::string_view::npos && head.empty()) return false;
  }
  return parts == 2 || parts == 3;
}

bool looks_like_uuid(std::string_view s) {
  std::string lower;
  for (char c : s) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  std::string_view rest = lower;
  if (rest.starts_with("gpu-"))
    rest.remove_prefix(4);
  else if (rest.starts_with("mig-"))
    return false;
  if (rest.size() < 4) return false;  // too short to be a deliberate prefix
  for (char c : rest)
    if (!std::isxdigit(static_cast<unsigned char>(c)) && c != '-') return false;
  return s.size() >= 4 && (lower.starts_with("gpu-") || rest.find('-') != std::string_view::npos);
}

std::string quote_value(std::string_view text) {
  return quote_input(text);
}

}  // namespace

DeviceSpec parse_device_spec(std::string_view text, std::string_view source) {
  const std::string value = trim(text);
  DeviceSpec spec;
  spec.text = value;
  if (value.empty())
    throw UsageError(std::string(source) +
                     " is empty: expected a device ordinal, PCI bus id or UUID");
  if (all_of(value, isdigit) ||
      (value[0] == '-' && all_of(std::string_view(value).substr(1), isdigit))) {
    int ordinal = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), ordinal);
    if (error != std::errc() || end != value.data() + value.size() || ordinal < 0) {
      throw UsageError(std::string(source) + " " + quote_value(value) +
                       ": a device ordinal must be a non-negative integer");
    }
    spec.kind = DeviceSpec::Kind::ordinal;
    spec.ordinal = ordinal;
    return spec;
  }
  if (looks_like_pci_bus_id(value)) {
    spec.kind = DeviceSpec::Kind::pci_bus_id;
    return spec;
  }
  if (looks_like_uuid(value)) {
    spec.kind = DeviceSpec::Kind::uuid;
    return spec;
  }
  throw UsageError(std::string(source) + " " + quote_value(value) +
                   ": not a device ordinal (0), PCI bus id (0000:07:00.0) or UUID (GPU-...)");
}

SelectionInputs SelectionInputs::from_environment(std::optional<std::string> flag,
                                                  std::string flag_source) {
  SelectionInputs inputs;
  inputs.flag = std::move(flag);
  inputs.flag_source = std::move(flag_source);
  if (const char* env = std::getenv("CUDA_DEVICE")) inputs.env_value = env;
  if (const char* home = std::getenv("HOME")) inputs.home = home;
  return inputs;
}

DeviceChoice choose_device(const SelectionInputs& inputs) {
  if (inputs.flag) return {parse_device_spec(*inputs.flag, inputs.flag_source), inputs.flag_source};
  if (inputs.env_value) return {parse_device_spec(*inputs.env_value, "CUDA_DEVICE"), "CUDA_DEVICE"};
  if (!inputs.home.empty()) {
    // PyCUDA's documentation names ~/.cuda-device, its code reads ~/.cuda_device: both.
    for (const char* name : {".cuda-device", ".cuda_device"}) {
      const std::string path = inputs.home + "/" + name;
      const std::string shown = std::string("~/") + name;
      std::error_code ec;
      if (!std::filesystem::exists(std::filesystem::symlink_status(path, ec))) continue;
      // One small file, read without blocking: a FIFO, a device or a directory is refused,
      // /dev/zero or a huge file stops at kMaxConfigFileBytes.
      const std::string content = read_input_file(path, shown, kMaxConfigFileBytes);
      if (trim(content).empty())
        throw InputError(shown + " " + quote_input(path) +
                         " is empty: expected a device ordinal, PCI bus id or UUID");
      return {parse_device_spec(content, shown), shown};
    }
  }
  DeviceSpec spec;
  spec.text = "0";
  return {spec, "default"};
}

Device resolve_device(const DeviceChoice& choice) {
  const std::string prefix =
      choice.source == "default" ? "" : choice.source + " " + quote_value(choice.spec.text) + ": ";
  try {
    switch (choice.spec.kind) {
      case DeviceSpec::Kind::ordinal:
        return Device(choice.spec.ordinal);
      case DeviceSpec::Kind::pci_bus_id:
        return Device::from_pci_bus_id(choice.spec.text);
      case DeviceSpec::Kind::uuid:
        return Device::from_uuid(choice.spec.text);
    }
  } catch (const DeviceNotFoundError& e) {
    if (prefix.empty()) throw;
    throw DeviceNotFoundError(prefix + e.what());
  }
  throw LogicError("unreachable device spec kind");
}

Device select_device(const std::optional<std::string>& flag, std::string_view flag_source) {
  return resolve_device(
      choose_device(SelectionInputs::from_environment(flag, std::string(flag_source))));
}

}  // namespace cudatool
