#pragma once
// The machine's ceilings (peak FLOP/s, copy bandwidth) as the best ever measured here. A probe that runs while other
// programs use the cores comes out low (185, 53 and 33 GFLOP/s were seen in three sessions on one laptop); the best
// value seen is what the hardware can do, so each probe is kept in $XDG_CONFIG_HOME/dlsys-lab/ceilings.json
// (~/.config/dlsys-lab/) under a key naming the machine, and the best is used.
#include <string>

namespace dlsys {

struct BestCeiling {
  double best = 0;      // max(measured now, every earlier probe under this key)
  double measured = 0;  // this session's probe
};

// Records `measured` under `key` and returns the best seen. Never fails: without a writable config folder the
// measured value is the best there is.
BestCeiling best_ceiling(const std::string& key, double measured);

// $XDG_CONFIG_HOME/dlsys-lab (or ~/.config/dlsys-lab), created if missing.
std::string user_config_dir();

}  // namespace dlsys
