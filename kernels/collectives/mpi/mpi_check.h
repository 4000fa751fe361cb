#pragma once
// An MPI call's error code as a RunFailure with MPI's own text (the world's error handler returns codes).
#include <mpi.h>

#include <string>

#include "engine/errors.h"

namespace dlsys::collectives::mpi {

inline void check(int status, const char* what) {
  if (status == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(status, text, &length);
  throw RunFailure(std::string(what) + " failed: " + text);
}

}  // namespace dlsys::collectives::mpi
