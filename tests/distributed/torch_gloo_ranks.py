# Two torch.distributed ranks on gloo, started by torchrun (tests/test_distributed_record.cpp):
# 3 rounds of all_reduce, broadcast from rank 1 and barrier on the world group.
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
t = torch.ones(4096)
for _ in range(3):
    dist.all_reduce(t)
    dist.broadcast(t, src=1)
    dist.barrier()
dist.destroy_process_group()
