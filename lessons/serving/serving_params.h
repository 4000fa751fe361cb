#pragma once
// The serving lesson's parameters as read once from the checked values (the specs are in serving_lesson.cpp).
#include <cstdint>
#include <string>

#include "kernels/serving/scheduler.h"

namespace dlsys::serving {

struct ServingParams {
  Policy policy = Policy::Continuous;  // the policy the headline numbers are of
  int max_batch = 0;
  double delay_ms = 0;  // adaptive batching's wait for a fuller batch
  // The request stream.
  double rate = 0;  // requests per second
  int requests = 0;
  int prompt = 0;  // tokens per prompt
  double mean_output = 0;
  std::string mean_output_text;  // as given, for the messages
  int max_output = 0;
  std::int64_t seed = 0;
  // Speculative decoding.
  bool draft = true;
  int k = 0;  // tokens the draft proposes per round
  int draft_layers = 0;
  int spec_requests = 0;
  // The target model and the KV memory.
  int d_model = 0, layers = 0, heads = 0, context = 0;
  double kv_budget_bytes = 0;
  std::int64_t block_tokens = 0;
  double max_minutes = 0;  // the run's limit
};

}  // namespace dlsys::serving
