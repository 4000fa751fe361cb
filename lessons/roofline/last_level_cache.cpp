#include "lessons/roofline/last_level_cache.h"

#include <fstream>
#include <string>

#include "engine/units.h"

namespace dlsys {

namespace {

std::string read_word(const std::string& path) {
  std::ifstream in(path);
  std::string word;
  in >> word;
  return word;
}

}  // namespace

double last_level_cache_bytes() {
  int best_level = 0;
  double best_bytes = 0;
  for (int index = 0; index < 16; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    const std::string type = read_word(dir + "type"), level = read_word(dir + "level"), size = read_word(dir + "size");
    if (type.empty() || type == "Instruction" || level.empty() || size.empty()) continue;
    // sysfs writes "266240K": kibibytes with a bare K.
    const auto bytes = parse_byte_size(size.back() == 'K' ? size.substr(0, size.size() - 1) + "KiB" : size);
    const int lvl = std::atoi(level.c_str());
    if (bytes && lvl >= best_level) best_level = lvl, best_bytes = double(*bytes);
  }
  return best_bytes;
}

}  // namespace dlsys
