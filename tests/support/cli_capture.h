#pragma once
// Drives the command line in-process and keeps what it printed, for tests of exit codes and messages.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "app/cli/cli.h"

namespace dlsys::testing {

struct CliOutcome {
  int code = 0;
  std::string out;
  std::string err;
};

inline CliOutcome run_cli_captured(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  bool wants_gui = false;
  GuiRequest gui;
  const int code = run_cli(args, out, err, wants_gui, gui);
  return {code, out.str(), err.str()};
}

// `run LESSON --backend cpu --set s...`, with the JSON on stdout unless `json_to_stdout` is false. Pinned to the CPU:
// these tests check the CPU implementations, also on machines where auto would pick CUDA.
inline CliOutcome run_lesson_captured(const std::string& lesson, const std::vector<std::string>& sets,
                                      bool json_to_stdout = true) {
  std::vector<std::string> args{"run", lesson, "--backend", "cpu"};
  for (const auto& set : sets) args.insert(args.end(), {"--set", set});
  if (json_to_stdout) args.insert(args.end(), {"--json", "-"});
  return run_cli_captured(args);
}

// A refusal of bad input: exit 2, and the message contains `expected` (the parameter, the value, what is allowed).
inline void check_refused(const CliOutcome& outcome, const std::string& expected) {
  INFO(outcome.err);
  CHECK(outcome.code == 2);
  CHECK(outcome.err.find(expected) != std::string::npos);
}

// check(sets, expected): `run LESSON` with `sets` is refused as check_refused says (the JSON to stdout unless
// `json_to_stdout` is false).
inline auto refusal_check(std::string lesson, bool json_to_stdout = true) {
  return
      [lesson = std::move(lesson), json_to_stdout](const std::vector<std::string>& sets, const std::string& expected) {
        check_refused(run_lesson_captured(lesson, sets, json_to_stdout), expected);
      };
}

// A test's small configuration `base` with the settings one case adds.
inline std::vector<std::string> with_sets(std::vector<std::string> base, const std::vector<std::string>& more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

// `run LESSON --backend cuda --quick --json -`, required to exit 0 and to have run on CUDA: its JSON.
inline nlohmann::json run_quick_on_cuda(const std::string& lesson, const std::vector<std::string>& more = {}) {
  std::vector<std::string> args{"run", lesson, "--backend", "cuda", "--quick", "--json", "-"};
  args.insert(args.end(), more.begin(), more.end());
  const CliOutcome r = run_cli_captured(args);
  INFO(r.err);
  REQUIRE(r.code == 0);
  nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j["backend"]["kind"] == "cuda");
  return j;
}

// Whether one of a run's backend notes contains `words`.
inline bool notes_mention(const nlohmann::json& run, const std::string& words) {
  for (const auto& note : run["backend"]["notes"])
    if (note.get<std::string>().find(words) != std::string::npos) return true;
  return false;
}

}  // namespace dlsys::testing
