"""A static worst case for the firmware's stack, from gcc's call graphs (-fcallgraph-info=su).

gcc writes one `<object>.ci` file per translation unit (VCG text): a node per function with its
frame size ("24 bytes (static)"), an edge per call site. The firmware is non-recursive (the kernels
are loops), so the deepest path from the reset handler bounds the stack of the main program; on
top of it come the interrupts that can arrive (SysTick, a fault report), each with its exception
frame. Assumptions, stated in `StaticStack.assumptions`:

- a call through a pointer (`__indirect_call`: the profiler hook) may reach any function that is
  never called directly and that the link kept (the address-taken ones: the hooks; functions
  --gc-sections dropped, such as a model's unused API calls, cannot be called at all);
- a library function gcc did not compile here (memcpy, memcmp, setjmp ...) takes LIBRARY_FRAME bytes;
- a function with a dynamic frame (alloca, a VLA) makes the figure a lower bound (`bounded` False);
- a function gcc reports with a 0-byte frame (a naked assembly routine: gcc does not see its pushes)
  takes what its code pushes and subtracts from sp, read from the linked ELF's disassembly
  (`pushed_bytes`), when that is known.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

LIBRARY_FRAME = 64       # bytes assumed for a library function without call-graph information
ENTRY = "Reset_Handler"
HANDLERS = ("SysTick_Handler", "mcu_fault_report")  # interrupts that may stack on top of the program
NOT_HOOKS = {ENTRY, "mcu_fault_entry", *HANDLERS}

_NODE = re.compile(r'node: \{ title: "([^"]+)" label: "([^"]*)"')
_EDGE = re.compile(r'edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)"')
_SIZE = re.compile(r"\\n(\d+) bytes \(([a-z,]+)\)")


@dataclass(frozen=True)
class StaticStack:
    bytes: int                # worst case: the deepest path plus the interrupts on top
    path: tuple[str, ...]     # the deepest call path of the main program
    bounded: bool             # False if a dynamic frame (alloca/VLA) was found: a lower bound then
    library: tuple[str, ...]  # functions counted as LIBRARY_FRAME

    def describe(self) -> str:
        return (f"static worst case from gcc's call graphs: {' > '.join(self.path)}, plus interrupts; "
                f"{self.assumptions}")

    @property
    def assumptions(self) -> str:
        lib = f"library calls ({', '.join(self.library)}) counted as {LIBRARY_FRAME} B each" if self.library else ""
        dyn = "dynamic frames found: a lower bound" if not self.bounded else ""
        return "; ".join(x for x in ("calls through pointers may reach any hook", lib, dyn) if x)


class StackAnalysisError(Exception):
    """The call graph does not give a bound (recursion, no entry point)."""


_FUNC = re.compile(r"^[0-9a-f]+ <([^>]+)>:$")
_PUSH = re.compile(r"\t(push|stmdb\tsp!,|stmfd\tsp!,|vpush)(?:\.w)?\s*\{([^}]*)\}")
_SUB_SP = re.compile(r"\tsub(?:\.w|w)?\tsp,\s*(?:sp,\s*)?#(\d+)")


def _registers(regs: str) -> int:
    """Bytes of a register list as PUSH/VPUSH write them ("r4-r11, lr", "d8-d15", "s16")."""
    total = 0
    for part in (r.strip() for r in regs.split(",") if r.strip()):
        lo, _, hi = part.partition("-")
        size = 8 if lo[0] == "d" else 4
        count = int(hi[1:]) - int(lo[1:]) + 1 if hi and lo[1:].isdigit() else 1
        total += size * count
    return total


def pushed_bytes(disassembly: str) -> dict[str, int]:
    """Per function of an `objdump -d` listing: the bytes its code pushes (PUSH, STMDB sp!, VPUSH)
    and subtracts from sp (SUB sp, #n), all added up: an upper bound of its own frame when the pushes
    are not repeated in a loop (a naked assembly routine's prologue and spills)."""
    result: dict[str, int] = {}
    name = None
    for line in disassembly.splitlines():
        m = _FUNC.match(line)
        if m:
            name = m.group(1)
            result.setdefault(name, 0)
            continue
        if name is None:
            continue
        m = _PUSH.search(line)
        if m:
            result[name] += _registers(m.group(2))
            continue
        m = _SUB_SP.search(line)
        if m:
            result[name] += int(m.group(1))
    return result


def static_stack(ci_files: Iterable[Path], exception_frame: int, linked: set[str] | None = None,
                 pushed: dict[str, int] | None = None) -> StaticStack:
    """The worst-case stack of a firmware whose objects left these .ci files; `linked`: the function
    names in the linked ELF, when known; `pushed`: pushed_bytes of its disassembly, for the functions
    gcc reports with a 0-byte frame (naked assembly)."""
    frames: dict[str, int | None] = {}
    calls: dict[str, set[str]] = {}
    dynamic = False
    for ci in ci_files:
        text = Path(ci).read_text(errors="replace")
        for name, label in _NODE.findall(text):
            m = _SIZE.search(label)
            if m:
                frames[name] = max(frames.get(name) or 0, int(m.group(1)))
                dynamic |= m.group(2) != "static"
            else:
                frames.setdefault(name, None)
        for src, dst in _EDGE.findall(text):
            calls.setdefault(src, set()).add(dst)
    if ENTRY not in frames:
        raise StackAnalysisError(f"no call graph for {ENTRY}")
    called = {d for targets in calls.values() for d in targets}
    hooks = sorted(n for n, f in frames.items() if f is not None and n not in called and n not in NOT_HOOKS
                   and (linked is None or n.rsplit(":", 1)[-1] in linked))
    library: set[str] = set()
    memo: dict[str, tuple[int, tuple[str, ...]]] = {}

    def deepest(name: str, stack: tuple[str, ...]) -> tuple[int, tuple[str, ...]]:
        if name in stack:
            raise StackAnalysisError(f"recursion: {' -> '.join(stack[stack.index(name):] + (name,))}")
        if name in memo:
            return memo[name]
        own: int
        if name == "__indirect_call":
            targets, own = hooks, 0
        else:
            frame = frames.get(name)
            if frame is None:
                library.add(name)
            elif frame == 0 and pushed:  # naked assembly: what its code pushes
                frame = pushed.get(name.rsplit(":", 1)[-1], 0)
            own = LIBRARY_FRAME if frame is None else frame
            targets = sorted(calls.get(name, ()))
        best: tuple[int, tuple[str, ...]] = (0, ())
        for t in targets:
            depth, path = deepest(t, stack + (name,))
            if depth > best[0]:
                best = (depth, path)
        memo[name] = (own + best[0], (name,) + best[1])
        return memo[name]

    total, path = deepest(ENTRY, ())
    for handler in HANDLERS:
        if handler in frames:
            total += exception_frame + deepest(handler, ())[0]
    names = tuple(n.rsplit(":", 1)[-1] for n in path)  # a static function is "file.c:name"
    return StaticStack(bytes=total, path=names, bounded=not dynamic, library=tuple(sorted(library)))


def exception_frame_bytes(has_fpu: bool) -> int:
    """What the core pushes on exception entry: 8 words, or 26 with the FP context."""
    return 104 if has_fpu else 32
