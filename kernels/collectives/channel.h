#pragma once
// A one-way link between two CPU ranks: a bounded ring of message slots owned by the link (like NCCL's FIFO buffers).
// The sender copies data INTO a free slot and posts it; the receiver reads the oldest posted slot (adds it to or
// copies it into its own buffer) and releases it. Every message is a real copy through memory the two ranks share,
// so the bytes a rank sends cost what they would cost over a link: memory traffic and time.
//
// When a rank fails, its peers must not wait for it forever: abort() wakes both ends, and from then on every wait on
// the channel throws PeerFailed (the communicator aborts all its links when any rank's work throws).
//
// One sender thread and one receiver thread per channel. A rank that must wait spins while spinning pays (when every
// rank has a core of its own, as NCCL's kernels poll their FIFOs), then yields its core for a while, then sleeps on a
// C++20 atomic wait (a futex): cpu/wait_for.h says why, with measurements.
#include <atomic>
#include <cstdint>
#include <memory>
#include <stdexcept>

#include "engine/host_buffer.h"
#include "engine/ledger.h"

namespace dlsys::collectives {

// What a rank waiting on a link throws once another rank has failed (the communicator rethrows that rank's error).
struct PeerFailed : std::runtime_error {
  PeerFailed() : std::runtime_error("another rank failed, so this one stopped waiting for it") {}
};

struct Message {
  const float* data = nullptr;
  std::int64_t count = 0;          // floats in this message (0 for an empty chunk)
  std::uint64_t contributors = 0;  // bit q: rank q's input is summed in (filled only when a run is recorded)
};

class Channel {
 public:
  // `slots` messages of up to `slot_elements` floats each; the slot memory is recorded in `ledger` under "comm".
  // `poll`: let a waiting end spin before it yields and sleeps (only worth it when both ends have a core of their own).
  // `wire_gbps` > 0 emulates a wire of that bandwidth behind the copy (CommOptions::link_gbps says why).
  Channel(MemoryLedger& ledger, std::int64_t slot_elements, int slots, bool poll, double wire_gbps = 0);
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  std::int64_t slot_elements() const { return slot_elements_; }

  // Sender: the next free slot (waiting while all are full) to write up to slot_elements floats into, then post()
  // to hand it over. Writing straight into the slot lets a rank reduce into its outgoing message (no extra copy).
  float* acquire();
  void post(std::int64_t count, std::uint64_t contributors = 0);
  // acquire(), copy `count` floats from `source`, post().
  void send(const float* source, std::int64_t count, std::uint64_t contributors = 0);
  // Receiver: the oldest posted message, waiting until there is one. Valid until release().
  Message receive();
  void release();

  std::int64_t bytes_sent() const { return bytes_sent_; }  // over the channel's life; read when no rank runs

  // Wakes both ends; every acquire() and receive() from now on throws PeerFailed. Any thread may call it, any time.
  void abort();

 private:
  float* slot(std::uint32_t index) {
    return storage_.data() + static_cast<std::int64_t>(index % slots_) * slot_elements_;
  }

  HostBuffer<float> storage_;  // (slots, slot_elements) row-major
  std::int64_t slot_elements_;
  std::uint32_t slots_;
  bool poll_;
  struct SlotMeta {
    std::int64_t count = 0;
    std::uint64_t contributors = 0;
    std::int64_t arrives_ns = 0;  // on an emulated wire: when its last byte is through (steady_clock); else 0
  };
  std::unique_ptr<SlotMeta[]> meta_;
  // The emulated wire (sender's side): bytes per nanosecond, 0 for none, and when the wire is free of what it carries.
  double wire_bytes_per_ns_;
  std::int64_t wire_free_ns_ = 0;
  // Counters only grow (and wrap): posted - released = messages waiting. Separate cache lines so the sender's and the
  // receiver's updates do not bounce one line between cores.
  alignas(64) std::atomic<std::uint32_t> posted_{0};
  alignas(64) std::atomic<std::uint32_t> released_{0};
  alignas(64) std::int64_t bytes_sent_ = 0;
  std::atomic<bool> aborted_{false};
};

// Helpers over whole ranges, cut into slot-sized segments (an empty range is still one empty message).
void send_range(Channel& channel, const float* source, std::int64_t count, std::uint64_t contributors = 0);
// Takes the oldest message and releases it: target = mine + message (a reduction) when `mine` is given, else a copy.
// `mine` may equal `target` (in place). Returns the message's contributors.
std::uint64_t receive_segment(Channel& channel, float* target, const float* mine);
// Receives what send_range sent: `count` floats into `target` (reduced with `mine` when given).
std::uint64_t receive_range(Channel& channel, float* target, const float* mine, std::int64_t count);

}  // namespace dlsys::collectives
