// dlsys-lab: the GUI when called without a subcommand, the headless CLI otherwise.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "app/cli/cli.h"
#include "app/cli/compare_command.h"
#include "app/cli/run_guarded.h"
#include "app/cli/shot_command.h"
#if DLSYS_HAVE_GUI
#include "app/gui/gui_main.h"
#include "app/gui/shot_render.h"
#endif

namespace {

// Ends the process once everything it wrote is flushed, without running the libraries' exit handlers: OpenBLAS's
// handler joins its pool threads, and a pool thread that could not get its buffer (address space or memory
// exhausted) spins forever, so a run that had already said "ran out of memory" would never exit. Every file the lab
// writes is closed and checked before this point.
[[noreturn]] void exit_now(int code) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(code);
}

int run(const std::vector<std::string>& args) {
#if DLSYS_HAVE_GUI
  // The CLI library does not link the GUI: `shot` reaches the renderer through this registration.
  dlsys::set_shot_renderer(dlsys::render_shot);
  dlsys::set_compare_renderer(dlsys::render_compare);
#endif
  bool wants_gui = false;
  dlsys::GuiRequest gui;
  const int code = dlsys::run_cli(args, std::cout, std::cerr, wants_gui, gui);
  if (!wants_gui) return code;
#if DLSYS_HAVE_GUI
  // An exception out of the window's loop would end in std::terminate with no reason given; this says what happened.
  return dlsys::run_guarded([&] { return dlsys::run_gui(gui); }, std::cerr, "running the GUI");
#else
  std::cerr << "dlsys-lab: this build has no GUI; use the headless commands: list, info, run, export\n";
  return 2;
#endif
}

}  // namespace

int main(int argc, char** argv) { exit_now(run(std::vector<std::string>(argv + 1, argv + argc))); }
