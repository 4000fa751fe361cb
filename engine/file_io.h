#pragma once
// Files the user names, read and written defensively. Reads take regular files only, under a size cap, so a FIFO, a
// device or a folder is refused before it can hang or exhaust memory. Writes are checked to the end: a write that
// fails (missing folder, full disk, no permission) throws RunFailure naming the file and the reason, and nothing
// reports success for a file that is not whole.
#include <cstdint>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

namespace dlsys {

// Far above any config or state file the lab reads (a few KiB), far below a weights file.
inline constexpr std::int64_t kMaxInputFileBytes = std::int64_t{16} << 20;

// `path` for a message: whole when it is short, else its start and its length. Paths are cut later than values (200
// characters): a real one can be long, and a 10,000-character one must not flood the message.
std::string path_for_message(const std::string& path);

// Reads the regular file at `path`, at most `max_bytes`. `what` names the input in messages ("parameter 'config'",
// "state file"). Throws BadInput for a missing file, a folder, a FIFO, a device, or a file over the cap.
std::string read_input_file(const std::string& path, const std::string& what,
                            std::int64_t max_bytes = kMaxInputFileBytes);

// Writes `bytes` to `path` (replacing it) and checks the write and the close. Throws RunFailure.
void write_file_checked(const std::string& path, const std::string& bytes);

// Writes several files as one result: a regular file is first written in full under a temporary name beside it and
// renamed into place only once every output was written, so a failure leaves none of them changed. A symbolic link is
// followed: the file it points to is staged beside and replaced, the link stays. Special files (a device such as
// /dev/stdout, a FIFO) cannot be staged and are written directly, after the staged files succeeded. Throws BadInput
// when two names are the same file, RunFailure naming the file that failed and the reason.
void write_files_checked(const std::vector<std::pair<std::string, std::string>>& files);

// The file `path` names once its symbolic links are followed; for a link to a missing file, the file it would create.
std::string resolve_output_path(const std::string& path);

// Throws BadInput when two of `paths` name the same file (through links, or spelled differently): the second write
// would replace the first. "-" (stdout) and empty names are left to the caller.
void check_outputs_distinct(const std::vector<std::string>& paths);

// Flushes `stream` and throws RunFailure naming `name` if anything written to it was lost (stdout on a full device).
void check_stream_written(std::ostream& stream, const std::string& name);

}  // namespace dlsys
