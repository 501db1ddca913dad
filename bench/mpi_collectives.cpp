// The PMPI interposer's cost per collective (issue 24): times MPI_Allreduce of 8 doubles and
// MPI_Barrier on MPI_COMM_WORLD, in alternating blocks so that drift of the machine falls on
// both alike. Run it with and without libnnprof_mpi.so preloaded (docs/PERFORMANCE.md):
//   mpirun -np 2 ./nnprof_bench_mpi_collectives
//   mpirun -np 2 -x LD_PRELOAD=.../libnnprof_mpi.so ./nnprof_bench_mpi_collectives
// Rank 0 prints the median block's nanoseconds per call.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace {

double block_ns(int calls, bool barrier) {
  double in[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8];
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (int i = 0; i < calls; ++i) {
    if (barrier)
      MPI_Barrier(MPI_COMM_WORLD);
    else
      MPI_Allreduce(in, out, 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  return (MPI_Wtime() - start) * 1e9 / calls;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  constexpr int kCalls = 2000, kBlocks = 15;
  std::vector<double> allreduce, barrier;
  for (int b = 0; b < kBlocks; ++b) {
    allreduce.push_back(block_ns(kCalls, false));
    barrier.push_back(block_ns(kCalls, true));
  }
  if (rank == 0)
    std::printf("allreduce(8 doubles) %.0f ns/call, barrier %.0f ns/call (median of %d blocks of %d)\n",
                median(allreduce), median(barrier), kBlocks, kCalls);
  MPI_Finalize();
  return 0;
}
