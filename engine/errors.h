#pragma once
// The three ways a command ends badly, each with its own exit code (DESIGN.md, CLI contract).
#include <stdexcept>
#include <string>

namespace dlsys {

// The user asked for something that is not allowed: exit code 2, message names the value and what is allowed.
struct BadInput : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The request was valid but running it failed (out of memory, device error): exit code 3.
struct RunFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The user pressed Cancel; not an error, the run simply stops.
struct Cancelled : std::runtime_error {
  Cancelled() : std::runtime_error("cancelled") {}
};

inline constexpr int kExitBadInput = 2;
inline constexpr int kExitRunFailure = 3;

}  // namespace dlsys
