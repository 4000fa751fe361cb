// cuda_status() and the CUDA library behind it. A build without CUDA answers at once; a build with it opens
// libdlsys_cuda.so (engine/cuda_plugin.h) on first use and asks it whether a device answers.
#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "engine/cuda_plugin.h"

namespace dlsys {

namespace {

struct LoadedPlugin {
  const CudaPlugin* plugin = nullptr;
  CudaStatus status;
};

#if DLSYS_HAVE_CUDA

// Where the library may be: beside the program (installed, or build/app/dlsys-lab), in ../lib (an installed tree),
// and in ../app (the tests and benchmarks of a build folder, beside app/).
std::vector<std::filesystem::path> plugin_candidates() {
  if (const char* path = std::getenv(kCudaPluginPathVariable); path && *path) return {path};
  std::error_code error;
  const std::filesystem::path program = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return {kCudaPluginFileName};  // the loader's own search (LD_LIBRARY_PATH, the cache)
  const std::filesystem::path dir = program.parent_path();
  return {dir / kCudaPluginFileName, dir / ".." / "lib" / kCudaPluginFileName,
          dir / ".." / "app" / kCudaPluginFileName};
}

// The first candidate that exists, opened; or null with the reason in `why`.
void* open_plugin(std::string& why) {
  const std::vector<std::filesystem::path> candidates = plugin_candidates();
  for (const std::filesystem::path& candidate : candidates) {
    std::error_code error;
    if (candidates.size() > 1 && !std::filesystem::exists(candidate, error)) continue;
    dlerror();
    if (void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
    const char* message = dlerror();
    why = fmt::format("the CUDA backend's library could not be loaded: {}", message ? message : candidate.string());
    return nullptr;
  }
  std::string looked;
  for (const std::filesystem::path& candidate : candidates) looked += (looked.empty() ? "" : ", ") + candidate.string();
  why = fmt::format("the CUDA backend's library {} was not found (looked for {})", kCudaPluginFileName, looked);
  return nullptr;
}

LoadedPlugin load() {
  LoadedPlugin loaded;
  loaded.status.compiled = true;
  auto refuse = [&](std::string reason) {
    loaded.status.reason = std::move(reason);
    loaded.status.plain_reason = "the CUDA backend's library could not be loaded";
    return loaded;
  };
  std::string why;
  void* handle = open_plugin(why);
  if (!handle) return refuse(why);
  using Entry = const CudaPlugin* (*)();
  const auto entry = reinterpret_cast<Entry>(dlsym(handle, "dlsys_cuda_plugin"));
  if (!entry) return refuse(fmt::format("{} has no dlsys_cuda_plugin entry point", kCudaPluginFileName));
  const CudaPlugin* plugin = entry();
  if (!plugin || plugin->interface_version != kCudaPluginInterfaceVersion || !plugin->probe_status || !plugin->kernels)
    return refuse(fmt::format("{} was built from another version of dlsys-lab (interface {}, this program {})",
                              kCudaPluginFileName, plugin ? plugin->interface_version : 0,
                              kCudaPluginInterfaceVersion));
  loaded.status = plugin->probe_status();
  loaded.plugin = plugin;
  return loaded;
}

#else

LoadedPlugin load() {
  // Two causes lead here; naming the right one saves looking for a missing nvcc that was never asked for.
#if DLSYS_CUDA_TURNED_OFF
  constexpr const char* reason = "this build has no CUDA backend (configured with -DDLSYS_WITH_CUDA=OFF)";
#else
  constexpr const char* reason = "this build has no CUDA backend (nvcc was not found at configure time)";
#endif
  LoadedPlugin loaded;
  loaded.status = CudaStatus{.compiled = false,
                             .available = false,
                             .device_count = 0,
                             .reason = reason,
                             .plain_reason = "this build has no CUDA backend"};
  return loaded;
}

#endif

const LoadedPlugin& loaded_plugin() {
  static const LoadedPlugin loaded = load();  // once per process; a second thread waits for the first
  return loaded;
}

}  // namespace

const CudaPlugin* cuda_plugin() { return loaded_plugin().plugin; }

const CudaStatus& cuda_status() { return loaded_plugin().status; }

}  // namespace dlsys
