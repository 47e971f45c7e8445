"""The HTML report's chart libraries from PyPI: vega, vega-lite and vega-embed
as one script (vl-convert-python's javascript_bundle, pinned in
python/requirements.txt), written to OUT_DIR/vega-bundle.js with the versions
in OUT_DIR/versions.txt. Run by the build (report/CMakeLists.txt) with the
interpreter of scripts/setup.sh's environment; no network is used (the bundle
is made from the modules the wheel carries).

Usage: python fetch_charts.py OUT_DIR
"""
import pathlib
import sys

VEGA_LITE = "6.4"  # the pages' specs are Vega-Lite v6 (report/html_page.cpp); it compiles to Vega 6, the bundle's


def main():
    out = pathlib.Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    import vl_convert
    bundle = vl_convert.javascript_bundle(vl_version=VEGA_LITE)
    if "window.vegaEmbed" not in bundle:
        sys.exit("fetch_charts: the bundle does not define window.vegaEmbed")
    (out / "vega-bundle.js").write_text(bundle)
    (out / "versions.txt").write_text(
        f"vl-convert-python {vl_convert.__version__}\nvega {vl_convert.get_vega_version()}\n"
        f"vega-lite {VEGA_LITE}\nvega-embed {vl_convert.get_vega_embed_version()}\n")


if __name__ == "__main__":
    main()
