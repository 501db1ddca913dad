// An unmodified MPI program for the distributed-recording tests (tests/test_distributed_record.cpp):
// each collective the interposer wraps, on MPI_COMM_WORLD and on a split communicator, a few
// rounds each, then a ring of point-to-point messages. Knows nothing of nnprof.
#include <mpi.h>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm halves = MPI_COMM_NULL;  // ranks 0,2,... and 1,3,...
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &halves);
  std::vector<double> data(1024, rank), out(1024 * static_cast<std::size_t>(size));
  double total = 0;
  for (int round = 0; round < 5; ++round) {
    MPI_Allreduce(data.data(), out.data(), 1024, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    total += out[0];
    MPI_Bcast(data.data(), 256, MPI_DOUBLE, 1 % size, MPI_COMM_WORLD);
    MPI_Reduce(data.data(), out.data(), 128, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Allgather(data.data(), 64, MPI_DOUBLE, out.data(), 64, MPI_DOUBLE, MPI_COMM_WORLD);
    MPI_Gather(data.data(), 32, MPI_DOUBLE, out.data(), 32, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Scatter(out.data(), 16, MPI_DOUBLE, data.data(), 16, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Alltoall(data.data(), 8, MPI_DOUBLE, out.data(), 8, MPI_DOUBLE, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, data.data(), 512, MPI_DOUBLE, MPI_MAX, halves);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  // A ring of point-to-point messages: blocking to the right, non-blocking from the left.
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Irecv(out.data(), 100, MPI_DOUBLE, (rank + size - 1) % size, 7, MPI_COMM_WORLD, &request);
  MPI_Send(data.data(), 100, MPI_DOUBLE, (rank + 1) % size, 7, MPI_COMM_WORLD);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  MPI_Comm_free(&halves);
  MPI_Finalize();
  std::printf("rank %d of %d: %.0f\n", rank, size, total);
  return 0;
}
