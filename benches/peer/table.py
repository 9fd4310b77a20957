#!/usr/bin/env python3
"""Print the Markdown table of docs/performance.md from a compare table (compare.py's output).

    python3 table.py COMPARE [--target-small 0.95] [--target 1.00]

One row a primitive: its ratio (peer ms / crate ms) at each size, in bold below the target
(--target-small at 2^16, --target above), then both sides' times at the largest size; after the
table, one sentence listing the lines below their target at each size. Standard library only.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402  (the reader of its tables)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("compare", help="compare.py's output (one run, or the medians of several)")
    ap.add_argument("--target-small", type=float, default=0.95, help="the target at 2^16")
    ap.add_argument("--target", type=float, default=1.00, help="the target above 2^16")
    a = ap.parse_args()
    try:
        rows, _ = compare.read_table(a.compare)
    except FileNotFoundError:
        sys.exit(f"table.py: no such file: {a.compare}")
    if not rows:
        sys.exit(f"table.py: no compare rows in {a.compare}")
    sizes = sorted({k for r in rows.values() for k in r})
    top = sizes[-1]
    target = lambda k: a.target_small if k == sizes[0] else a.target
    head = ["line"] + [f"2^{k}" for k in sizes] + [f"devseq ms at 2^{top}", f"peer ms at 2^{top}"]
    print("| " + " | ".join(head) + " |")
    print("| --- |" + " ---: |" * (len(head) - 1))
    below = {k: [] for k in sizes}
    for name in sorted(rows):
        cells = [name]
        for k in sizes:
            if k not in rows[name]:
                cells.append("")
                continue
            ratio = rows[name][k][2]
            # The ratio as printed is what is compared, so a 0.995 shown as 1.00 is not bold.
            low = round(ratio, 2) < target(k)
            if low:
                below[k].append(name)
            cells.append(f"**{ratio:.2f}**" if low else f"{ratio:.2f}")
        ms = rows[name].get(top)
        cells += [f"{ms[0]:.4f}", f"{ms[1]:.4f}"] if ms else ["", ""]
        print("| " + " | ".join(cells) + " |")
    parts = [f"at 2^{k} {', '.join(below[k])}" for k in sizes if below[k]]
    print()
    print(f"Below the target ({a.target_small:.2f} at 2^{sizes[0]}, {a.target:.2f} above): "
          + ("; ".join(parts) if parts else "none") + ".")


if __name__ == "__main__":
    main()
