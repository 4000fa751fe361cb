#include "engine/assets.h"

#include <stdexcept>

namespace dlsys {

std::string_view asset(std::string_view name) {
  for (const auto& a : embedded_assets())
    if (a.name == name) return a.bytes;
  throw std::logic_error("asset not embedded: " + std::string(name));
}

}  // namespace dlsys
