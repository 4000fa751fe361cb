#include "kernels/collectives/channel.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "kernels/collectives/cpu/wait_for.h"

namespace dlsys::collectives {

namespace {

std::int64_t steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Channel::Channel(MemoryLedger& ledger, std::int64_t slot_elements, int slots, bool poll, double wire_gbps)
    : storage_(ledger, "comm", static_cast<std::size_t>(slot_elements) * static_cast<std::size_t>(slots)),
      slot_elements_(slot_elements),
      slots_(static_cast<std::uint32_t>(slots)),
      poll_(poll),
      meta_(new SlotMeta[static_cast<std::size_t>(slots)]),
      wire_bytes_per_ns_(wire_gbps) {  // 1 GB/s is one byte per nanosecond
  if (slot_elements < 1 || slots < 1) throw std::invalid_argument("a channel needs at least one slot of one element");
}

float* Channel::acquire() {
  const std::uint32_t index = posted_.load(std::memory_order_relaxed);  // only the sender writes posted_
  detail::wait_for(released_, poll_, [&](std::uint32_t released) {
    return index - released < slots_ || aborted_.load(std::memory_order_relaxed);
  });
  if (aborted_.load(std::memory_order_acquire)) throw PeerFailed();
  return slot(index);
}

void Channel::post(std::int64_t count, std::uint64_t contributors) {
  if (count > slot_elements_) throw std::logic_error("message larger than a channel slot");
  const std::uint32_t index = posted_.load(std::memory_order_relaxed);
  const std::int64_t bytes = count * static_cast<std::int64_t>(sizeof(float));
  std::int64_t arrives_ns = 0;
  if (wire_bytes_per_ns_ > 0) {
    // The wire carries one message at a time: this one starts when it is posted or when the one before is through.
    arrives_ns = std::max(steady_now_ns(), wire_free_ns_) + std::int64_t(std::ceil(double(bytes) / wire_bytes_per_ns_));
    wire_free_ns_ = arrives_ns;
  }
  meta_[index % slots_] = {count, contributors, arrives_ns};
  bytes_sent_ += bytes;
  posted_.store(index + 1, std::memory_order_release);
  posted_.notify_one();
}

void Channel::send(const float* source, std::int64_t count, std::uint64_t contributors) {
  if (count > slot_elements_) throw std::logic_error("message larger than a channel slot");
  float* target = acquire();
  if (count > 0) std::memcpy(target, source, static_cast<std::size_t>(count) * sizeof(float));
  post(count, contributors);
}

Message Channel::receive() {
  const std::uint32_t index = released_.load(std::memory_order_relaxed);  // only this thread writes released_
  detail::wait_for(posted_, poll_,
                   [&](std::uint32_t posted) { return posted != index || aborted_.load(std::memory_order_relaxed); });
  if (aborted_.load(std::memory_order_acquire)) throw PeerFailed();
  const SlotMeta& meta = meta_[index % slots_];
  // Still on the wire: the receiver sleeps, so the wait leaves its core to other work, as a NIC's transfer would.
  if (meta.arrives_ns > steady_now_ns())
    std::this_thread::sleep_until(std::chrono::steady_clock::time_point(std::chrono::nanoseconds(meta.arrives_ns)));
  return {slot(index), meta.count, meta.contributors};
}

void Channel::release() {
  released_.store(released_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  released_.notify_one();
}

void Channel::abort() {
  aborted_.store(true, std::memory_order_release);
  // A sleeping end wakes only when its counter changes: both move, and nobody trusts them after an abort.
  posted_.fetch_add(1, std::memory_order_acq_rel);
  posted_.notify_all();
  released_.fetch_add(1, std::memory_order_acq_rel);
  released_.notify_all();
}

void send_range(Channel& channel, const float* source, std::int64_t count, std::uint64_t contributors) {
  const std::int64_t segment = channel.slot_elements();
  for (std::int64_t offset = 0; offset < count || offset == 0; offset += segment) {
    channel.send(source + offset, std::min(segment, count - offset), contributors);
    if (count == 0) break;
  }
}

std::uint64_t receive_segment(Channel& channel, float* target, const float* mine) {
  const Message message = channel.receive();
  if (mine != nullptr) {
    // No __restrict: in place, target and mine are the same array (same index, so vectorising stays correct).
    for (std::int64_t i = 0; i < message.count; ++i) target[i] = mine[i] + message.data[i];
  } else if (message.count > 0) {
    std::memcpy(target, message.data, static_cast<std::size_t>(message.count) * sizeof(float));
  }
  const std::uint64_t contributors = message.contributors;
  channel.release();
  return contributors;
}

std::uint64_t receive_range(Channel& channel, float* target, const float* mine, std::int64_t count) {
  const std::int64_t segment = channel.slot_elements();
  std::uint64_t contributors = 0;
  for (std::int64_t offset = 0; offset < count || offset == 0; offset += segment) {
    contributors = receive_segment(channel, target + offset, mine == nullptr ? nullptr : mine + offset);
    if (count == 0) break;
  }
  return contributors;
}

}  // namespace dlsys::collectives
