#include "collect/stack/frame_rules.hpp"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

namespace nnprof::collect {

namespace {
constexpr unsigned kDwarfRsp = 7, kDwarfRbp = 6;  // x86-64 DWARF register numbers
constexpr auto kReportAtMostEvery = std::chrono::milliseconds(100);
}  // namespace

struct FrameRules::Impl {
  char* debuginfo_path = nullptr;
  Dwfl_Callbacks callbacks{};  // libdw keeps a pointer to it
  Dwfl* dwfl = nullptr;
  std::chrono::steady_clock::time_point last_report{};
  std::unordered_map<std::uintptr_t, CfaRule> cache;

  Impl() {
    callbacks.find_elf = dwfl_linux_proc_find_elf;
    callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
    callbacks.debuginfo_path = &debuginfo_path;
    dwfl = dwfl_begin(&callbacks);
    if (dwfl != nullptr) report();
  }
  ~Impl() {
    if (dwfl != nullptr) dwfl_end(dwfl);
  }

  // (Re)reads /proc/self/maps: modules loaded since are known afterwards.
  void report() {
    last_report = std::chrono::steady_clock::now();
    dwfl_report_begin(dwfl);
    dwfl_linux_proc_report(dwfl, getpid());
    dwfl_report_end(dwfl, nullptr, nullptr);
  }

  CfaRule look_up(std::uintptr_t pc) {
    CfaRule rule;
    if (dwfl == nullptr) return rule;
    Dwfl_Module* module = dwfl_addrmodule(dwfl, pc);
    if (module == nullptr && std::chrono::steady_clock::now() - last_report > kReportAtMostEvery) {
      report();
      module = dwfl_addrmodule(dwfl, pc);
    }
    if (module == nullptr) return rule;
    Dwarf_Addr bias = 0;
    Dwarf_CFI* cfi = dwfl_module_eh_cfi(module, &bias);
    if (cfi == nullptr) cfi = dwfl_module_dwarf_cfi(module, &bias);
    Dwarf_Frame* frame = nullptr;
    if (cfi == nullptr || dwarf_cfi_addrframe(cfi, pc - bias, &frame) != 0) return rule;
    Dwarf_Op* ops = nullptr;
    std::size_t nops = 0;
    rule.base = CfaRule::Base::Other;
    if (dwarf_frame_cfa(frame, &ops, &nops) == 0 && nops == 1) {
      unsigned reg = ~0u;
      if (ops[0].atom == DW_OP_bregx) {
        reg = static_cast<unsigned>(ops[0].number);
        rule.offset = static_cast<std::int64_t>(ops[0].number2);
      } else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
        reg = ops[0].atom - DW_OP_breg0;
        rule.offset = static_cast<std::int64_t>(ops[0].number);
      }
      if (reg == kDwarfRsp) rule.base = CfaRule::Base::StackPointer;
      if (reg == kDwarfRbp) rule.base = CfaRule::Base::FramePointer;
    }
    std::free(frame);
    return rule;
  }
};

FrameRules::FrameRules() : impl_(std::make_unique<Impl>()) {}
FrameRules::~FrameRules() = default;

CfaRule FrameRules::at(std::uintptr_t pc) {
  if (auto it = impl_->cache.find(pc); it != impl_->cache.end()) return it->second;
  const CfaRule rule = impl_->look_up(pc);
  impl_->cache.emplace(pc, rule);
  return rule;
}

std::uintptr_t FrameRules::caller_of_frameless(std::uintptr_t pc, const unsigned char* stack,
                                               std::uint64_t stack_bytes) {
  const CfaRule rule = at(pc);
  if (rule.base != CfaRule::Base::StackPointer || rule.offset < 8) return 0;
  const auto at_offset = static_cast<std::uint64_t>(rule.offset - 8);  // the return address sits just below the CFA
  if (stack == nullptr || at_offset + 8 > stack_bytes) return 0;
  std::uintptr_t ret = 0;
  std::memcpy(&ret, stack + at_offset, sizeof ret);
  return ret;
}

}  // namespace nnprof::collect
