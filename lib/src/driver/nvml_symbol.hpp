// The loaded NVML's entry points for the library's other NVML readers (nvml_inventory.cpp),
// so that NVML is opened and initialised in one place (nvml.cpp).
#pragma once

namespace cudatool::detail {

// The address of NVML's `name` once NVML is loaded and initialised; nullptr where NVML is
// unavailable or lacks the symbol. Waits for nvml_preload's loading.
void* nvml_symbol(const char* name);

}  // namespace cudatool::detail
