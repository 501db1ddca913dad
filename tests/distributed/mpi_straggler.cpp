// An MPI training loop for the straggler check of tests/test_distributed_record.cpp: each step
// computes for about a millisecond, then all ranks meet in an allreduce. In step 3 the rank named
// by argv[1] sleeps argv[2] milliseconds before the allreduce, so every other rank waits that
// long for it there. The step is an nnprof scope (the merge's analysis finds steps as the
// repeated scope around collectives); the collectives reach nnprof through libnnprof_mpi.
#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

#include "nnprof/nnprof.hpp"

namespace {
// About a millisecond of arithmetic the compiler cannot drop.
double compute(std::vector<double>& v) {
  double s = 0;
  for (int pass = 0; pass < 10; ++pass)
    for (double& x : v) s += (x = x * 1.000001 + 0.5);
  return s;
}
}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int late_rank = argc > 1 ? std::atoi(argv[1]) : 2;
  const int sleep_ms = argc > 2 ? std::atoi(argv[2]) : 200;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::vector<double> v(20000, rank), out(256);
  double sink = 0;
  for (int step = 0; step < 6; ++step) {
    NNPROF_SCOPE("train_step");
    {
      NNPROF_SCOPE("forward_backward");
      sink += compute(v);
      if (step == 3 && rank == late_rank) std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
    }
    MPI_Allreduce(v.data(), out.data(), 256, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return sink == 0.123 ? 1 : 0;
}
