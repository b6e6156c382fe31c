"""Per-core timing models, as data: the cycles of each kind of instruction and the few pipeline
rules each core documents. Every figure is a (low, point, high) triple so an estimate carries its
range; zero wait states everywhere (QEMU's memories and the boards' TCMs; real flash adds more).
docs/cycles.md says where each number comes from and what is left out.

    core = core_for("cortex-m4")
    core.cost("load").point      # 2
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mcuforge.errors import McuforgeError

LOW, POINT, HIGH = 0, 1, 2


@dataclass(frozen=True)
class Cost:
    """Cycles of one instruction: fixed + per_reg x registers moved (LDM/STM/PUSH/POP/VLDM)."""
    lo: float
    point: float
    hi: float
    per_reg: float = 0

    def at(self, which: int, nregs: int = 0) -> float:
        return (self.lo, self.point, self.hi)[which] + self.per_reg * nregs


def c(lo: float, point: float | None = None, hi: float | None = None, per_reg: float = 0) -> Cost:
    """Cost(lo, point, hi): c(1) is exactly one cycle, c(2, 7, 12) a data-dependent range."""
    point = lo if point is None else point
    return Cost(lo, point, point if hi is None else hi, per_reg)


@dataclass(frozen=True)
class CoreModel:
    name: str
    objdump_arch: str                 # objdump -m: decodes every instruction the core has
    source: str                       # where the figures come from
    costs: dict[str, Cost]            # per instruction kind (mcuforge.cycles.isa)
    refill: Cost                      # P: cycles a taken branch adds (pipeline refill)
    overrides: dict[str, Cost] = field(default_factory=dict)  # per base mnemonic, before `costs`
    load_pipelined: float | None = None  # a load/store single right after a load single, address
                                         # independent of it, costs this (Cortex-M3/M4 pipelining)
    addr_dep_stall: float = 0         # + when a load/store address comes from the previous data-processing result
    load_use_stall: float = 0         # + when an instruction uses the register the previous load wrote
    it_folding: bool = False          # IT after a 16-bit instruction is free
    mve_overlap: float | None = None  # an MVE instruction after one of another kind costs this (beat overlap)
    loop_refill: Cost = field(default_factory=lambda: c(1))  # what a taken LE/LETP costs in all (loop cache)
    dual_issue: bool = False          # pairs of independent instructions issue together (LOW and POINT)
    assumptions: tuple[str, ...] = ()

    def cost(self, kind: str, base: str = "") -> Cost:
        if base in self.overrides:
            return self.overrides[base]
        try:
            return self.costs[kind]
        except KeyError:
            raise McuforgeError(f"the {self.name} timing model has no {kind} instructions ({base})") from None

    def describe(self) -> list[str]:
        p = self.refill
        return [f"{self.name} timing model ({self.source}); zero wait states; taken-branch refill P = "
                f"{p.lo:g}..{p.hi:g} cycles (point {p.point:g})", *self.assumptions]


# ---------------------------------------------------------------- Armv7-M: Cortex-M3 and Cortex-M4

_V7M_COMMON = {
    "alu": c(1), "mul": c(1), "mul_long": c(1), "dsp_mac": c(1), "div": c(2, 7, 12),
    "load": c(2), "store": c(1), "store_reg": c(2), "load_dual": c(3), "store_dual": c(3),
    "load_multiple": c(1, per_reg=1), "store_multiple": c(1, per_reg=1),
    "branch": c(1), "table_branch": c(2), "it": c(1), "nop": c(1), "barrier": c(1, 1, 4), "system": c(1, 1, 2),
    "fp_alu": c(1), "fp_mac": c(3), "fp_div": c(14), "fp_mem": c(2), "fp_multiple": c(1, per_reg=1),
}
_V7M_RULES = (
    "loads: 2 cycles; a load or store right after a load, whose address does not use that load's result "
    "(destination or written-back base), is pipelined: 1 cycle",
    "stores: STR with an immediate offset 1 cycle (the data phase overlaps the next instruction), register "
    "offset 2; LDRD/STRD 3, LDM/STM/PUSH/POP 1+N, never pipelined with their neighbours",
    "a load/store whose address register the previous data-processing instruction wrote: +1 cycle",
    "IT after a 16-bit instruction is folded (0 cycles); conditional instructions that fail still cost "
    "their full time (QEMU's stream does not say which failed)",
)

CORTEX_M4 = CoreModel(
    name="Cortex-M4", objdump_arch="armv7e-m",
    source="Cortex-M4 TRM r0p1 (DDI 0439) Table 3-1 and 3.3.2 Load/store timings",
    costs=_V7M_COMMON, refill=c(1, 2, 3), load_pipelined=1, addr_dep_stall=1, it_folding=True,
    assumptions=_V7M_RULES + ("MUL/MLA, long multiplies and every DSP multiply-accumulate (SMLAD, SMLAL...) "
                              "1 cycle; SDIV/UDIV 2..12 (point 7)",),
)

CORTEX_M3 = CoreModel(
    name="Cortex-M3", objdump_arch="armv7e-m",  # objdump has no armv7-m; v7E-M decodes a superset
    source="Cortex-M3 TRM r2p1 (DDI 0337) Table 3-1 and Load/store timings",
    costs=_V7M_COMMON, refill=c(1, 2, 3), load_pipelined=1, addr_dep_stall=1, it_folding=True,
    overrides={"mla": c(2), "mls": c(2), "smull": c(3, 4, 5), "umull": c(3, 4, 5), "smlal": c(4, 5, 7),
               "umlal": c(4, 5, 7)},
    assumptions=_V7M_RULES + ("MUL 1, MLA/MLS 2, SMULL/UMULL 3..5, SMLAL/UMLAL 4..7 cycles",),
)

# ---------------------------------------------------------------- Armv8-M: Cortex-M33, Cortex-M55

_V8M_SCALAR = {
    "alu": c(1), "mul": c(1), "mul_long": c(1), "dsp_mac": c(1), "div": c(2, 7, 11),
    "load": c(1), "store": c(1), "store_reg": c(1), "load_dual": c(2), "store_dual": c(2),
    "load_multiple": c(1, per_reg=1), "store_multiple": c(1, per_reg=1),
    "branch": c(1), "table_branch": c(2), "it": c(1), "nop": c(1), "barrier": c(1, 1, 4), "system": c(1, 1, 2),
    "loop_start": c(1), "loop_end": c(1),
    "fp_alu": c(1), "fp_mac": c(1, 1, 3), "fp_div": c(14, 14, 18), "fp_mem": c(1, 1, 2),
    "fp_multiple": c(1, per_reg=1),
}
_V8M_RULES = (
    "no public per-instruction table: loads and stores 1 cycle (the address is formed a stage earlier than on "
    "the M4) with a 1-cycle load-use stall when the next instruction reads the loaded register; LDRD/STRD 2, "
    "LDM/STM 1+N; data processing, multiplies and DSP multiply-accumulates 1",
    "dual issue of 16-bit instruction pairs not modelled: the estimate is an upper bound on that account",
)

CORTEX_M33 = CoreModel(
    name="Cortex-M33", objdump_arch="armv8-m.main",
    source="Arm's Cortex-M33 technical overview (3-stage pipeline, branches resolved in stage 2, address "
           "generation in stage 2); no cycle table is published",
    costs=_V8M_SCALAR, refill=c(1, 1, 2), load_use_stall=1, it_folding=True, assumptions=_V8M_RULES,
)

CORTEX_M55 = CoreModel(
    name="Cortex-M55", objdump_arch="armv8.1-m.main",
    source="Armv8.1-M beat-wise execution (dual-beat: a 128-bit MVE instruction in 2 cycles), scalar core "
           "as the Cortex-M33 model; no cycle table is published",
    costs=_V8M_SCALAR | {"mve_alu": c(2), "mve_mac": c(2), "mve_mem": c(2), "mve_pred": c(1)},
    refill=c(1, 2, 3), load_use_stall=1, it_folding=True, mve_overlap=1, loop_refill=c(0, 0, 3),
    assumptions=_V8M_RULES + (
        "MVE: 2 cycles per 128-bit instruction (2 beats per cycle); one after an MVE instruction of another "
        "kind (memory / ALU / multiply) overlaps it: 1 cycle; tail predication is not modelled",
        "low-overhead loops: a taken LE/LETP is free (loop cache); 1 cycle when the loop exits",
    ),
)

# ---------------------------------------------------------------- Armv7E-M: Cortex-M7

CORTEX_M7 = CoreModel(
    name="Cortex-M7", objdump_arch="armv7e-m",
    source="no public cycle table: single-cycle issue of everything, in-order dual issue (6-stage pipeline) "
           "as public descriptions have it",
    costs=_V7M_COMMON | {"load": c(1), "store": c(1), "store_reg": c(1), "load_dual": c(1), "store_dual": c(1),
                         "load_multiple": c(1, per_reg=0.5), "store_multiple": c(1, per_reg=0.5),
                         "fp_mem": c(1), "fp_mac": c(1, 1, 3), "fp_multiple": c(1, per_reg=0.5)},
    refill=c(0, 1, 8), load_use_stall=1, dual_issue=True,
    assumptions=(
        "dual issue (low and point estimates): an instruction issues with the one before unless either is a "
        "branch, a multiple or dual transfer, a divide or barrier, both access memory, both multiply, or it "
        "reads what the first writes; the high estimate issues one instruction a cycle",
        "loads 1 cycle with a 1-cycle load-use stall; LDRD 1, LDM/STM 1+N/2 (64-bit bus); caches and TCM "
        "hit; taken branch 0..8 (predicted .. mispredicted), point 1",
    ),
)

CORES = {"cortex-m3": CORTEX_M3, "cortex-m4": CORTEX_M4, "cortex-m7": CORTEX_M7, "cortex-m33": CORTEX_M33,
         "cortex-m55": CORTEX_M55}


def core_for(cpu: str) -> CoreModel:
    """The timing model of gcc's -mcpu name ("cortex-m4")."""
    try:
        return CORES[cpu]
    except KeyError:
        raise McuforgeError(f"no timing model for {cpu} (known: {', '.join(CORES)})") from None
