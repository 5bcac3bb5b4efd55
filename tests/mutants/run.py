"""Runs the planted bugs of tests/mutants/cases/*.toml (see tests/mutants/README.md): each is applied alone in a
scratch copy of the working tree, the dev build there is brought up to date, and the suite the mutant names must
fail. Prints caught / MISSED per mutant with its times; exits 1 if any was missed or could not be applied.

Usage (through scripts/mutants.sh): mutants.sh [NAME...]   (no names: every mutant)
Environment: MUTANTS_DIR (scratch folder, default build/mutants), MUTANTS_PYTHON (interpreter for tests/python,
default .venv, else .venv-pypi, else python3), MUTANTS_PYPI_PYTHON (the interpreter with torch 2, JAX and Keras
for the host suites, default .venv-pypi), MUTANTS_JOBS (build jobs, default 2)."""
import os
import pathlib
import shutil
import subprocess
import sys
import time
import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[2]
HERE = ROOT / "tests" / "mutants"
SCRATCH = pathlib.Path(os.environ.get("MUTANTS_DIR", ROOT / "build" / "mutants")).resolve()
SRC, BUILD = SCRATCH / "src", SCRATCH / "build"
JOBS = os.environ.get("MUTANTS_JOBS", "2")


def python():
    if "MUTANTS_PYTHON" in os.environ:
        return os.environ["MUTANTS_PYTHON"]
    for venv in (".venv", ".venv-pypi"):
        exe = ROOT / venv / "bin" / "python"
        if exe.exists():
            return str(exe)
    return "python3"


def sync():
    """Copies the working tree (tracked and untracked, not ignored files) into SRC, rewriting only files whose
    content differs, so they get a fresh mtime and the build there stays incremental."""
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                         capture_output=True).stdout
    for rel in filter(None, out.decode().split("\0")):
        src, dst = ROOT / rel, SRC / rel
        if not src.is_file():
            continue
        data = src.read_bytes()
        if dst.is_file() and dst.read_bytes() == data:
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes(data)
        shutil.copymode(src, dst)


def pypi_python():
    return os.environ.get("MUTANTS_PYPI_PYTHON", str(ROOT / ".venv-pypi" / "bin" / "python"))


def jax_ffi_headers():
    """The XLA FFI headers of the PyPI interpreter's jax, so that the scratch build has poolkit._jax_ffi too."""
    r = subprocess.run([pypi_python(), "-c", "import jax.ffi; print(jax.ffi.include_dir())"], capture_output=True,
                       text=True) if os.path.exists(pypi_python()) else None
    return r.stdout.strip() if r is not None and r.returncode == 0 else ""


def configure(py):
    if (BUILD / "build.ninja").exists():
        return
    dirs = (subprocess.run([p, "-m", "nanobind", "--cmake_dir"], capture_output=True, text=True).stdout.strip()
            for p in (py, "python3") if shutil.which(p) or os.path.exists(p))
    nb = next((d for d in dirs if d), "")  # the first interpreter that has nanobind
    subprocess.run(["cmake", "-S", str(SRC), "-B", str(BUILD), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                    "-DPOOLKIT_SIMD_NATIVE_ONLY=ON", "-DPOOLKIT_BUILD_PYTHON=ON", "-DPOOLKIT_WITH_CUDA=OFF",
                    f"-DPython_EXECUTABLE={shutil.which('python3')}", f"-Dnanobind_ROOT={nb}",
                    f"-DPOOLKIT_JAX_FFI_INCLUDE_DIR={jax_ffi_headers()}"],
                   check=True, stdout=subprocess.DEVNULL)


def build(targets):
    r = subprocess.run(["nice", "cmake", "--build", str(BUILD), "-j", JOBS, "--target", *targets],
                       capture_output=True, text=True)
    return r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]


def run_suite(suite, select, py):
    env = dict(os.environ, BUILD=str(BUILD), PYTHON=py, PYPI_PYTHON=pypi_python(), SELECT=select or "")
    r = subprocess.run(["bash", "-c", suite["command"]], cwd=SRC, env=env, capture_output=True, text=True)
    return r.returncode, (r.stdout + r.stderr)[-2000:]


def load_mutants(names):
    mutants = {p.stem: dict(tomllib.loads(p.read_text()), name=p.stem) for p in sorted((HERE / "cases").glob("*.toml"))}
    unknown = [n for n in names if n not in mutants]
    if unknown:
        sys.exit(f"mutants: no such mutant: {', '.join(unknown)} (see tests/mutants/cases/)")
    return [mutants[n] for n in names] if names else list(mutants.values())


def one(m, suites, py):
    """'caught', 'MISSED' or 'ERROR: why'; the mutated file is restored (with a fresh mtime) before returning."""
    path = SRC / m["file"]
    original = path.read_text()
    if original.count(m["find"]) != 1:
        return f"ERROR: the text to replace occurs {original.count(m['find'])} times in {m['file']} (want 1)", 0, 0
    suite = suites[m["suite"]]
    path.write_text(original.replace(m["find"], m["replace"]))
    try:
        t = time.time()
        ok, log = build(suite.get("build", ["all"]))
        t_build = time.time() - t
        if not ok:
            return f"ERROR: the mutant does not build\n{log}", t_build, 0
        t = time.time()
        rc, log = run_suite(suite, m.get("select", ""), py)
        t_run = time.time() - t
        return ("caught" if rc != 0 else "MISSED"), t_build, t_run
    finally:
        path.write_text(original)


def main(names):
    mutants = load_mutants(names)
    suites = tomllib.loads((HERE / "suites.toml").read_text())
    for m in mutants:
        if m["suite"] not in suites:
            sys.exit(f"mutants: {m['name']}: unknown suite {m['suite']!r} (tests/mutants/suites.toml)")
    py = python()
    SRC.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    sync()
    configure(py)
    targets = sorted({t for m in mutants for t in suites[m["suite"]].get("build", ["all"])})
    ok, log = build(targets)
    if not ok:
        sys.exit(f"mutants: the unmutated tree does not build\n{log}")
    # Every suite must pass on the unmutated tree, else a failure would prove nothing.
    for name in sorted({m["suite"] for m in mutants}):
        for select in sorted({m.get("select", "") for m in mutants if m["suite"] == name}):
            rc, log = run_suite(suites[name], select, py)
            if rc != 0:
                sys.exit(f"mutants: suite {name} ({select or 'all'}) fails without a mutant\n{log}")
    print(f"mutants: scratch {SRC}, python {py}; baseline built and passing in {time.time() - t0:.0f} s", flush=True)
    bad = 0
    for m in mutants:
        verdict, tb, tr = one(m, suites, py)
        bad += verdict != "caught"
        print(f"{verdict.splitlines()[0]:8} {m['name']:40} build {tb:5.0f} s  suite {m['suite']:8} {tr:5.0f} s",
              flush=True)
        if verdict.startswith("ERROR"):
            print(verdict, flush=True)
    build(targets)  # leave the scratch build matching the tree
    print(f"mutants: {len(mutants) - bad} of {len(mutants)} caught in {time.time() - t0:.0f} s")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
