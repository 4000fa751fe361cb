#pragma once
// Serving a request stream with the real model under one batching policy, on its own scheduler thread, against the
// real clock: a request can be served once the clock has passed its arrival time; nothing is simulated.
//   static     - waits until max_batch requests are waiting (or no more will come), prefills them, then decodes the
//                batch as one fixed-shape tensor until its longest request is done: finished rows keep being computed
//                (padding) and every answer is returned when the batch ends.
//   adaptive   - the same batches, but a batch also starts when its oldest request has waited delay_s (the pool's
//                timer), so a quiet stream is not held back waiting for a full batch.
//   continuous - every iteration, finished sequences leave and waiting requests take their slots (prefilled as they
//                join), then one decode step runs over every active sequence (Orca, OSDI 2022).
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernels/serving/backend.h"
#include "kernels/serving/model.h"
#include "kernels/serving/request_stream.h"

namespace dlsys::serving {

enum class Policy { Static, Adaptive, Continuous };
const char* policy_name(Policy policy);

struct PolicySpec {
  Policy policy = Policy::Continuous;
  int max_batch = 8;
  double delay_s = 0.02;
};

struct RequestRecord {
  int id = 0;
  int slot = -1;   // the batch slot (and KV cache) it was served in
  int batch = -1;  // static and adaptive: which batch; continuous: -1
  double arrival_s = 0, start_s = 0, first_token_s = 0, last_token_s = 0, finish_s = 0;  // after the stream start
  std::vector<int> tokens;                                                               // generated, greedy
};

// One pass of the model: a prefill of one request, or a decode step over the batch.
struct Iteration {
  bool prefill = false;
  double start_s = 0, end_s = 0;
  int rows = 0;                // decode: sequences computed (padding included); prefill: 1
  int useful_rows = 0;         // decode: rows whose token is kept
  int waiting = 0;             // arrived, not started, when the pass was scheduled (continuous: after admission)
  std::int64_t kv_tokens = 0;  // tokens held in the active caches when the pass began
};

struct ServeResult {
  Policy policy = Policy::Continuous;
  std::vector<RequestRecord> requests;  // in id order
  std::vector<Iteration> iterations;
  std::int64_t slot_tokens = 0, padded_tokens = 0;  // static and adaptive: batch size x longest, and the unused part
  double first_arrival_s = 0, last_finish_s = 0;
  std::int64_t generated_tokens = 0;
  int peak_batch = 0;
  std::int64_t peak_kv_tokens = 0;
};

// Serves `stream` (arrivals in order) with `model`, whose context must hold every prompt + output. Runs on a new
// thread (with one OpenBLAS thread) and waits for it; `cancelled` is asked between passes (true: stop, throws
// Cancelled).
ServeResult serve(Model& model, MemoryLedger& ledger, const std::vector<Request>& stream, const PolicySpec& policy,
                  const std::function<bool()>& cancelled);
// The same on any backend (the CPU model, the GPU model): slots 0 .. max_batch - 1 serve as the batch's caches, so
// the backend needs at least max_batch slots and rows.
ServeResult serve(ModelBackend& model, const std::vector<Request>& stream, const PolicySpec& policy,
                  const std::function<bool()>& cancelled);

// Static batching's waste on given output lengths served in arrival order in batches of `max_batch`:
// sum over batches of (batch size x longest - sum of lengths) / sum of batch size x longest.
double static_padding_fraction(const std::vector<int>& output_tokens, int max_batch);

}  // namespace dlsys::serving
