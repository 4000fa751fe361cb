#pragma once
// `run LESSON --set launcher=mpi` under mpirun or srun: this process is one rank of the MPI world. Every rank parses
// and checks its own command line, the ranks agree that they were all given the same parameters, all run the lesson
// together, and rank 0 alone prints the report and writes --json/--csv. A rank that meets bad input or a failure
// ends every rank with the same exit code, and rank 0 says which rank and why.
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "engine/mpi_world.h"
#include "engine/run_result.h"
#include "lessons/common/lesson.h"

namespace dlsys {

// Whether the assignments ask for ranks as processes (the last `launcher=` one says `mpi`) and the build has MPI.
// Without MPI in the build the ordinary run refuses the parameter itself, with the reason.
bool asks_for_processes(const std::vector<std::string>& assignments);
// Whether a launcher started this process as one of several (and the build has MPI): then it joins the others, which
// may be ranks as processes waiting for it, and every rank learns whether they were all given the same command line.
bool started_beside_other_processes();

struct ProcessRunRequest {
  std::string lesson;
  std::vector<std::string> assignments;
  bool quick = false;
  std::string backend = "auto";
  double peer_silence_s = mpi::kDefaultPeerSilenceS;  // 0: no watchdog
};

// Ranks given another lesson or other parameters than rank 0's (launcher=threads among launcher=mpi ranks included),
// or a run that is not ranks as processes (each process would run it whole and write the same files), end every rank
// with exit 2. Returns the exit code every rank ends with. `write_outputs` runs on rank 0 only (it may throw BadInput
// or RunFailure, which every rank then ends with). Throws BadInput before MPI_Init when no launcher started the
// process.
int run_as_mpi_rank(const ProcessRunRequest& request,
                    const std::function<void(const Lesson&, const RunResult&)>& write_outputs, std::ostream& err);

}  // namespace dlsys
