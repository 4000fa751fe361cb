// What the measured step says about a sweep made on a GPU, from synthetic points (no GPU needed): the ceiling is one
// probe and is named so, and a flat sweep is called latency-bound with the reason; CPU ranks keep their wording.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "lessons/allreduce/allreduce_measured.h"

using namespace dlsys;
using namespace dlsys::allreduce;

namespace {

SizePoint point(double bytes, double us, double ceiling_gbps) {
  SizePoint p;
  p.bytes = bytes;
  p.time = {us, us * 0.95, us * 1.05, 5, "cuda_event"};
  p.ceiling_gbps = ceiling_gbps;
  return p;
}

// Sizes 1 KiB .. 16 MiB; `us_at(bytes)` the time per call.
template <typename F>
RunPoints sweep(int hardware_threads, F us_at) {
  RunPoints p;
  p.n_ranks = 4;
  p.repeats = 5;
  p.hardware_threads = hardware_threads;
  for (double b = 1024; b <= 16.0 * 1024 * 1024; b *= 2) p.sweep.push_back(point(b, us_at(b), 1369.0));
  p.chosen = p.sweep.back();
  return p;
}

const Series* find(const std::vector<Series>& all, const std::string& id) {
  for (const Series& s : all)
    if (s.id == id) return &s;
  return nullptr;
}

bool has_caveat(const AllreduceMeasured& m, const std::string& start) {
  for (const std::string& c : m.caveats)
    if (c.rfind(start, 0) == 0) return true;
  return false;
}

}  // namespace

TEST_CASE("a flat sweep on a GPU is called latency-bound, and its ceiling one probe for every size") {
  const RunSummary s = summarize_run(sweep(0, [](double b) { return 190.0 + b / 1e6; }));
  REQUIRE(find(s.series, "copy_ceiling") != nullptr);
  CHECK(find(s.series, "copy_ceiling")->name == "copy ceiling (one probe at S, all sizes)");
  CHECK(has_caveat(s.measured, "latency-bound: every size from 1 KiB to 16 MiB takes"));
}

TEST_CASE("a GPU sweep whose time grows with the bytes is not called latency-bound") {
  const RunSummary s = summarize_run(sweep(0, [](double b) { return 20.0 + b / 1e3; }));
  CHECK_FALSE(has_caveat(s.measured, "latency-bound"));
}

TEST_CASE("CPU ranks keep a ceiling measured at each size and no GPU sentence") {
  const RunSummary s = summarize_run(sweep(2, [](double b) { return 190.0 + b / 1e6; }));
  REQUIRE(find(s.series, "copy_ceiling") != nullptr);
  CHECK(find(s.series, "copy_ceiling")->name == "copy ceiling (measured at each size)");
  CHECK_FALSE(has_caveat(s.measured, "latency-bound"));
}
