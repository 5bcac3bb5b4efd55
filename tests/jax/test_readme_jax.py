"""The README's poolkit.jax / poolkit.keras example runs as written."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
from test_readme_example import readme_blocks  # noqa: E402


def test_readme_jax_example_runs():
    blocks = readme_blocks(jax=True)
    assert blocks, "README has no poolkit.jax example"
    for code in blocks:
        exec(compile(code, "README.md", "exec"), {})
