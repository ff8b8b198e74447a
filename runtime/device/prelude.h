// monodc device library: the prelude of every emitted translation unit.
// No system header is included: the few integer types are defined here.
typedef unsigned char mono_u8;
typedef unsigned short mono_u16;
typedef unsigned int mono_u32;
typedef long long mono_i64;
typedef unsigned long long mono_u64;
