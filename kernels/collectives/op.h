#pragma once
// Which collective and which algorithm: plain names shared by the CPU ranks, the CUDA code (C++17) and the lessons.
#include <optional>
#include <string>

namespace dlsys::collectives {

enum class Op { AllReduce, ReduceScatter, AllGather };
// RecursiveDoubling, Rabenseifner and Direct are all-reduce only (collective_algorithms.h).
enum class Algorithm { Ring, Naive, RecursiveDoubling, Rabenseifner, Direct };

std::string op_name(Op op);               // "allreduce", "reduce_scatter", "all_gather"
std::string algorithm_name(Algorithm a);  // "ring", "naive", "recursive_doubling", "rabenseifner", "direct"
// The inverse of algorithm_name; none for any other text (such as "library", which is not one of the lab's own).
std::optional<Algorithm> algorithm_from_name(const std::string& name);

}  // namespace dlsys::collectives
