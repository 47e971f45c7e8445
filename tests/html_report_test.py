#!/usr/bin/python3
"""html.report_pages, html.report_screenshot: ddpsim's HTML report in a real browser.

Every shipped scenario (scenarios/**/*.yaml, each on its own engine; contention_two_nodes
also on SimGrid, for the links chart) goes through `ddpsim report S --html P`, and each
ADVISE_SCENARIO through `ddpsim advise S --html P`; one headless
Chromium opens each page from disk in turn (in an iframe of a harness page) and reads its
DOM after its scripts ran; Chromium's log gives what each page wrote to the console. A page passes
when it drew every chart it holds (data-charts-rendered == data-charts-expected > 0, an
<svg> in each chart's div), caught no script error or console.error (#errors empty), wrote
nothing to the console at all (not even a library's warning) and holds its tables. The screenshot mode renders one page at 1280 x 800 and checks the PNG:
that size, and not blank (most pixels white, but thousands not).

Usage: html_report_test.py pages DDPSIM SCENARIOS_DIR WORK_DIR [ADVISE_SCENARIO...]
       html_report_test.py screenshot DDPSIM SCENARIO WORK_DIR [COPY_TO]
Exit 77 (skipped) without Debian's chromium.
"""
import html
import json
import pathlib
import shutil
import struct
import subprocess
import sys
import zlib

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars"]


def chromium(work, name, *args):
    profile = work / f"profile-{name}"
    shutil.rmtree(profile, ignore_errors=True)
    out = subprocess.run(["chromium", *FLAGS, f"--user-data-dir={profile}", *args],
                         capture_output=True, text=True, timeout=600)
    shutil.rmtree(profile, ignore_errors=True)
    return out


# One browser for every page: this page opens each in an iframe (file:// pages may read each
# other's DOM under --allow-file-access-from-files), waits for its data-done, and writes what it
# found as JSON into #out.
HARNESS = """<!DOCTYPE html><html><body><pre id="out"></pre><script>
var pages = PAGES, found = [], i = 0;
function next() {
  if (i >= pages.length) { document.getElementById('out').textContent = JSON.stringify(found); document.body.dataset.done = '1'; return; }
  var frame = document.createElement('iframe'), t0 = Date.now();
  frame.style.width = '1280px'; frame.style.height = '800px'; frame.src = pages[i];
  function settle(r) { r.page = pages[i]; found.push(r); i++; frame.remove(); next(); }
  function poll() {
    var d;
    try { d = frame.contentDocument; } catch (e) { settle({error: String(e)}); return; }
    if (d && d.body && d.body.dataset.done === '1') {
      var divs = d.querySelectorAll('div.chart'), drawn = 0;
      divs.forEach(function (c) { if (c.querySelector('svg')) drawn++; });
      settle({expected: +d.body.dataset.chartsExpected, rendered: +d.body.dataset.chartsRendered, divs: divs.length,
              divs_with_svg: drawn, tables: d.querySelectorAll('table').length,
              errors: d.getElementById('errors').textContent});
    } else if (Date.now() - t0 > 30000) { settle({error: 'no data-done after 30 s'}); } else { setTimeout(poll, 50); }
  }
  frame.onload = poll; document.body.appendChild(frame);
}
next();
</script></body></html>
"""


def check(r):
    if "error" in r:
        return [r["error"]]
    problems = []
    if r["expected"] <= 0 or r["rendered"] != r["expected"]:
        problems.append(f"charts rendered {r['rendered']} of {r['expected']}")
    if r["divs"] != r["expected"] or r["divs_with_svg"] != r["divs"]:
        problems.append(f"{r['divs_with_svg']} of {r['divs']} chart divs hold an svg")
    if r["errors"].strip():
        problems.append("errors: " + r["errors"].strip()[:400])
    if r["tables"] == 0:
        problems.append("no table")
    return problems


def pages(ddpsim, scenarios, work, advise):
    work.mkdir(parents=True, exist_ok=True)
    jobs = [(p, []) for p in sorted(scenarios.rglob("*.yaml"))]
    jobs.append((scenarios / "contention_two_nodes.yaml", ["--engine", "simgrid"]))
    written = []
    for scenario, extra in jobs:
        stem = "_".join(scenario.relative_to(scenarios).with_suffix("").parts) + ("_simgrid" if extra else "")
        page = work / f"{stem}.html"
        r = subprocess.run([ddpsim, "report", str(scenario), "--html", str(page), *extra], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"FAIL: ddpsim report {scenario}: exit {r.returncode}\n{r.stderr}")
            return 1
        written.append(page)
    for scenario in advise:  # ddpsim advise --html: the ranking and the scatter
        page = work / f"advise_{scenario.stem}.html"
        r = subprocess.run([ddpsim, "advise", str(scenario), "--html", str(page)], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"FAIL: ddpsim advise {scenario}: exit {r.returncode}\n{r.stderr}")
            return 1
        written.append(page)
    harness = work / "harness.html"
    harness.write_text(HARNESS.replace("PAGES", json.dumps([p.name for p in written])))
    out = chromium(work, "harness", "--allow-file-access-from-files", "--virtual-time-budget=600000",
                   "--enable-logging=stderr", "--v=0", "--dump-dom", harness.resolve().as_uri())
    # Whatever a page logs to the console (errors, and the libraries' warnings too), by page.
    console = {}
    for line in out.stderr.splitlines():
        if ":CONSOLE" in line and "source: file://" in line:
            page = line.rsplit("source: ", 1)[1].split("/")[-1].split(" ")[0]
            console.setdefault(page, []).append(line.split("] ", 1)[-1])
    text = out.stdout[out.stdout.find('<pre id="out">') + len('<pre id="out">'):]
    text = html.unescape(text[:text.find("</pre>")])
    try:
        found = json.loads(text)
    except json.JSONDecodeError:
        print(f"FAIL: the harness wrote no result: {out.stdout[:400]}\n{out.stderr[-800:]}")
        return 1
    failed = 0
    for r in found:
        problems = check(r) + [f"console: {m[:300]}" for m in console.get(r["page"], [])]
        print(f"{'FAIL' if problems else 'ok'}: {r['page']}: {r.get('rendered', 0)} charts" +
              ("; " + "; ".join(problems) if problems else ""))
        failed += bool(problems)
    if len(found) != len(written):
        print(f"FAIL: {len(found)} results for {len(written)} pages")
        return 1
    print(f"{len(written) - failed} of {len(written)} pages rendered every chart with no error")
    return 1 if failed else 0


def png_pixels(path):
    """Width, height and the rows of an 8-bit RGB or RGBA, non-interlaced PNG (Chromium's screenshots)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and color in (2, 6), f"PNG depth {depth} colour type {color}"
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, stride, rows, prev = zlib.decompress(idat), width * channels, [], bytearray(width * channels)
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b, c = prev[i], prev[i - channels] if i >= channels else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, channels, rows


def screenshot(ddpsim, scenario, work, copy_to):
    work.mkdir(parents=True, exist_ok=True)
    page, png = work / "screenshot.html", work / "screenshot.png"
    subprocess.run([ddpsim, "report", str(scenario), "--html", str(page)], check=True, capture_output=True)
    chromium(work, "shot", "--window-size=1280,800", "--virtual-time-budget=15000", f"--screenshot={png}",
             page.resolve().as_uri())
    width, height, channels, rows = png_pixels(png)
    inked = sum(1 for row in rows for x in range(0, width * channels, channels) if min(row[x:x + 3]) < 200)
    share = inked / (width * height)
    print(f"screenshot {width} x {height}: {inked} pixels inked ({share:.1%})")
    if (width, height) != (1280, 800) or not 0.01 < share < 0.9:
        print("FAIL: expected 1280 x 800, between 1 % and 90 % of it inked")
        return 1
    if copy_to:
        shutil.copyfile(png, copy_to)
    print("screenshot ok")
    return 0


def main(argv):
    if shutil.which("chromium") is None:
        print("SKIPPED: no chromium (apt-get install chromium; scripts/setup.sh installs it)")
        return 77
    mode, ddpsim, where, work = argv[1], argv[2], pathlib.Path(argv[3]), pathlib.Path(argv[4])
    if mode == "pages":
        return pages(ddpsim, where, work, [pathlib.Path(a) for a in argv[5:]])
    return screenshot(ddpsim, where, work, argv[5] if len(argv) > 5 else None)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
