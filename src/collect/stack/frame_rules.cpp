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
  std::unordered_map<std::uintptr_t, FrameRule> cache;

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

  // `known_module` is false when no module holds `pc` (yet: one loaded since the last report
  // is found at a later look-up), so the answer must not be cached.
  FrameRule look_up(std::uintptr_t pc, bool& known_module) {
    FrameRule rule;
    known_module = false;
    if (dwfl == nullptr) return rule;
    Dwfl_Module* module = dwfl_addrmodule(dwfl, pc);
    if (module == nullptr && std::chrono::steady_clock::now() - last_report > kReportAtMostEvery) {
      report();
      module = dwfl_addrmodule(dwfl, pc);
    }
    if (module == nullptr) return rule;
    known_module = true;
    Dwarf_Addr bias = 0;
    Dwarf_CFI* cfi = dwfl_module_eh_cfi(module, &bias);
    if (cfi == nullptr) cfi = dwfl_module_dwarf_cfi(module, &bias);
    Dwarf_Frame* frame = nullptr;
    if (cfi == nullptr || dwarf_cfi_addrframe(cfi, pc - bias, &frame) != 0) return rule;
    Dwarf_Op* ops = nullptr;
    std::size_t nops = 0;
    rule.cfa.base = CfaRule::Base::Other;
    if (dwarf_frame_cfa(frame, &ops, &nops) == 0 && nops == 1) {
      unsigned reg = ~0u;
      if (ops[0].atom == DW_OP_bregx) {
        reg = static_cast<unsigned>(ops[0].number);
        rule.cfa.offset = static_cast<std::int64_t>(ops[0].number2);
      } else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
        reg = ops[0].atom - DW_OP_breg0;
        rule.cfa.offset = static_cast<std::int64_t>(ops[0].number);
      }
      if (reg == kDwarfRsp) rule.cfa.base = CfaRule::Base::StackPointer;
      if (reg == kDwarfRbp) rule.cfa.base = CfaRule::Base::FramePointer;
    }
    Dwarf_Addr start = 0, end = 0;
    const int ra = dwarf_frame_info(frame, &start, &end, &rule.signal_frame);
    if (ra >= 0) rule.return_address = saved(frame, ra);
    rule.frame_pointer = saved(frame, static_cast<int>(kDwarfRbp));
    std::free(frame);
    return rule;
  }

  // libdw describes a saved register as a DWARF location: "offset(N)" is
  // DW_OP_call_frame_cfa followed by DW_OP_plus_uconst N (N wraps for negative offsets).
  static SavedRegister saved(Dwarf_Frame* frame, int regno) {
    Dwarf_Op ops_mem[3];
    Dwarf_Op* ops = nullptr;
    std::size_t nops = 0;
    SavedRegister r;
    if (dwarf_frame_register(frame, regno, ops_mem, &ops, &nops) != 0) return r;
    if (nops == 0) {
      r.kind = ops == nullptr ? SavedRegister::Kind::SameValue : SavedRegister::Kind::Undefined;
    } else if (ops[0].atom == DW_OP_call_frame_cfa) {
      if (nops == 1) {
        r.kind = SavedRegister::Kind::AtCfa;
      } else if (nops == 2 && ops[1].atom == DW_OP_plus_uconst) {
        r.kind = SavedRegister::Kind::AtCfa;
        r.offset = static_cast<std::int64_t>(ops[1].number);
      }
    }
    return r;
  }
};

FrameRules::FrameRules() : impl_(std::make_unique<Impl>()) {}
FrameRules::~FrameRules() = default;

FrameRule FrameRules::at(std::uintptr_t pc) {
  if (auto it = impl_->cache.find(pc); it != impl_->cache.end()) return it->second;
  bool known_module = false;
  const FrameRule rule = impl_->look_up(pc, known_module);
  if (known_module) impl_->cache.emplace(pc, rule);
  return rule;
}

namespace {

// A word of the interrupted stack: from the copy, else from the frame-pointer pairs the
// handler recorded beyond it (only the two words of each frame record can be found there).
bool read_word(const StackCopy& c, std::uintptr_t address, std::uintptr_t& value) {
  if (address >= c.sp && address - c.sp + 8 <= c.size) {
    std::memcpy(&value, c.bytes + (address - c.sp), 8);
    return true;
  }
  for (std::size_t i = 0; i < c.chain_frames; ++i) {
    const std::uint64_t* record = c.chain + 3 * i;  // frame address, saved rbp, return address
    if (address == record[0] || address == record[0] + 8) {
      value = static_cast<std::uintptr_t>(address == record[0] ? record[1] : record[2]);
      return true;
    }
  }
  return false;
}

}  // namespace

std::size_t FrameRules::unwind_copy(const StackCopy& c, std::uintptr_t* out, std::size_t max, UnwindEnd& end) {
  end = UnwindEnd::Depth;
  if (max == 0) return 0;
  std::size_t n = 0;
  std::uintptr_t pc = c.pc, sp = c.sp, fp = c.fp;
  bool fp_known = true;
  out[n++] = pc;
  // By the tables, while they can step.
  for (bool innermost = true;; innermost = false) {
    if (n == max) return n;
    // A return address points after the call, possibly into the next function's range.
    const FrameRule rule = at(innermost ? pc : pc - 1);
    if (rule.return_address.kind == SavedRegister::Kind::Undefined) {
      end = UnwindEnd::Complete;  // _start and the thread entry say so (cfi_undefined rip)
      return n;
    }
    const bool by_sp = rule.cfa.base == CfaRule::Base::StackPointer;
    const bool by_fp = rule.cfa.base == CfaRule::Base::FramePointer && fp_known;
    if (!(by_sp || by_fp) || rule.return_address.kind != SavedRegister::Kind::AtCfa) break;
    const std::uintptr_t cfa = (by_sp ? sp : fp) + static_cast<std::uintptr_t>(rule.cfa.offset);
    std::uintptr_t ra = 0;
    if (cfa <= sp || !read_word(c, cfa + static_cast<std::uintptr_t>(rule.return_address.offset), ra)) break;
    switch (rule.frame_pointer.kind) {
      case SavedRegister::Kind::SameValue: break;
      case SavedRegister::Kind::AtCfa:
        fp_known = read_word(c, cfa + static_cast<std::uintptr_t>(rule.frame_pointer.offset), fp);
        break;
      default: fp_known = false;
    }
    if (ra == 0) {
      end = UnwindEnd::Complete;
      return n;
    }
    out[n++] = ra - 1;
    pc = ra;
    sp = cfa;
  }
  // Then by the frame-pointer chain, where it is consistent with where the tables got to.
  if (!fp_known) {
    end = UnwindEnd::Incomplete;
    return n;
  }
  // Which record of the interrupted frame-pointer chain `fp` is, so that the kernel's return
  // addresses can go on where the copy ends (kNoRecord: not one of those the copy lets us find).
  constexpr std::size_t kNoRecord = ~std::size_t{0};
  std::size_t record = kNoRecord;
  if (c.kernel_return_count > 0) {
    std::uintptr_t at = c.fp;
    for (std::size_t k = 0; k < c.kernel_return_count; ++k) {
      if (at == fp) {
        record = k;
        break;
      }
      std::uintptr_t next = 0;
      if (!read_word(c, at, next) || next <= at) break;
      at = next;
    }
  }
  while (n < max) {
    if (fp == 0) {
      end = UnwindEnd::Complete;  // the outermost frame clears rbp
      return n;
    }
    std::uintptr_t next = 0, ra = 0;
    const bool consistent = fp >= sp && (fp & 7) == 0;
    if (consistent && record != kNoRecord && !read_word(c, fp + 8, ra)) {
      // Beyond the copy: the kernel read this record and every one after it.
      for (std::size_t k = record; k < c.kernel_return_count && n < max; ++k) {
        if (c.kernel_returns[k] < 4096) break;
        out[n++] = static_cast<std::uintptr_t>(c.kernel_returns[k]) - 1;
      }
      end = n == max ? UnwindEnd::Depth : UnwindEnd::Complete;
      return n;
    }
    if (!consistent || !read_word(c, fp + 8, ra) || !read_word(c, fp, next) || ra < 4096 ||
        (next != 0 && next <= fp)) {
      end = UnwindEnd::Incomplete;
      return n;
    }
    out[n++] = ra - 1;
    sp = fp + 16;
    fp = next;
    if (record != kNoRecord) ++record;
  }
  return n;
}

}  // namespace nnprof::collect
