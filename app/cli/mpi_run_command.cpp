#include "app/cli/mpi_run_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <sstream>

#include "engine/errors.h"
#include "engine/json_io.h"
#include "engine/mpi_world.h"
#include "lessons/common/run_lesson.h"
#include "lessons/registry.h"

namespace dlsys {

namespace {

constexpr const char* kLauncherKey = "launcher=";

// Runs `body`, turning what it throws into an exit code and message (0 and empty when it returns).
struct Outcome {
  int code = 0;
  std::string message;
};
template <class Body>
Outcome outcome_of(Body&& body) {
  try {
    body();
    return {};
  } catch (const BadInput& e) {
    return {kExitBadInput, e.what()};
  } catch (const RunFailure& e) {
    return {kExitRunFailure, std::string("run failed: ") + e.what()};
  } catch (const std::exception& e) {
    return {kExitRunFailure, std::string("internal error: ") + e.what()};
  }
}

// Agrees on `mine` with every rank; on a failure rank 0 prints it, naming the rank that had it.
int agreed_code(const Outcome& mine, const mpi::World& world, std::ostream& err) {
  const mpi::Agreement agreed = mpi::agree(mine.code, mine.message);
  if (agreed.code != 0 && world.rank == 0)
    err << fmt::format("dlsys-lab: rank {} of {}: {}\n", agreed.rank, world.size, agreed.message);
  return agreed.code;
}

// The request as one text, line by line "key=value", the same on every rank that was given the same command line.
std::string canonical_request(const ProcessRunRequest& request, BackendKind backend, const ParamValues& params) {
  std::string out = fmt::format("lesson={}\nbackend={}\n", request.lesson, backend_name(backend));
  for (const auto& [key, value] : params.all()) out += key + "=" + value.text + "\n";
  return out;
}

std::map<std::string, std::string> lines_by_key(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const auto eq = line.find('=');
    out[line.substr(0, eq)] = eq == std::string::npos ? "" : line.substr(eq + 1);
  }
  return out;
}

// Another lesson than rank 0's, or else the first parameter whose value differs from rank 0's, as BadInput.
void check_same_as_rank0(const std::string& mine, const std::string& rank0, int rank) {
  if (mine == rank0) return;
  const auto a = lines_by_key(rank0), b = lines_by_key(mine);
  if (a.at("lesson") != b.at("lesson"))
    throw BadInput(fmt::format(
        "the lesson differs between ranks: rank 0 runs '{}', rank {} runs '{}'; every rank must run the same lesson "
        "with the same --set, --quick and --backend",
        clip_for_message(a.at("lesson")), rank, clip_for_message(b.at("lesson"))));
  for (const auto& [key, value] : a) {
    const auto it = b.find(key);
    const std::string other = it == b.end() ? "(absent)" : it->second;
    if (other != value)
      throw BadInput(fmt::format(
          "parameter '{}' differs between ranks: rank 0 has '{}', rank {} has '{}'; every rank must be given the "
          "same --set, --quick and --backend",
          key, clip_for_message(value), rank, clip_for_message(other)));
  }
  throw BadInput(
      fmt::format("rank {} was given other parameters than rank 0; every rank must be given the same", rank));
}

// Ranks that agree on a run that is not ranks as processes: each would run it whole, alone, and write the same files.
void check_runs_as_processes(const Lesson& lesson, const ParamValues& params, const mpi::World& world) {
  if (params.has("launcher") && params.text("launcher") == "mpi") return;
  const std::string started =
      fmt::format("this process is one of {} that {} started", world.size, mpi::launcher_in_environment());
  if (!params.has("launcher")) {
    std::string with_processes;
    for (const Lesson* l : all_lessons())
      if (find_spec(l->params(), "launcher") != nullptr)
        with_processes += (with_processes.empty() ? "" : ", ") + l->id();
    throw BadInput(
        fmt::format("lesson '{}' runs in one process, and {}: each would run it whole and write the same "
                    "files; start it without a launcher (allowed under one: {} with --set launcher=mpi)",
                    lesson.id(), started, with_processes));
  }
  throw BadInput(
      fmt::format("parameter 'launcher': value '{}' is not allowed when {}: each process would run the "
                  "whole run on its own threads and write the same files; allowed: launcher=mpi on every "
                  "rank, or one process started without a launcher",
                  clip_for_message(params.text("launcher")), started));
}

}  // namespace

bool started_beside_other_processes() { return mpi::built_with_mpi() && mpi::world_size_in_environment() > 1; }

bool asks_for_processes(const std::vector<std::string>& assignments) {
  std::optional<std::string> launcher;
  for (const std::string& a : assignments)
    if (a.rfind(kLauncherKey, 0) == 0) launcher = a.substr(std::string(kLauncherKey).size());
  return launcher == "mpi" && mpi::built_with_mpi();
}

int run_as_mpi_rank(const ProcessRunRequest& request,
                    const std::function<void(const Lesson&, const RunResult&)>& write_outputs, std::ostream& err) {
  // Before MPI_Init: without a launcher's environment MPI would make a world of one, silently.
  if (mpi::launcher_in_environment().empty())
    throw BadInput(fmt::format(
        "parameter 'launcher': value 'mpi' needs an MPI launcher around this process (none of OMPI_COMM_WORLD_SIZE, "
        "PMIX_RANK, PMI_RANK is set): start it as `mpirun -np 2 dlsys-lab run {} --set launcher=mpi ...` or with "
        "srun; without one, allowed: threads",
        request.lesson));
  mpi::Session session(request.peer_silence_s);
  const mpi::World& world = session.world();

  // Each rank reads its own command line; the ranks agree before any of them goes on.
  const Lesson* lesson = nullptr;
  BackendKind backend = BackendKind::Cpu;
  ParamValues params;
  const Outcome parsed = outcome_of([&] {
    lesson = &find_lesson(request.lesson);
    backend = backend_for(*lesson, request.backend);
    std::vector<std::string> assignments = lesson->process_launch_params(world.size, request.quick);
    assignments.insert(assignments.end(), request.assignments.begin(), request.assignments.end());
    params = parse_lesson_params(*lesson, assignments, backend, request.quick);
    lesson->check_run_resources(params, backend);
  });
  if (const int code = agreed_code(parsed, world, err)) return code;

  // One process given other parameters would measure something else, or wait forever in a collective.
  const std::string mine = canonical_request(request, backend, params);
  const std::string rank0 = mpi::broadcast_text(mine, 0);
  if (const int code = agreed_code(outcome_of([&] { check_same_as_rank0(mine, rank0, world.rank); }), world, err))
    return code;
  if (const int code = agreed_code(outcome_of([&] { check_runs_as_processes(*lesson, params, world); }), world, err))
    return code;

  RunResult result;
  RunControl control;
  const Outcome ran = outcome_of([&] { result = run_lesson(*lesson, params, backend, control); });
  if (ran.code != 0) {
    // A failure every rank agreed on (inside the lesson) ends each rank alike; one rank's own failure cannot be
    // agreed on while the others wait in a collective, so it ends them all at once.
    if (mpi::failure_agreed()) {
      if (world.rank == 0) err << fmt::format("dlsys-lab: {}\n", ran.message);
      return ran.code;
    }
    err << fmt::format("dlsys-lab: rank {} of {}: {}; ending every rank\n", world.rank, world.size, ran.message);
    mpi::abort_all(ran.code);
  }

  // The probe counts the other ranks on this host as other programs; they are this run, so they are taken out.
  RunConditions& conditions = result.backend.conditions;
  const double other_ranks_cores = mpi::sum_over_host_ranks(conditions.own_cpu_cores) - conditions.own_cpu_cores;
  conditions.other_busy_cores = std::max(0.0, conditions.other_busy_cores - other_ranks_cores);
  conditions.own_cpu_cores += other_ranks_cores;

  const Outcome written = outcome_of([&] {
    if (world.rank == 0) write_outputs(*lesson, result);
  });
  return agreed_code(written, world, err);
}

}  // namespace dlsys
