"""The JavaScript libraries a report embeds, read from the installed Python packages (no CDN, no download).

Plotly draws the interactive figures (``plotly`` ships ``plotly.min.js``); DataTables sorts, filters and
pages the tables (``itables`` ships it as one ES module bundle with its CSS). Both are MIT-licensed.
"""

from __future__ import annotations

import base64
from functools import cache
from importlib import metadata, resources


@cache
def plotly_js() -> str:
    """plotly.min.js of the installed plotly package."""
    return (resources.files("plotly") / "package_data" / "plotly.min.js").read_text(encoding="utf-8")


@cache
def datatables_module_b64() -> str:
    """The DataTables ES module (itables' bundle), base64, for the page to import from a blob URL."""
    text = (resources.files("itables") / "html" / "dt_bundle.js").read_text(encoding="utf-8")
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


@cache
def datatables_css() -> str:
    """The DataTables stylesheet that goes with the bundle."""
    return (resources.files("itables") / "html" / "dt_bundle.css").read_text(encoding="utf-8")


def library_versions() -> dict[str, str]:
    """The versions of the embedded libraries, stated in the report's footer."""
    found = {}
    for name in ("plotly", "itables"):
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:  # pragma: no cover - both are dependencies
            found[name] = "?"
    return found
