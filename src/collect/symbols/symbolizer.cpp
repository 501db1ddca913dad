#include "collect/symbols/symbolizer.hpp"

#include <cxxabi.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <unordered_map>

namespace nnprof::collect {

namespace {

// One function symbol; `name` points into libdw's copy of the module's string table, which
// lives as long as the module is reported.
struct FunctionSymbol {
  std::uintptr_t address;
  std::uint64_t size;
  const char* name;
  int rank;  // lower wins among aliases at one address
};

// Sorted function symbols of one module: dwfl_module_addrname scans the whole symbol table
// per call (50-180 us per address in shared libraries), a binary search costs ~15 ns.
struct ModuleTable {
  Dwarf_Addr low = 0, high = 0;
  GElf_Addr bias = 0;  // load address minus the ELF's own addresses
  std::string name;  // with low/high, tells a reused Dwfl_Module* from the one we indexed
  std::vector<FunctionSymbol> functions;
  // Executable segments: an address elsewhere (data, .bss) is in no function, whatever
  // symbol precedes it. Empty when the ELF file could not be read: then no filter.
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> code;
  // Compile units by address range (module-relative, sorted), built the first time libdw's own
  // lookup finds no unit: it reads .debug_aranges, which clang emits only when told
  // (-gdwarf-aranges), so without this no clang-built code would get a file and line.
  struct UnitRange {
    Dwarf_Addr low, high;
    Dwarf_Die unit;
  };
  std::optional<std::vector<UnitRange>> units;
  Dwarf_Addr unit_bias = 0;

  bool in_code(std::uintptr_t pc) const {
    if (code.empty()) return true;
    return std::any_of(code.begin(), code.end(), [pc](const auto& r) { return pc >= r.first && pc < r.second; });
  }

  const FunctionSymbol* find(std::uintptr_t pc) const {
    auto it = std::upper_bound(functions.begin(), functions.end(), pc,
                               [](std::uintptr_t a, const FunctionSymbol& f) { return a < f.address; });
    // The nearest start may be a small symbol inside a larger one: look a few entries back.
    for (int back = 0; back < 4 && it != functions.begin(); ++back) {
      --it;
      if (pc < it->address + it->size) return &*it;
      if (it->size == 0 && back == 0) return &*it;  // hand-written code without a size
    }
    return nullptr;
  }
};

// Prefer global over weak over local bindings, then the name with fewer leading
// underscores (malloc over __libc_malloc), then the shorter one.
int binding_rank(unsigned char info, const char* name) {
  const int binding = GELF_ST_BIND(info);
  int rank = binding == STB_GLOBAL ? 0 : binding == STB_WEAK ? 1 : 2;
  int underscores = 0;
  while (name[underscores] == '_') ++underscores;
  return rank * 1024 + std::min(underscores, 1023);
}

std::string demangle(const char* symbol) {
  // Symbol tables from separate debug files carry versions (__libc_start_main@@GLIBC_2.34).
  const std::string name(symbol, std::strcspn(symbol, "@"));
  if (name.starts_with("_Z")) {
    int status = 0;
    char* demangled = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
    if (status == 0 && demangled != nullptr) {
      std::string out(demangled);
      std::free(demangled);
      return out;
    }
    std::free(demangled);
  }
  return name;
}

// Relative names are joined to an absolute compilation directory only: glibc's are both
// relative (./stdlib/msort.c under ./stdlib), and then the name alone reads best.
std::string source_path(const char* file, const char* comp_dir) {
  if (file == nullptr) return {};
  if (file[0] != '/' && comp_dir != nullptr && comp_dir[0] == '/') return std::string(comp_dir) + "/" + file;
  return std::strncmp(file, "./", 2) == 0 ? file + 2 : file;
}

// The name of a subprogram or inlined subroutine DIE: its linkage name demangled (which has
// the namespaces and class), else its plain name. Follows DW_AT_abstract_origin.
std::string die_function_name(Dwarf_Die* die) {
  Dwarf_Attribute attr;
  for (int at : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name}) {
    if (const char* linkage = dwarf_formstring(dwarf_attr_integrate(die, at, &attr))) return demangle(linkage);
  }
  const char* name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
  return name != nullptr ? name : "";
}

// The inline chain at `addr` (module-relative) in unit `cu`: for each inlined subroutine that
// covers it, innermost first, its function and the line executing in it. `line_file` and
// `line` come from the line table (the innermost code); the call sites of the inlined
// subroutines give the lines in their callers. The physical function's line (where it
// called the outermost inlined one) is written to `outer_file`/`outer_line`.
void inline_chain(Dwarf_Die* cu, Dwarf_Addr addr, const std::string& line_file, std::uint32_t line,
                  std::vector<InlinedCall>& out, std::string& outer_file, std::uint32_t& outer_line) {
  Dwarf_Die* scopes = nullptr;
  const int n = dwarf_getscopes(cu, addr, &scopes);
  if (n <= 0) return;
  Dwarf_Files* files = nullptr;
  std::size_t file_count = 0;
  if (dwarf_getsrcfiles(cu, &files, &file_count) != 0) files = nullptr;
  Dwarf_Attribute attr;
  const char* comp_dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr));
  std::string file = line_file;
  std::uint32_t at_line = line;
  for (int i = 0; i < n; ++i) {
    Dwarf_Die* die = &scopes[i];
    const int tag = dwarf_tag(die);
    if (tag == DW_TAG_subprogram) break;  // the physical function: the caller of the last inline
    if (tag != DW_TAG_inlined_subroutine) continue;
    out.push_back({die_function_name(die), file, at_line});
    // Where this subroutine was called: the line executing in the next outer function.
    Dwarf_Word call_file = 0, call_line = 0;
    file.clear();
    at_line = 0;
    if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr), &call_file) == 0 && files != nullptr &&
        call_file < file_count)
      file = source_path(dwarf_filesrc(files, call_file, nullptr, nullptr), comp_dir);
    if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &attr), &call_line) == 0)
      at_line = static_cast<std::uint32_t>(call_line);
  }
  std::free(scopes);
  if (!out.empty()) {
    outer_file = file;
    outer_line = at_line;
  }
}

// The loader's count of objects ever loaded and unloaded: when it has not moved since the
// last report, an address in no module is not in a newly loaded one either.
unsigned long long loader_generation() {
  unsigned long long generation = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t size, void* out) {
        if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs))
          *static_cast<unsigned long long*>(out) = info->dlpi_adds + info->dlpi_subs;
        return 1;  // the counters are the same in every entry
      },
      &generation);
  return generation;
}

}  // namespace

struct Symbolizer::Impl {
  std::mutex mutex;
  char* debuginfo_path = nullptr;  // null: libdw's default search path
  Dwfl_Callbacks callbacks{};      // libdw keeps a pointer to it
  Dwfl* dwfl = nullptr;
  unsigned long long generation = 0;
  std::unordered_map<Dwfl_Module*, ModuleTable> tables;
  std::unordered_map<std::uintptr_t, Symbol> cache;  // by looked-up address

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() {
    if (dwfl != nullptr) dwfl_end(dwfl);
  }

  bool start() {
    callbacks.find_elf = dwfl_linux_proc_find_elf;
    callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
    callbacks.debuginfo_path = &debuginfo_path;
    dwfl = dwfl_begin(&callbacks);
    return dwfl != nullptr && report();
  }

  // (Re)reads /proc/self/maps. Modules still mapped are kept with their loaded symbol tables
  // and DWARF; tables of modules gone are dropped, since their names died with them.
  bool report() {
    generation = loader_generation();
    dwfl_report_begin(dwfl);
    const int rc = dwfl_linux_proc_report(dwfl, getpid());
    dwfl_report_end(dwfl, nullptr, nullptr);
    if (!tables.empty()) {
      // Which modules survived; dwfl_getmodules rather than dereferencing a freed one.
      std::vector<Dwfl_Module*> present;
      dwfl_getmodules(
          dwfl,
          [](Dwfl_Module* m, void**, const char*, Dwarf_Addr, void* arg) -> int {
            static_cast<std::vector<Dwfl_Module*>*>(arg)->push_back(m);
            return DWARF_CB_OK;
          },
          &present, 0);
      std::erase_if(tables, [&present](const auto& entry) {
        if (std::find(present.begin(), present.end(), entry.first) == present.end()) return true;
        Dwarf_Addr low = 0, high = 0;
        const char* name = dwfl_module_info(entry.first, nullptr, &low, &high, nullptr, nullptr, nullptr, nullptr);
        return name == nullptr || low != entry.second.low || high != entry.second.high || entry.second.name != name;
      });
    }
    cache.clear();  // unknown addresses may be known now, and unloaded ones may be reused
    return rc == 0;
  }

  ModuleTable& table_for(Dwfl_Module* module) {
    auto [it, inserted] = tables.try_emplace(module);
    ModuleTable& table = it->second;
    if (!inserted) return table;
    const char* name = dwfl_module_info(module, nullptr, &table.low, &table.high, nullptr, nullptr, nullptr, nullptr);
    table.name = name != nullptr ? name : "";
    GElf_Addr& bias = table.bias;
    if (Elf* elf = dwfl_module_getelf(module, &bias)) {
      std::size_t count = 0;
      if (elf_getphdrnum(elf, &count) == 0) {
        for (std::size_t i = 0; i < count; ++i) {
          GElf_Phdr ph;
          if (gelf_getphdr(elf, static_cast<int>(i), &ph) != nullptr && ph.p_type == PT_LOAD &&
              (ph.p_flags & PF_X) != 0)
            table.code.emplace_back(ph.p_vaddr + bias, ph.p_vaddr + bias + ph.p_memsz);
        }
      }
    }
    const int count = dwfl_module_getsymtab(module);
    for (int i = 0; i < count; ++i) {
      GElf_Sym sym;
      GElf_Addr address = 0;
      GElf_Word section = 0;
      const char* symbol = dwfl_module_getsym_info(module, i, &sym, &address, &section, nullptr, nullptr);
      if (symbol == nullptr || symbol[0] == '\0' || address == 0 || section == SHN_UNDEF) continue;
      const int type = GELF_ST_TYPE(sym.st_info);
      if (type != STT_FUNC && type != STT_GNU_IFUNC) continue;
      table.functions.push_back({address, sym.st_size, symbol, binding_rank(sym.st_info, symbol)});
    }
    std::sort(table.functions.begin(), table.functions.end(), [](const FunctionSymbol& a, const FunctionSymbol& b) {
      if (a.address != b.address) return a.address < b.address;
      if (a.rank != b.rank) return a.rank < b.rank;
      return std::strlen(a.name) < std::strlen(b.name);
    });
    table.functions.erase(
        std::unique(table.functions.begin(), table.functions.end(),
                    [](const FunctionSymbol& a, const FunctionSymbol& b) { return a.address == b.address; }),
        table.functions.end());
    return table;
  }

  Dwfl_Module* module_of(std::uintptr_t pc) {
    Dwfl_Module* module = dwfl_addrmodule(dwfl, pc);
    if (module == nullptr) return nullptr;
    // dwfl_addrmodule also answers for addresses past the last module (the stack, say).
    Dwarf_Addr low = 0, high = 0;
    dwfl_module_info(module, nullptr, &low, &high, nullptr, nullptr, nullptr, nullptr);
    return pc >= low && pc < high ? module : nullptr;
  }

  Symbol compute(std::uintptr_t pc) {
    Dwfl_Module* module = module_of(pc);
    if (module == nullptr && loader_generation() != generation) {
      report();
      module = module_of(pc);
    }
    Symbol s;
    if (module == nullptr) return s;
    ModuleTable& table = table_for(module);
    s.module = table.name;
    s.module_offset = pc - table.bias;
    if (!table.in_code(pc)) return s;  // data: no function, and no DWARF to load for it
    if (const FunctionSymbol* f = table.find(pc)) s.function = demangle(f->name);
    Dwarf_Addr bias = 0;
    Dwarf_Die* cu = unit_of(module, table, pc, bias);
    if (cu == nullptr) return s;
    if (Dwarf_Line* line = dwarf_getsrc_die(cu, pc - bias)) {
      int lineno = 0;
      if (const char* file = dwarf_linesrc(line, nullptr, nullptr)) {
        Dwarf_Attribute attr;
        s.file = source_path(file, file[0] == '/' ? nullptr : dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr)));
        s.line = dwarf_lineno(line, &lineno) == 0 && lineno > 0 ? static_cast<std::uint32_t>(lineno) : 0;
      }
      if (!s.function.empty()) inline_chain(cu, pc - bias, s.file, s.line, s.inlined, s.file, s.line);
    }
    return s;
  }

  /// The compile unit covering `pc`, and the module's DWARF bias: libdw's lookup (through
  /// .debug_aranges), else the units' own address ranges (ModuleTable::units).
  static Dwarf_Die* unit_of(Dwfl_Module* module, ModuleTable& table, Dwarf_Addr pc, Dwarf_Addr& bias) {
    if (Dwarf_Die* cu = dwfl_module_addrdie(module, pc, &bias)) return cu;
    if (!table.units) {
      std::vector<ModuleTable::UnitRange>& units = table.units.emplace();
      // Only for a module without .debug_aranges: in one with them, an address they leave out
      // (a PLT stub, hand-written assembly) is in no unit, and walking every unit of a large
      // module (libtorch) for it would cost seconds.
      Dwarf_Addr dwarf_bias = 0;
      Dwarf* dwarf = dwfl_module_getdwarf(module, &dwarf_bias);
      Dwarf_Aranges* aranges = nullptr;
      std::size_t listed = 0;
      if (dwarf != nullptr && dwarf_getaranges(dwarf, &aranges, &listed) == 0 && listed == 0) {
        Dwarf_Die* cu = nullptr;
        while ((cu = dwfl_module_nextcu(module, cu, &table.unit_bias)) != nullptr) {
          Dwarf_Addr base = 0, low = 0, high = 0;
          // A range at 0 is code the linker discarded (its addresses resolved to 0), not code.
          for (std::ptrdiff_t at = 0; (at = dwarf_ranges(cu, at, &base, &low, &high)) > 0;)
            if (high > low && low != 0) units.push_back({low, high, *cu});
        }
        std::ranges::sort(units, {}, &ModuleTable::UnitRange::low);
      }
    }
    bias = table.unit_bias;
    const Dwarf_Addr addr = pc - bias;
    auto it = std::ranges::upper_bound(*table.units, addr, {}, &ModuleTable::UnitRange::low);
    if (it == table.units->begin()) return nullptr;
    --it;
    return addr < it->high ? &it->unit : nullptr;
  }

  Symbol resolve(std::uintptr_t address, bool return_address) {
    if (address == 0) return {};
    const std::uintptr_t pc = return_address ? address - 1 : address;
    if (auto it = cache.find(pc); it != cache.end()) return it->second;
    Symbol s = compute(pc);
    cache.emplace(pc, s);
    return s;
  }
};

Symbolizer::Symbolizer() noexcept {
  try {
    auto impl = std::make_unique<Impl>();
    if (impl->start()) impl_ = std::move(impl);
  } catch (...) {
    impl_.reset();
  }
}

Symbolizer::~Symbolizer() = default;
Symbolizer::Symbolizer(Symbolizer&&) noexcept = default;
Symbolizer& Symbolizer::operator=(Symbolizer&&) noexcept = default;

bool Symbolizer::ok() const noexcept { return impl_ != nullptr; }

Symbol Symbolizer::resolve(std::uintptr_t address, bool return_address) noexcept {
  if (!impl_) return {};
  try {
    std::lock_guard lock(impl_->mutex);
    return impl_->resolve(address, return_address);
  } catch (...) {
    return {};
  }
}

std::vector<Symbol> Symbolizer::resolve_all(std::span<const std::uintptr_t> addresses, bool return_addresses) noexcept {
  std::vector<Symbol> out;
  try {
    out.resize(addresses.size());
    if (!impl_) return out;
    std::lock_guard lock(impl_->mutex);
    for (std::size_t i = 0; i < addresses.size(); ++i) out[i] = impl_->resolve(addresses[i], return_addresses);
  } catch (...) {
    // Whatever was resolved before running out of memory stays; the rest is empty.
  }
  return out;
}

}  // namespace nnprof::collect
