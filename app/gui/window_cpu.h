#pragma once
// CPU time the window itself spends (the main thread, which builds frames, and Mesa's software-rasteriser threads,
// which draw them), apart from the threads a run measures on: a run started from the window reports it, so the
// screen and the JSON can say how much the lab's own drawing took from the measurement.

namespace dlsys::gui {

// Seconds of CPU time the window's threads have used since the process started (Linux /proc; 0 elsewhere).
double window_cpu_seconds();

}  // namespace dlsys::gui
