//===- MonoTypes.td - mono dialect types ------------------*- tablegen -*-===//
#ifndef MONODC_DIALECT_MONO_TYPES_TD
#define MONODC_DIALECT_MONO_TYPES_TD

include "monodc/Dialect/Mono/MonoDialect.td"

def Mono_TileType : TypeDef<Mono_Dialect, "Tile"> {
  let mnemonic = "tile";
  let summary = "a block-distributed vector of values of one number format";
  let description = [{
    A tile holds `size` values, spread over the threads of a block. The
    element type names the set of values the tile may hold (f32, bf16,
    f8E4M3FN, f4E2M1FN, f8E8M0FNU); registers carry them as f32, so a cast is
    where rounding happens. A tile of size 1 is uniform: every thread holds it,
    and it broadcasts in elementwise arithmetic.
  }];
  let parameters = (ins "int64_t":$size, "::mlir::Type":$elementType);
  let assemblyFormat = "`<` $size `,` $elementType `>`";
  let genVerifyDecl = 1;
}

#endif // MONODC_DIALECT_MONO_TYPES_TD
