#pragma once
// What one run of a lesson produced: its parameters, where it ran, theory and measured values, series to plot,
// optional timelines, and the memory ledger's report. Immutable once returned; the GUI receives it as a snapshot.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/ledger.h"
#include "engine/lesson_values.h"
#include "engine/params.h"
#include "engine/run_conditions.h"

namespace dlsys {

struct Provenance {
  std::string kind = "cpu";  // cpu | cuda
  std::string device;        // device name
  bool emulated = false;     // ranks or stages emulated (threads, streams on one GPU)
  std::string timer = "steady_clock";
  int repeats = 0;
  std::vector<std::string> notes;  // e.g. "4 ranks time-share 2 hardware threads"
  RunConditions conditions;        // what else the machine was doing meanwhile
};

struct SeriesPoint {
  double x = 0;
  double y = 0;
  double y_min = 0;  // whiskers; equal to y for theory
  double y_max = 0;
};

struct Series {
  std::string id;       // "naive": stable, what views and reports look a series up by
  std::string name;     // "naive (measured)": the legend's words, free to change
  std::string role;     // "theory" | "measured"
  std::string x_label;  // "n (m = n = k)"
  std::string x_unit;
  std::string y_label;
  std::string y_unit;
  std::vector<SeriesPoint> points;
};

struct TimelineSpan {
  int lane = 0;
  double start = 0;
  double end = 0;
  std::string kind;  // "F", "B", "W", "send", ...
  int micro_batch = -1;
  int chunk = 0;
  std::string label;  // "F3"
  int direction = 0;  // 1: travels the reverse way (DualPipe's micro-batches that enter at the last device)
};

struct Timeline {
  std::string name;    // "1F1B (theory)"
  std::string source;  // "theory" | "measured"
  std::string mode;    // "simulated" | "concurrent" | "replayed" | "emulated"
  std::string time_unit = "us";
  std::vector<std::string> lanes;  // "device 0", ...
  std::vector<TimelineSpan> spans;
};

// The version of the run file format this build writes and reads. A file of another version is refused with the
// versions understood, rather than drawn with values in the wrong places.
inline constexpr int kRunFileFormatVersion = 1;

// Where and when a run was made: written into every run file (`"recorded"`), so a run recorded on a GPU node and
// opened on a laptop says where it came from. The devices are the backend's, the parameters the run's own.
struct RunRecord {
  int format_version = kRunFileFormatVersion;
  std::string lab_version;  // the project's version, "0.1.0"
  std::string host;         // the machine's host name
  std::string date_utc;     // ISO 8601 in UTC, "2026-11-23T01:12:05Z"
};

// This machine, now, this build.
RunRecord record_here_and_now();
// The lab's version as CMake's project() states it.
const char* lab_version();

struct RunResult {
  std::string lesson;
  Provenance backend;
  std::map<std::string, std::string> params;     // as the user gave them (text)
  std::shared_ptr<const LessonValues> theory;    // the lesson's typed closed forms
  std::shared_ptr<const LessonValues> measured;  // the lesson's typed measurements
  std::vector<Series> series;
  std::vector<Timeline> timelines;
  std::vector<LedgerEntry> memory;
  std::int64_t memory_peak_bytes = 0;
  std::optional<RunRecord> recorded;  // set by run_lesson; read back from a run file
  std::string opened_from;            // the run file this result was read from; empty for a run made here

  const Series* find_series(const std::string& id) const;
  template <class T>
  const T* theory_as() const {
    return values_as<T>(theory);
  }
  template <class T>
  const T* measured_as() const {
    return values_as<T>(measured);
  }
};

// The parameters whose values differ between a finished run and `now`, as "p: 2 -> 4": empty when the run shows
// what the parameters say. The one rule for "this result is stale".
std::vector<std::string> params_changed_since(const RunResult& result, const ParamValues& now);

nlohmann::ordered_json to_json(const RunResult& result);
// Throws BadInput on a malformed document, naming the key's path. Theory and measured values come back as plain JSON
// (no lesson's struct); lessons/common/run_file.h turns them back into the lesson's own structs.
RunResult run_result_from_json(const nlohmann::ordered_json& json);
// Long format, one row per value: section,name,x,y,y_min,y_max
std::string to_csv(const RunResult& result);

}  // namespace dlsys
