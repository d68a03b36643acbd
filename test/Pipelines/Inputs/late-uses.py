"""Looks for a use of a device buffer after its free in the host functions
of MLIR at tfm-compile's `kernels` stage (argv[1:]: files): after each
`gpu.dealloc`, no later op of its function may use the buffer or anything
made of it (a view, a cast, a tensor map, an address), its sizes and the
values loaded from it aside. Prints, per file, the frees and the late
uses found, and each late use."""

import re
import sys

# `%a, %b = op %operand ...`: the op's results and first operand.
DEFINITION = re.compile(r"^\s*(%[\w.]+)(?:, (%[\w.]+))? = ([\w.]+) (%[\w.]+)")
FREE = re.compile(r"gpu\.dealloc async \[[^\]]*\] (%[\w.]+)")
NO_ADDRESS = {"memref.dim", "memref.load", "memref.alloca"}

for path in sys.argv[1:]:
    text = open(path).read()
    # Host functions: the module's func.func ops (kernels are gpu.func).
    functions = re.findall(r"^  func\.func @\w+\(.*?^  }$", text, re.S | re.M)
    frees = late = 0
    for function in functions:
        lines = function.split("\n")
        made_of = {}  # value -> the values its defining op read first
        for line in lines:
            match = DEFINITION.match(line)
            if match and match.group(3) not in NO_ADDRESS:
                for result in filter(None, match.group(1, 2)):
                    made_of[result] = match.group(4)

        def derived(buffer):
            values = {buffer}
            grew = True
            while grew:
                grew = False
                for value, source in made_of.items():
                    if source in values and value not in values:
                        values.add(value)
                        grew = True
            return values

        for index, line in enumerate(lines):
            match = FREE.search(line)
            if not match:
                continue
            frees += 1
            values = derived(match.group(1))
            pattern = re.compile(r"(%s)(?![\w.])" % "|".join(
                re.escape(v) for v in sorted(values, key=len, reverse=True)))
            for later in lines[index + 1:]:
                if FREE.search(later) or not pattern.search(later):
                    continue
                # A size of the buffer is no use of its memory.
                if re.match(r"^\s*%[\w.]+ = memref\.dim ", later):
                    continue
                late += 1
                print(f"late use of {match.group(1)}: {later.strip()[:160]}")
    name = path.rsplit("/", 1)[-1]
    print(f"{name}: {frees} frees, {late} late uses")
