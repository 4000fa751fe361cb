// 16-bit gradients on the wire: conversions (the precision lesson's exact round-to-nearest-even helpers) and a ring
// all-reduce over the lab's channels with 16-bit payloads (the same schedule as kernels/collectives' ring: segment by
// segment, every chunk of the program per segment, so all links carry data at once and none can fill up for good).
#include "kernels/ddp/wire.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "engine/errors.h"
#include "kernels/collectives/ring_schedule.h"
#include "kernels/precision/float_format.h"

#ifdef __F16C__
#include <immintrin.h>
#endif

namespace dlsys::ddp {

std::string wire_name(WireFormat f) {
  switch (f) {
    case WireFormat::Fp32:
      return "fp32";
    case WireFormat::Bf16:
      return "bf16";
    case WireFormat::Fp16:
      return "fp16";
  }
  return "?";
}

namespace {

// The format is a template parameter so the per-element loops carry no branch on it.
// fp16 goes through the CPU's F16C instructions where the build has them (IEEE round-to-nearest-even, the same bits
// as the precision lesson's software conversion, which the tests hold them against); bf16 is a shift and a rounding.
template <WireFormat F>
inline std::uint16_t to_bits(float v) {
  if constexpr (F == WireFormat::Bf16) {
    return precision::bf16_bits_from_float(v);
  } else {
#ifdef __F16C__
    return std::uint16_t(_cvtss_sh(v, _MM_FROUND_TO_NEAREST_INT));
#else
    return precision::fp16_bits_from_float(v);
#endif
  }
}
template <WireFormat F>
inline float from_bits(std::uint16_t b) {
  if constexpr (F == WireFormat::Bf16) {
    return precision::float_from_bf16_bits(b);
  } else {
#ifdef __F16C__
    return _cvtsh_ss(b);
#else
    return precision::float_from_fp16_bits(b);
#endif
  }
}

// Calls body.template operator()<F>() with the format as a compile-time constant.
template <typename Body>
void with_format(WireFormat f, Body body) {
  if (f == WireFormat::Bf16)
    body.template operator()<WireFormat::Bf16>();
  else
    body.template operator()<WireFormat::Fp16>();
}

// Two 16-bit values per 4-byte word of a channel slot; `halves` is even.
void pack(float* slot, const std::uint16_t* halves, std::int64_t words) {
  if (words > 0) std::memcpy(slot, halves, std::size_t(words) * 4);
}

// out = round16(decode(a) + decode(b)), element by element.
void add_16(WireFormat f, std::uint16_t* out, const std::uint16_t* a, const std::uint16_t* b, std::int64_t count) {
  with_format(f, [&]<WireFormat F>() {
    for (std::int64_t i = 0; i < count; ++i) out[i] = to_bits<F>(from_bits<F>(a[i]) + from_bits<F>(b[i]));
  });
}

enum class Action { Send, ReduceSend, ReduceStoreSend, StoreSend, Store };
struct Primitive {
  Action action;
  int chunk;
};

std::vector<Primitive> allreduce_program(int rank, int n) {
  using namespace collectives;
  std::vector<Primitive> program{{Action::Send, reduce_scatter_send_chunk(rank, 0, n)}};
  for (int s = 0; s < n - 1; ++s)
    program.push_back(
        {s == n - 2 ? Action::ReduceStoreSend : Action::ReduceSend, reduce_scatter_recv_chunk(rank, s, n)});
  for (int s = 0; s < n - 1; ++s)
    program.push_back({s == n - 2 ? Action::Store : Action::StoreSend, all_gather_recv_chunk(rank, s, n)});
  return program;
}

}  // namespace

void encode_16(WireFormat f, const float* values, std::uint16_t* out, std::int64_t count) {
  with_format(f, [&]<WireFormat F>() {
    for (std::int64_t i = 0; i < count; ++i) out[i] = to_bits<F>(values[i]);
  });
}

void decode_16(WireFormat f, const std::uint16_t* values, float* out, std::int64_t count) {
  with_format(f, [&]<WireFormat F>() {
    for (std::int64_t i = 0; i < count; ++i) out[i] = from_bits<F>(values[i]);
  });
}

void ring_allreduce_16(collectives::Communicator& comm, int rank, WireFormat f, std::uint16_t* data,
                       std::int64_t count) {
  using namespace collectives;
  if (count % 2 != 0) throw RunFailure("a 16-bit ring all-reduce needs an even count (two values per word)");
  const int n = comm.size();
  if (n == 1) return;
  const std::int64_t words = count / 2, segment = comm.segment_elements();  // in words
  Channel& to_next = comm.link(rank, next_rank(rank, n));
  Channel& from_prev = comm.link(prev_rank(rank, n), rank);
  const std::vector<Primitive> program = allreduce_program(rank, n);
  const std::int64_t segments = segment_count(chunk_size(words, n, 0), segment);
  std::vector<std::uint16_t> sum(std::size_t(2 * segment)), incoming(sum.size());
  for (std::int64_t k = 0; k < segments; ++k) {
    for (const Primitive& prim : program) {
      const std::int64_t size = chunk_size(words, n, prim.chunk);
      if (k >= segment_count(size, segment)) continue;
      const std::int64_t offset = chunk_begin(words, n, prim.chunk) + k * segment;
      const std::int64_t m = std::min(segment, size - k * segment);
      std::uint16_t* mine = data + 2 * offset;
      if (prim.action == Action::Send) {
        float* out = to_next.acquire();
        pack(out, mine, m);
        to_next.post(m);
        continue;
      }
      const Message in = from_prev.receive();
      // Copied out of the slot rather than read through a cast: the slot is float storage (strict aliasing).
      if (m > 0) std::memcpy(incoming.data(), in.data, std::size_t(m) * 4);
      const std::uint16_t* result = incoming.data();
      switch (prim.action) {
        case Action::ReduceSend:
          add_16(f, sum.data(), mine, incoming.data(), 2 * m);
          result = sum.data();
          break;
        case Action::ReduceStoreSend:
          add_16(f, mine, mine, incoming.data(), 2 * m);
          result = mine;
          break;
        case Action::StoreSend:
        case Action::Store:
          if (m > 0) std::memcpy(mine, incoming.data(), std::size_t(m) * 4);
          result = mine;
          break;
        case Action::Send:
          break;
      }
      if (prim.action != Action::Store) {
        float* out = to_next.acquire();
        pack(out, result, m);
        to_next.post(m);
      }
      from_prev.release();
    }
  }
}

}  // namespace dlsys::ddp
