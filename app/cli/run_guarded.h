#pragma once
// The one place where an exception becomes an exit code and a message, for every command and for the GUI: the CLI
// contract promises 2 or 3 with a reason, never std::terminate.
#include <functional>
#include <iosfwd>
#include <string_view>

namespace dlsys {

// Returns what `body` returns. When it throws: BadInput -> kExitBadInput; RunFailure and Cancelled ->
// kExitRunFailure; anything else -> kExitRunFailure with "dlsys-lab: internal error while <what>: <reason>" on `err`.
// `what` names what the command was doing, e.g. "running lesson 'matmul'".
int run_guarded(const std::function<int()>& body, std::ostream& err, std::string_view what);

}  // namespace dlsys
