# The version of poolkit, its one source: CMakeLists.txt (the C++ library and the poolkit program) and pyproject.toml
# (the wheel) read it from here.
__version__ = "0.1.0"
