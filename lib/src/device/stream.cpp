#include "device/stream.hpp"

#include <exception>
#include <utility>

#include "device/current_context.hpp"
#include "driver/driver_api.hpp"

namespace cudatool::detail {

Stream::Stream(CUcontext context) : context_(context) {
  CurrentContext current(context_);
  CUDATOOL_CU(cuStreamCreate, &stream_, static_cast<unsigned>(CU_STREAM_NON_BLOCKING));
}

Stream::Stream(Stream&& other) noexcept
    : context_(std::exchange(other.context_, nullptr)),
      stream_(std::exchange(other.stream_, nullptr)) {}

Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    destroy();
    context_ = std::exchange(other.context_, nullptr);
    stream_ = std::exchange(other.stream_, nullptr);
  }
  return *this;
}

Stream::~Stream() {
  destroy();
}

void Stream::synchronize() const {
  CUDATOOL_CU(cuStreamSynchronize, stream_);
}

void Stream::destroy() noexcept {
  if (stream_ == nullptr) return;
  // A failure here has nowhere to go (destructors); the driver reclaims at exit anyway.
  try {
    CurrentContext current(context_);
    driver::api().cuStreamDestroy(stream_);
  } catch (const std::exception&) {
  }
  stream_ = nullptr;
}

Event::Event() {
  CUDATOOL_CU(cuEventCreate, &event_, static_cast<unsigned>(CU_EVENT_DEFAULT));
}

Event::Event(Event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    if (event_) driver::api().cuEventDestroy(event_);
    event_ = std::exchange(other.event_, nullptr);
  }
  return *this;
}

Event::~Event() {
  if (event_) driver::api().cuEventDestroy(event_);
}

void Event::record(const Stream& stream) const {
  CUDATOOL_CU(cuEventRecord, event_, stream.get());
}

float Event::elapsed_ms_since(const Event& start) const {
  float ms = 0;
  CUDATOOL_CU(cuEventElapsedTime, &ms, start.event_, event_);
  return ms;
}

}  // namespace cudatool::detail
