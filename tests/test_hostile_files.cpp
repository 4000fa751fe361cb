// Files, paths and threads as a hostile machine presents them: every case ends in BadInput or RunFailure with a
// message, never a crash, a hang or a silent success.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "engine/abortable_barrier.h"
#include "engine/errors.h"
#include "engine/file_io.h"
#include "engine/json_io.h"
#include "engine/parallel.h"
#include "engine/params.h"
#include "lessons/registry.h"

using namespace dlsys;

namespace {

std::filesystem::path scratch_dir(const std::string& name) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("dlsys-hostile-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

std::string message_of(const std::function<void()>& body) {
  try {
    body();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("JSON nested a hundred thousand levels deep is refused before parsing, naming the limit") {
  const std::string deep = "{\"a\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
  const std::string message = message_of([&] { parse_json_input(deep, "config 'deep.json'"); });
  CHECK(message.find("nesting deeper than 100 levels") != std::string::npos);
  CHECK_THROWS_AS(parse_json_input(deep, "x"), BadInput);
  // Brackets inside strings are text, not nesting.
  CHECK_NOTHROW(parse_json_input("{\"a\": \"" + std::string(500, '[') + "\"}", "x"));
}

TEST_CASE("a number beyond a double (1e400) is bad input, not an abort") {
  CHECK_THROWS_AS(parse_json_input("{\"step\": 1e400}", "state file 'x'"), BadInput);
  CHECK(message_of([] { parse_json_input("[1e400]", "x"); }).find("too large for a double") != std::string::npos);
  CHECK(message_of([] { parse_json_input("{\n\"a\": tru}", "x"); }).find("line 2") != std::string::npos);
}

TEST_CASE("messages describe big JSON values by kind and clip long text") {
  CHECK(describe_json_value(nlohmann::json::array({1, 2, 3})) == "an array of 3 elements");
  CHECK(describe_json_value(nlohmann::json::object()) == "an object with 0 keys");
  const std::string clipped = describe_json_value(std::string(10000, 'x'));
  CHECK(clipped.size() < 200);
  CHECK(clipped.find("10000 characters") != std::string::npos);
}

TEST_CASE("input files: only regular files under the cap are read") {
  const auto dir = scratch_dir("inputs");
  const std::string fifo = (dir / "fifo").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // Would block forever if the reader opened the FIFO and waited for a writer.
  CHECK(message_of([&] { read_input_file(fifo, "parameter 'config'"); }).find("FIFO") != std::string::npos);
  CHECK(message_of([&] { read_input_file(dir.string(), "parameter 'config'"); }).find("a folder") != std::string::npos);
  CHECK(message_of([] { read_input_file("/dev/zero", "parameter 'config'"); }).find("a device") != std::string::npos);
  CHECK(message_of([] { read_input_file("/dev/urandom", "x"); }).find("a device") != std::string::npos);
  CHECK_THROWS_AS(read_input_file((dir / "missing").string(), "x"), BadInput);
  const std::string big = (dir / "big.bin").string();
  std::ofstream(big).put('x');
  std::filesystem::resize_file(big, std::uintmax_t{17} << 20);  // sparse: no disk used
  CHECK(message_of([&] { read_input_file(big, "x"); }).find("at most 16777216 bytes (16 MiB)") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a write to a full device fails with the reason, and the device stays") {
  const std::string message = message_of([] { write_file_checked("/dev/full", "some bytes"); });
  CHECK(message == "cannot write '/dev/full': No space left on device");
  struct stat info {};
  REQUIRE(::stat("/dev/full", &info) == 0);
  CHECK(S_ISCHR(info.st_mode));  // never removed or replaced as a failed output
}

TEST_CASE("several outputs are written all or none") {
  const auto dir = scratch_dir("outputs");
  const std::string good = (dir / "good.svg").string();
  const std::string bad = (dir / "missing-folder" / "bad.json").string();
  CHECK_THROWS_AS(write_files_checked({{good, "svg"}, {bad, "json"}}), RunFailure);
  CHECK_FALSE(std::filesystem::exists(good));
  CHECK_THROWS_AS(write_files_checked({{good, "svg"}, {"/dev/full", "json"}}), RunFailure);
  CHECK_FALSE(std::filesystem::exists(good));
  write_files_checked({{good, "svg"}});
  CHECK(std::filesystem::file_size(good) == 3);
  CHECK(std::distance(std::filesystem::directory_iterator(dir), {}) == 1);  // no staging file left behind
  std::filesystem::remove_all(dir);
}

TEST_CASE("one rule for numbers: decimal digits, an optional leading '-', an exponent's sign, nothing else") {
  CHECK(parse_integer_text("64") == 64);
  CHECK(parse_integer_text("-5") == -5);
  for (const char* bad : {"", " 5", "5 ", "+5", "0x10", "1e3", "1.0", "-", "99999999999999999999", "5\n"})
    CHECK_MESSAGE(!parse_integer_text(bad), bad);
  CHECK(parse_real_text("0.5") == 0.5);
  CHECK(parse_real_text("1e-3") == 1e-3);
  CHECK(parse_real_text("2.5E6") == 2.5e6);
  CHECK(parse_real_text("1e+30") == 1e30);  // as the help prints its bounds
  for (const char* bad :
       {"", ".5", "1.", "+1", " 1", "1 ", "0x1p3", "inf", "nan", "1e400", "1e+", "1e+-3", "1e", "1e++3"})
    CHECK_MESSAGE(!parse_real_text(bad), bad);
  ParamSpec m{"m", "m", ParamType::Integer, "64", 1, 8192};
  for (const char* bad : {"0x10", " 5", "+5", "5 "}) CHECK_THROWS_AS(check_param(m, bad), BadInput);
  ParamSpec bytes{"b", "b", ParamType::Bytes, "64KiB", 1, 1e12};
  CHECK(check_param(bytes, "64KiB").number == 65536);
  CHECK_THROWS_AS(check_param(bytes, "0x10KiB"), BadInput);
  CHECK_THROWS_AS(check_param(bytes, " 64KiB"), BadInput);
}

TEST_CASE("every number bound the help prints is accepted when typed back (precision's init_scale: 1e+30)") {
  for (const Lesson* lesson : all_lessons())
    for (const ParamSpec& spec : lesson->params()) {
      if (spec.type != ParamType::Integer && spec.type != ParamType::Real) continue;
      const std::string allowed = spec.allowed();  // "an integer from MIN to MAX" or "a number from MIN to MAX"
      const auto from = allowed.find(" from "), to = allowed.find(" to ");
      REQUIRE(from != std::string::npos);
      REQUIRE(to != std::string::npos);
      const auto max_end = allowed.find_first_of(" ;,", to + 4);
      const std::string max_text =
          allowed.substr(to + 4, max_end == std::string::npos ? std::string::npos : max_end - to - 4);
      for (const std::string& bound : {allowed.substr(from + 6, to - from - 6), max_text})
        CHECK_MESSAGE(check_param(spec, bound).text == bound, (lesson->id() + "." + spec.key + ": " + bound));
    }
  const ParamSpec init_scale = *find_spec(find_lesson("precision").params(), "init_scale");
  CHECK(check_param(init_scale, "1e+30").number == 1e30);
}

TEST_CASE("a list parameter's bad element names what is allowed; long values are clipped") {
  ParamSpec sizes{"sizes", "sizes", ParamType::SizeList, "64", 8, 4096};
  const std::string message = message_of([&] { check_param(sizes, "64,abc"); });
  CHECK(message.find("allowed: a list like") != std::string::npos);
  ParamSpec m{"m", "m", ParamType::Integer, "64", 1, 8192};
  CHECK(message_of([&] { check_param(m, std::string(10000, '7')); }).size() < 400);
}

TEST_CASE("an exception inside a parallel_for range reaches the caller after every thread joined") {
  std::atomic<int> finished{0};
  CHECK_THROWS_AS(parallel_for(4, 4,
                               [&](std::int64_t begin, std::int64_t) {
                                 if (begin == 2) throw std::runtime_error("range failed");
                                 finished.fetch_add(1);
                               }),
                  std::runtime_error);
  CHECK(finished.load() == 3);
}

TEST_CASE("an aborted barrier releases the threads waiting for a peer that never comes, and every later wait") {
  AbortableBarrier barrier(3);
  std::atomic<int> gave_up{0};
  std::vector<std::thread> waiting;
  for (int i = 0; i < 2; ++i)  // the third thread never arrives, as one that failed to start
    waiting.emplace_back([&] {
      if (!barrier.arrive_and_wait()) ++gave_up;
    });
  barrier.abort();
  for (std::thread& t : waiting) t.join();
  CHECK(gave_up == 2);
  CHECK_FALSE(barrier.arrive_and_wait());

  AbortableBarrier pair(2);  // a whole group passes phase after phase
  std::atomic<int> passed{0};
  std::thread other([&] {
    for (int i = 0; i < 1000; ++i) passed += pair.arrive_and_wait() ? 1 : 0;
  });
  for (int i = 0; i < 1000; ++i) passed += pair.arrive_and_wait() ? 1 : 0;
  other.join();
  CHECK(passed == 2000);
}
