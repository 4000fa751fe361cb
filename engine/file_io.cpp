#include "engine/file_io.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ostream>

#include "engine/errors.h"

namespace dlsys {

namespace {

std::string kind_of_special_file(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder, not a file";
  if (S_ISFIFO(mode)) return "a pipe (FIFO), not a regular file";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device, not a regular file";
  if (S_ISSOCK(mode)) return "a socket, not a regular file";
  return "not a regular file";
}

[[noreturn]] void write_failed(const std::string& path, int error, const std::string& after = "") {
  throw RunFailure(fmt::format("cannot write '{}': {}{}", path, std::strerror(error), after));
}

// Writes all of `bytes` to `fd`, retrying short writes; returns 0 or the errno of the failure.
int write_all(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

// Writes through an open descriptor and closes it; close reports delayed errors on some file systems (NFS).
int write_and_close(int fd, const std::string& bytes) {
  const int write_error = write_all(fd, bytes);
  const int close_error = ::close(fd) == 0 ? 0 : errno;
  return write_error != 0 ? write_error : close_error;
}

// lstat: a symbolic link is written through rather than replaced by the rename.
bool is_special_file(const std::string& path) {
  struct stat info {};
  return ::lstat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode);
}

std::string staging_name(const std::string& path) {
  static std::atomic<unsigned> counter{0};
  return fmt::format("{}.partial-{}-{}", path, ::getpid(), counter.fetch_add(1));
}

struct Staged {
  std::string temp;
  std::string path;
};

void remove_staged(const std::vector<Staged>& staged) {
  for (const auto& s : staged) ::unlink(s.temp.c_str());
}

}  // namespace

std::string read_input_file(const std::string& path, const std::string& what, std::int64_t max_bytes) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer that may never come.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    throw BadInput(fmt::format("{}: cannot open '{}': {}", what, path, std::strerror(error)));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    const int error = errno;
    throw BadInput(fmt::format("{}: cannot read '{}': {}", what, path, std::strerror(error)));
  }
  if (!S_ISREG(info.st_mode))
    throw BadInput(fmt::format("{}: '{}' is {}; allowed: a regular file of at most {} MiB", what, path,
                               kind_of_special_file(info.st_mode), max_bytes >> 20));
  if (info.st_size > max_bytes)
    throw BadInput(fmt::format("{}: '{}' is {} bytes; allowed: a regular file of at most {} bytes ({} MiB)", what, path,
                               static_cast<std::int64_t>(info.st_size), max_bytes, max_bytes >> 20));
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  std::string text;
  // The file can grow between fstat and read: read one byte past the cap to notice.
  text.resize(static_cast<std::size_t>(info.st_size) + 1);
  std::size_t got = 0;
  for (;;) {
    if (got == text.size()) {
      if (static_cast<std::int64_t>(got) > max_bytes)
        throw BadInput(fmt::format("{}: '{}' grew past {} bytes while being read; allowed: at most {} MiB", what, path,
                                   max_bytes, max_bytes >> 20));
      text.resize(std::min<std::size_t>(text.size() * 2 + 4096, static_cast<std::size_t>(max_bytes) + 1));
    }
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      throw BadInput(fmt::format("{}: cannot read '{}': {}", what, path, std::strerror(error)));
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  text.resize(got);
  return text;
}

void write_files_checked(const std::vector<std::pair<std::string, std::string>>& files) {
  const std::string none_written = files.size() > 1 ? " (none of the requested files was written)" : "";
  std::vector<Staged> staged;
  std::vector<const std::pair<std::string, std::string>*> direct;
  for (const auto& file : files) {
    if (file.first.empty()) throw BadInput("an output file name is empty; allowed: a path, or - for stdout");
    // A device, FIFO or link must not be replaced by a rename (/dev/null belongs to the system).
    if (is_special_file(file.first)) {
      direct.push_back(&file);
      continue;
    }
    const std::string temp = staging_name(file.first);
    // 0666 and the kernel applies the umask, as for any file the user creates.
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
      const int error = errno;
      remove_staged(staged);
      write_failed(file.first, error, none_written);
    }
    staged.push_back({temp, file.first});
    if (const int error = write_and_close(fd, file.second); error != 0) {
      remove_staged(staged);
      write_failed(file.first, error, none_written);
    }
  }
  for (const auto* file : direct) {
    const int fd = ::open(file->first.c_str(), O_WRONLY | O_CLOEXEC);
    const int error = fd < 0 ? errno : write_and_close(fd, file->second);
    if (error != 0) {
      remove_staged(staged);
      write_failed(file->first, error, none_written);
    }
  }
  for (std::size_t i = 0; i < staged.size(); ++i) {
    if (::rename(staged[i].temp.c_str(), staged[i].path.c_str()) != 0) {
      const int error = errno;
      remove_staged({staged.begin() + static_cast<std::ptrdiff_t>(i), staged.end()});
      write_failed(staged[i].path, error);
    }
  }
}

void write_file_checked(const std::string& path, const std::string& bytes) { write_files_checked({{path, bytes}}); }

void check_stream_written(std::ostream& stream, const std::string& name) {
  errno = 0;
  stream.flush();
  if (!stream) {
    const int error = errno;
    throw RunFailure(fmt::format("cannot write to {}: {}", name,
                                 error != 0 ? std::strerror(error) : "the stream reported a failure"));
  }
}

}  // namespace dlsys
