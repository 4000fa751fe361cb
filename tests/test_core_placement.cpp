#include <doctest/doctest.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "engine/core_placement.h"

using dlsys::split_cores_for_communication;

TEST_CASE("a core is kept for communication only when the computing threads would take every core") {
  SUBCASE("two ranks on two cores: the last core communicates, the first computes") {
    const auto split = split_cores_for_communication(2, {0, 1});
    CHECK(split.set_aside);
    CHECK(split.compute == std::vector<int>{0});
    CHECK(split.communication == std::vector<int>{1});
  }
  SUBCASE("four ranks on cores 2, 5 and 7 (a narrowed mask)") {
    const auto split = split_cores_for_communication(4, {2, 5, 7});
    CHECK(split.set_aside);
    CHECK(split.compute == std::vector<int>{2, 5});
    CHECK(split.communication == std::vector<int>{7});
  }
  SUBCASE("a core to spare: every thread may run anywhere") {
    const auto split = split_cores_for_communication(2, {0, 1, 2});
    CHECK_FALSE(split.set_aside);
    CHECK(split.compute.empty());
    CHECK(split.communication.empty());
  }
  SUBCASE("one core, or an unreadable mask: nothing to split") {
    CHECK_FALSE(split_cores_for_communication(2, {0}).set_aside);
    CHECK_FALSE(split_cores_for_communication(2, {}).set_aside);
  }
}

TEST_CASE("the cores this process may use are listed in increasing order and a thread can be kept on one of them") {
  const std::vector<int> cores = dlsys::allowed_cores();
  REQUIRE_FALSE(cores.empty());
  CHECK(std::is_sorted(cores.begin(), cores.end()));
  CHECK_FALSE(dlsys::keep_current_thread_on({}));
  std::thread([&] {
    CHECK(dlsys::keep_current_thread_on({cores.front()}));
    CHECK(dlsys::allowed_cores() == std::vector<int>{cores.front()});
  }).join();
}
