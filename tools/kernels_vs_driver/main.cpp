// kernels_vs_driver FILE...: `cudatool kernels`' offline reading of every image of each FILE
// that the GPU can load, against the driver (see driver_comparison.hpp). Prints each
// difference and a line per file, then the totals. Exit 0 when something was compared and
// nothing differed, 1 on any difference, and the tool's usual codes for a missing driver
// or device (3, 4). A FILE that cannot be read is reported and counted, not fatal.
// Device: CUDATOOL_DEVICE-style selection is not needed here: the first device is used.
#include <iostream>
#include <string>
#include <vector>

#include "cudatool/base/error.hpp"
#include "cudatool/base/text.hpp"
#include "cudatool/device/context.hpp"
#include "cudatool/device/device.hpp"
#include "driver_comparison.hpp"
#include "exit_status.hpp"

int main(int argc, char** argv) {
  using namespace cudatool;
  if (argc < 2) {
    std::cerr << "usage: kernels_vs_driver FILE...\n";
    return 2;
  }
  try {
    const Context context(Device(0));
    std::cout << "device: " << context.device().name() << " ("
              << context.device().compute_capability().sm() << ")\n";
    tools::ComparisonCounts total;
    std::size_t files = 0, failed = 0;
    for (int i = 1; i < argc; ++i) {
      try {
        total += tools::compare_file_with_driver(argv[i], context, std::cout);
        ++files;
      } catch (const std::exception& e) {
        ++failed;
        std::cout << "SKIPPED " << printable(e.what(), 400) << '\n';
      }
    }
    std::cout << "TOTAL: " << files << " files (" << failed << " not readable as CUDA binaries), "
              << total.images << " images, " << total.kernels << " kernels, " << total.kernels * 5
              << " attributes and " << total.occupancy_checks
              << " occupancy queries compared: " << total.differences << " differences ("
              << total.by_enumeration << " through their enumerated handle, "
              << total.not_comparable << " the driver cannot load; " << total.relocatable_images
              << " relocatable, " << total.not_loadable_images << " refused by the driver, "
              << total.unreadable_images << " unreadable images)\n";
    return total.differences == 0 && total.kernels > 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "kernels_vs_driver: " << printable(e.what(), 400) << '\n';
    return app::to_int(app::exit_status_for(e));
  }
}
