#pragma once
// The ddp lesson with ranks as processes (`--set launcher=mpi` under mpirun or srun): this process is one rank of
// the MPI world and trains its share of each batch. On the CPU it all-reduces each gradient bucket with the lab's ring
// over MPI from its communication thread; on a GPU with the lab's ring over CUDA IPC on its communication stream
// (every rank on one host). Only the chosen configuration is trained (the variants and sweeps change N or the wire,
// which the processes cannot).
#include <string>
#include <vector>

#include "kernels/ddp/trainer.h"
#include "lessons/common/lesson.h"
#include "lessons/ddp/ddp_params.h"

namespace dlsys::ddp {

// What a run with one rank per process starts from, before the user's assignments: n is the world size.
std::vector<std::string> process_launch_params(int world_size);

// launcher=mpi: refuses (BadInput) a build without MPI, no MPI world (the GUI, a plain start), a world of one, n
// other than the world size, an MPI library without MPI_THREAD_SERIALIZED, ranks on several hosts on the cuda
// backend, mode=dataparallel and 16-bit wire gradients, before anything is made.
void check_process_run(const DdpParams& params, BackendKind backend);

// Every rank calls it. Rank 0's result holds every rank: steps[s][r], every rank's last-step spans, rank 0's
// weights and counted bytes, and replicas_identical (every rank's weights compared with rank 0's, bit for bit);
// the other ranks' results hold only themselves.
TrainResult train_over_processes(const TrainConfig& config, const training::DataSet& data, MemoryLedger& ledger,
                                 BackendKind backend);

// The placement sentence ("ranks are processes under mpirun on <hosts>", oversubscribed when it is; on GPUs also how
// many GPUs they share) and the MPI thread level the session got.
std::string process_placement_text(BackendKind backend);
// On the cuda backend: whether the processes on some host outnumber its GPUs (several ranks take turns on one GPU).
bool processes_share_gpus();
std::string process_thread_level();

}  // namespace dlsys::ddp
