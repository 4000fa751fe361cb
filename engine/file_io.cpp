#include "engine/file_io.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <ostream>

#include "engine/errors.h"
#include "engine/json_io.h"

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
  throw RunFailure(fmt::format("cannot write '{}': {}{}", path_for_message(path), std::strerror(error), after));
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

// lstat: true for a device, a FIFO or a socket, which are written in place; false for a regular file or none.
bool is_special_file(const std::string& path) {
  struct stat info {};
  return ::lstat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode);
}

// Stage beside the file the name resolves to: a rename over a symbolic link would replace the link itself.
std::string staging_name(const std::string& path) {
  static std::atomic<unsigned> counter{0};
  return fmt::format("{}.partial-{}-{}", path, ::getpid(), counter.fetch_add(1));
}

// /proc, /sys and their kind look like regular files (size 0) but a read can block forever (/proc/kmsg) or never end.
// Asked of the open file, so a bind mount or a link elsewhere is caught too.
const char* kernel_file_system(int fd) {
  struct statfs fs {};
  if (::fstatfs(fd, &fs) != 0) return nullptr;
  switch (static_cast<unsigned long>(fs.f_type)) {
    case PROC_SUPER_MAGIC:
      return "/proc (procfs)";
    case SYSFS_MAGIC:
      return "/sys (sysfs)";
    case DEBUGFS_MAGIC:
      return "debugfs";
    case TRACEFS_MAGIC:
      return "tracefs";
    case SECURITYFS_MAGIC:
      return "securityfs";
    default:
      return nullptr;
  }
}

struct Staged {
  std::string temp;
  std::string path;
};

void remove_staged(const std::vector<Staged>& staged) {
  for (const auto& s : staged) ::unlink(s.temp.c_str());
}

}  // namespace

std::string path_for_message(const std::string& path) { return clip_for_message(path, 200); }

std::string resolve_output_path(const std::string& path) {
  // Linux follows at most 40 links in one lookup; a longer chain (or a loop) fails the open with ELOOP later.
  constexpr int kMaxLinks = 40;
  std::string resolved = path;
  for (int hop = 0; hop < kMaxLinks; ++hop) {
    struct stat info {};
    if (::lstat(resolved.c_str(), &info) != 0 || !S_ISLNK(info.st_mode)) return resolved;
    std::string target(static_cast<std::size_t>(info.st_size > 0 ? info.st_size : 4096) + 1, '\0');
    const ssize_t n = ::readlink(resolved.c_str(), target.data(), target.size());
    if (n < 0 || static_cast<std::size_t>(n) >= target.size()) return resolved;
    target.resize(static_cast<std::size_t>(n));
    const auto slash = resolved.rfind('/');
    resolved = target.front() == '/' || slash == std::string::npos ? target : resolved.substr(0, slash + 1) + target;
  }
  return resolved;
}

void check_outputs_distinct(const std::vector<std::string>& paths) {
  // A file is the same file when its device and inode match (links, "./x" and "x"); one not written yet is compared
  // by its absolute path with the folders' links resolved.
  std::vector<std::pair<std::string, std::string>> seen;  // (identity, path as given)
  for (const std::string& path : paths) {
    if (path.empty() || path == "-") continue;
    const std::string resolved = resolve_output_path(path);
    struct stat info {};
    std::string identity;
    if (::stat(resolved.c_str(), &info) == 0) {
      identity =
          fmt::format("inode {}:{}", static_cast<std::uint64_t>(info.st_dev), static_cast<std::uint64_t>(info.st_ino));
    } else {
      std::error_code ec;
      identity = std::filesystem::weakly_canonical(std::filesystem::absolute(resolved, ec), ec).string();
    }
    for (const auto& [other_identity, other_path] : seen)
      if (other_identity == identity)
        throw BadInput(fmt::format("outputs '{}' and '{}' are the same file; allowed: a different file for each output",
                                   path_for_message(other_path), path_for_message(path)));
    seen.emplace_back(identity, path);
  }
}

std::string read_input_file(const std::string& path, const std::string& what, std::int64_t max_bytes) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer that may never come.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    throw BadInput(fmt::format("{}: cannot open '{}': {}", what, path_for_message(path), std::strerror(error)));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    const int error = errno;
    throw BadInput(fmt::format("{}: cannot read '{}': {}", what, path_for_message(path), std::strerror(error)));
  }
  if (const char* kernel = kernel_file_system(fd))
    throw BadInput(
        fmt::format("{}: '{}' is on {}, whose files the kernel makes up as they are read and may never "
                    "answer; allowed: a regular file on a disk",
                    what, path_for_message(path), kernel));
  if (!S_ISREG(info.st_mode))
    throw BadInput(fmt::format("{}: '{}' is {}; allowed: a regular file of at most {} MiB", what,
                               path_for_message(path), kind_of_special_file(info.st_mode), max_bytes >> 20));
  if (info.st_size > max_bytes)
    throw BadInput(fmt::format("{}: '{}' is {} bytes; allowed: a regular file of at most {} bytes ({} MiB)", what,
                               path_for_message(path), static_cast<std::int64_t>(info.st_size), max_bytes,
                               max_bytes >> 20));
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  std::string text;
  // The file can grow between fstat and read: read one byte past the cap to notice.
  text.resize(static_cast<std::size_t>(info.st_size) + 1);
  std::size_t got = 0;
  for (;;) {
    if (got == text.size()) {
      if (static_cast<std::int64_t>(got) > max_bytes)
        throw BadInput(fmt::format("{}: '{}' grew past {} bytes while being read; allowed: at most {} MiB", what,
                                   path_for_message(path), max_bytes, max_bytes >> 20));
      text.resize(std::min<std::size_t>(text.size() * 2 + 4096, static_cast<std::size_t>(max_bytes) + 1));
    }
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      throw BadInput(fmt::format("{}: cannot read '{}': {}", what, path_for_message(path), std::strerror(error)));
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  text.resize(got);
  return text;
}

void write_files_checked(const std::vector<std::pair<std::string, std::string>>& files) {
  const std::string none_written = files.size() > 1 ? " (none of the requested files was written)" : "";
  std::vector<std::string> names;
  for (const auto& file : files) {
    if (file.first.empty()) throw BadInput("an output file name is empty; allowed: a path, or - for stdout");
    names.push_back(file.first);
  }
  check_outputs_distinct(names);
  std::vector<Staged> staged;
  struct Direct {
    std::string name, target;
    const std::string* bytes;
  };
  std::vector<Direct> direct;
  for (const auto& file : files) {
    const std::string target = resolve_output_path(file.first);
    // A device or a FIFO must not be replaced by a rename (/dev/null belongs to the system): written in place, after
    // every staged file was written whole.
    if (is_special_file(target)) {
      direct.push_back({file.first, target, &file.second});
      continue;
    }
    const std::string temp = staging_name(target);
    // 0666 and the kernel applies the umask, as for any file the user creates; a file replaced keeps its mode.
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
      const int error = errno;
      remove_staged(staged);
      write_failed(file.first, error, none_written);
    }
    staged.push_back({temp, target});
    struct stat old {};
    if (::stat(target.c_str(), &old) == 0) ::fchmod(fd, old.st_mode & 07777);
    if (const int error = write_and_close(fd, file.second); error != 0) {
      remove_staged(staged);
      write_failed(file.first, error, none_written);
    }
  }
  for (const auto& [name, target, bytes] : direct) {
    // O_NONBLOCK: a FIFO with no reader fails at once (ENXIO) instead of waiting forever; O_TRUNC: a device that
    // keeps its length (a loop device's file) loses what it held before.
    const int fd = ::open(target.c_str(), O_WRONLY | O_TRUNC | O_NONBLOCK | O_CLOEXEC);
    int error = fd < 0 ? errno : 0;
    if (fd >= 0) {
      ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
      error = write_and_close(fd, *bytes);
    }
    if (error != 0) {
      remove_staged(staged);
      write_failed(name, error, none_written);
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
