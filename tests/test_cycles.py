"""The cycle estimate (mcuforge.cycles): the per-core timing model on hand-written instruction
sequences whose cycles the Cortex-M4 TRM states (assembled with arm-none-eabi-as, decoded from
objdump as the real estimate does), and the QEMU exec-log parser on a synthetic log and on an
excerpt captured from a real run. QEMU end to end: tests/test_qemu_cycles.py."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from mcuforge.cycles.cores import CORTEX_M3, CORTEX_M4, CORTEX_M7, CORTEX_M33, CORTEX_M55, HIGH, LOW, POINT
from mcuforge.cycles.isa import decode, parse_objdump
from mcuforge.cycles.timing import block_cost, sequence_cycles
from mcuforge.cycles.trace import ExecTrace

FIXTURES = Path(__file__).parent / "fixtures" / "cycles"
_AS = [t for t in ("arm-none-eabi-as", "arm-none-eabi-objdump") if shutil.which(t) is None]
needs_as = pytest.mark.skipif(bool(_AS) and os.environ.get("CI") != "true", reason=f"not installed: {_AS}")

ARCH = {"cortex-m4": ("-mcpu=cortex-m4", "armv7e-m"), "cortex-m3": ("-mcpu=cortex-m3", "armv7e-m"),
        "cortex-m7": ("-mcpu=cortex-m7", "armv7e-m"), "cortex-m33": ("-mcpu=cortex-m33", "armv8-m.main"),
        "cortex-m55": ("-march=armv8.1-m.main+mve", "armv8.1-m.main")}


def assemble(tmp_path: Path, source: str, cpu: str = "cortex-m4"):
    """The instructions of `source` (Thumb, unified syntax) in address order, as objdump decodes them."""
    flag, arch = ARCH[cpu]
    src, obj = tmp_path / "s.s", tmp_path / "s.o"
    src.write_text(".syntax unified\n.thumb\n" + source + "\n")
    subprocess.run(["arm-none-eabi-as", flag, "-mthumb", "-o", str(obj), str(src)], check=True)
    dump = subprocess.run(["arm-none-eabi-objdump", "-d", f"-m{arch}", str(obj)], check=True, capture_output=True,
                          text=True).stdout
    code = parse_objdump(dump)
    return [code[a] for a in sorted(code)]


def cycles(tmp_path, source, core=CORTEX_M4, cpu="cortex-m4"):
    insns = assemble(tmp_path, source, cpu)
    return tuple(sequence_cycles(insns, core, w) for w in (LOW, POINT, HIGH))


# ---------------------------------------------------------------- Cortex-M4: the TRM's own examples

TRM_M4 = [
    # Cortex-M4 TRM 3.3.2 "Load/store timings", examples given with their cycle counts
    ("ldr r0, [r1, r5]\nldr r1, [r2]\nldr r2, [r3, #4]", 4),     # "normally four cycles total"
    ("ldr r0, [r1]\nldr r1, [r2]", 3),                            # "normally three cycles total"
    ("ldr r0, [r1, r2]\nstr r0, [r3, #20]", 3),                   # "normally three cycles total"
    ("ldr r0, [r1, r2]\nstr r1, [r3, r2]", 3),                    # "normally three cycles total"
    # the rules behind them
    ("ldr r0, [r1]", 2),                                          # Table 3-1: LDR 2
    ("ldr r0, [r1]\nldr r2, [r0]", 4),                            # address uses the load's result: no pipelining
    ("ldr r0, [r1], #4\nldr r2, [r1], #4", 4),                    # ... nor the written-back base
    ("ldrb r0, [r1]\nldrh r2, [r3]\nldrsb r4, [r5]\nldr r6, [r7]", 5),  # any single load pipelines
    ("str r0, [r1, #4]", 1),                                      # STR Rx,[Ry,#imm] is always one cycle
    ("str r0, [r1, r2]", 2),                                      # register offset: 2 (Table 3-1)
    ("ldrd r0, r1, [r2]", 3),                                     # LDRD: 1 + N, N = 2
    ("ldrd r0, r1, [r2]\nldr r3, [r4]", 5),                       # not pipelined with neighbours
    ("ldr r3, [r4]\nldrd r0, r1, [r2]", 5),
    ("ldmia r0!, {r1, r2, r3}", 4),                               # LDM: 1 + N
    ("push {r4, r5, r6, lr}", 5),                                 # PUSH: 1 + N
    ("smlad r0, r1, r2, r0\nsmlad r0, r3, r4, r0\nsmlad r0, r5, r6, r0\nsmlad r0, r7, r8, r0", 4),  # 1 each
    ("smlal r0, r1, r2, r3\numull r4, r5, r6, r7\nmla r0, r1, r2, r3\nmul r4, r5, r4", 4),
    ("adds r1, #4\nldr r0, [r1]", 4),                             # address from the previous ALU result: +1
    ("adds r1, #4\nldr r0, [r2]", 3),
    ("add r0, r0, #1\nstr r0, [r1]", 2),                          # stored data may come from the ALU
    ("cmp r0, #0\nit eq\nmoveq r1, r2", 2),                       # IT folded after a 16-bit instruction
    ("cmp.w r0, #0\nit eq\nmoveq r1, r2", 3),                     # ... not after a 32-bit one
]


@needs_as
@pytest.mark.parametrize("source, expected", TRM_M4, ids=[s.replace("\n", "; ") for s, _ in TRM_M4])
def test_cortex_m4_sequences_match_the_trm(tmp_path, source, expected):
    assert cycles(tmp_path, source) == (expected,) * 3


@needs_as
def test_branches_add_the_pipeline_refill(tmp_path):
    loop = assemble(tmp_path, "1:\nldr r0, [r1]\nsubs r2, #1\nbne 1b")  # a loop body ending in a conditional branch
    cost = block_cost(loop, CORTEX_M4)
    assert cost.fall == (4, 4, 4)            # not taken: 1 cycle (Table 3-1 note)
    assert cost.taken == (5, 6, 7)           # taken: 1 + P, P = 1..3
    uncond = block_cost(assemble(tmp_path, "1:\nnop\nb 1b"), CORTEX_M4)
    assert uncond.fall == uncond.taken == (3, 4, 5)  # B always refills
    ret = block_cost(assemble(tmp_path, "pop {r4, pc}"), CORTEX_M4)
    assert ret.taken == ret.fall == (4, 5, 6)        # POP with PC: 1 + N + P
    call = block_cost(assemble(tmp_path, "bl 1f\n1:"), CORTEX_M4)
    assert call.taken == call.fall == (2, 3, 4)
    cbz = block_cost(assemble(tmp_path, "cbz r0, 1f\nnop\n1:")[:1], CORTEX_M4)  # the block ends at the cbz
    assert cbz.taken == (2, 3, 4) and cbz.fall == (1, 1, 1)


@needs_as
def test_data_dependent_divide_is_a_range(tmp_path):
    assert cycles(tmp_path, "sdiv r0, r1, r2") == (2, 7, 12)      # Table 3-1: 2..12, early termination


# ---------------------------------------------------------------- the other cores' rules

@needs_as
def test_cortex_m3_multiplies(tmp_path):
    assert cycles(tmp_path, "mla r0, r1, r2, r3", CORTEX_M3, "cortex-m3") == (2, 2, 2)
    assert cycles(tmp_path, "smull r0, r1, r2, r3", CORTEX_M3, "cortex-m3") == (3, 4, 5)
    assert cycles(tmp_path, "mla r0, r1, r2, r3") == (1, 1, 1)    # the M4's single-cycle MAC


@needs_as
def test_cortex_m33_load_use(tmp_path):
    assert cycles(tmp_path, "ldr r0, [r1]\nadds r2, r0, #1", CORTEX_M33, "cortex-m33") == (3, 3, 3)
    assert cycles(tmp_path, "ldr r0, [r1]\nadds r2, r3, #1", CORTEX_M33, "cortex-m33") == (2, 2, 2)
    assert cycles(tmp_path, "ldr r0, [r1]\nldr r2, [r0]", CORTEX_M33, "cortex-m33") == (3, 3, 3)


@needs_as
def test_cortex_m55_mve_beats_overlap(tmp_path):
    m55 = (CORTEX_M55, "cortex-m55")
    assert cycles(tmp_path, "vldrb.s8 q0, [r0]", *m55) == (2, 2, 2)                   # 4 beats, 2 per cycle
    assert cycles(tmp_path, "vldrb.s8 q0, [r0]\nvmlava.s8 r2, q0, q1", *m55) == (3, 3, 3)  # load / MAC overlap
    assert cycles(tmp_path, "vldrb.s8 q0, [r0]\nvldrb.s8 q1, [r1]", *m55) == (4, 4, 4)  # same unit: none
    loop = assemble(tmp_path, "1:\nvldrb.s8 q0, [r0], #16\nvmlava.s8 r2, q0, q1\nle lr, 1b", "cortex-m55")
    assert [i.kind for i in loop] == ["mve_mem", "mve_mac", "loop_end"]
    cost = block_cost(loop, CORTEX_M55)
    assert cost.taken == (3, 3, 6) and cost.fall == (4, 4, 4)  # taken LE: loop cache (0), exit: 1


@needs_as
def test_cortex_m7_dual_issue(tmp_path):
    m7 = (CORTEX_M7, "cortex-m7")
    assert cycles(tmp_path, "add r0, r1, r2\nadd r3, r4, r5", *m7) == (1, 1, 2)
    assert cycles(tmp_path, "add r0, r1, r2\nadd r3, r0, r5", *m7) == (2, 2, 2)       # dependent
    assert cycles(tmp_path, "ldr r0, [r1]\nldr r2, [r3]", *m7) == (2, 2, 2)           # one memory op a cycle
    assert cycles(tmp_path, "ldr r0, [r1]\nsmlad r2, r3, r4, r2", *m7) == (1, 1, 2)


# ---------------------------------------------------------------- decoding

def test_decode_registers_and_kinds():
    ld = decode(0, 4, "ldr.w", "r5, [r1], #4")
    assert (ld.kind, ld.writes, ld.addr_regs) == ("load", {5, 1}, {1})
    pop = decode(0, 2, "pop", "{r4, r5, pc}")
    assert (pop.kind, pop.nregs, pop.writes_pc, pop.conditional) == ("load_multiple", 3, True, False)
    assert decode(0, 2, "bne.n", "f6 <x+0x22>").conditional
    assert decode(0, 2, "bxeq", "lr").conditional and not decode(0, 2, "bx", "lr").conditional
    assert decode(0, 4, "smlal", "r1, r2, r3, r0").writes == {1, 2}
    assert decode(0, 4, "subsgt.w", "r0, r1, #1").kind == "alu"
    assert decode(0, 2, "ittet", "eq").kind == "it"
    assert decode(0, 4, "vldr", "s0, [r0, #4]").kind == "fp_mem"
    assert decode(0, 4, "vfma.f32", "s0, s1, s2").kind == "fp_mac"
    assert decode(0, 4, "vmla.s8", "q0, q1, r2").kind == "mve_mac"
    assert decode(0, 4, "vpush", "{d8-d15}").nregs == 16
    assert decode(0, 4, "str.w", "r0, [r1, r2, lsl #2]").reg_offset


# ---------------------------------------------------------------- the log parser

def _in_block(insns, first: int, last: int) -> list[str]:
    """QEMU's in_asm lines for the instructions at [first, last) (only the address and the byte
    count matter to the parser)."""
    out = ["----------------", "IN: f"]
    for ins in insns:
        if first <= ins.addr < last:
            raw = "0000" if ins.size == 2 else "0000 0000"
            out.append(f"0x{ins.addr:08x}:  {raw:<11}{ins.mnemonic}  {ins.operands}")
    return out + [""]


def _trace(ptr: int, pc: int) -> str:
    return f"Trace 0: 0x7f00000{ptr:05x} [00000000/{pc:08x}/00000110/ff020200] f"


@needs_as
def test_parser_splits_layers_and_applies_stops_and_rewinds(tmp_path):
    src = """
hook: nop
      bx lr
loop: ldr r0, [r1]
      subs r2, #1
      bne loop
after: str r0, [r1, #4]
      b hook
"""
    insns = assemble(tmp_path, src)
    code = {i.addr: i for i in insns}
    A, B, C = 0x0, 0x4, 0xA                                  # hook, loop, after
    log = [*_in_block(insns, A, B), _trace(1, A),            # hook entry 1: layer 0 starts
           *_in_block(insns, B, C), _trace(2, B), _trace(2, B), _trace(2, B),  # loop: taken, taken, falls
           *_in_block(insns, C, 0xE), _trace(3, C),
           _trace(1, A),                                     # hook entry 2: layer 1
           _trace(2, B), "Stopped execution of TB chain before 0x7f0000000002 [00000004] f",  # did not run
           _trace(2, B),                                     # runs once, falls through
           _trace(3, C), "cpu_io_recompile: rewound execution of TB to 0000000c",  # only the str ran
           *_in_block(insns, 0xC, 0xE), _trace(4, 0xC),     # QEMU's new block: the b alone
           _trace(1, A),                                     # hook entry 3: the run ends (2 layers)
           "junk the parser ignores"]
    t = ExecTrace(code, CORTEX_M4, hook=A, n_layers=2)
    t.consume(line + "\n" for line in log)
    assert len(t.runs) == 1
    layer0, layer1 = t.runs[0]
    # layer 0: hook (nop, bx: 1 + 1 + P) + loop taken twice (ldr 2, subs 1, bne 1 + P) + falls once
    #          + after (str 1, b 1 + P)
    assert layer0.instructions == 2 + 3 * 3 + 2
    assert layer0.cycles == [3 + 2 * 5 + 4 + 3, 4 + 2 * 6 + 4 + 4, 5 + 2 * 7 + 4 + 5]
    # layer 1: hook, loop once (falls), str (rewound block), b
    assert layer1.instructions == 2 + 3 + 1 + 1
    assert layer1.cycles == [3 + 4 + 1 + 2, 4 + 4 + 1 + 3, 5 + 4 + 1 + 4]
    assert t.executed == 13 + 7 + 2  # plus the last hook block, accounted at the end of the log


@needs_as
def test_a_run_of_code_qemu_cut_in_two_costs_as_one_block(tmp_path):
    """QEMU may end a TB in the middle of straight code (a page boundary, its size limit): the pair at
    the seam (here a load pipelined after a load) is credited, so where QEMU cuts does not change the
    estimate."""
    src = """
hook: nop
      bx lr
run:  ldr r0, [r1]
      ldr r2, [r3]
      b hook
"""
    insns = assemble(tmp_path, src)
    code = {i.addr: i for i in insns}
    A, B, C, D = 0x0, 0x4, 0x6, 0xA                          # hook, ldr (cut here), ldr, after b
    whole = [*_in_block(insns, A, B), _trace(1, A), *_in_block(insns, B, D), _trace(2, B), _trace(1, A)]
    cut = [*_in_block(insns, A, B), _trace(1, A), *_in_block(insns, B, C), _trace(2, B),
           *_in_block(insns, C, D), _trace(3, C), _trace(1, A)]
    results = []
    for log in (whole, cut):
        t = ExecTrace(code, CORTEX_M4, hook=A, n_layers=1)
        t.consume(line + "\n" for line in log)
        results.append((t.runs[0][0].instructions, t.runs[0][0].cycles))
    # hook: nop 1 + bx 1 + P; then ldr 2, ldr 1 (pipelined), b 1 + P
    assert results[0] == results[1] == (5, [3 + 4 + 1, 4 + 4 + 2, 5 + 4 + 3])


def test_parser_on_a_captured_log(tmp_path):
    """The first 75 lines of a real run's log (mps2-an386, the AD model's firmware: Reset_Handler
    copying .data and zeroing .bss), with objdump's decoding of the same code."""
    code = parse_objdump((FIXTURES / "reset_an386.objdump").read_text())
    t = ExecTrace(code, CORTEX_M4, hook=0x11A, n_layers=1)
    with open(FIXTURES / "reset_an386.log") as f:
        t.consume(f)
    # d4..e0 (the str at e2 was rewound: SCB I/O), e2, e6, e8..102, 104..10a, 10c..122, then 11a..122 x 5
    assert t.executed == 6 + 1 + 1 + 12 + 4 + 11 + 5 * 5
    # with the hook at 11a and one layer, entries 1-2 and 3-4 are runs (entry 5 starts one the log cuts short)
    assert t.undecoded_blocks == 0 and len(t.runs) == 2
    zero_loop = block_cost([code[a] for a in (0x11A, 0x11C, 0x11E, 0x120, 0x122)], CORTEX_M4)
    assert zero_loop.taken[POINT] == 5 + 2 and zero_loop.fall[POINT] == 5
    assert [(run[0].instructions, run[0].cycles[POINT]) for run in t.runs] == [(5, 7), (5, 7)]
