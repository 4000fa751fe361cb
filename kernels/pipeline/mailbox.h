#pragma once
// Messages between pipeline devices (activations forward, gradients backward), keyed by the op that will consume
// them: a device posts a buffer for another and moves on; the receiver's `take` blocks until it is there. Unbounded,
// so a schedule never deadlocks on a full link: a device sends as soon as its op is done, whatever its peer does.
// Shared by the pipeline executor and the device mesh.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "engine/errors.h"
#include "engine/host_buffer.h"

namespace dlsys::pipeline {

// How long the executor's stages poll before they sleep: a stage that sleeps pays a wake-up (tens of us, far more
// when the cores are busy) on every message, and that would show up as bubble that the schedule does not have.
inline constexpr int kMailboxPollUs = 3000;

class Mailbox {
 public:
  // `poll_us`: how long `take` yields its core in a loop before it sleeps (0 when devices outnumber the cores: the
  // sender may need this very core).
  Mailbox(int devices, int poll_us) : poll_us_(poll_us) {
    for (int d = 0; d < devices; ++d) boxes_.push_back(std::make_unique<Box>());
  }
  void post(int device, std::uint64_t key, HostBuffer<float> message) {
    Box& box = *boxes_[std::size_t(device)];
    {
      std::lock_guard lock(box.mutex);
      box.messages.emplace(key, std::move(message));
    }
    box.ready.notify_one();
  }
  HostBuffer<float> take(int device, std::uint64_t key) {
    Box& box = *boxes_[std::size_t(device)];
    std::unique_lock lock(box.mutex);
    const auto poll_until = std::chrono::steady_clock::now() + std::chrono::microseconds(poll_us_);
    while (!aborted_ && box.messages.count(key) == 0 && std::chrono::steady_clock::now() < poll_until) {
      lock.unlock();
      std::this_thread::yield();
      lock.lock();
    }
    box.ready.wait(lock, [&] { return aborted_.load() || box.messages.count(key) != 0; });
    if (aborted_) throw RunFailure("pipeline step aborted: another stage failed");
    auto node = box.messages.extract(key);
    return std::move(node.mapped());
  }
  // Every waiting and later `take` throws RunFailure: a device failed and its messages will not come.
  void abort() {
    aborted_ = true;
    for (auto& box : boxes_) {
      std::lock_guard lock(box->mutex);
      box->ready.notify_all();
    }
  }

 private:
  struct Box {
    std::mutex mutex;
    std::condition_variable ready;
    std::unordered_map<std::uint64_t, HostBuffer<float>> messages;
  };
  int poll_us_;
  std::vector<std::unique_ptr<Box>> boxes_;
  std::atomic<bool> aborted_{false};
};

}  // namespace dlsys::pipeline
