"""The README's Python examples run as written (those of poolkit.jax / poolkit.keras in tests/jax, where JAX is)."""
import pathlib
import re


def readme_blocks(jax):
    """The README's python code blocks that use poolkit.jax (jax=True) or do not (jax=False)."""
    readme = (pathlib.Path(__file__).resolve().parents[2] / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    return [b for b in blocks if ("import poolkit.jax" in b) == jax]


def test_readme_python_example_runs():
    blocks = readme_blocks(jax=False)
    assert blocks, "README has no python example"
    for code in blocks:
        exec(compile(code, "README.md", "exec"), {})
