#pragma once
// Fonts are rasterised at the size they are shown (presentation scale x export scale), never bitmap-scaled.

namespace dlsys::gui {

// Rebuilds the atlas: DejaVu Sans / Bold / Mono at `ui_scale` x base size, rasterised `raster_scale` times larger
// for high-resolution exports (FontGlobalScale brings the layout back). Needs a current GL context and an
// initialised OpenGL3 backend; recreates the font texture.
void rebuild_fonts(float ui_scale, float raster_scale);
// Whether DejaVu was found (otherwise ProggyClean, ImGui's built-in bitmap font, is used).
bool have_system_fonts();

}  // namespace dlsys::gui
