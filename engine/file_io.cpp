#include "engine/file_io.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "engine/errors.h"

namespace dlsys {

void write_file_checked(const std::string& path, const std::string& bytes) {
  auto fail = [&](int error) { throw RunFailure(fmt::format("cannot write '{}': {}", path, std::strerror(error))); };
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) fail(errno);
  const std::size_t written = std::fwrite(bytes.data(), 1, bytes.size(), file);
  const int write_error = written == bytes.size() ? 0 : errno;
  // fclose flushes the buffer: a full disk often shows only here.
  const int close_error = std::fclose(file) == 0 ? 0 : errno;
  if (write_error != 0 || close_error != 0) {
    std::remove(path.c_str());  // a partial file must not pass for the export
    fail(write_error != 0 ? write_error : close_error);
  }
}

}  // namespace dlsys
