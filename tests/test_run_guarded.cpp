#include <doctest/doctest.h>

#include <new>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "app/cli/run_guarded.h"
#include "engine/errors.h"

using namespace dlsys;

namespace {

struct Guarded {
  int code = 0;
  std::string err;
};

Guarded guarded(const std::function<int()>& body) {
  std::ostringstream err;
  const int code = run_guarded(body, err, "running lesson 'matmul'");
  return {code, err.str()};
}

}  // namespace

TEST_CASE("run_guarded passes the body's exit code through and prints nothing when nothing is thrown") {
  for (int code : {0, kExitBadInput, 7}) {
    const Guarded g = guarded([&] { return code; });
    CHECK(g.code == code);
    CHECK(g.err.empty());
  }
}

TEST_CASE("run_guarded keeps the foreseen failures' exit codes and messages") {
  const Guarded bad = guarded([]() -> int { throw BadInput("parameter 'm': value '0' is not allowed"); });
  CHECK(bad.code == kExitBadInput);
  CHECK(bad.err == "dlsys-lab: parameter 'm': value '0' is not allowed\n");

  const Guarded failed = guarded([]() -> int { throw RunFailure("out of memory"); });
  CHECK(failed.code == kExitRunFailure);
  CHECK(failed.err == "dlsys-lab: run failed: out of memory\n");

  const Guarded cancelled = guarded([]() -> int { throw Cancelled(); });
  CHECK(cancelled.code == kExitRunFailure);
  CHECK(cancelled.err == "dlsys-lab: cancelled\n");
}

TEST_CASE("run_guarded turns any other std::exception into exit 3 with what the command was doing") {
  const Guarded runtime = guarded([]() -> int { throw std::runtime_error("boom"); });
  CHECK(runtime.code == kExitRunFailure);
  CHECK(runtime.err == "dlsys-lab: internal error while running lesson 'matmul': boom\n");

  const Guarded alloc = guarded([]() -> int { throw std::bad_alloc(); });
  CHECK(alloc.code == kExitRunFailure);
  CHECK(alloc.err ==
        std::string("dlsys-lab: internal error while running lesson 'matmul': ") + std::bad_alloc().what() + "\n");

  // Exceptions thrown by the libraries themselves, not constructed by hand.
  const Guarded out_of_range = guarded([] { return std::vector<int>{}.at(3); });
  CHECK(out_of_range.code == kExitRunFailure);
  CHECK(out_of_range.err.starts_with("dlsys-lab: internal error while running lesson 'matmul': "));

  const Guarded json = guarded([] { return nlohmann::json::parse("{\"m\": ").get<int>(); });
  CHECK(json.code == kExitRunFailure);
  INFO(json.err);
  CHECK(json.err.find("parse error") != std::string::npos);

  const Guarded system =
      guarded([]() -> int { throw std::system_error(std::make_error_code(std::errc::no_space_on_device)); });
  CHECK(system.code == kExitRunFailure);
  CHECK(system.err.find("No space left on device") != std::string::npos);
}

TEST_CASE("run_guarded turns an exception that is not a std::exception into exit 3 too") {
  const Guarded g = guarded([]() -> int { throw 42; });
  CHECK(g.code == kExitRunFailure);
  CHECK(
      g.err ==
      "dlsys-lab: internal error while running lesson 'matmul': an exception of unknown type (not a std::exception)\n");
}
