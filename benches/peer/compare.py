#!/usr/bin/env python3
"""Join the crate's benchmark lines with the peer's (CUB/Thrust) lines and print the ratios.

    python3 compare.py BENCH PEER                     one run: the crate's output, the peer's
    python3 compare.py BENCH... --peer PEER...        several runs: medians

Both kinds of file hold lines of the form

    NAME n=2^K  MS ms  GELEM Gelem/s  GBPS GB/s

(other lines are ignored, so a file may hold the output of several benches). For each NAME and
K found on both sides the table shows the crate's time, the peer's time, their ratio (peer ms /
crate ms: above 1.00 the crate is faster), the crate's bandwidth and that bandwidth as a
fraction of the peer's copy_f32 bandwidth at the same size ("of copy").

With several BENCH files (one run of the crate's benches each) the columns are medians over the
runs and the table ends with each run's own ratio. Give one PEER file for all of them, or one
PEER file for each BENCH file, in the same order (then run i's ratio uses peer run i).
Standard library only.
"""
import argparse
import math
import re
import statistics
import sys

LINE = re.compile(r"^(\S+)\s+n=2\^(\d+)\s+([\d.]+) ms\s+([\d.]+) Gelem/s\s+([\d.]+) GB/s")
NOTE = re.compile(r"^# (devseq \S+ on |peer: )")  # which GPU each side ran on
# A row of the table this script prints: primitive, size, crate ms, peer ms, ratio, ...
ROW = re.compile(r"^(\S+)\s+2\^(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)")


def read(path):
    """{(name, k): (ms, gelem_s, gb_s)} and the file's '# ...' header lines."""
    rows, notes = {}, []
    try:
        with open(path) as f:
            for line in f:
                line = line.strip()
                m = LINE.match(line)
                if m:
                    # A later line of the same name and size (a second bench in the file) wins.
                    rows[(m[1], int(m[2]))] = (float(m[3]), float(m[4]), float(m[5]))
                elif NOTE.match(line) and line not in notes:
                    notes.append(line)
    except FileNotFoundError:
        sys.exit(f"compare.py: no such file: {path}")
    if not rows:
        print(f"compare.py: warning: no benchmark lines in {path}", file=sys.stderr)
    return rows, notes


def read_table(path):
    """{name: {k: (crate ms, peer ms, ratio)}} of a table this script printed (for chart.py and
    table.py), and its lines, for what else they read from it."""
    rows = {}
    with open(path) as f:
        lines = f.readlines()
    for line in lines:
        m = ROW.match(line)
        if m:
            rows.setdefault(m[1], {})[int(m[2])] = (float(m[3]), float(m[4]), float(m[5]))
    return rows, lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", metavar="FILE",
                    help="the crate's bench output(s); without --peer, the last file is the peer's")
    ap.add_argument("--peer", action="append", default=[], metavar="PEER",
                    help="the peer's output (once, or once for each bench file)")
    a = ap.parse_args()
    benches, peers = list(a.files), list(a.peer)
    if not peers:
        if len(benches) < 2:
            ap.error("give the crate's output and the peer's output")
        peers = [benches.pop()]
    if len(peers) not in (1, len(benches)):
        ap.error("give one --peer file, or one for each bench file")

    ours = [read(p) for p in benches]
    theirs = [read(p) for p in peers]
    if len(theirs) == 1:
        theirs = theirs * len(ours)
    for note in dict.fromkeys(n for _, notes in ours[:1] + theirs[:1] for n in notes):
        print(note)

    runs = len(ours)
    head = f"{'primitive':<28} {'n':>5} {'crate ms':>10} {'peer ms':>10} {'ratio':>6} {'crate GB/s':>10} {'of copy':>7}"
    if runs > 1:
        head += f"   ratios of the {runs} runs"
    print(head)
    keys = sorted(set().union(*(set(p) for p, _ in theirs)))
    missing = []
    for name, k in keys:
        cms, pms, ratio, gbs, of_copy = [], [], [], [], []
        for (crate, _), (peer, _) in zip(ours, theirs):
            if (name, k) not in crate or (name, k) not in peer:
                continue
            ms, _, gb = crate[(name, k)]
            p = peer[(name, k)][0]
            cms.append(ms)
            pms.append(p)
            ratio.append(p / ms)
            gbs.append(gb)
            copy = peer.get(("copy_f32", k))
            of_copy.append(gb / copy[2] if copy and copy[2] > 0 else math.nan)
        if not cms:
            missing.append(f"{name}@2^{k}")
            continue
        med = statistics.median
        of_copy = [x for x in of_copy if not math.isnan(x)]
        line = (f"{name:<28} 2^{k:<3} {med(cms):10.4f} {med(pms):10.4f} {med(ratio):6.2f}"
                f" {med(gbs):10.1f} {med(of_copy) if of_copy else math.nan:7.2f}")
        if runs > 1:
            line += "   " + " ".join(f"{r:.2f}" for r in ratio)
            if len(ratio) < runs:
                line += f"  ({runs - len(ratio)} run(s) lack it)"
        print(line)
    if missing:
        print("not measured by the crate:", " ".join(missing))


if __name__ == "__main__":
    main()
