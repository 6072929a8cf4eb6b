// The one writer of a kernel's resources (apps/cudatool/kernel_resources_json.hpp): the object
// compile and occupancy show, and the members `kernels --json` streams between its own, the
// keys sorted as print_json writes them, and the same text as nlohmann's for the same values.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "kernel_resources_json.hpp"

namespace cudatool::app {
namespace {

KernelResources sample() {
  KernelResources r;
  r.name = "_Z4saxpyifPKfPf";
  r.demangled = "saxpy(int, float, const float*, float*)";
  r.num_regs = 40;
  r.shared_size_bytes = 1024;
  r.local_size_bytes = 16;
  r.const_size_bytes = 384;
  r.max_threads_per_block = 1024;
  r.num_barriers = 1;
  r.stack_unknown = true;
  r.code_size_bytes = 2048;
  r.spill_store_bytes = 8;  // spill_load_bytes unknown: null
  return r;
}

nlohmann::json attributes_of(const KernelResources& r) {
  return {{"name", r.name},
          {"demangled", r.demangled},
          {"num_regs", r.num_regs},
          {"shared_size_bytes", r.shared_size_bytes},
          {"local_size_bytes", r.local_size_bytes},
          {"const_size_bytes", r.const_size_bytes},
          {"max_threads_per_block", r.max_threads_per_block},
          {"num_barriers", r.num_barriers},
          {"stack_unknown", r.stack_unknown}};
}

TEST(KernelResourcesJson, TheObjectHoldsTheAttributesOnlyAsNlohmannWritesThem) {
  const KernelResources r = sample();
  EXPECT_EQ(resources_object(r).text(), attributes_of(r).dump(2));
}

TEST(KernelResourcesJson, StreamedMembersFallBetweenTheCallersInSortedOrder) {
  const KernelResources r = sample();
  std::string text;
  JsonStream out(text);
  out.begin_object();
  ResourceMembers members(out, r, ResourceKeys::image);
  // Keys before the first resource's, between two of them, and after the last.
  members.member("arch", "sm_90").member("file", "a.so").member("occupancy", 0.5);
  members.text_or_null("relocatable_note", "").member("zz_last", 7).finish();
  out.end_object();

  nlohmann::json expected = attributes_of(r);
  expected["code_size_bytes"] = r.code_size_bytes;
  expected["spill_store_bytes"] = 8;
  expected["spill_load_bytes"] = nullptr;
  expected["arch"] = "sm_90";
  expected["file"] = "a.so";
  expected["occupancy"] = 0.5;
  expected["relocatable_note"] = nullptr;
  expected["zz_last"] = 7;
  EXPECT_EQ(text, expected.dump(2));  // nlohmann's objects are sorted: the order is checked too
}

TEST(KernelResourcesJson, FinishAloneWritesEveryMemberOfTheSet) {
  const KernelResources r = sample();
  std::string text;
  JsonStream out(text);
  out.begin_object();
  ResourceMembers(out, r, ResourceKeys::attributes).finish();
  out.end_object();
  EXPECT_EQ(text, resources_object(r).text());
}

}  // namespace
}  // namespace cudatool::app
