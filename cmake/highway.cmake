# Highway (SIMD kernels compiled for several ISAs, picked at run time): poolkit's one build requirement.
# POOLKIT_HWY_LIBRARY: a static libhwy.a built from the same Highway release as the headers found (scripts/build-wheel.sh
# makes one), linked into poolkit in place of the shared library, so a wheel needs no Highway on the machine that
# installs it. Only the link changes: the objects compile exactly as against the shared library.
set(POOLKIT_HWY_LIBRARY "" CACHE FILEPATH "Static libhwy.a to link in place of the shared Highway library")

find_package(hwy CONFIG QUIET)
if(NOT hwy_FOUND)
  message(FATAL_ERROR
    "poolkit needs Highway (Google's SIMD library, 1.0 or later), its one build requirement, and CMake found none.\n"
    "Install it: Debian/Ubuntu `apt-get install libhwy-dev`, Fedora `dnf install highway-devel`, "
    "Homebrew `brew install highway`, conda `conda install -c conda-forge libhwy`; "
    "or point hwy_DIR at a Highway install's lib/cmake/hwy.")
endif()

if(POOLKIT_HWY_LIBRARY)
  if(NOT POOLKIT_HWY_LIBRARY MATCHES "\\.a$" OR NOT EXISTS "${POOLKIT_HWY_LIBRARY}")
    message(FATAL_ERROR "POOLKIT_HWY_LIBRARY: must be an existing static library (.a), got '${POOLKIT_HWY_LIBRARY}'")
  endif()
  # Every configuration of the imported hwy::hwy links the archive; its symbols stay private to whatever links it.
  get_target_property(_hwy_configs hwy::hwy IMPORTED_CONFIGURATIONS)
  foreach(_c IN LISTS _hwy_configs)
    set_target_properties(hwy::hwy PROPERTIES IMPORTED_LOCATION_${_c} "${POOLKIT_HWY_LIBRARY}" IMPORTED_SONAME_${_c} "")
  endforeach()
  set_target_properties(hwy::hwy PROPERTIES IMPORTED_LOCATION "${POOLKIT_HWY_LIBRARY}" IMPORTED_NO_SONAME TRUE)
  get_filename_component(_hwy_archive "${POOLKIT_HWY_LIBRARY}" NAME)
  set_property(TARGET hwy::hwy APPEND PROPERTY INTERFACE_LINK_OPTIONS "LINKER:--exclude-libs,${_hwy_archive}")
  message(STATUS "Highway: linking the static ${POOLKIT_HWY_LIBRARY}")
endif()
