// NVTX ranges for nnprof's scopes (ProfilerOptions::nvtx, NNPROF_NVTX=1), so that Nsight
// Systems shows them next to the kernels. NVTX v3 is header-only: the headers load the tool
// that NVTX_INJECTION64_PATH names (Nsight Systems sets it) and are no-ops without one.
#include <nvtx3/nvToolsExt.h>

#include <mutex>
#include <unordered_map>

#include "nnprof/detail/thread_state.hpp"

namespace nnprof::detail {

namespace {

nvtxDomainHandle_t domain() {
  static const nvtxDomainHandle_t d = nvtxDomainCreateA("nnprof");
  return d;
}

// One registered string per call site: Nsight then receives a handle, not the text, per range.
nvtxStringHandle_t registered_name(const SourceLocation* site) {
  thread_local std::unordered_map<const SourceLocation*, nvtxStringHandle_t> cache;
  if (auto it = cache.find(site); it != cache.end()) return it->second;
  const nvtxStringHandle_t h = nvtxDomainRegisterStringA(domain(), site->name);
  cache.emplace(site, h);
  return h;
}

}  // namespace

void nvtx_push(const SourceLocation* site) noexcept {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  try {
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = registered_name(site);
  } catch (...) {
    // Out of memory for the cache: this range goes unnamed rather than unbalanced.
    a.messageType = NVTX_MESSAGE_UNKNOWN;
  }
  nvtxDomainRangePushEx(domain(), &a);
}

void nvtx_pop() noexcept { nvtxDomainRangePop(domain()); }

}  // namespace nnprof::detail
