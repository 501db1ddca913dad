// A stand-in for Nsight Systems' NVTX injection library: NVTX loads the library that
// NVTX_INJECTION64_PATH names and calls its InitializeInjectionNvtx2, which fills NVTX's
// function table. This one records the domain ranges pushed and popped, so that tests can check
// what nnprof emits (test_nvtx.cpp) without Nsight installed.
#include <nvtx3/nvToolsExt.h>

#include <mutex>
#include <string>
#include <vector>

namespace {

std::mutex g_mu;
std::vector<std::string> g_events;  // "push <name>" or "pop"
std::vector<std::string*> g_strings;  // registered strings, handed out as handles (never freed)

nvtxDomainHandle_t create_domain(const char* name) {
  std::lock_guard lock(g_mu);
  g_events.push_back(std::string("domain ") + name);
  return reinterpret_cast<nvtxDomainHandle_t>(new std::string(name));
}

nvtxStringHandle_t register_string(nvtxDomainHandle_t, const char* s) {
  std::lock_guard lock(g_mu);
  g_strings.push_back(new std::string(s));
  return reinterpret_cast<nvtxStringHandle_t>(g_strings.back());
}

int push(nvtxDomainHandle_t, const nvtxEventAttributes_t* a) {
  std::lock_guard lock(g_mu);
  std::string name = "(unnamed)";
  if (a != nullptr && a->messageType == NVTX_MESSAGE_TYPE_REGISTERED && a->message.registered != nullptr)
    name = *reinterpret_cast<const std::string*>(a->message.registered);
  g_events.push_back("push " + name);
  return 0;
}

int pop(nvtxDomainHandle_t) {
  std::lock_guard lock(g_mu);
  g_events.emplace_back("pop");
  return 0;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table) {
  const auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get_table(NVTX_ETID_CALLBACKS));
  if (callbacks == nullptr) return 0;
  NvtxFunctionTable table = nullptr;
  unsigned int size = 0;
  if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size) || table == nullptr) return 0;
  auto set = [&](unsigned int id, auto fn) {
    if (id <= size) *table[id] = reinterpret_cast<NvtxFunctionPointer>(fn);
  };
  set(NVTX_CBID_CORE2_DomainCreateA, &create_domain);
  set(NVTX_CBID_CORE2_DomainRegisterStringA, &register_string);
  set(NVTX_CBID_CORE2_DomainRangePushEx, &push);
  set(NVTX_CBID_CORE2_DomainRangePop, &pop);
  return 1;
}

/// The events recorded so far, one per line.
__attribute__((visibility("default"))) const char* nvtx_recorder_events() {
  static std::string text;
  std::lock_guard lock(g_mu);
  text.clear();
  for (const std::string& e : g_events) text += e + "\n";
  return text.c_str();
}
}
