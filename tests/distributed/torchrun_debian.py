# torchrun (torch.distributed.run) as Debian 12 ships it, with one defect of its launcher mended
# in this process only, for tests/test_distributed_record.cpp.
#
# torch 1.13's elastic agent parses its --redirects/--tee values with Std.from_str, which
# compares each Std member (an Enum) with an int; Python 3.11 no longer equates the two, so it
# returns None and torchrun fails in to_map() before it starts a worker. Everything else (the
# rendezvous, the agent, the workers, their RANK/WORLD_SIZE/LOCAL_RANK/MASTER_*/TORCHELASTIC_*
# environment) is Debian's torchrun.
import sys

import torch.distributed.elastic.multiprocessing.api as api


def std_from_str(value):
    if ":" not in value:
        return api.Std(int(value))
    return {int(rank): api.Std(int(std)) for rank, std in (item.split(":") for item in value.split(","))}


api.Std.from_str = staticmethod(std_from_str)

from torch.distributed.run import main  # noqa: E402  (after the mend, which it reads at parse time)

sys.exit(main())
