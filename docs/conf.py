"""Sphinx configuration of poolkit's documentation site (scripts/build-docs.sh builds it into docs/_build/html).

The API pages are generated here, one per entry of PYTHON_MODULES and one per public C++ header: adding a module
to the site is one line below."""
import os
import pathlib
import re
import tempfile

import poolkit

# poolkit.keras runs on Keras' JAX backend here; Keras writes its settings under KERAS_HOME, kept out of $HOME.
os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ.setdefault("KERAS_HOME", tempfile.mkdtemp(prefix="poolkit-docs-keras-"))
PYTHON_MODULES = ["poolkit", "poolkit.torch", "poolkit.torch.nn", "poolkit.jax", "poolkit.keras"]

DOCS = pathlib.Path(__file__).resolve().parent
ROOT = DOCS.parent
GENERATED = DOCS / "_generated"

project = "poolkit"
release = version = poolkit.__version__
copyright = "the poolkit authors"
extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.doctest"]
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build"]
html_theme = "furo"
html_title = f"poolkit {release}"
html_static_path = ["_static"]
html_css_files = ["poolkit.css"]
myst_enable_extensions = ["colon_fence"]
myst_heading_anchors = 3
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "undoc-members": True}
doctest_global_setup = "import numpy as np\nimport poolkit"


def _write(path, text):
    """Writes a generated page only when it changed (Sphinx rereads what is newer)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def _python_page(module):
    return f"# {module}\n\n```{{eval-rst}}\n.. automodule:: {module}\n```\n"


def _cpp_page(header):
    rel = header.relative_to(ROOT)
    return f"# {rel.relative_to('include')}\n\n```{{literalinclude}} ../../../{rel}\n:language: cpp\n```\n"


for _m in PYTHON_MODULES:
    _write(GENERATED / "python" / f"{_m}.md", _python_page(_m))
for _h in sorted((ROOT / "include" / "poolkit").glob("*.hpp")) + sorted((ROOT / "include" / "poolkit").glob("*.inc")):
    _write(GENERATED / "cpp" / f"{_h.name}.md", _cpp_page(_h))


def _plain_docstring(app, what, name, obj, options, lines):
    """poolkit's docstrings are plain text, not reStructuredText: show |x|^p, lambda_ and *_backward as written."""
    lines[:] = [re.sub(r"([|*_`\\])", r"\\\1", line) for line in lines]


def setup(app):
    app.connect("autodoc-process-docstring", _plain_docstring)
