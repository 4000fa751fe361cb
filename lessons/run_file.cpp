#include "lessons/run_file.h"

#include <fmt/format.h>

#include <functional>
#include <map>

#include "engine/errors.h"
#include "engine/file_io.h"
#include "engine/json_io.h"
#include "lessons/allreduce/allreduce_values.h"
#include "lessons/allreduce/mpi_values.h"
#include "lessons/ddp/ddp_values.h"
#include "lessons/flash/flash_values.h"
#include "lessons/fusion/fusion_values.h"
#include "lessons/kvcache/kvcache_values.h"
#include "lessons/matmul/matmul_values.h"
#include "lessons/pipeline_common/pipeline_values.h"
#include "lessons/precision/precision_values.h"
#include "lessons/quant/quant_values.h"
#include "lessons/registry.h"
#include "lessons/roofline/roofline_values.h"
#include "lessons/serving/serving_values.h"
#include "lessons/tensor/tensor_values.h"
#include "lessons/zero/zero_values.h"

namespace dlsys {

namespace {

using json = nlohmann::ordered_json;

// One section's JSON as the struct T. An empty object stands for no values (a run that measured nothing).
template <class T>
std::shared_ptr<const LessonValues> typed_section(const json& section, const char* name) {
  if (section.is_object() && section.empty()) return nullptr;
  T value{};
  try {
    read_value(section, value);
  } catch (const JsonKeyError& e) {
    throw e.within(name);
  }
  return make_values(std::move(value));
}

template <class Theory, class Measured>
void typed_pair(const json& theory, const json& measured, RunResult& result) {
  result.theory = typed_section<Theory>(theory, "theory");
  result.measured = typed_section<Measured>(measured, "measured");
}

using TypedReader = void (*)(const json& theory, const json& measured, RunResult& result);

// The allreduce lesson measures other values when its ranks were processes (launcher=mpi, mpi_values.h).
void allreduce_pair(const json& theory, const json& measured, RunResult& result) {
  if (measured.is_object() && measured.contains("launcher"))
    typed_pair<allreduce::AllreduceTheory, allreduce::AllreduceProcessesMeasured>(theory, measured, result);
  else
    typed_pair<allreduce::AllreduceTheory, allreduce::AllreduceMeasured>(theory, measured, result);
}

// Every lesson's theory and measured structs, by lesson id. A lesson missing here fails the round-trip test, which
// runs every lesson of the registry.
const std::map<std::string, TypedReader>& typed_readers() {
  static const std::map<std::string, TypedReader> readers = {
      {"matmul", typed_pair<matmul::MatmulTheory, matmul::MatmulMeasured>},
      {"roofline", typed_pair<roofline::RooflineTheory, roofline::RooflineMeasured>},
      {"fusion", typed_pair<fusion::FusionTheory, fusion::FusionMeasured>},
      {"bubble", typed_pair<pipeline_lesson::PipelineTheory, pipeline_lesson::PipelineMeasured>},
      {"schedules", typed_pair<pipeline_lesson::PipelineTheory, pipeline_lesson::PipelineMeasured>},
      {"allreduce", allreduce_pair},
      {"tensor", typed_pair<tensor::TensorTheory, tensor::TensorMeasured>},
      {"ddp", typed_pair<ddp::DdpTheory, ddp::DdpMeasured>},
      {"zero", typed_pair<zero_lesson::ZeroTheory, zero_lesson::ZeroMeasured>},
      {"flash", typed_pair<flash::FlashTheory, flash::FlashMeasured>},
      {"kvcache", typed_pair<kvcache::KvCacheTheory, kvcache::KvCacheMeasured>},
      {"serving", typed_pair<serving::ServingTheory, serving::ServingMeasured>},
      {"precision", typed_pair<precision::PrecisionTheory, precision::PrecisionMeasured>},
      {"quant", typed_pair<quant::QuantTheory, quant::QuantMeasured>},
  };
  return readers;
}

}  // namespace

std::string understood_run_format_versions() { return std::to_string(kRunFileFormatVersion); }

void read_typed_values(const std::string& lesson_id, const json& theory, const json& measured, RunResult& result) {
  const auto reader = typed_readers().find(lesson_id);
  if (reader == typed_readers().end())
    throw BadInput(fmt::format("lesson '{}' cannot read its values back from JSON", lesson_id));
  try {
    reader->second(theory, measured, result);
  } catch (const JsonKeyError& e) {
    throw BadInput(fmt::format("lesson '{}': {}", lesson_id, e.what()));
  }
}

RunResult run_from_json(const json& in, const std::string& origin) {
  const std::string versions = understood_run_format_versions();
  if (!in.is_object() || !in.contains("recorded"))
    throw BadInput(fmt::format(
        "{} is not a recorded run: it has no \"recorded\" object (files written by `dlsys-lab run LESSON --json "
        "FILE` or the window's \"Last run as JSON\" have one); run file format versions understood: {}",
        origin, versions));
  const json& recorded = in.at("recorded");
  if (!recorded.is_object() || !recorded.contains("format_version") ||
      !recorded.at("format_version").is_number_integer())
    throw BadInput(
        fmt::format("{}: recorded.format_version is missing or not an integer; understood: {}", origin, versions));
  const auto version = recorded.at("format_version").get<std::int64_t>();
  if (version != kRunFileFormatVersion)
    throw BadInput(
        fmt::format("{}: run file format version {} is not understood by this build (dlsys-lab {}); "
                    "understood: {}",
                    origin, version, lab_version(), versions));
  RunResult result;
  try {
    result = run_result_from_json(in);
  } catch (const BadInput& e) {
    throw BadInput(fmt::format("{}: {}", origin, e.what()));
  }
  try {
    const Lesson& lesson = find_lesson(result.lesson);
    read_typed_values(result.lesson, in.at("theory"), in.at("measured"), result);
    // A parameter the file does not name did not exist in the build that recorded it, which ran as its default.
    const ParamValues defaults = ParamValues::defaults(lesson.params());
    for (const auto& [key, value] : defaults.all()) result.params.emplace(key, value.text);
  } catch (const BadInput& e) {
    throw BadInput(fmt::format("{}: {}", origin, e.what()));
  }
  return result;
}

RunResult read_run_file(const std::string& path) {
  const std::string origin = fmt::format("run file '{}'", path);
  RunResult result = run_from_json(parse_ordered_json_input(read_input_file(path, "run file"), origin), origin);
  result.opened_from = path;
  return result;
}

}  // namespace dlsys
