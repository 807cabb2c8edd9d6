#!/usr/bin/env python3
"""Draws the benchmark results as SVG charts for docs/benchmarks.md and the README, from the
data the benchmark scripts write (standard library only; each chart is skipped while its data
is missing):

  .build/bench/tandem.json  (Scripts/bench.sh: TandemBench)  -> docs/images/bench-store.svg
  .build/bench/sync.jsonl   (Scripts/bench-sync.sh: SyncBench) -> docs/images/bench-sync.svg
  .build/bench/server.csv   (Scripts/bench-server.sh)          -> docs/images/bench-server.svg

Usage: Scripts/bench-charts.py [DATA_DIR] [OUT_DIR]   (defaults .build/bench, docs/images)
"""
import csv
import json
import math
import os
import sys
from xml.sax.saxutils import escape

data_dir = sys.argv[1] if len(sys.argv) > 1 else ".build/bench"
out_dir = sys.argv[2] if len(sys.argv) > 2 else "docs/images"
FONT = 'font-family="system-ui, -apple-system, Segoe UI, sans-serif"'
COLORS = {"Tandem": "#2a6fdb", "GRDB": "#e08a1e", "raw": "#7a7a7a", "other": "#3aa57a"}


def svg(width, height, body, title):
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
            f'role="img" {FONT} font-size="12"><title>{escape(title)}</title>'
            f'<rect width="{width}" height="{height}" fill="#fff"/>{body}</svg>\n')


def text(x, y, content, size=12, anchor="start", color="#222", weight="normal"):
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" fill="{color}" '
            f'font-weight="{weight}">{escape(str(content))}</text>')


def write(name, content):
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, name)
    with open(path, "w") as file:
        file.write(content)
    print(f"bench-charts: wrote {path}")


def milliseconds(value):
    return f"{value:.2f} ms" if value < 10 else f"{value:.0f} ms" if value >= 100 else f"{value:.1f} ms"


def color_of(name, first):
    """The first bar of an operation is Tandem's figure; the others its competitors."""
    if first:
        return COLORS["Tandem"]
    if name.startswith("GRDB"):
        return COLORS["GRDB"]
    if name.startswith("raw"):
        return COLORS["raw"]
    return COLORS["other"]


def store_chart(path):
    """Tandem against GRDB and raw SQLite: per operation, each contender's median time, bars
    scaled to the slowest of that operation."""
    document = json.load(open(path))
    operations = []
    for row in document["comparisons"]:
        if not operations or operations[-1]["operation"] != row["operation"]:
            operations.append({"operation": row["operation"], "bars": [(row["tandem"], row["tandemMilliseconds"])]})
        operations[-1]["bars"].append((row["competitor"], row["competitorMilliseconds"]))
    width, label_width, bar_width = 860, 250, 470
    y, body = 44, ""
    body += text(16, 24, "Tandem vs GRDB vs raw SQLite: median time per operation (shorter is faster)", 14, weight="600")
    body += text(16, 40, f"{document['rows']} rows, median of {document['runs']} runs, {document['cores']} cores, one process", 11, color="#555")
    y = 58
    for operation in operations:
        title = operation["operation"]
        if len(title) > 120:
            title = title[:117] + "…"
        body += text(16, y + 12, title, 12, weight="600")
        y += 20
        slowest = max(ms for _, ms in operation["bars"]) or 1
        for index, (name, ms) in enumerate(operation["bars"]):
            length = max(bar_width * ms / slowest, 1)
            body += text(label_width - 8, y + 11, name[:40], 11, "end", "#444")
            body += f'<rect x="{label_width}" y="{y + 1}" width="{length:.1f}" height="13" rx="2" fill="{color_of(name, index == 0)}"/>'
            body += text(label_width + length + 6, y + 11, milliseconds(ms), 11, color="#333")
            y += 17
        y += 10
    return svg(width, y + 10, body, "Tandem vs GRDB vs raw SQLite, median time per operation")


def sync_chart(path):
    """The first sync's throughput against the dataset's size: A's push, B's bootstrap, both,
    and the raw SQLite insert of the same rows, in records per second (log-scale sizes)."""
    by_size = {}
    for line in open(path):
        line = line.strip()
        if not line:
            continue
        record = json.loads(line)
        if record.get("figure") == "sync" and not record.get("uniqueTitles"):
            by_size[record["changes"]] = record
    if len(by_size) < 2:
        print(f"bench-charts: {path} has fewer than two sizes; no sync chart")
        return None
    sizes = sorted(by_size)
    series = [
        ("A → server → B (push + bootstrap)", "#2a6fdb", lambda r: r["changes"] / (r["pushSeconds"] + r["pullSeconds"])),
        ("B's first sync (snapshot bootstrap)", "#3aa57a", lambda r: r["changes"] / r["pullSeconds"]),
        ("A's push", "#e08a1e", lambda r: r["changes"] / r["pushSeconds"]),
        ("raw SQLite C inserts of the same rows", "#7a7a7a", lambda r: r["changes"] / r["rawSeconds"]),
    ]
    values = {name: [function(by_size[size]) for size in sizes] for name, _, function in series}
    top = max(max(v) for v in values.values()) * 1.1
    width, height, left, right, top_margin, bottom = 760, 330, 80, 40, 40, 90
    plot_w, plot_h = width - left - right, height - top_margin - bottom
    low, high = math.log10(sizes[0]), math.log10(sizes[-1])

    def x(size):
        return left + (math.log10(size) - low) / (high - low) * plot_w

    def y(value):
        return top_margin + plot_h - value / top * plot_h

    body = text(16, 24, "Sync throughput against dataset size (records/s, loopback, release builds)", 14, weight="600")
    step = 10 ** math.floor(math.log10(top / 4))
    step = next(s * step for s in (1, 2, 5, 10) if top / (s * step) <= 6)
    tick = 0
    while tick <= top:
        body += f'<line x1="{left}" y1="{y(tick):.1f}" x2="{width - right}" y2="{y(tick):.1f}" stroke="#eee"/>'
        body += text(left - 6, y(tick) + 4, f"{tick:,.0f}".replace(",", " "), 11, "end", "#555")
        tick += step
    for size in sizes:
        body += f'<line x1="{x(size):.1f}" y1="{top_margin + plot_h}" x2="{x(size):.1f}" y2="{top_margin + plot_h + 4}" stroke="#999"/>'
        body += text(x(size), top_margin + plot_h + 18, f"{size:,}".replace(",", " "), 11, "middle", "#555")
    body += text(left + plot_w / 2, top_margin + plot_h + 36, "records in the dataset (log scale)", 11, "middle", "#555")
    for name, color, _ in series:
        points = " ".join(f"{x(size):.1f},{y(value):.1f}" for size, value in zip(sizes, values[name]))
        body += f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{points}"/>'
        for size, value in zip(sizes, values[name]):
            body += f'<circle cx="{x(size):.1f}" cy="{y(value):.1f}" r="3" fill="{color}"/>'
    legend_y = height - 30
    for index, (name, color, _) in enumerate(series):
        lx = left + (index % 2) * 330
        ly = legend_y + (index // 2) * 18
        body += f'<rect x="{lx}" y="{ly - 9}" width="14" height="4" fill="{color}"/>'
        body += text(lx + 20, ly - 3, name, 11, color="#333")
    return svg(width, height, body, "Sync throughput against dataset size")


def duration_ms(value):
    value = value.strip()
    for suffix, factor in (("us", 0.001), ("ms", 1), ("s", 1000), ("m", 60000)):
        if value.endswith(suffix):
            try:
                return float(value[: -len(suffix)]) * factor
            except ValueError:
                return None
    return None


def server_chart(path):
    """The server under load per deployment: changes/s pushed at saturation and paced, and
    the paced push latency (p50, p99)."""
    rows = list(csv.DictReader(open(path)))
    if not rows:
        return None
    storages = []
    for row in rows:
        if row["storage"] not in storages:
            storages.append(row["storage"])
    names = {"sqlite": "SQLite, one node", "pg1": "PostgreSQL, one node", "pg2": "PostgreSQL, two nodes"}
    figures = {(row["storage"], row["phase"]): row for row in rows}
    width, height = 860, 120 + 70 * len(storages)
    body = text(16, 24, "The sync server under load (wrk on loopback; pushes of 100 changes to one dataset)", 14, weight="600")
    body += text(16, 52, "changes/s pushed", 12, weight="600")
    body += text(520, 52, "push latency under the paced load", 12, weight="600")
    most = max(float(row["changes_per_second"] or 0) for row in rows) or 1
    slowest = max(((duration_ms(row["push_p99"]) or 0) for row in rows if row["phase"] == "paced"), default=0) or 1
    y = 66
    for storage in storages:
        body += text(16, y + 12, names.get(storage, storage), 12, color="#222")
        for index, (phase, color) in enumerate((("saturation", "#2a6fdb"), ("paced", "#3aa57a"))):
            row = figures.get((storage, phase))
            if not row:
                continue
            rate = float(row["changes_per_second"] or 0)
            length = max(240 * rate / most, 1)
            by = y + 18 + index * 18
            body += f'<rect x="160" y="{by}" width="{length:.1f}" height="13" rx="2" fill="{color}"/>'
            body += text(166 + length, by + 11, f"{rate:,.0f} {phase}".replace(",", " "), 11, color="#333")
        paced = figures.get((storage, "paced"))
        if paced:
            for index, (label, color) in enumerate((("p50", "#8fb8f0"), ("p99", "#2a6fdb"))):
                ms = duration_ms(paced["push_" + label])
                if ms is None:
                    continue
                length = max(250 * ms / slowest, 1)
                by = y + 18 + index * 18
                body += f'<rect x="520" y="{by}" width="{length:.1f}" height="13" rx="2" fill="{color}"/>'
                body += text(526 + length, by + 11, f"{label} {ms:.1f} ms", 11, color="#333")
        y += 70
    return svg(width, y + 10, body, "The sync server under load")


charts = [
    ("tandem.json", "bench-store.svg", store_chart),
    ("sync.jsonl", "bench-sync.svg", sync_chart),
    ("server.csv", "bench-server.svg", server_chart),
]
for source, target, draw in charts:
    path = os.path.join(data_dir, source)
    if not os.path.exists(path):
        print(f"bench-charts: no {path} (run the benchmark that writes it); {target} left as it is")
        continue
    drawn = draw(path)
    if drawn:
        write(target, drawn)
