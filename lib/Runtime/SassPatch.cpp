//===- SassPatch.cpp - post-compile edits of sm_90a SASS --------*- C++ -*-===//

#include "blockscale/Runtime/SassPatch.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstring>
#include <elf.h>
#include <vector>

using namespace blockscale;

static llvm::Error bad(const llvm::Twine &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "cubin: " + why.str());
}

static uint64_t load64(const char *p) {
  uint64_t v;
  std::memcpy(&v, p, 8); // cubins are little-endian, like the host
  return v;
}

static void store64(char *p, uint64_t v) { std::memcpy(p, &v, 8); }

/// Edits the FFMA runs of one .text section in place.
static void patchText(char *code, size_t size, int sixteenths,
                      FfmaYieldStats &st) {
  const size_t n = size / 16;
  size_t i = 0;
  while (i < n) {
    if (!sass::isFfmaRRR(load64(code + 16 * i))) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < n && sass::isFfmaRRR(load64(code + 16 * end)))
      ++end;
    const size_t len = end - i;
    st.ffma += static_cast<int>(len);
    if (len >= static_cast<size_t>(kMinRun)) {
      ++st.runs;
      // Only a prefix: the run's tail leads into the warp's own next
      // wgmma issue, where staying on the warp is what we want.
      const size_t edit = (len * sixteenths / 16) & ~size_t(1);
      std::vector<bool> seen(256, false);
      for (size_t k = i; k < i + edit; ++k) {
        char *ins = code + 16 * k;
        const uint64_t lo = load64(ins), hi = load64(ins + 8);
        const unsigned dst = sass::destReg(lo);
        const bool firstWrite = !seen[dst];
        seen[dst] = true;
        // Only instructions whose sole cached operand is b (the scale):
        // after the edit nothing of theirs is left in the reuse cache that
        // another warp could displace.
        if (firstWrite && (hi & sass::kReuseAll) == sass::kReuseB) {
          if (hi & sass::kYield)
            ++st.yieldWasSet;
          store64(ins + 8, hi ^ (sass::kReuseB | sass::kYield));
          ++st.changed;
        }
      }
    }
    i = end;
  }
}

llvm::Expected<FfmaYieldStats>
blockscale::interleaveFfmaYield(std::string &cubin, int sixteenths) {
  if (sixteenths < 0 || sixteenths > 16)
    return bad(llvm::formatv("expected a fraction in sixteenths (0-16) but "
                             "got {0}",
                             sixteenths));
  FfmaYieldStats st;
  if (cubin.size() < sizeof(Elf64_Ehdr) ||
      std::memcmp(cubin.data(), ELFMAG, SELFMAG) != 0)
    return bad("not an ELF file");
  Elf64_Ehdr eh;
  std::memcpy(&eh, cubin.data(), sizeof eh);
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
    return bad("expected a little-endian ELF64 cubin");
  if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shstrndx >= eh.e_shnum ||
      eh.e_shoff + uint64_t(eh.e_shnum) * sizeof(Elf64_Shdr) > cubin.size())
    return bad("section header table out of bounds");
  std::vector<Elf64_Shdr> sh(eh.e_shnum);
  std::memcpy(sh.data(), cubin.data() + eh.e_shoff,
              sh.size() * sizeof(Elf64_Shdr));
  const Elf64_Shdr &strtab = sh[eh.e_shstrndx];
  if (strtab.sh_offset + strtab.sh_size > cubin.size())
    return bad("section name table out of bounds");
  llvm::StringRef names(cubin.data() + strtab.sh_offset, strtab.sh_size);
  for (const Elf64_Shdr &s : sh) {
    if (s.sh_type != SHT_PROGBITS || s.sh_name >= names.size())
      continue;
    llvm::StringRef name = names.drop_front(s.sh_name);
    name = name.take_until([](char c) { return c == '\0'; });
    if (!name.starts_with(".text."))
      continue;
    if (s.sh_offset + s.sh_size > cubin.size() || s.sh_size % 16 != 0)
      return bad(llvm::formatv("section {0} out of bounds or not a whole "
                               "number of 16-byte instructions",
                               name));
    ++st.textSections;
    patchText(cubin.data() + s.sh_offset, s.sh_size, sixteenths, st);
  }
  if (st.textSections == 0)
    return bad("no .text section");
  return st;
}
