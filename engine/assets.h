#pragma once
// Files under assets/ are compiled into the binary (cmake/WriteAssets.cmake), so nothing needs installing.
#include <span>
#include <string>
#include <string_view>

namespace dlsys {

struct EmbeddedAsset {
  std::string_view name;  // path relative to assets/, e.g. "lessons/matmul.md"
  std::string_view bytes;
};

std::span<const EmbeddedAsset> embedded_assets();
// The asset's bytes; throws std::logic_error when the name is unknown (a build mistake, not user input).
std::string_view asset(std::string_view name);

}  // namespace dlsys
