// The one writer of a kernel's resources (KernelResources, binary/cubin.hpp): compile's
// kernels and their `loaded` attributes, occupancy's kernel, and each kernel of `kernels
// --json`, which streams them between its own members. Every key and how its value is
// written is in kResourceMembers, once.
#pragma once

#include <algorithm>
#include <iterator>
#include <string>
#include <string_view>

#include "cudatool/binary/cubin.hpp"
#include "json_stream.hpp"

namespace cudatool::app {

// Which of a kernel's resources a document shows.
enum class ResourceKeys {
  // name, demangled, the five function attributes, num_barriers and stack_unknown: what
  // the driver reports of a loaded kernel too (compile, occupancy).
  attributes,
  // Those and the image's own facts, code_size_bytes and the spills (kernels).
  image,
};

struct ResourceMember {
  std::string_view key;
  bool image_only;  // not among ResourceKeys::attributes
  void (*write)(JsonStream&, const KernelResources&);
};

// In sorted key order, as every object's keys are written.
inline constexpr ResourceMember kResourceMembers[] = {
    {"code_size_bytes", true,
     [](JsonStream& out, const KernelResources& r) { out.value(r.code_size_bytes); }},
    {"const_size_bytes", false,
     [](JsonStream& out, const KernelResources& r) { out.value(r.const_size_bytes); }},
    {"demangled", false, [](JsonStream& out, const KernelResources& r) { out.value(r.demangled); }},
    {"local_size_bytes", false,
     [](JsonStream& out, const KernelResources& r) { out.value(r.local_size_bytes); }},
    {"max_threads_per_block", false,
     [](JsonStream& out, const KernelResources& r) { out.value(r.max_threads_per_block); }},
    {"name", false, [](JsonStream& out, const KernelResources& r) { out.value(r.name); }},
    {"num_barriers", false,
     [](JsonStream& out, const KernelResources& r) { out.value(r.num_barriers); }},
    {"num_regs", false, [](JsonStream& out, const KernelResources& r) { out.value(r.num_regs); }},
    {"shared_size_bytes", false,
     [](JsonStream& out, const KernelResources& r) { out.value(r.shared_size_bytes); }},
    {"spill_load_bytes", true,
     [](JsonStream& out, const KernelResources& r) { out.value(r.spill_load_bytes); }},
    {"spill_store_bytes", true,
     [](JsonStream& out, const KernelResources& r) { out.value(r.spill_store_bytes); }},
    {"stack_unknown", false,
     [](JsonStream& out, const KernelResources& r) { out.value(r.stack_unknown); }},
};
static_assert(std::is_sorted(std::begin(kResourceMembers), std::end(kResourceMembers),
                             [](const ResourceMember& a, const ResourceMember& b) {
                               return a.key < b.key;
                             }));

// One of a caller's own keys in an object that holds a kernel's resources too
// (ResourceMembers), with the number of the resources' keys that sort before it, counted
// when the program is compiled: no key is compared while a document is written (a
// 45,000-kernel document has half a million of them). Made from a string literal only; a
// key that is one of the resources' does not compile.
struct MergedKey {
  consteval MergedKey(const char* key) : name(key), resources_before(0) {
    for (const ResourceMember& m : kResourceMembers) {
      if (m.key == name) throw "a key of the resources' own";
      if (m.key < name) ++resources_before;
    }
  }
  std::string_view name;
  std::size_t resources_before;
};

// A kernel's resources streamed into an open object between the caller's own members,
// every key in sorted order: each of the caller's members is preceded by the resources'
// members whose keys sort before it, and finish() writes the rest. The caller's members
// come in sorted key order.
class ResourceMembers {
 public:
  ResourceMembers(JsonStream& out, const KernelResources& resources, ResourceKeys keys)
      : out_(out), resources_(resources), image_(keys == ResourceKeys::image) {}

  template <class T>
  ResourceMembers& member(MergedKey key, const T& v) {
    this->key(key).value(v);
    return *this;
  }
  ResourceMembers& text_or_null(MergedKey key, const std::string& text) {
    up_to(key.resources_before);
    out_.text_or_null(key.name, text);
    return *this;
  }
  // The key of a member whose value the caller then writes to the stream.
  JsonStream& key(MergedKey key) {
    up_to(key.resources_before);
    return out_.key(key.name);
  }
  void finish() { up_to(std::size(kResourceMembers)); }

 private:
  void up_to(std::size_t end) {
    for (; next_ < end; ++next_) {
      const ResourceMember& m = kResourceMembers[next_];
      if (image_ || !m.image_only) {
        out_.key(m.key);
        m.write(out_, resources_);
      }
    }
  }

  JsonStream& out_;
  const KernelResources& resources_;
  bool image_;
  std::size_t next_ = 0;  // kResourceMembers written (or passed over) so far
};

// One member's value as a JsonObject holds it (resources_object).
struct ResourceValue {
  const ResourceMember& member;
  const KernelResources& resources;
};
inline void write_json(JsonStream& out, const ResourceValue& v) {
  v.member.write(out, v.resources);
}

// The resources as an object of their own (ResourceKeys::attributes), for documents made of
// parts: compile's kernels and their `loaded`, occupancy's kernel.
inline JsonObject resources_object(const KernelResources& resources) {
  JsonObject object;
  for (const ResourceMember& m : kResourceMembers)
    if (!m.image_only) object.set(m.key, ResourceValue{m, resources});
  return object;
}

}  // namespace cudatool::app
