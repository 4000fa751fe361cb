#pragma once
// Byte and rate formatting with explicit units: GB is 1e9 bytes and GiB is 2^30 bytes, and we always print which.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dlsys {

inline constexpr double kBytesPerGB = 1e9;
inline constexpr double kBytesPerGiB = 1073741824.0;

// "64MiB", "1KiB", "4096", "2GB", "1.5e3" -> bytes; nullopt if it is not a size.
std::optional<std::int64_t> parse_byte_size(std::string_view text);

// 67108864 -> "64 MiB"; binary prefixes, the shortest exact-ish form.
std::string format_bytes_binary(double bytes);
// 2147483648 -> "2.15 GB"; decimal prefixes.
std::string format_bytes_decimal(double bytes);
// Both, side by side: "2.15 GB (2.00 GiB)".
std::string format_bytes_both(double bytes);
// 1234.5 -> "1.23 ms" from microseconds.
std::string format_duration_us(double us);
// A number with a fixed count of significant digits and thousands kept readable.
std::string format_number(double value, int significant = 4);
// A whole number with thousands separators for reading aloud: 134217728 -> "134,217,728".
std::string format_count(double value);

}  // namespace dlsys
