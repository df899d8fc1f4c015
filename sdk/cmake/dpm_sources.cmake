# SPDX-License-Identifier: Apache-2.0
# The SDK's source lists for CMake builds, read from sdk/sources.mk (the one list: the Makefile,
# the Cortex-M build and these all compile the same files). Sets, as absolute paths:
#   DPM_SDK_SOURCES    the `DPM_SDK_SRCS += $(DPM_ROOT)/...` lines (sdk/src/*/*.c, sdk/proto/dpm.pb.c)
#   DPM_POSIX_SOURCES  the `DPM_POSIX_SRCS += $(DPM_ROOT)/...` lines (port/posix, port/tls)
get_filename_component(_dpm_sources_root "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
set(_dpm_sources_mk "${_dpm_sources_root}/sdk/sources.mk")
# A change to the list re-runs the configure step.
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_dpm_sources_mk}")
foreach(_dpm_list SDK POSIX)
  file(STRINGS "${_dpm_sources_mk}" _dpm_lines REGEX "^DPM_${_dpm_list}_SRCS \\+= ")
  set(DPM_${_dpm_list}_SOURCES)
  foreach(_dpm_line IN LISTS _dpm_lines)
    string(REGEX REPLACE "^DPM_${_dpm_list}_SRCS \\+= \\$\\(DPM_ROOT\\)/([^ \t]+)[ \t]*$" "\\1"
           _dpm_file "${_dpm_line}")
    if(_dpm_file STREQUAL _dpm_line)
      message(FATAL_ERROR "dpmetrics: ${_dpm_sources_mk}: expected "
                          "`DPM_${_dpm_list}_SRCS += $(DPM_ROOT)/<file>`, got `${_dpm_line}`")
    endif()
    list(APPEND DPM_${_dpm_list}_SOURCES "${_dpm_sources_root}/${_dpm_file}")
  endforeach()
endforeach()
if(NOT DPM_SDK_SOURCES)
  message(FATAL_ERROR "dpmetrics: no DPM_SDK_SRCS lines in ${_dpm_sources_mk}")
endif()
