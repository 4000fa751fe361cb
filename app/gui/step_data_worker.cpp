#include "app/gui/step_data_worker.h"

#include <chrono>

#include "engine/errors.h"

namespace dlsys::gui {

namespace {

std::string key_of(const ParamValues& params) {
  std::string key;
  for (const auto& [name, value] : params.all()) key += name + '=' + value.text + '\n';
  return key;
}

// Exceptions become the outcome's error: a bad combination of parameters is shown, never thrown into a frame.
auto compute(const Lesson& lesson, const ParamValues& params) {
  try {
    return std::make_pair(lesson.step_data(params), std::string());
  } catch (const std::exception& e) {
    return std::make_pair(std::shared_ptr<const StepData>(), std::string(e.what()));
  }
}

}  // namespace

StepDataWorker::~StepDataWorker() {
  if (computing_.valid()) computing_.wait();
}

void StepDataWorker::collect(Outcome outcome, const std::string& key) {
  latest_key_ = key;
  error_ = std::move(outcome.error);
  latest_ = std::move(outcome.data);
}

void StepDataWorker::request(const Lesson& lesson, const ParamValues& params) {
  wanted_key_ = key_of(params);
  if (computing_.valid()) {
    if (computing_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return;
    collect(computing_.get(), computing_key_);
  }
  if (latest_key_ == wanted_key_) return;
  computing_key_ = wanted_key_;
  try {
    computing_ = std::async(std::launch::async, [&lesson, params] {
      auto [data, error] = compute(lesson, params);
      return Outcome{std::move(data), std::move(error)};
    });
  } catch (const std::system_error&) {  // no thread to be had: compute here rather than show nothing
    compute_now(lesson, params);
  }
}

void StepDataWorker::compute_now(const Lesson& lesson, const ParamValues& params) {
  if (computing_.valid()) computing_.wait();
  computing_ = {};
  wanted_key_ = key_of(params);
  auto [data, error] = compute(lesson, params);
  collect(Outcome{std::move(data), std::move(error)}, wanted_key_);
}

}  // namespace dlsys::gui
