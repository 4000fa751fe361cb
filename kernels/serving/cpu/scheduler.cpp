// The scheduler thread: one loop per policy over the real model and the real clock.
#include "kernels/serving/scheduler.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <exception>
#include <stdexcept>
#include <thread>

#include "engine/errors.h"
#include "engine/thread_start.h"
#include "kernels/serving/cpu_backend.h"

namespace dlsys::serving {

const char* policy_name(Policy p) {
  switch (p) {
    case Policy::Static:
      return "static";
    case Policy::Adaptive:
      return "adaptive";
    case Policy::Continuous:
      return "continuous";
  }
  return "?";
}

double static_padding_fraction(const std::vector<int>& lengths, int max_batch) {
  double slots = 0, used = 0;
  for (std::size_t first = 0; first < lengths.size(); first += std::size_t(max_batch)) {
    const std::size_t last = std::min(lengths.size(), first + std::size_t(max_batch));
    int longest = 0;
    for (std::size_t i = first; i < last; ++i) {
      longest = std::max(longest, lengths[i]);
      used += lengths[i];
    }
    slots += double(last - first) * longest;
  }
  return slots > 0 ? (slots - used) / slots : 0;
}

namespace {

using Clock = std::chrono::steady_clock;

// One active sequence in a slot.
struct Active {
  int request = 0;
  int slot = 0;
};

class Server {
 public:
  Server(ModelBackend& model, const std::vector<Request>& stream, const PolicySpec& spec,
         const std::function<bool()>& cancelled)
      : model_(model), stream_(stream), spec_(spec), cancelled_(cancelled) {
    if (spec.max_batch > model.slots() || spec.max_batch > model.max_rows())
      throw std::logic_error("serve: max_batch exceeds the model's slots or rows");
    out_.policy = spec.policy;
    out_.requests.resize(stream.size());
    for (std::size_t i = 0; i < stream.size(); ++i) {
      out_.requests[i].id = stream[i].id;
      out_.requests[i].arrival_s = stream[i].arrival_s;
    }
  }

  ServeResult run() {
    start_ = Clock::now();
    if (spec_.policy == Policy::Continuous)
      run_continuous();
    else
      run_batches();
    out_.first_arrival_s = stream_.empty() ? 0 : stream_.front().arrival_s;
    for (const RequestRecord& r : out_.requests) {
      out_.last_finish_s = std::max(out_.last_finish_s, r.finish_s);
      out_.generated_tokens += std::int64_t(r.tokens.size());
    }
    return std::move(out_);
  }

 private:
  double now_s() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  // Sleeps in slices of at most 50 ms, so a cancel is heard while a slow stream waits for its next request.
  void sleep_until_s(double t) {
    while (now_s() < t) {
      check_cancelled();
      const double wake = std::min(t, now_s() + 0.05);
      std::this_thread::sleep_until(start_ +
                                    std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(wake)));
    }
  }
  void check_cancelled() const {
    if (cancelled_ && cancelled_()) throw Cancelled();
  }
  // Requests that have arrived by now and not started.
  int arrived_waiting() const {
    const double t = now_s();
    int n = 0;
    for (std::size_t i = next_; i < stream_.size() && stream_[i].arrival_s <= t; ++i) ++n;
    return n;
  }
  bool all_arrived() const { return stream_.empty() || stream_.back().arrival_s <= now_s(); }
  std::int64_t kv_tokens(const std::vector<Active>& active) const {
    std::int64_t n = 0;
    for (const Active& a : active) n += model_.length(a.slot);
    return n;
  }

  // Prefills the next waiting request into `slot`: its first token.
  Active admit(int slot, int batch) {
    const int id = int(next_++);
    RequestRecord& rec = out_.requests[std::size_t(id)];
    Iteration it{.prefill = true, .start_s = now_s(), .rows = 1, .useful_rows = 1, .waiting = arrived_waiting()};
    rec.slot = slot;
    rec.batch = batch;
    rec.start_s = it.start_s;
    rec.tokens.push_back(model_.prefill(slot, stream_[std::size_t(id)].prompt));
    it.end_s = now_s();
    rec.first_token_s = rec.last_token_s = it.end_s;
    out_.iterations.push_back(it);
    return {id, slot};
  }

  bool done(const Active& a) const {
    return int(out_.requests[std::size_t(a.request)].tokens.size()) >= stream_[std::size_t(a.request)].output_tokens;
  }

  // One decode step over `batch`; rows whose request is done are padding (computed, token dropped).
  void decode_step(const std::vector<Active>& batch, int waiting) {
    rows_.clear();
    for (const Active& a : batch) {
      const RequestRecord& rec = out_.requests[std::size_t(a.request)];
      rows_.push_back({a.slot, rec.tokens.back(), model_.length(a.slot)});
    }
    Iteration it{.prefill = false,
                 .start_s = now_s(),
                 .rows = int(batch.size()),
                 .waiting = waiting,
                 .kv_tokens = kv_tokens(batch)};
    model_.forward(rows_, next_tokens_);
    it.end_s = now_s();
    for (std::size_t i = 0; i < batch.size(); ++i) {
      RequestRecord& rec = out_.requests[std::size_t(batch[i].request)];
      if (done(batch[i])) continue;
      rec.tokens.push_back(next_tokens_[i]);
      rec.last_token_s = it.end_s;
      ++it.useful_rows;
    }
    out_.peak_batch = std::max(out_.peak_batch, it.rows);
    out_.peak_kv_tokens = std::max(out_.peak_kv_tokens, it.kv_tokens);
    out_.iterations.push_back(it);
  }

  void run_batches() {
    int batch_index = 0;
    while (next_ < stream_.size()) {
      check_cancelled();
      const int waiting = arrived_waiting();
      const bool full = waiting >= spec_.max_batch;
      bool timer = false;
      if (spec_.policy == Policy::Adaptive && waiting > 0) timer = now_s() >= stream_[next_].arrival_s + spec_.delay_s;
      if (!(full || timer || (waiting > 0 && all_arrived()))) {
        // Sleep until the next arrival or the pool's timer, whichever comes first.
        double wake =
            next_ + std::size_t(waiting) < stream_.size() ? stream_[next_ + std::size_t(waiting)].arrival_s : 1e300;
        if (spec_.policy == Policy::Adaptive && waiting > 0)
          wake = std::min(wake, stream_[next_].arrival_s + spec_.delay_s);
        sleep_until_s(wake);
        continue;
      }
      const int size = std::min(waiting, spec_.max_batch);
      std::vector<Active> batch;
      for (int s = 0; s < size; ++s) batch.push_back(admit(s, batch_index));
      int longest = 0;
      std::int64_t used = 0;
      for (const Active& a : batch) {
        longest = std::max(longest, stream_[std::size_t(a.request)].output_tokens);
        used += stream_[std::size_t(a.request)].output_tokens;
      }
      out_.slot_tokens += std::int64_t(size) * longest;
      out_.padded_tokens += std::int64_t(size) * longest - used;
      // A finished row stays in the batch as padding: it feeds its last token again and its output is dropped.
      for (int step = 1; step < longest; ++step) {
        check_cancelled();
        decode_step(batch, arrived_waiting());
      }
      const double end = now_s();
      for (const Active& a : batch) out_.requests[std::size_t(a.request)].finish_s = end;  // returned together
      ++batch_index;
    }
  }

  void run_continuous() {
    std::vector<Active> active;
    std::vector<int> free_slots;
    for (int s = spec_.max_batch - 1; s >= 0; --s) free_slots.push_back(s);
    auto retire_done = [&] {
      for (std::size_t i = 0; i < active.size();) {
        if (done(active[i])) {
          RequestRecord& rec = out_.requests[std::size_t(active[i].request)];
          rec.finish_s = rec.last_token_s;
          free_slots.push_back(active[i].slot);
          active.erase(active.begin() + std::ptrdiff_t(i));
        } else {
          ++i;
        }
      }
    };
    while (next_ < stream_.size() || !active.empty()) {
      check_cancelled();
      // Waiting requests join while a slot is free (a one-token answer is done at its prefill and leaves at once).
      // `waiting` is what the admission saw last: 0, or requests left waiting because every slot is taken.
      int waiting = 0;
      while (!free_slots.empty() && (waiting = arrived_waiting()) > 0) {
        const int slot = free_slots.back();
        free_slots.pop_back();
        active.push_back(admit(slot, -1));
        retire_done();
      }
      if (free_slots.empty()) waiting = arrived_waiting();
      if (active.empty()) {
        if (next_ < stream_.size()) sleep_until_s(stream_[next_].arrival_s);
        continue;
      }
      decode_step(active, waiting);
      retire_done();
    }
  }

  ModelBackend& model_;
  const std::vector<Request>& stream_;
  PolicySpec spec_;
  std::function<bool()> cancelled_;
  ServeResult out_;
  Clock::time_point start_;
  std::size_t next_ = 0;  // the first request not started (requests start in arrival order)
  std::vector<SlotRow> rows_;
  std::vector<int> next_tokens_;
};

// One BLAS thread while serving: the scheduler thread is the server, and a prefill that waited for a second core
// kept busy by another program would stretch every policy's timings unevenly.
class OneBlasThread {
 public:
  OneBlasThread() : saved_(openblas_get_num_threads()) { openblas_set_num_threads(1); }
  ~OneBlasThread() { openblas_set_num_threads(saved_); }
  OneBlasThread(const OneBlasThread&) = delete;
  OneBlasThread& operator=(const OneBlasThread&) = delete;

 private:
  int saved_;
};

}  // namespace

ServeResult serve(Model& model, MemoryLedger& ledger, const std::vector<Request>& stream, const PolicySpec& spec,
                  const std::function<bool()>& cancelled) {
  CpuBackend backend(model, ledger, spec.max_batch);
  return serve(backend, stream, spec, cancelled);
}

ServeResult serve(ModelBackend& model, const std::vector<Request>& stream, const PolicySpec& spec,
                  const std::function<bool()>& cancelled) {
  const OneBlasThread one_thread;
  Server server(model, stream, spec, cancelled);
  ServeResult result;
  std::exception_ptr failure;
  std::vector<std::thread> threads;
  start_threads(
      threads, 0, 1,
      [&](int) {
        try {
          result = server.run();
        } catch (...) {
          failure = std::current_exception();
        }
      },
      [] {}, "the scheduler thread");
  for (auto& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);
  return result;
}

}  // namespace dlsys::serving
