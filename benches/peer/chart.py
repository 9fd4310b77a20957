#!/usr/bin/env python3
"""Draw the throughput ratios against the peer (CUB/Thrust) as an SVG chart.

    python3 chart.py COMPARE [options]          a table printed by compare.py
    python3 chart.py BENCH PEER [options]       the crate's and the peer's raw output

Options: -o/--out FILE (default docs/images/ratios.svg), --gpu NAME and --date DATE (the
title), --note TEXT (a line under the title, e.g. "median of three compares"), --order
name|ratio (rows by name, or by the ratio at the largest size, highest first).

One row a primitive, one marker a size (2^16, 2^20, 2^24, 2^28), ratios on a log scale with a
line at 1.0; the ratios are also printed at the right. A ratio is peer time / crate time: right
of the line devseq is faster. Python 3 standard library only.
"""
import argparse
import math
import os
import re
import sys
from xml.sax.saxutils import escape

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402  (its reader of raw lines and of its own tables)

GPU = re.compile(r"^# (?:devseq \S+|peer: .*?) on ([^,]+)")
SIZES = (16, 20, 24, 28)
SUP = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")
# Okabe-Ito colours (safe for colour-blind readers) and one shape a size; 2^28 the darkest.
STYLE = {16: ("#E69F00", "circle"), 20: ("#56B4E9", "square"),
         24: ("#009E73", "diamond"), 28: ("#0B3C7A", "triangle")}
SANS = "DejaVu Sans, Helvetica, Arial, sans-serif"
MONO = "DejaVu Sans Mono, Menlo, Consolas, monospace"


def pow2(k):
    return "2" + str(k).translate(SUP)


def read_compare(path):
    table, lines = compare.read_table(path)
    rows = {name: {k: r[2] for k, r in sizes.items()} for name, sizes in table.items()}
    gpu = next((GPU.match(l)[1].strip() for l in lines if GPU.match(l)), None)
    return rows, gpu


def read_raw(bench, peer):
    ours, notes = compare.read(bench)
    theirs, _ = compare.read(peer)
    rows = {}
    for (name, k), (pms, _, _) in theirs.items():
        if (name, k) in ours:
            rows.setdefault(name, {})[k] = pms / ours[(name, k)][0]
    gpu = next((GPU.match(n)[1].strip() for n in notes if GPU.match(n)), None)
    return rows, gpu


def marker(shape, x, y, r, colour):
    if shape == "circle":
        return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}" fill="{colour}"/>'
    if shape == "square":
        s = r * 0.9
        return f'<rect x="{x - s:.1f}" y="{y - s:.1f}" width="{2 * s:.1f}" height="{2 * s:.1f}" fill="{colour}"/>'
    if shape == "diamond":
        s = r * 1.25
        pts = [(x, y - s), (x + s, y), (x, y + s), (x - s, y)]
    else:  # triangle
        s = r * 1.3
        pts = [(x, y - s), (x + s * 0.9, y + s * 0.6), (x - s * 0.9, y + s * 0.6)]
    return '<polygon points="' + " ".join(f"{a:.1f},{b:.1f}" for a, b in pts) + f'" fill="{colour}"/>'


def nice_ticks(lo, hi, scale, min_px=24):
    # Rounder values first; a tick too close to one already taken is left out.
    cands = [2, 5, 10, 0.5, 1.5, 3, 4, 0.8, 1.25, 2.5, 6, 8, 0.9, 1.1, 20, 50, 0.25, 0.33, 0.6,
             0.7, 1.75, 15, 30]
    ticks = [1.0]
    for c in cands:
        if lo <= c <= hi and all(abs(scale(c) - scale(t)) >= min_px for t in ticks):
            ticks.append(c)
    return sorted(ticks)


def draw(rows, title, note, order):
    names = sorted(rows)
    if order == "ratio":
        names.sort(key=lambda n: -rows[n][max(rows[n])])
    values = [v for r in rows.values() for v in r.values()]
    lo = min(0.8, min(values) / 1.06)
    hi = max(1.1, max(values) * 1.08)

    W, label_w, num_w = 900, 200, 200
    x0, x1 = label_w + 14, W - num_w - 16
    row_h, top = 20, 112
    plot_top, plot_bottom = top, top + row_h * len(names)
    H = plot_bottom + 64

    def sx(v):
        return x0 + (math.log(v) - math.log(lo)) / (math.log(hi) - math.log(lo)) * (x1 - x0)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
           f'font-family="{SANS}" font-size="12" fill="#222">',
           f'<rect width="{W}" height="{H}" fill="#ffffff"/>',
           f'<text x="16" y="30" font-size="19" font-weight="bold">{escape(title)}</text>',
           '<text x="16" y="52" font-size="12.5" fill="#444">Throughput ratio = peer time / devseq time'
           ' (log scale). Right of 1.0: devseq is faster.'
           + (f' {escape(note)}' if note else '') + '</text>']
    # Legend.
    lx = 16
    for k in SIZES:
        colour, shape = STYLE[k]
        out.append(marker(shape, lx + 6, 77, 5, colour))
        out.append(f'<text x="{lx + 16}" y="81.5">{pow2(k)} elements</text>')
        lx += 110
    # Shaded side where the peer is faster, rows, grid.
    out.append(f'<rect x="{x0}" y="{plot_top}" width="{sx(1.0) - x0:.1f}" '
               f'height="{plot_bottom - plot_top}" fill="#fbe9e7"/>')
    for i, name in enumerate(names):
        if i % 2 == 1:
            out.append(f'<rect x="8" y="{plot_top + i * row_h}" width="{W - 16}" height="{row_h}" '
                       f'fill="#f2f4f7" fill-opacity="0.8"/>')
    ticks = nice_ticks(lo, hi, sx)
    for t in ticks:
        x = sx(t)
        if t == 1.0:
            continue
        out.append(f'<line x1="{x:.1f}" y1="{plot_top}" x2="{x:.1f}" y2="{plot_bottom}" '
                   f'stroke="#d0d4da" stroke-width="1"/>')
    for t in ticks:
        x = sx(t)
        label = f"{t:g}" if t != 1.0 else "1.0"
        weight = ' font-weight="bold"' if t == 1.0 else ""
        out.append(f'<text x="{x:.1f}" y="{plot_bottom + 16}" text-anchor="middle"{weight}>{label}</text>')
    out.append(f'<text x="{(x0 + x1) / 2:.1f}" y="{plot_bottom + 36}" text-anchor="middle" fill="#444">'
               'ratio against CUB/Thrust (log scale)</text>')
    out.append(f'<text x="{sx(1.0) - 6:.1f}" y="{plot_top - 7}" text-anchor="end" font-size="11" '
               f'fill="#a33">← peer faster</text>')
    out.append(f'<text x="{sx(1.0) + 6:.1f}" y="{plot_top - 7}" font-size="11" fill="#1f5f2f">'
               'devseq faster →</text>')
    # The numbers' column heads.
    cw = num_w / 4
    for j, k in enumerate(SIZES):
        cx = x1 + 24 + j * cw + cw / 2
        out.append(f'<text x="{cx:.1f}" y="{plot_top - 7}" text-anchor="middle" font-size="11" '
                   f'fill="{STYLE[k][0]}" font-weight="bold">{pow2(k)}</text>')
    # One row a primitive.
    dodge = {16: -4.5, 20: -1.5, 24: 1.5, 28: 4.5}
    for i, name in enumerate(names):
        yc = plot_top + i * row_h + row_h / 2
        r = rows[name]
        out.append(f'<text x="{label_w}" y="{yc + 4:.1f}" text-anchor="end" font-family="{MONO}" '
                   f'font-size="12">{escape(name)}</text>')
        xs = [sx(v) for v in r.values()]
        out.append(f'<line x1="{min(xs):.1f}" y1="{yc:.1f}" x2="{max(xs):.1f}" y2="{yc:.1f}" '
                   f'stroke="#9aa3ad" stroke-width="1.2"/>')
        for k in SIZES:
            if k in r:
                colour, shape = STYLE[k]
                out.append(marker(shape, sx(r[k]), yc + dodge[k], 4.6 if k == 28 else 4.0, colour))
        for j, k in enumerate(SIZES):
            cx = x1 + 24 + j * cw + cw / 2
            v = r.get(k)
            text = f"{v:.2f}" if v is not None else "—"
            fill = "#b71c1c" if v is not None and v < 1.0 else "#222"
            weight = ' font-weight="bold"' if k == 28 else ""
            out.append(f'<text x="{cx:.1f}" y="{yc + 4:.1f}" text-anchor="middle" font-family="{MONO}" '
                       f'font-size="11.5" fill="{fill}"{weight}>{text}</text>')
    # The 1.0 line on top of the rows.
    out.append(f'<line x1="{sx(1.0):.1f}" y1="{plot_top - 2}" x2="{sx(1.0):.1f}" y2="{plot_bottom}" '
               f'stroke="#333" stroke-width="1.5"/>')
    out.append(f'<line x1="{x0}" y1="{plot_bottom}" x2="{x1}" y2="{plot_bottom}" stroke="#888"/>')
    out.append(f'<text x="{W - 16}" y="{H - 10}" text-anchor="end" font-size="10.5" fill="#666">'
               'Each line: median of 15 timed runs (CUDA events) after a warm-up, same inputs on both '
               'sides. Made by benches/peer/chart.py.</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", metavar="FILE", help="a compare table, or BENCH PEER")
    ap.add_argument("-o", "--out", default="docs/images/ratios.svg")
    ap.add_argument("--gpu", help="GPU name for the title (default: from the files' headers)")
    ap.add_argument("--date", help="date of the run, for the title")
    ap.add_argument("--note", help="a short line after the subtitle")
    ap.add_argument("--order", choices=("name", "ratio"), default="name")
    a = ap.parse_args()
    if len(a.files) == 1:
        rows, gpu = read_compare(a.files[0])
    elif len(a.files) == 2:
        rows, gpu = read_raw(*a.files)
    else:
        ap.error("give one compare table, or a bench file and a peer file")
    if not rows:
        sys.exit("chart.py: no ratios found in " + " ".join(a.files))
    gpu = a.gpu or gpu or "unknown GPU"
    title = f"devseq against CUB/Thrust on {gpu}" + (f", {a.date}" if a.date else "")
    svg = draw(rows, title, a.note, a.order)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        f.write(svg)
    print(f"chart.py: {len(rows)} primitives -> {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
