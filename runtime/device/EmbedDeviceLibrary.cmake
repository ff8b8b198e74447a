# Writes OUT: a C++ source returning the concatenated device library layers.
set(body "")
foreach(input ${INPUTS})
  file(READ ${input} text)
  get_filename_component(name ${input} NAME)
  string(APPEND body "// ---- ${name} ----\n${text}\n")
endforeach()
file(WRITE ${OUT} "// Generated from runtime/device; do not edit.\n#include \"monodc/device/DeviceLibrary.h\"\nconst char *monodc::deviceLibrarySource() {\n  return R\"monodc_device(${body})monodc_device\";\n}\n")
