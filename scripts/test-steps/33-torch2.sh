#!/usr/bin/env bash
# poolkit.torch as a PyTorch 2 host (tests/torch2, torch 2.15 from PyPI in .venv-pypi): torch.compile without graph
# breaks and with eager's bits, torch.export, torch.library.opcheck of every operator, second derivatives, bad input
# under torch.compile, poolkit.torch.nn.convert on torchvision models. Prints its time.
set -euo pipefail
cd "$(dirname "$0")/../.."
t=$SECONDS
bash scripts/pypi-venv.sh
py="$PWD/.venv-pypi/bin/python"
cd tests/torch2
set +e
# Two CPU threads for the models (the CI machine has 2 cores); inductor compiles in this process.
OMP_NUM_THREADS=2 TORCHINDUCTOR_COMPILE_THREADS=1 $py -m pytest -q -p no:cacheprovider .
rc=$?
set -e
echo "33-torch2: $((SECONDS - t)) s"
[ "$rc" -eq 5 ] && { echo "33-torch2: pytest collected no tests" >&2; exit 1; }
exit "$rc"
