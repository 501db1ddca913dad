// The floor under any PyTorch operator observer: a global at::RecordFunction callback that
// does nothing, preloaded into a Python process by bench/torch_overhead.py --floor. What it
// costs per operator is what LibTorch charges for calling observers at all (building each
// RecordFunction, and with TORCH_FLOOR_INPUTS=1 boxing the operator's inputs, as nnprof's
// observer and torch.profiler(record_shapes=True) both ask for). Built as
// build/release/lib/libnnprof_torch_callback_floor.so where LibTorch is found.
#include <ATen/record_function.h>

#include <cstdlib>
#include <cstring>
#include <memory>

namespace {

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction&) { return nullptr; }

void on_end(const at::RecordFunction&, at::ObserverContext*) {}

struct InstallAtLoad {
  InstallAtLoad() {
    const char* inputs = std::getenv("TORCH_FLOOR_INPUTS");
    const bool needs_inputs = inputs != nullptr && std::strcmp(inputs, "1") == 0;
    at::addGlobalCallback(at::RecordFunctionCallback(on_start, on_end).needsInputs(needs_inputs));
  }
} install_at_load;

}  // namespace
