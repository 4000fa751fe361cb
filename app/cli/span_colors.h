#pragma once
// The palette moved to app/export/ (shared by the CLI and the GUI, no GUI code); app/gui/timeline.cpp still names
// this path until its own rewrite lands, then this file goes.
#include "app/export/span_colors.h"
