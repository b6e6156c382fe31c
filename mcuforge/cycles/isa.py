"""Thumb instructions as the timing model sees them: what kind of operation, which registers it
reads and writes, which registers form its address, how many registers a multiple transfer moves.

The instructions come from GNU objdump's disassembly of the firmware ELF (`code_map`), not from
QEMU's log: QEMU 7.2's disassembler (capstone) does not know Armv8-M and Armv8.1-M encodings (it
prints `msr msplim` as `.byte` plus a bogus 16-bit instruction, MVE as coprocessor ops), while
objdump given the core's architecture decodes them all. QEMU's log only gives the byte range of
each translation block.

    insns = code_map(elf, "armv7e-m")      # {address: Insn}
    insns[0x1d4].kind                       # "store_multiple" (push)
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from mcuforge.errors import McuforgeError

OBJDUMP = "arm-none-eabi-objdump"

# The kind of each base mnemonic (no condition code, no width suffix, no flag-setting "s").
# Anything not listed and not a v* mnemonic is a 1-cycle data-processing operation ("alu").
_KINDS: dict[str, tuple[str, ...]] = {
    "load": ("ldr", "ldrb", "ldrh", "ldrsb", "ldrsh", "ldrt", "ldrbt", "ldrht", "ldrsbt", "ldrsht",
             "ldrex", "ldrexb", "ldrexh", "lda", "ldab", "ldah", "ldaex", "ldaexb", "ldaexh", "pld", "pli"),
    "store": ("str", "strb", "strh", "strt", "strbt", "strht", "strex", "strexb", "strexh", "stl", "stlb",
              "stlh", "stlex", "stlexb", "stlexh"),
    "load_dual": ("ldrd", "ldrexd"),
    "store_dual": ("strd", "strexd"),
    "load_multiple": ("ldm", "ldmia", "ldmfd", "ldmdb", "ldmea", "pop"),
    "store_multiple": ("stm", "stmia", "stmea", "stmdb", "stmfd", "push"),
    "branch": ("b", "bl", "bx", "blx", "bxns", "blxns", "cbz", "cbnz"),
    "table_branch": ("tbb", "tbh"),
    "mul": ("mul", "mla", "mls"),
    "mul_long": ("smull", "umull", "smlal", "umlal", "umaal"),
    "dsp_mac": ("smlad", "smladx", "smlsd", "smlsdx", "smuad", "smuadx", "smusd", "smusdx", "smlald",
                "smlaldx", "smlsld", "smlsldx", "smlabb", "smlabt", "smlatb", "smlatt", "smlawb", "smlawt",
                "smulbb", "smulbt", "smultb", "smultt", "smulwb", "smulwt", "smlalbb", "smlalbt", "smlaltb",
                "smlaltt", "smmul", "smmulr", "smmla", "smmlar", "smmls", "smmlsr"),
    "div": ("sdiv", "udiv"),
    "nop": ("nop", "yield", "sev"),
    "barrier": ("dsb", "dmb", "isb"),
    "system": ("msr", "mrs", "cpsie", "cpsid", "svc", "bkpt", "wfi", "wfe", "udf", "sg", "tt", "tta", "ttt",
               "ttat", "clrex", "csdb", "ssbb", "pssbb"),
    # Armv8.1-M low-overhead loops
    "loop_start": ("dls", "wls", "dlstp", "wlstp"),
    "loop_end": ("le", "letp", "lctp"),
    # floating point (FPv4/FPv5): scalar s/d registers
    "fp_mac": ("vmla", "vmls", "vnmla", "vnmls", "vfma", "vfms", "vfnma", "vfnms"),
    "fp_div": ("vdiv", "vsqrt"),
    "fp_mem": ("vldr", "vstr"),
    "fp_multiple": ("vldm", "vldmia", "vldmdb", "vstm", "vstmia", "vstmdb", "vpush", "vpop"),
    # MVE (Helium): q registers
    "mve_mem": ("vldrb", "vldrh", "vldrw", "vldrd", "vstrb", "vstrh", "vstrw", "vstrd", "vld20", "vld21",
                "vld40", "vld41", "vld42", "vld43", "vst20", "vst21", "vst40", "vst41", "vst42", "vst43"),
    "mve_mac": ("vmul", "vmla", "vmlas", "vqdmulh", "vqrdmulh", "vqdmlah", "vqrdmlah", "vqdmlash", "vqrdmlash",
                "vmlav", "vmlava", "vmladav", "vmladava", "vmladavx", "vmladavax", "vmlsdav", "vmlsdava",
                "vmlaldav", "vmlaldava", "vrmlaldavh", "vrmlaldavha", "vmlalv", "vmlalva", "vrmlalvh",
                "vrmlalvha", "vmull", "vmullb", "vmullt", "vmulh", "vrmulh", "vqdmullb", "vqdmullt", "vfma",
                "vfms"),
    "mve_pred": ("vpst", "vpt", "vctp", "vpsel", "vpnot"),
}
KIND_OF = {m: k for k, names in _KINDS.items() for m in names}
_MVE_ONLY = {m for k in ("mve_mem", "mve_pred") for m in _KINDS[k]} | {
    m for m in _KINDS["mve_mac"] if m.startswith(("vmla", "vmls", "vrml", "vmul", "vqd", "vqr", "vrmul"))
    and m not in ("vmla", "vmls", "vmul")}
COND = ("eq", "ne", "cs", "hs", "cc", "lo", "mi", "pl", "vs", "vc", "hi", "ls", "ge", "lt", "gt", "le", "al")
COMPARES = {"cmp", "cmn", "tst", "teq"}
_REG = re.compile(r"\b(r1[0-5]|r[0-9]|sp|lr|pc|ip|fp|sl|sb)\b")
_ALIAS = {"sb": 9, "sl": 10, "fp": 11, "ip": 12, "sp": 13, "lr": 14, "pc": 15}
PC = 15


@dataclass(frozen=True, slots=True)
class Insn:
    """One decoded instruction."""
    addr: int
    size: int                  # bytes: 2 or 4
    mnemonic: str              # as objdump prints it, e.g. "ldr.w", "bne.n", "smlad"
    base: str                  # without condition, width and flag suffixes: "ldr", "b", "smlad"
    operands: str
    kind: str                  # a key of _KINDS, or "alu", "it", "fp_alu", "mve_alu"
    reads: frozenset[int]      # core registers read (r0..r15)
    writes: frozenset[int]     # core registers written (destinations, written-back bases, the PC)
    addr_regs: frozenset[int]  # registers the address is computed from (loads and stores)
    nregs: int = 0             # registers moved by LDM/STM/PUSH/POP/VLDM/VPUSH (D registers count 2)
    conditional: bool = False  # a conditional branch (b<c>, cbz, cbnz, or a PC write inside an IT block)
    reg_offset: bool = False   # a load/store with a register offset

    @property
    def writes_pc(self) -> bool:
        return PC in self.writes


def _reg(name: str) -> int:
    return _ALIAS[name] if name in _ALIAS else int(name[1:])


def _regs(text: str) -> list[int]:
    return [_reg(m) for m in _REG.findall(text)]


def _base_mnemonic(mnemonic: str) -> tuple[str, bool]:
    """(base mnemonic, has a condition code): "bne.n" -> ("b", True), "adds.w" -> ("add", False),
    "subsgt" -> ("sub", True), "ittet" -> ("ittet", False)."""
    m = mnemonic.split(".")[0].lower()
    if m in KIND_OF or _is_it(m):
        return m, False
    if m[-2:] in COND:
        stem = _strip_s(m[:-2])
        if stem is not None:
            return stem, True
    stem = _strip_s(m)
    return (stem, False) if stem is not None else (m, False)


def _strip_s(m: str) -> str | None:
    """m, or m without its flag-setting "s", if that is a known mnemonic."""
    if m in KIND_OF or m in _ALU_STEMS:
        return m
    if m.endswith("s") and (m[:-1] in KIND_OF or m[:-1] in _ALU_STEMS):
        return m[:-1]
    return None


def _is_it(m: str) -> bool:
    return m.startswith("it") and set(m[2:]) <= {"t", "e"}


_ALU_STEMS = {"mov", "mvn", "add", "adc", "sub", "sbc", "rsb", "and", "orr", "orn", "eor", "bic", "lsl", "lsr",
              "asr", "ror", "rrx", "cmp", "cmn", "tst", "teq", "neg", "uxtb", "uxth", "sxtb", "sxth", "ssat",
              "usat", "clz", "rev", "movw", "movt", "bfi", "bfc", "ubfx", "sbfx", "qadd", "qsub", "addw", "subw"}
_FP_MAC = set(_KINDS["fp_mac"])
_ACCUMULATE_LONG = {"smlal", "umlal", "umaal", "smlald", "smlaldx", "smlsld", "smlsldx", "smlalbb", "smlalbt",
                    "smlaltb", "smlaltt", "lsll", "lsrl", "asrl", "sqrshrl", "uqrshll", "sqshll", "uqshll",
                    "srshrl", "urshrl"}
_WRITE_STATUS = {"strex", "strexb", "strexh", "strexd", "stlex", "stlexb", "stlexh"}


def kind_of(base: str, operands: str) -> str:
    """The timing class of an instruction: a key of _KINDS, "alu", "it", "fp_alu" or "mve_alu"."""
    if _is_it(base):
        return "it"
    k = KIND_OF.get(base)
    if not base.startswith("v"):
        return k or "alu"
    if re.search(r"\bq\d+\b", operands) or base in _MVE_ONLY:  # Helium: q registers
        if base in _FP_MAC:
            return "mve_mac"
        return k if k and k.startswith("mve_") else "mve_alu"
    if base in _FP_MAC:
        return "fp_mac"
    return k if k and k.startswith("fp_") else "fp_alu"


def decode(addr: int, size: int, mnemonic: str, operands: str) -> Insn:
    """An Insn from one disassembled instruction (GNU syntax)."""
    operands = operands.split("@")[0].strip().lower()
    base, cond = _base_mnemonic(mnemonic)
    kind = kind_of(base, operands)
    regs = _regs(operands)
    reads, writes, addr_regs = set(regs), set(), set()
    nregs, reg_offset = 0, False
    if kind in ("load", "store", "load_dual", "store_dual", "fp_mem", "mve_mem"):
        inside = re.search(r"\[([^\]]*)\]", operands)
        inner = _regs(inside.group(1)) if inside else []
        addr_regs = set(inner)
        reg_offset = len(inner) > 1
        if "!" in operands or re.search(r"\]\s*,", operands):  # pre-indexed with ! or post-indexed
            writes.update(inner[:1])
        if kind == "load":
            writes.update(regs[:1])
        elif kind == "load_dual":
            writes.update(regs[:2])
        elif base in _WRITE_STATUS:
            writes.update(regs[:1])
        if kind in ("load", "load_dual"):
            reads = set(addr_regs)
    elif kind in ("load_multiple", "store_multiple", "fp_multiple"):
        nregs = _list_size(operands)
        lst = re.search(r"\{([^}]*)\}", operands)
        listed = set(_regs(lst.group(1))) if lst else set()
        if base in ("push", "pop", "vpush", "vpop"):
            addr_regs, writes = {13}, {13}
        else:
            addr_regs = set(regs[:1])
            if "!" in operands:
                writes.update(regs[:1])
        if kind == "load_multiple":
            writes |= listed
            reads = set(addr_regs)
    elif kind in ("branch", "table_branch") or base in ("le", "letp", "wls", "wlstp"):
        writes = {PC, 14} if base in ("bl", "blx", "blxns", "le", "letp", "wls", "wlstp") else {PC}
        cond = cond or base in ("cbz", "cbnz", "le", "letp", "wls", "wlstp")
    elif kind == "loop_start":  # dls, dlstp: set up lr
        writes = {14}
    elif kind in ("alu", "mul", "mul_long", "dsp_mac", "div") and base not in COMPARES and regs:
        n = 2 if kind == "mul_long" or base in _ACCUMULATE_LONG else 1
        writes = set(regs[:n])
        reads = set(regs[n:])
        if base in _ACCUMULATE_LONG or base in ("movt", "bfi", "bfc"):
            reads |= writes
    elif kind.startswith(("mve_", "fp_")) and re.match(r"r\d|lr|ip|sp", operands):
        writes = set(regs[:2] if base.startswith(("vmlal", "vrmlal", "vaddlv")) else regs[:1])
    return Insn(addr=addr, size=size, mnemonic=mnemonic, base=base, operands=operands, kind=kind,
                reads=frozenset(reads), writes=frozenset(writes), addr_regs=frozenset(addr_regs), nregs=nregs,
                conditional=cond and PC in writes, reg_offset=reg_offset)


def _list_size(operands: str) -> int:
    """Registers in the {...} list; a D register counts as two words."""
    lst = re.search(r"\{([^}]*)\}", operands)
    if not lst:
        return 0
    n = 0
    for part in lst.group(1).split(","):
        part = part.strip()
        m = re.fullmatch(r"([rsdq])(\d+)\s*-\s*[rsdq](\d+)", part)
        count = int(m.group(3)) - int(m.group(2)) + 1 if m else 1
        n += count * (2 if part.startswith("d") else 1)
    return n


_LINE = re.compile(r"^\s*([0-9a-f]+):\t([0-9a-f ]+)\t(\S+)\t?(.*)$")


def parse_objdump(text: str) -> dict[int, Insn]:
    """{address: Insn} from `objdump -d` output (data words and undecodable bytes left out)."""
    out = {}
    for line in text.splitlines():
        m = _LINE.match(line)
        if not m or m.group(3).startswith("."):
            continue
        size = 2 * len(m.group(2).split())
        addr = int(m.group(1), 16)
        out[addr] = decode(addr, size, m.group(3), m.group(4))
    return out


def code_map(elf: Path, arch: str) -> dict[int, Insn]:
    """Every instruction of the ELF's code, decoded for `arch` (objdump -m, e.g. "armv8.1-m.main")."""
    proc = subprocess.run([OBJDUMP, "-d", f"-m{arch}", str(elf)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise McuforgeError(f"{OBJDUMP} failed on {elf}: {proc.stderr.strip()[:200]}")
    return parse_objdump(proc.stdout)


def symbol_address(elf: Path, name: str) -> int:
    """The address of function `name` in the ELF (Thumb bit cleared); McuforgeError if absent."""
    proc = subprocess.run(["arm-none-eabi-nm", str(elf)], capture_output=True, text=True)
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == name:
            return int(parts[0], 16) & ~1
    raise McuforgeError(f"{elf.name}: no symbol {name} (built without the mcuforge harness?)")
