#!/usr/bin/python3
"""Self and inclusive shares of every function, from nnprof's folded stacks and from
`perf script` output of `perf record --call-graph dwarf`, side by side (issue 21).

usage: frameless_shares.py NNPROF.folded PERF.script [min share %]
A function's self share: samples whose innermost frame is it; inclusive: samples with it
anywhere on the stack (counted once per sample). Names are shortened to the bare function name
(no namespace, parameters or [clone ...]) so that both tools' spellings meet.
"""
import re
import sys
from collections import Counter


def short(name):
    name = re.sub(r" \[clone [^\]]*\]", "", name.strip())
    name = re.sub(r"\+0x[0-9a-f]+$", "", name)
    name = re.sub(r"@@?[A-Z_0-9.]+$", "", name)  # perf's symbol versions: __libc_start_main@@GLIBC_2.34
    depth, cut = 0, len(name)
    for i in range(len(name) - 1, -1, -1):  # drop the outermost parameter list
        if name[i] == ")":
            depth += 1
        elif name[i] == "(":
            depth -= 1
            if depth == 0 and i > 0 and name[:i].strip() and not name[:i].endswith("namespace"):
                cut = i
                break
    name = name[:cut] if name.endswith(")") else name
    name = name.replace("(anonymous namespace)::", "")
    name = name.rsplit("::", 1)[-1].strip() or name
    # libm's functions have two names at one address (tanhf and __tanhf): the tools pick either.
    return name.lstrip("_") if name.startswith("__") and name[2:3].islower() and name.endswith("f") else name


def shares(stacks):
    total = sum(c for _, c in stacks)
    self_, incl = Counter(), Counter()
    for frames, c in stacks:  # frames outermost first
        if not frames:
            continue
        self_[frames[-1]] += c
        for f in set(frames):
            incl[f] += c
    return total, self_, incl


def read_folded(path):
    out = []
    for line in open(path):
        stack, _, count = line.rstrip("\n").rpartition(" ")
        # Inlined frames ("_[i]") are left out: perf script runs with --no-inline.
        out.append(([short(f) for f in stack.split(";") if not f.endswith("_[i]")], int(count)))
    return out


def read_perf_script(path):
    out, frames = [], []
    for line in open(path, errors="replace"):
        if not line.strip():
            if frames:
                out.append((list(reversed(frames)), 1))
            frames = []
            continue
        if line.startswith(("\t", " ")):
            m = re.match(r"\s+[0-9a-f]+ (.*) \(([^)]*)\)$", line.rstrip("\n"))
            if m:
                frames.append(short(m.group(1)))
    if frames:
        out.append((list(reversed(frames)), 1))
    return out


def main():
    nn_total, nn_self, nn_incl = shares(read_folded(sys.argv[1]))
    pf_total, pf_self, pf_incl = shares(read_perf_script(sys.argv[2]))
    floor = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
    pct = lambda c, t: 100.0 * c / t if t else 0.0
    names = {f for f in set(nn_incl) | set(pf_incl)
             if max(pct(nn_incl[f], nn_total), pct(pf_incl[f], pf_total)) >= floor}
    print(f"samples: nnprof {nn_total}, perf {pf_total}")
    print(f"| function | self nnprof | self perf | Δ | inclusive nnprof | inclusive perf | Δ |")
    print(f"|---|---|---|---|---|---|---|")
    worst = 0.0
    for f in sorted(names, key=lambda f: -pct(pf_incl[f], pf_total)):
        s1, s2 = pct(nn_self[f], nn_total), pct(pf_self[f], pf_total)
        i1, i2 = pct(nn_incl[f], nn_total), pct(pf_incl[f], pf_total)
        worst = max(worst, abs(s1 - s2), abs(i1 - i2))
        print(f"| {f} | {s1:.1f}% | {s2:.1f}% | {s1 - s2:+.1f} | {i1:.1f}% | {i2:.1f}% | {i1 - i2:+.1f} |")
    print(f"largest difference: {worst:.1f} points")


if __name__ == "__main__":
    main()
