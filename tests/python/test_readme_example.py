"""The README's Python example runs as written."""
import pathlib
import re


def test_readme_python_example_runs():
    readme = (pathlib.Path(__file__).resolve().parents[2] / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    assert blocks, "README has no python example"
    for code in blocks:
        exec(compile(code, "README.md", "exec"), {})
