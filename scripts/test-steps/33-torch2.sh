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
# The longest test (ResNet-50 compiled twice by inductor, two minutes and more) in a pytest process of its own
# beside the rest, one thread each (models and inductor's compiles of its C++): 370 -> 273 s on a 2-core Zen 3 VM,
# 158-161 s in clean-clone runs on a 2-core Zen 4 VM.
longest=test_convert.py::test_training_step_same_bits[resnet50]
export OMP_NUM_THREADS=1 TORCHINDUCTOR_COMPILE_THREADS=1
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
$py -m pytest -q -p no:cacheprovider "$longest" > "$log" 2>&1 &
longest_pid=$!
$py -m pytest -q -p no:cacheprovider --deselect "tests/torch2/$longest" .
rc=$?
wait "$longest_pid"
rc_longest=$?
set -e
cat "$log"
echo "33-torch2: $((SECONDS - t)) s"
[ "$rc" -eq 5 ] && { echo "33-torch2: pytest collected no tests" >&2; exit 1; }
[ "$rc" -ne 0 ] && exit "$rc"
exit "$rc_longest"
