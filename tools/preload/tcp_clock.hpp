// The clock exchange of ranks without MPI (torch.distributed under torchrun): NTP-style round
// trips with rank 0 over TCP, at MASTER_ADDR on the port after MASTER_PORT (tcp_clock.cpp).
#pragma once

#include <cstdint>

namespace nnprof::agent {

/// In a rank of a job with MASTER_ADDR and MASTER_PORT: rank 0 starts answering round trips on
/// a thread, every other rank measures its offset on a thread of its own and stores it
/// (Profiler::set_clock_alignment). Returns at once; failures are said on stderr and leave the
/// rank unaligned.
void start_tcp_clock(std::int32_t rank, std::int32_t world_size) noexcept;
/// At the end of the run, before the profile is written: a second exchange over the same
/// connection gives the drift. Bounded (a rank 0 that has ended answers nothing).
void finish_tcp_clock() noexcept;

}  // namespace nnprof::agent
