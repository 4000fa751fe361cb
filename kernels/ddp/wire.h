#pragma once
// What gradients travel as between ranks: fp32 as computed, or rounded to 16 bits (bf16 or fp16) into real 2-byte
// storage, half the bytes on every link (PyTorch's fp16/bf16 compression communication hooks do the same).
#include <cstdint>
#include <string>

#include "kernels/collectives/communicator.h"
#include "kernels/ddp/wire_format.h"

namespace dlsys::ddp {

// Rounds `count` fp32 values into 16-bit storage, and back (the inverse is exact).
void encode_16(WireFormat f, const float* values, std::uint16_t* out, std::int64_t count);
void decode_16(WireFormat f, const std::uint16_t* values, float* out, std::int64_t count);

// A ring all-reduce (sum) of `count` 16-bit values in place, on rank `rank` of `comm` (every rank calls it at once,
// with the same count). `count` must be even: two values travel per 4-byte word of the lab's channels, so the links
// carry exactly 2 bytes per value. Each hop decodes, adds in fp32 and rounds the sum back to 16 bits, as a 16-bit
// reduction on the wire does; the all-gather copies the finished chunks, so every rank ends with identical bits.
void ring_allreduce_16(collectives::Communicator& comm, int rank, WireFormat f, std::uint16_t* data,
                       std::int64_t count);

}  // namespace dlsys::ddp
