#include "lessons/roofline/last_level_cache.h"

#include <algorithm>
#include <fstream>
#include <sstream>
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

// "0-1,4,6-7" -> 5: the CPUs a list names.
int count_cpu_list(const std::string& list) {
  int count = 0;
  std::stringstream in(list);
  std::string range;
  while (std::getline(in, range, ',')) {
    const auto dash = range.find('-');
    if (range.empty()) continue;
    count += dash == std::string::npos ? 1 : std::atoi(range.c_str() + dash + 1) - std::atoi(range.c_str()) + 1;
  }
  return std::max(count, 1);
}

}  // namespace

std::vector<CpuCache> cpu_caches() {
  std::vector<CpuCache> caches;
  for (int index = 0; index < 16; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    const std::string type = read_word(dir + "type"), level = read_word(dir + "level"), size = read_word(dir + "size");
    if (type.empty() || type == "Instruction" || level.empty() || size.empty()) continue;
    // sysfs writes "266240K": kibibytes with a bare K.
    const auto bytes = parse_byte_size(size.back() == 'K' ? size.substr(0, size.size() - 1) + "KiB" : size);
    if (!bytes) continue;
    caches.push_back(
        {std::atoi(level.c_str()), type, double(*bytes), count_cpu_list(read_word(dir + "shared_cpu_list"))});
  }
  std::stable_sort(caches.begin(), caches.end(),
                   [](const CpuCache& a, const CpuCache& b) { return a.level < b.level; });
  return caches;
}

double last_level_cache_bytes() {
  const std::vector<CpuCache> caches = cpu_caches();
  return caches.empty() ? 0 : caches.back().size_bytes;
}

}  // namespace dlsys
