// cudatool._cudatool: the C++ half of the Python module. DeviceData and OccupancyRecord are
// libcudatool's own (constructed here, read in place: about a third of a microsecond a
// record). Every document (to_dict(), and what the Python half wraps in result objects) is
// made by the CLI's own renderer (apps/cudatool): devices(), attributes() and
// OccupancyRecord.to_dict() call the library and the renderer directly; the other commands
// still run in this process through run_command (apps/cudatool/in_process.hpp), so that a
// document equals `cudatool ... --json` byte for byte before parsing. C++ exceptions
// become the Python classes of cudatool/_errors.py, carrying the CLI's one-line message.
// Nothing here loads libcuda: the library opens it at the first call that needs it.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <climits>
#include <exception>
#include <new>
#include <optional>
#include <streambuf>
#include <string>
#include <tuple>
#include <vector>

#include "attrs_report.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/device/selection.hpp"
#include "cudatool/occupancy/cluster_occupancy.hpp"
#include "cudatool/occupancy/device_data.hpp"
#include "cudatool/occupancy/occupancy.hpp"
#include "devices_report.hpp"
#include "exit_status.hpp"
#include "in_process.hpp"
#include "occupancy_json.hpp"
#include "occupancy_report.hpp"
#include "render.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace cudatool::python {
namespace {

nb::object json_loads(const std::string& text) {
  return nb::module_::import_("json").attr("loads")(nb::str(text.c_str(), text.size()));
}

// A value as the CLI's JSON writes it (json_stream.hpp), as json.loads reads it.
template <class T>
nb::object to_python(const T& value) {
  std::string text;
  app::JsonStream(text).value(value);
  return json_loads(text);
}

// A DeviceData with the CLI flags that select the same data (--arch sm_90, --device 0), so
// that a document about it is the CLI's.
struct PyDeviceData {
  DeviceData data;
  std::vector<std::string> cli_flags;
};

struct PyOccupancyRecord {
  OccupancyRecord record;
  nb::object devdata;  // the PyDeviceData it was computed for
};

const PyDeviceData& device_data_of(nb::handle devdata) {
  try {
    return nb::cast<const PyDeviceData&>(devdata);
  } catch (const nb::cast_error&) {
    throw nb::type_error("devdata must be a cudatool.DeviceData");
  }
}

// `cluster`: N, or (X, Y, Z).
ClusterDims cluster_dims_of(nb::handle cluster) {
  if (nb::isinstance<nb::int_>(cluster)) return {nb::cast<int>(cluster), 1, 1};
  try {
    const auto dims = nb::cast<std::tuple<int, int, int>>(cluster);
    return {std::get<0>(dims), std::get<1>(dims), std::get<2>(dims)};
  } catch (const nb::cast_error&) {
    throw nb::type_error("cluster must be an int or a tuple (x, y, z) of ints");
  }
}

// The measured product whose GPCs answer for the record's device data; RequirementError
// with the reason where none is measured (never an estimate).
const ClusterTopology& topology_of(const PyOccupancyRecord& r) {
  std::string reason;
  const ClusterTopology* t = cluster_topology_for(device_data_of(r.devdata).data, reason);
  if (!t) throw RequirementError(reason);
  return *t;
}

// A column's value, or None where the architecture table does not know it.
nb::object known(const PyDeviceData& d, const char* column, long long value) {
  if (!d.data.knows(column)) return nb::none();
  return nb::int_(value);
}

// The output buffer of a command run in process: the bytes object Python gets, written
// in place and grown geometrically (realloc, which moves a large block by remapping it, not
// by copying). The document of `kernels --json` on libcublasLt (47 MB) was written into an
// ostringstream, then copied into bytes: about 150 MB touched against the CLI's none (its
// output goes to a file), 38,000 more page faults, on one thread while the scan is
// parallel. The GIL is taken only to resize (a few dozen times for 50 MB).
class BytesOutput : public std::streambuf {
 public:
  BytesOutput() {
    bytes_ = PyBytes_FromStringAndSize(nullptr, 4096);
    if (bytes_ == nullptr) throw nb::python_error();
    set_put_area(4096, 0);
  }
  BytesOutput(const BytesOutput&) = delete;
  BytesOutput& operator=(const BytesOutput&) = delete;
  ~BytesOutput() override { Py_XDECREF(bytes_); }  // with the GIL held

  // What was written, as bytes of its exact size; the GIL held. Throws MemoryError where the
  // output could not grow (the command's output stream went bad then, and the document is
  // incomplete).
  nb::bytes take() {
    const auto written = static_cast<std::size_t>(pptr() - pbase());
    if (!failed_) resize(written);
    if (failed_)
      throw MemoryError("out of memory for the command's output (" + std::to_string(written) +
                        " bytes written)");
    PyObject* done = bytes_;
    bytes_ = nullptr;
    setp(nullptr, nullptr);
    return nb::steal<nb::bytes>(done);
  }

 protected:
  int_type overflow(int_type ch) override {
    if (traits_type::eq_int_type(ch, traits_type::eof())) return traits_type::not_eof(ch);
    if (!failed_) {
      nb::gil_scoped_acquire locked;
      resize(2 * static_cast<std::size_t>(epptr() - pbase()));
    }
    if (failed_) return traits_type::eof();  // the stream goes bad
    *pptr() = traits_type::to_char_type(ch);
    pbump(1);
    return ch;
  }

 private:
  // Keeps what was written; the put area becomes [written, size). On failure the object is
  // gone (_PyBytes_Resize frees it) and nothing more is written.
  void resize(std::size_t size) {
    const auto written = static_cast<std::size_t>(pptr() - pbase());
    if (_PyBytes_Resize(&bytes_, static_cast<Py_ssize_t>(size)) != 0) {
      PyErr_Clear();
      failed_ = true;
      setp(nullptr, nullptr);
      return;
    }
    set_put_area(size, written);
  }

  void set_put_area(std::size_t size, std::size_t written) {
    char* base = PyBytes_AS_STRING(bytes_);
    setp(base, base + size);
    // pbump takes an int: a document over 2 GiB moves in steps.
    for (std::size_t left = written; left > 0;) {
      const auto step = static_cast<int>(std::min<std::size_t>(left, INT_MAX));
      pbump(step);
      left -= static_cast<std::size_t>(step);
    }
  }

  PyObject* bytes_ = nullptr;
  bool failed_ = false;
};

// Standard output as bytes (json.loads reads them as they are: a document of 50 MB is not
// decoded into a str first), standard error as text.
std::tuple<int, nb::bytes, std::string> run_command(const std::vector<std::string>& arguments) {
  BytesOutput out;  // destroyed, if the command throws, once the GIL is back
  app::InProcessRun run;
  {
    nb::gil_scoped_release unlocked;
    run = app::run_in_process(arguments, &out);
  }
  return {app::to_int(run.status), out.take(), std::move(run.err)};
}

// Raises the Python class of cudatool._errors that matches `e`, with the CLI's one-line
// message and what the error carries.
void raise_translated(const std::exception& e) {
  const char* name = "Error";
  if (dynamic_cast<const UnknownValueError*>(&e))
    name = "UnknownValueError";
  else if (dynamic_cast<const RequirementError*>(&e))
    name = "RequirementError";
  else if (dynamic_cast<const DeviceNotFoundError*>(&e))
    name = "NoDevice";
  else if (dynamic_cast<const LibraryNotFoundError*>(&e))
    name = "DriverNotFound";
  else if (dynamic_cast<const InputError*>(&e))
    name = "InputError";
  else if (dynamic_cast<const UsageError*>(&e))
    name = "UsageError";
  else if (dynamic_cast<const CompileError*>(&e))
    name = "CompileError";
  else if (dynamic_cast<const LaunchError*>(&e))
    name = "LaunchError";
  else if (dynamic_cast<const MemoryError*>(&e) || dynamic_cast<const std::bad_alloc*>(&e))
    name = "MemoryError";
  else if (dynamic_cast<const LogicError*>(&e))
    name = "LogicError";
  else if (dynamic_cast<const RuntimeError*>(&e))
    name = "RuntimeError";
  const app::ExitStatus status = app::exit_status_for(e);
  nb::object errors = nb::module_::import_("cudatool._errors");
  nb::object cls = errors.attr(name);
  nb::object error = cls(nb::str(app::one_line(e.what()).c_str()));
  error.attr("exit_code") = app::to_int(status);
  error.attr("status") = nb::str(std::string(app::exit_status_name(status)).c_str());
  if (const auto* cuda = dynamic_cast<const Error*>(&e); cuda && cuda->code()) {
    error.attr("call") = cuda->call();
    error.attr("cuda_error") = cuda->code_name();
    error.attr("cuda_error_code") = cuda->code();
  }
  if (const auto* compile = dynamic_cast<const CompileError*>(&e)) {
    error.attr("log") = compile->log();
    error.attr("options") = compile->options();
    error.attr("compiler_version") = compile->compiler_version();
  }
  if (const auto* missing = dynamic_cast<const LibraryNotFoundError*>(&e))
    error.attr("library") = missing->library();
  if (const auto* unknown = dynamic_cast<const UnknownValueError*>(&e)) {
    error.attr("unknown") = to_python(unknown->unknown());
  }
  PyErr_SetObject(cls.ptr(), error.ptr());
}

}  // namespace
}  // namespace cudatool::python

NB_MODULE(_cudatool, m) {
  using namespace cudatool;
  using namespace cudatool::python;
  m.doc() = "cudatool's C++ core (libcudatool and the CLI's commands); use the cudatool package.";
  m.attr("__version__") = CUDATOOL_VERSION;

  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const nb::builtin_exception&) {
      throw;
    } catch (const nb::python_error&) {
      throw;
    } catch (const std::exception& e) {
      raise_translated(e);
    }
  });

  // The library's requests and results, bound directly: the document is the CLI's renderer's.
  m.def(
      "devices",
      [](bool memory_usage) {
        app::DevicesRequest request;
        request.memory_usage = memory_usage;
        app::DevicesReport report;
        {
          nb::gil_scoped_release unlocked;
          report = app::devices_report(request);
        }
        // A device the driver does not answer for: listed, and the CLI exits 5 naming it.
        for (const DeviceInfo& d : report.listing.devices)
          if (!d.error.empty())
            throw RuntimeError("device " + std::to_string(d.ordinal) + " (" + d.pci_bus_id + ", " +
                               (d.uuid.empty() ? "no UUID" : d.uuid) +
                               ") does not answer: " + d.error);
        return json_loads(app::json_document(app::devices_json(report)));
      },
      "memory_usage"_a = false, "`cudatool devices --json` as a dict.");
  m.def(
      "attributes",
      [](std::optional<std::string> device, const std::vector<std::string>& names) {
        const app::AttrsRequest request = app::attrs_request(device, names, false);
        app::AttrsReport report;
        {
          nb::gil_scoped_release unlocked;
          report = app::attrs_report(request);
        }
        return json_loads(app::json_document(app::attrs_json(report)));
      },
      "device"_a = nb::none(), "names"_a = std::vector<std::string>(),
      "`cudatool attrs --json [--device D] [NAME...]` as a dict.");

  m.def("run_command", &run_command, "arguments"_a,
        "Runs `cudatool ARGUMENTS...` in this process (the GIL released): (exit status, "
        "standard output as bytes, standard error). An error the command raises is raised.");

  nb::class_<PyDeviceData>(
      m, "DeviceData",
      "What occupancy depends on (PyCUDA's DeviceData): DeviceData(\"sm_90\") from cudatool's "
      "architecture table (no GPU, no driver), or DeviceData(device=0) from a live device's "
      "attributes (no context). PyCUDA's fields are None where the table does not know a value; "
      "to_dict() is the device member of `cudatool occupancy --json`.")
      .def(
          "__init__",
          [](PyDeviceData* self, std::optional<std::string> arch,
             std::optional<nb::object> device) {
            if (arch && device)
              throw UsageError(
                  "DeviceData: give an architecture or device=, not both (an architecture needs "
                  "no GPU, device= reads a real one)");
            if (arch) {
              PyDeviceData d{DeviceData(Arch::parse(*arch, "--arch"), "--arch", *arch),
                             {"--arch", *arch}};
              new (self) PyDeviceData(std::move(d));
              return;
            }
            std::optional<std::string> spec;
            if (device) spec = nb::cast<std::string>(nb::str(*device));
            Device chosen(0);
            {
              nb::gil_scoped_release unlocked;
              chosen = select_device(spec, "--device");
            }
            PyDeviceData d{DeviceData(chosen), {"--device", std::to_string(chosen.ordinal())}};
            new (self) PyDeviceData(std::move(d));
          },
          "arch"_a = nb::none(), nb::kw_only(), "device"_a = nb::none())
      .def_prop_ro("max_threads",
                   [](const PyDeviceData& d) {
                     return known(d, "max_threads_per_block", d.data.max_threads());
                   })
      .def_prop_ro("warp_size",
                   [](const PyDeviceData& d) { return known(d, "warp_size", d.data.warp_size()); })
      .def_prop_ro(
          "warps_per_mp",
          [](const PyDeviceData& d) -> nb::object {
            if (!d.data.knows("warp_size") || !d.data.knows("max_threads_per_multiprocessor"))
              return nb::none();
            return nb::int_(d.data.warps_per_mp());
          })
      .def_prop_ro("thread_blocks_per_mp",
                   [](const PyDeviceData& d) {
                     return known(d, "max_blocks_per_multiprocessor",
                                  d.data.thread_blocks_per_mp());
                   })
      .def_prop_ro(
          "registers",
          [](const PyDeviceData& d) { return known(d, "registers_per_block", d.data.registers()); })
      .def_prop_ro("shared_memory",
                   [](const PyDeviceData& d) {
                     return known(d, "shared_memory_per_block",
                                  static_cast<long long>(d.data.shared_memory()));
                   })
      .def_prop_ro("smem_granularity",
                   [](const PyDeviceData& d) {
                     return known(d, "shared_memory_banks", d.data.smem_granularity());
                   })
      .def_prop_ro("smem_alloc_granularity",
                   [](const PyDeviceData& d) {
                     return known(d, "shared_memory_allocation_granularity",
                                  d.data.smem_alloc_granularity());
                   })
      .def_prop_ro("name", [](const PyDeviceData& d) { return d.data.properties().name; })
      .def_prop_ro("family",
                   [](const PyDeviceData& d) -> nb::object {
                     const auto& f = d.data.properties().family;
                     return f.empty() ? nb::none() : nb::str(f.c_str());
                   })
      .def_prop_ro("compute_capability",
                   [](const PyDeviceData& d) {
                     const auto& cc = d.data.properties().compute_capability;
                     return std::make_tuple(cc.major, cc.minor);
                   })
      .def_prop_ro("origin",
                   [](const PyDeviceData& d) { return std::string(origin_name(d.data.origin())); })
      .def_prop_ro("sm_count", [](const PyDeviceData& d) { return d.data.properties().sm_count; })
      .def_prop_ro("sm_count_part",
                   [](const PyDeviceData& d) -> nb::object {
                     const auto& p = d.data.properties().sm_count_part;
                     return p.empty() ? nb::none() : nb::str(p.c_str());
                   })
      .def_prop_ro("unknown_fields",
                   [](const PyDeviceData& d) { return d.data.properties().unknown_fields; })
      .def_prop_ro("unknown_reason",
                   [](const PyDeviceData& d) -> nb::object {
                     const auto& r = d.data.properties().unknown_reason;
                     return r.empty() ? nb::none() : nb::str(r.c_str());
                   })
      .def(
          "column",
          [](const PyDeviceData& d, const std::string& name) -> nb::object {
            nb::dict columns = nb::cast<nb::dict>(to_python(d.data.properties()));
            if (!columns.contains(name.c_str())) throw nb::key_error(name.c_str());
            return d.data.knows(name) ? nb::object(columns[name.c_str()]) : nb::none();
          },
          "name"_a)
      .def(
          "align_bytes", [](const PyDeviceData& d, int w) { return d.data.align_bytes(w); },
          "word_size"_a = 4)
      .def(
          "align", [](const PyDeviceData& d, std::size_t b, int w) { return d.data.align(b, w); },
          "bytes"_a, "word_size"_a = 4)
      .def(
          "align_words", [](const PyDeviceData& d, int w) { return d.data.align_words(w); },
          "word_size"_a)
      .def(
          "align_dtype",
          [](const PyDeviceData& d, std::size_t e, int s) { return d.data.align_dtype(e, s); },
          "elements"_a, "dtype_size"_a)
      .def_static("make_valid_tex_channel_count", &DeviceData::make_valid_tex_channel_count,
                  "size"_a)
      .def_prop_ro("_cli_flags", [](const PyDeviceData& d) { return d.cli_flags; })
      .def("to_dict", [](const PyDeviceData& d) { return to_python(d.data); })
      .def("__repr__", [](const PyDeviceData& d) {
        const auto& p = d.data.properties();
        return "DeviceData(" +
               (d.data.origin() == DeviceDataOrigin::architecture_table
                    ? "'" + d.cli_flags[1] + "'"
                    : "device=" + d.cli_flags[1]) +
               ") <" + p.name + ", compute capability " + p.compute_capability.str() + ">";
      });

  nb::class_<PyOccupancyRecord>(
      m, "OccupancyRecord",
      "Exact occupancy (PyCUDA's OccupancyRecord; the toolkit's cuda_occupancy.h, what "
      "cuOccupancyMaxActiveBlocksPerMultiprocessor answers) of blocks of `threads` threads, "
      "`shared_mem` bytes of shared memory in total and `registers` per thread: tb_per_mp, "
      "limited_by, warps_per_mp, occupancy, block_limits. to_dict() is `cudatool occupancy "
      "--json` for the same inputs.")
      .def(
          "__init__",
          [](PyOccupancyRecord* self, nb::handle devdata, int threads, std::size_t shared_mem,
             int registers, int block_barriers) {
            new (self) PyOccupancyRecord{OccupancyRecord(device_data_of(devdata).data, threads,
                                                         shared_mem, registers, block_barriers),
                                         nb::borrow(devdata)};
          },
          "devdata"_a, "threads"_a, "shared_mem"_a = 0, "registers"_a = 0, "block_barriers"_a = 1)
      .def_prop_ro("devdata", [](const PyOccupancyRecord& r) { return r.devdata; })
      .def_prop_ro("threads", [](const PyOccupancyRecord& r) { return r.record.threads; })
      .def_prop_ro("shared_mem", [](const PyOccupancyRecord& r) { return r.record.shared_mem; })
      .def_prop_ro("registers", [](const PyOccupancyRecord& r) { return r.record.registers; })
      .def_prop_ro("block_barriers",
                   [](const PyOccupancyRecord& r) { return r.record.block_barriers; })
      .def_prop_ro("tb_per_mp", [](const PyOccupancyRecord& r) { return r.record.tb_per_mp; })
      .def_prop_ro("limited_by", [](const PyOccupancyRecord& r) { return r.record.limited_by; })
      .def_prop_ro("limiting_factors",
                   [](const PyOccupancyRecord& r) {
                     std::vector<std::string> names;
                     for (const auto n : r.record.limiting_factors()) names.emplace_back(n);
                     return names;
                   })
      .def_prop_ro("warps_per_mp", [](const PyOccupancyRecord& r) { return r.record.warps_per_mp; })
      .def_prop_ro("max_warps_per_mp",
                   [](const PyOccupancyRecord& r) { return r.record.max_warps_per_mp; })
      .def_prop_ro("occupancy", [](const PyOccupancyRecord& r) { return r.record.occupancy; })
      .def_prop_ro("block_limits",
                   [](const PyOccupancyRecord& r) {
                     const BlockLimits& l = r.record.limits;
                     const auto or_none = [](const std::optional<int>& v) {
                       return v ? nb::object(nb::int_(*v)) : nb::none();
                     };
                     nb::dict d;
                     d["barriers"] = or_none(l.barriers);
                     d["device"] = l.device;
                     d["regs"] = or_none(l.regs);
                     d["smem"] = or_none(l.smem);
                     d["warps"] = l.warps;
                     return d;
                   })
      .def_prop_ro(
          "allocated_registers_per_block",
          [](const PyOccupancyRecord& r) { return r.record.allocated_registers_per_block; })
      .def_prop_ro(
          "allocated_shared_mem_per_block",
          [](const PyOccupancyRecord& r) { return r.record.allocated_shared_mem_per_block; })
      .def_prop_ro("opted_in", [](const PyOccupancyRecord& r) { return r.record.opted_in; })
      .def_prop_ro("improvements",
                   [](const PyOccupancyRecord& r) {
                     const DeviceData& data = device_data_of(r.devdata).data;
                     nb::list list;
                     if (auto fewer = fewer_registers_for_more_blocks(data, r.record))
                       list.append(to_python(*fewer));
                     if (auto less = less_shared_memory_for_more_blocks(data, r.record))
                       list.append(to_python(*less));
                     return list;
                   })
      .def(
          "max_active_clusters",
          [](const PyOccupancyRecord& r, nb::handle cluster, bool non_portable) {
            return cluster_occupancy(topology_of(r), r.record.tb_per_mp, cluster_dims_of(cluster),
                                     non_portable)
                .max_active_clusters;
          },
          "cluster"_a, "non_portable"_a = false,
          "The clusters of `cluster` blocks (N or (x, y, z)) the whole GPU holds at once, as "
          "cuOccupancyMaxActiveClusters answers (cuda.core's name); 0 for a size the kernel "
          "may not launch. From the product's measured GPCs (`occupancy --cluster`); "
          "RequirementError where none are measured.")
      .def(
          "max_potential_cluster_size",
          [](const PyOccupancyRecord& r, bool non_portable) {
            return max_potential_cluster_size(topology_of(r), r.record.tb_per_mp, non_portable);
          },
          "non_portable"_a = false,
          "The largest cluster size with an active cluster (cuOccupancyMaxPotentialClusterSize): "
          "up to 8, or 16 on Hopper with non_portable.")
      .def(
          "cluster_occupancy",
          [](const PyOccupancyRecord& r, nb::handle cluster, bool non_portable) {
            const ClusterTopology& t = topology_of(r);
            const ClusterOccupancy c =
                cluster_occupancy(t, r.record.tb_per_mp, cluster_dims_of(cluster), non_portable);
            nb::dict d;
            d["dims"] = nb::make_tuple(c.cluster.x, c.cluster.y, c.cluster.z);
            d["max_active_clusters"] = c.max_active_clusters;
            d["max_potential_cluster_size"] =
                max_potential_cluster_size(t, r.record.tb_per_mp, non_portable);
            d["active_blocks"] = c.active_blocks;
            d["cluster_blocks_per_sm"] = c.cluster_blocks_per_sm;
            d["gpcs_used"] = c.gpcs_used;
            d["limited_by"] = std::string(c.limited_by);
            d["product"] = t.product;
            d["gpc_sms"] = t.gpc_sms;
            d["measured"] = t.measured;
            return d;
          },
          "cluster"_a, "non_portable"_a = false,
          "max_active_clusters with its parts: what limits it, the GPCs used, the product whose "
          "measured GPCs answer and where they were measured.")
      .def("to_dict",
           [](const PyOccupancyRecord& r) {
             const app::OccupancyReport report =
                 app::launch_report(device_data_of(r.devdata).data, r.record);
             return json_loads(app::json_document(app::occupancy_json(report)));
           })
      .def("__repr__", [](const PyOccupancyRecord& r) {
        char occupancy[32];
        std::snprintf(occupancy, sizeof occupancy, "%.4g", r.record.occupancy);
        return "OccupancyRecord(threads=" + std::to_string(r.record.threads) +
               ", shared_mem=" + std::to_string(r.record.shared_mem) +
               ", registers=" + std::to_string(r.record.registers) +
               ") <tb_per_mp=" + std::to_string(r.record.tb_per_mp) + ", limited_by='" +
               std::string(r.record.limited_by) +
               "', warps_per_mp=" + std::to_string(r.record.warps_per_mp) +
               ", occupancy=" + occupancy + ">";
      });
}
