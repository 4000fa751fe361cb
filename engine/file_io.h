#pragma once
// Writing a file the user asked for, checked to the end: a write that fails (missing folder, full disk, no
// permission) throws RunFailure naming the file and the reason, so nothing reports success for a file that is not
// whole.
#include <string>

namespace dlsys {

// Writes `bytes` to `path` (replacing it) and checks the write and the close. Throws RunFailure.
void write_file_checked(const std::string& path, const std::string& bytes);

}  // namespace dlsys
