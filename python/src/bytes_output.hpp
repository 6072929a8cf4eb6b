// A stream buffer that is a Python bytes object, for the documents that are streamed
// (kernels --json): Python gets the bytes the renderer wrote, never a copy.
#pragma once

#include <nanobind/nanobind.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <streambuf>
#include <string>

#include "cudatool/base/error.hpp"

namespace cudatool::python {

namespace nb = nanobind;

// The output of a large document (kernels): the bytes object Python gets, written in place
// and grown geometrically (realloc, which moves a large block by remapping it, not
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

}  // namespace cudatool::python
