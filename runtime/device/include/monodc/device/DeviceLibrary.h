#ifndef MONODC_DEVICE_DEVICELIBRARY_H
#define MONODC_DEVICE_DEVICELIBRARY_H
namespace monodc {
/// The device library's source: prelude, arch layers (selected by macros such
/// as __gfx950__ and __CUDA_ARCH__ when compiled) and the generic layer.
/// Emitted translation units include it verbatim. MONO_BLOCK must be defined
/// before it.
const char *deviceLibrarySource();
} // namespace monodc
#endif
