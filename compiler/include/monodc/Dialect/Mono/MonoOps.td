//===- MonoOps.td - mono dialect operations ---------------*- tablegen -*-===//
#ifndef MONODC_DIALECT_MONO_OPS_TD
#define MONODC_DIALECT_MONO_OPS_TD

include "monodc/Dialect/Mono/MonoDialect.td"
include "monodc/Dialect/Mono/MonoTypes.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Mono_AnyTile : Type<CPred<"::llvm::isa<::monodc::mono::TileType>($_self)">,
                        "mono tile", "::monodc::mono::TileType">;

//===----------------------------------------------------------------------===//
// Structure: launch, region, stage
//===----------------------------------------------------------------------===//

def Mono_LaunchOp : Mono_Op<"launch", [Symbol, SymbolTable, IsolatedFromAbove,
    SingleBlock, NoTerminator, NoRegionArguments]> {
  let summary = "one persistent kernel launch";
  let description = [{
    A launch runs `grid` CTAs of `block` threads on `arch`, for a step of
    `rows` tokens, on each of `ranks` tensor-parallel ranks (the rank is a
    kernel argument). Its body declares regions and then stages; every CTA
    walks the stages in order.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, StrAttr:$arch,
                       I64Attr:$grid, I64Attr:$block, I64Attr:$rows,
                       DefaultValuedAttr<I64Attr, "1">:$ranks);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name attr-dict-with-keyword $body";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The most CTAs a launch may have (the epoch buffer keeps a mark a CTA).
    static constexpr int64_t kMaxGrid = 65536;
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
  }];
}

def Mono_RegionOp : Mono_Op<"region", [Symbol, HasParent<"LaunchOp">]> {
  let summary = "a memory region of the launch";
  let description = [{
    A row-major array of `shape` values of `elementType`. Inputs, weights and
    the epoch buffer come from the host; outputs and scratch are written by
    stages; weights are read-only. `flags` regions (i64, one (value, tag)
    pair of 32-bit words per producer task) and the `epoch` buffer (i32) are
    created by the fusion passes.

    An `i8` region holds byte records that mix formats (the KV cache): loads
    and stores name a column in bytes and read or write the encodings of
    their tile's format there.

    `index_bound` marks an input that holds indices: whole numbers in
    [0, index_bound), or -1 for a pad row or a masked entry (a position, a
    cache slot, a block table). It holds them as f32, or as i32 or i64 as a
    serving engine does; a load gives them as an f32 tile, exactly (the
    bound is at most 2^24). Only an index input holds i32 or i64.

    A launch that is part of a decode step says how the step's memory flows,
    for the runtime that runs the step's launches in order: `handed_from =
    @k1::@q` marks an input that holds what an earlier launch of the step
    wrote into its output region (the runtime binds both to one buffer), and
    `step_result` marks an output the step's caller reads after the step
    (the layer's streams, a cache written in place). The step's other
    outputs live only inside the step.

    `rows_at_launch` marks a 2-D input, output or weight whose row count the
    caller gives at each launch, as a serving engine sizes its KV cache (or
    the RoPE table, by the positions it serves): `shape`'s
    rows are then only the count a simulation allocates unless told
    otherwise, the kernel takes the count as an argument and a stage reads
    it through `mono.region_rows` (to keep its slots inside the region).
    An index input with `indexes = @cache` counts rows of such a region
    (pages of a block table, or slots, `index_bound` / rows of them a row):
    its bound grows with the rows given at launch.

    `cols_at_launch` marks a 2-D index input whose column count (its row
    stride) the caller gives at each launch, as a serving engine sizes its
    block tables by the longest sequence it serves: `shape`'s columns are
    then only what a simulation allocates unless told otherwise. Only
    `mono.load_at` reads it, and a stage reads the count through
    `mono.region_cols`.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, Mono_RegionKind:$kind,
                       TypeAttr:$elementType, DenseI64ArrayAttr:$shape,
                       OptionalAttr<I64Attr>:$index_bound,
                       OptionalAttr<FlatSymbolRefAttr>:$indexes,
                       OptionalAttr<SymbolRefAttr>:$handed_from,
                       UnitAttr:$step_result, UnitAttr:$rows_at_launch,
                       UnitAttr:$cols_at_launch);
  let assemblyFormat = "$sym_name $kind `:` $elementType $shape attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getRows() { return getShape().size() == 2 ? getShape()[0] : 1; }
    int64_t getCols() { return getShape().back(); }
    bool holdsBytes() { return getElementType().isInteger(8); }
    bool isWritable() {
      return getKind() != MemoryKind::Input && getKind() != MemoryKind::Weight;
    }
  }];
}

def Mono_StageOp : Mono_Op<"stage", [Symbol, HasParent<"LaunchOp">,
    SingleBlock, NoTerminator]> {
  let summary = "a task table: `tasks` independent tasks running one body";
  let description = [{
    The body's single argument is the task index. Tasks of one stage never
    depend on each other; a stage reads what earlier stages wrote. The tasks
    of a `dynamic` stage are claimed at run time through an atomic counter of
    the epoch buffer (work whose cost depends on data: the MoE's experts)
    instead of being placed on CTAs ahead of time.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, I64Attr:$tasks, UnitAttr:$dynamic);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name `tasks` $tasks (`dynamic` $dynamic^)? attr-dict-with-keyword $body";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The most tasks a stage may have: far past any stage's (thousands), and
    /// small enough that the passes that walk every task stay quick.
    static constexpr int64_t kMaxTasks = 65536;
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
    ::mlir::Value getTaskIndex() { return getBodyBlock().getArgument(0); }
  }];
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

def Mono_LoadOp : Mono_Op<"load"> {
  let summary = "load `size` consecutive values of a region row into a tile";
  let arguments = (ins FlatSymbolRefAttr:$region, Index:$row, Index:$col);
  let results = (outs Mono_AnyTile:$result);
  let assemblyFormat = "$region `[` $row `,` $col `]` attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Mono_LoadAtOp : Mono_Op<"load_at"> {
  let summary = "result[i] = region[row][cols[i]]: an index input's entries at columns given by data";
  let description = [{
    Each value of the f32 tile `cols` (a whole number) names a column of row
    `row` of an index input; a column outside the row's [0, columns) is
    clamped into it, so the load never leaves the row (a block table's page
    of a key position: the caller masks what lies past the table). The only
    read of a region whose columns are given at launch.
  }];
  let arguments = (ins FlatSymbolRefAttr:$region, Index:$row, Mono_AnyTile:$cols);
  let results = (outs Mono_AnyTile:$result);
  let assemblyFormat = "$region `[` $row `]` `cols` $cols attr-dict `:` type($cols) `->` type($result)";
  let hasVerifier = 1;
}

def Mono_StoreOp : Mono_Op<"store", [AttrSizedOperandSegments]> {
  let summary = "store a tile into consecutive values of a region row (or rows)";
  let description = [{
    With `rows` = R (default 1) the tile is R rows of size/R values each,
    row-major, stored at rows [row, row + R) from column `col`. With a
    `guard`, the store is skipped when the guard is negative (a pad slot).
    With a runtime `count` (0 .. R), only rows [row, row + count) are
    stored; the others keep what they held (a task of fewer tokens than its
    tile: a counted gemv_rows' results past its count). The fusion passes
    count the whole R rows as the task's window (one writer a word), and
    accept reads of such a region only at rows given by data.
  }];
  let arguments = (ins Mono_AnyTile:$value, FlatSymbolRefAttr:$region,
                       Index:$row, Index:$col, Optional<Index>:$guard,
                       Optional<Index>:$count,
                       DefaultValuedAttr<I64Attr, "1">:$rows);
  let assemblyFormat = [{
    $value `,` $region `[` $row `,` $col `]` (`if` $guard^)? (`count` $count^)? attr-dict
    `:` type($value)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getRowWidth() {
      return ::llvm::cast<TileType>(getValue().getType()).getSize() / getRows();
    }
  }];
}

def Mono_SkipUnlessOp : Mono_Op<"skip_unless", [HasParent<"StageOp">]> {
  let summary = "the rest of the task runs only when `count` > 0";
  let description = [{
    A task with nothing to do (an empty slot of the union of experts: no
    tokens) skips what follows, up to its publish: none of its later loads,
    GEMVs or stores happen, and its flag is published as any task's. A
    stage has at most one, and no peer store follows it. The fusion passes
    take the stores after it as counted ones (mono.store): later stages read
    such a region at rows given by data, or at fixed rows through a counted
    gemv_rows whose count is the same plan word as the writer's `count`
    (then a skipped writer's rows are never read).

    With `rest`, a task that skips promises that every later task of the
    stage (a higher task id) skips too, as when the stage's slots come used
    first: the CTA publishes the flags of those of them it would run and
    leaves the stage, instead of taking them one at a time. The simulator
    still runs every task, and fails a stage that breaks the promise.

    With `pad`, the task is a pad row's (its count is 0 where the row's
    slot_mapping is -1): what it would store after the skip belongs to the
    pad row, whose contents are unspecified and which no real row reads
    (docs/numerics.md section 7), so its stores are not counted ones and
    later stages read them at any rows. Not with `rest` (pad rows need not
    be the last).
  }];
  let arguments = (ins Index:$count, UnitAttr:$rest, UnitAttr:$pad);
  let assemblyFormat = "$count (`rest` $rest^)? (`pad` $pad^)? attr-dict";
  let hasVerifier = 1;
}

def Mono_SyncOp : Mono_Op<"sync", [HasParent<"StageOp">]> {
  let summary = "a block barrier between users of shared memory (mono-plan-shared)";
  let description = [{
    Every thread of the CTA has finished its reads and writes of shared
    memory before any goes on. mono-plan-shared places these where the
    task's rearrangements, library calls and skips need them; `note` says
    why (printed as a comment). The simulator runs a task's ops as one
    thread block does without interleaving threads, so it has nothing to do
    here.
  }];
  let arguments = (ins DefaultValuedStrAttr<StrAttr, "">:$note);
  let assemblyFormat = "attr-dict";
}

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

def Mono_ConstantOp : Mono_Op<"constant", [Pure]> {
  let summary = "a tile whose every value is `value`";
  let arguments = (ins F32Attr:$value);
  let results = (outs Mono_AnyTile:$result);
  let assemblyFormat = "$value attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Mono_IotaOp : Mono_Op<"iota", [Pure]> {
  let summary = "a tile holding start, start + 1, ..., start + size - 1 (f32)";
  let description = [{
    Key arithmetic: the places of a chunk's keys in a list (`start` is the
    chunk's first). Whole numbers up to 2^24, exact in f32.
  }];
  let arguments = (ins Index:$start);
  let results = (outs Mono_AnyTile:$result);
  let assemblyFormat = "$start attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Mono_RegionRowsOp : Mono_Op<"region_rows", [Pure]> {
  let summary = "the row count of a region sized at launch, as a one-value f32 tile";
  let description = [{
    The rows the caller gave for a `rows_at_launch` region at this launch
    (the pages of a KV cache): a whole number up to 2^24, exact in f32.
  }];
  let arguments = (ins FlatSymbolRefAttr:$region);
  let results = (outs Mono_AnyTile:$result);
  let assemblyFormat = "$region attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Mono_RegionColsOp : Mono_Op<"region_cols", [Pure]> {
  let summary = "the column count of a region whose columns are given at launch, as a one-value f32 tile";
  let description = [{
    The columns the caller gave for a `cols_at_launch` region at this launch
    (the pages a row of a block table holds): a whole number up to 2^24,
    exact in f32.
  }];
  let arguments = (ins FlatSymbolRefAttr:$region);
  let results = (outs Mono_AnyTile:$result);
  let assemblyFormat = "$region attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Mono_CastOp : Mono_Op<"cast", [Pure]> {
  let summary = "convert a tile to another number format (RNE, saturating to e4m3/e2m1)";
  let arguments = (ins Mono_AnyTile:$input);
  let results = (outs Mono_AnyTile:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasVerifier = 1;
}

class Mono_BinaryOp<string mnemonic> : Mono_Op<mnemonic, [Pure]> {
  let summary = "elementwise f32 arithmetic; a size-1 operand broadcasts";
  let arguments = (ins Mono_AnyTile:$lhs, Mono_AnyTile:$rhs);
  let results = (outs Mono_AnyTile:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)";
  let hasVerifier = 1;
}

def Mono_AddOp : Mono_BinaryOp<"add">;
def Mono_SubOp : Mono_BinaryOp<"sub">;
def Mono_MulOp : Mono_BinaryOp<"mul">;
def Mono_DivOp : Mono_BinaryOp<"div">;
def Mono_MaxOp : Mono_BinaryOp<"max">;
def Mono_MinOp : Mono_BinaryOp<"min">;

class Mono_UnaryOp<string mnemonic, string what>
    : Mono_Op<mnemonic, [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = what;
  let arguments = (ins Mono_AnyTile:$input);
  let results = (outs Mono_AnyTile:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Mono_FmaOp : Mono_Op<"fma", [Pure]> {
  let summary = "a * b + c with one rounding, elementwise f32; size-1 operands broadcast";
  let arguments = (ins Mono_AnyTile:$a, Mono_AnyTile:$b, Mono_AnyTile:$c);
  let results = (outs Mono_AnyTile:$result);
  let assemblyFormat = "$a `,` $b `,` $c attr-dict `:` type($a) `,` type($b) `,` type($c) `->` type($result)";
  let hasVerifier = 1;
}

def Mono_RsqrtOp : Mono_UnaryOp<"rsqrt", "1 / sqrt(x), elementwise in f32">;
def Mono_ExpOp : Mono_UnaryOp<"exp", "e^x, elementwise in f32">;
def Mono_LogOp : Mono_UnaryOp<"log", "natural logarithm, elementwise in f32">;

def Mono_SelectOp : Mono_Op<"select", [Pure]> {
  let summary = "elementwise: predicate(a, b) ? x : y (f32; size-1 operands broadcast)";
  let description = [{
    `gt`: a > b, `lt`: a < b (false when either is NaN), `isnan`: a is NaN
    (b is ignored).
  }];
  let arguments = (ins Mono_Predicate:$predicate, Mono_AnyTile:$a, Mono_AnyTile:$b,
                       Mono_AnyTile:$x, Mono_AnyTile:$y);
  let results = (outs Mono_AnyTile:$result);
  let assemblyFormat = [{
    $predicate $a `,` $b `,` $x `,` $y attr-dict `:` type($a) `,` type($b) `,` type($x) `,`
    type($y) `->` type($result)
  }];
  let hasVerifier = 1;
}
def Mono_SqrtOp : Mono_UnaryOp<"sqrt", "sqrt(x), elementwise in f32">;
def Mono_Exp2Op : Mono_UnaryOp<"exp2", "2^x, elementwise in f32">;
def Mono_SigmoidOp : Mono_UnaryOp<"sigmoid", "1 / (1 + e^-x), elementwise in f32">;
def Mono_NegOp : Mono_UnaryOp<"neg", "-x, elementwise in f32">;
def Mono_AbsOp : Mono_UnaryOp<"abs", "|x|, elementwise in f32">;
def Mono_FloorOp : Mono_UnaryOp<"floor", "the largest whole number <= x, elementwise in f32">;

def Mono_ReduceOp : Mono_Op<"reduce", [Pure]> {
  let summary = "reduce a tile, whole or along an axis of a 2-D view";
  let description = [{
    Without `shape`, the whole tile reduces to a size-1 tile held by every
    thread: per-thread partials in slot order, then a fixed tree, so the
    order depends on the tile and block sizes only. With `shape = [R, C]`
    (R * C = size) and `axis`, the tile is read as R x C row-major and reduced
    along that axis (axis 1: R results, one per row), each result in index
    order; for small tiles such as a 4 x 4 Sinkhorn matrix.
  }];
  let arguments = (ins Mono_ReduceKind:$kind, Mono_AnyTile:$input,
                       OptionalAttr<DenseI64ArrayAttr>:$shape, OptionalAttr<I64Attr>:$axis,
                       OptionalAttr<Mono_Rearrangement>:$via);
  let results = (outs Mono_AnyTile:$result);
  let assemblyFormat = "$kind $input (`via` $via^)? attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Mono_ExpandOp : Mono_Op<"expand", [Pure]> {
  let summary = "broadcast a tile along an axis of a 2-D shape";
  let description = [{
    With `shape = [R, C]`: axis 1 takes R values and repeats each along its
    row (result[r][c] = x[r]); axis 0 takes C values and repeats them down the
    columns (result[r][c] = x[c]). The inverse of an axis reduction.
  }];
  let arguments = (ins Mono_AnyTile:$input, DenseI64ArrayAttr:$shape, I64Attr:$axis,
                       OptionalAttr<Mono_Rearrangement>:$via);
  let results = (outs Mono_AnyTile:$result);
  let assemblyFormat = "$input (`via` $via^)? attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Mono_InterleaveOp : Mono_Op<"interleave", [Pure, AllTypesMatch<["a", "b"]>]> {
  let summary = "result[2i] = a[i], result[2i + 1] = b[i] (pairs, as RoPE rotates them)";
  let arguments = (ins Mono_AnyTile:$a, Mono_AnyTile:$b);
  let results = (outs Mono_AnyTile:$result);
  let assemblyFormat = "$a `,` $b attr-dict `:` type($a) `->` type($result)";
  let hasVerifier = 1;
}

def Mono_ToIndexOp : Mono_Op<"to_index", [Pure]> {
  let summary = "a uniform f32 value holding a whole number, as an index";
  let description = [{
    Data-dependent addressing (a token's position into a table, a cache
    slot). Whole numbers from -1 (a pad slot, for a store's guard) to 2^24.
    Reads of handed-off memory may not depend on such an index, and only an
    output no stage of the launch reads may be written at one: the fusion
    passes must know every window a task hands over.
  }];
  let arguments = (ins Mono_AnyTile:$input);
  let results = (outs Index:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Mono_TopKOp : Mono_Op<"topk", [Pure]> {
  let summary = "the k largest values of a tile and their indices, stable";
  let description = [{
    Values in descending order; among equal values the lower index comes
    first; NaN ranks below every number. Indices are returned as exact f32.
  }];
  let arguments = (ins Mono_AnyTile:$input, I64Attr:$k);
  let results = (outs Mono_AnyTile:$values, Mono_AnyTile:$indices);
  let assemblyFormat = "$input `k` $k attr-dict `:` type($input) `->` type($values) `,` type($indices)";
  let hasVerifier = 1;
}

def Mono_ExpertGroupsOp : Mono_Op<"expert_groups", [Pure]> {
  let summary = "slots of at most `group` consecutive places that share an expert";
  let description = [{
    `experts` holds an expert (a whole number) at each of N places, one
    expert's places next to each other (the routed plan's order). Places are
    cut into slots: a slot starts where the expert changes and again every
    `group` places of one run. For slot s (of at most N): `slotExpert` its
    expert, `slotFirst` its first place, `slotCount` its places (1 ..
    group); slots past the last are -1, N and 0. For place q: `placeRow` =
    s * group + (q - first of s), its row in buffers of `group` rows a slot.
    All exact f32. (The building block of the union of experts: a task a
    slot computes its expert's count tokens together.)
  }];
  let arguments = (ins Mono_AnyTile:$experts, I64Attr:$group);
  let results = (outs Mono_AnyTile:$slotExpert, Mono_AnyTile:$slotFirst, Mono_AnyTile:$slotCount,
                      Mono_AnyTile:$placeRow);
  let assemblyFormat = [{
    $experts `group` $group attr-dict `:` type($experts) `->` type($slotExpert) `,`
    type($slotFirst) `,` type($slotCount) `,` type($placeRow)
  }];
  let hasVerifier = 1;
}

def Mono_GatherOp : Mono_Op<"gather", [Pure]> {
  let summary = "result[i] = table[indices[i]] (indices as exact f32)";
  let arguments = (ins Mono_AnyTile:$table, Mono_AnyTile:$indices,
                       OptionalAttr<Mono_Rearrangement>:$via);
  let results = (outs Mono_AnyTile:$result);
  let assemblyFormat = "$table `[` $indices `]` (`via` $via^)? attr-dict `:` type($table) `,` type($indices) `->` type($result)";
  let hasVerifier = 1;
}

def Mono_SliceOp : Mono_Op<"slice", [Pure]> {
  let summary = "values offset, offset + stride, ... (size of them) of a tile";
  let description = [{
    With `block` = B (default 1), runs of B consecutive values start every
    `stride` values: result[i] = input[offset + (i / B) * stride + i % B]
    (e.g. the gate tiles of interleaved gate/up GEMV rows, for every token).
  }];
  let arguments = (ins Mono_AnyTile:$input, I64Attr:$offset,
                       DefaultValuedAttr<I64Attr, "1">:$stride,
                       DefaultValuedAttr<I64Attr, "1">:$block,
                       OptionalAttr<Mono_Rearrangement>:$via);
  let extraClassDeclaration = [{
    /// The input value that result value `i` takes.
    int64_t sourceOf(int64_t i) {
      return getOffset() + (i / getBlock()) * getStride() + i % getBlock();
    }
  }];
  let results = (outs Mono_AnyTile:$result);
  let assemblyFormat = "$input `[` $offset `]` (`via` $via^)? attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Quantization and dot products
//===----------------------------------------------------------------------===//

def Mono_QuantizeMxfp8Op : Mono_Op<"quantize_mxfp8", [Pure]> {
  let summary = "MXFP8 of a row: e4m3 codes and one E8M0 scale per group";
  let description = [{
    Groups are 32 values (`standard`, `routed`) or 64 (`kv`, the KV record's
    quantizer: amax floored at 1e-4).
  }];
  let arguments = (ins Mono_AnyTile:$input, Mono_Mxfp8Variant:$variant);
  let results = (outs Mono_AnyTile:$codes, Mono_AnyTile:$scales);
  let assemblyFormat = "$variant $input attr-dict `:` type($input) `->` type($codes) `,` type($scales)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getGroup() { return getVariant() == Mxfp8Variant::KvRecord ? 64 : 32; }
  }];
}

def Mono_GemvOp : Mono_Op<"gemv"> {
  let summary = "dot products of one activation row with `size` weight rows";
  let description = [{
    result[j] = sum_k x[k] * W[row + j][k], accumulated in f32. For an e4m3
    weight the activation is MXFP8 (`x` e4m3 codes, `xScales` one E8M0 per 32)
    and `weightScales` holds one E8M0 per 32x32 weight block; operands are
    dequantized exactly (the scales are powers of two). A bf16 weight takes an
    f32 or bf16 activation and no scales.
  }];
  let arguments = (ins FlatSymbolRefAttr:$weight,
                       OptionalAttr<FlatSymbolRefAttr>:$weightScales,
                       Index:$row, Mono_AnyTile:$x,
                       Optional<Mono_AnyTile>:$xScales);
  let results = (outs Mono_AnyTile:$result);
  let assemblyFormat = [{
    $weight (`scaled` $weightScales^)? `[` $row `]` `,` $x (`,` $xScales^)?
    attr-dict `:` type($x) (`,` type($xScales)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

def Mono_AttendChunkOp : Mono_Op<"attend_chunk"> {
  let summary = "split-K attention state of query heads over a chunk of cached keys";
  let description = [{
    Query head h < `heads` is the bf16 values [col + h D, col + (h + 1) D) of
    row `row` of region `q` (D = `headDim`). Key j is the KV record
    (fp8_ds_mla) at slot `slots[j]` of byte region `cache` (pages of
    `pageTokens` records, [records][8 scale bytes each]); slot -1 is masked.
    Its dims below D - `ropeDim` are e4m3 * 2^(scale - 127), one scale byte
    per 64 dims, the rest bf16. With t_j = (q_h . k_j) log2(e) / sqrt(D)
    (the dot product split into `scoreParts` f32 fused multiply-add chains
    over consecutive dims, added in order), over the unmasked keys, in base 2:
    m[h] = max t (-inf with no key), l[h] = sum 2^(t - m),
    p[h D + d] = sum 2^(t - m) k[d]. Keys are taken 8 at a time, and each
    batch rescales the running sums by 2^(m_old - m_new) (flash decoding).
    `lowering` (set by mono-lower-tiles from the target description) names
    the building block: `fma_chains` is the order above; `warp_mma` (sm_90,
    attend_mma.h) and `bf16_mfma` (gfx950, attend_mfma.h) take the whole
    chunk at once on matrix cores, the same sums in another order
    (runtime/device/attend_batch.h).
  }];
  let arguments = (ins FlatSymbolRefAttr:$q, Index:$row, Index:$col, FlatSymbolRefAttr:$cache,
                       Mono_AnyTile:$slots, I64Attr:$heads, I64Attr:$headDim, I64Attr:$ropeDim,
                       DefaultValuedAttr<I64Attr, "32">:$pageTokens,
                       OptionalAttr<Mono_AttendLowering>:$lowering);
  let results = (outs Mono_AnyTile:$m, Mono_AnyTile:$l, Mono_AnyTile:$p);
  let assemblyFormat = [{
    $q `[` $row `,` $col `]` `,` $cache `[` $slots `]` (`lowered` `to` $lowering^)? attr-dict
    `:` type($slots) `->`
    type($m) `,` type($l) `,` type($p)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    static constexpr int64_t kKeyBatch = 8;
    static constexpr int64_t kScaleBytes = 8;
    static constexpr int64_t kGroup = 64;
    int64_t getNope() { return getHeadDim() - getRopeDim(); }
    int64_t getDataBytes() { return getNope() + 2 * getRopeDim(); }
    int64_t getKeys() { return ::llvm::cast<TileType>(getSlots().getType()).getSize(); }
    /// Threads a (head, key) score is split over at block `block`: as many
    /// as fill the block, dividing the head dim.
    int64_t scoreParts(int64_t block) {
      int64_t parts = std::max<int64_t>(1, block / (getHeads() * kKeyBatch));
      while (getHeadDim() % parts != 0)
        --parts;
      return parts;
    }
    /// log2(e) / sqrt(D) in f32: the one multiply that turns a dot product
    /// into a base-2 score, the same in the simulator and on the device.
    float getScoreScale() {
      return static_cast<float>(1.4426950408889634 / std::sqrt(static_cast<double>(getHeadDim())));
    }
  }];
}

//===----------------------------------------------------------------------===//
// Synchronization (created by materialize-sync)
//===----------------------------------------------------------------------===//

def Mono_PublishOp : Mono_Op<"publish"> {
  let summary = "publish this task's results behind its flag";
  let description = [{
    Once every store of the task is complete (block barrier, release fence),
    one thread writes the (task, tag) pair of `flags[task]` with one 8-byte
    store. The tag is the step's tag for this launch (2e+1 for K1, 2e+2 for
    K2 and the FFN launch).
  }];
  let arguments = (ins FlatSymbolRefAttr:$flags, Index:$task);
  let assemblyFormat = "$flags `[` $task `]` attr-dict";
  let hasVerifier = 1;
}

def Mono_WaitOp : Mono_Op<"wait"> {
  let summary = "wait until flags [first, first + count) carry this step's tag";
  let description = [{
    The threads of the block poll the pairs in parallel (a batched poll),
    reloading each until its tag is the one expected, then meet at a block
    barrier; the producers' stores are then visible to the whole block.
  }];
  let arguments = (ins FlatSymbolRefAttr:$flags, Index:$first, Index:$count);
  let assemblyFormat = "$flags `[` $first `,` $count `]` attr-dict";
  let hasVerifier = 1;
}

def Mono_GemvRowsOp : Mono_Op<"gemv_rows"> {
  let summary = "dot products of `tokens` activation rows with weight rows";
  let description = [{
    result[t * N + j] = sum_k x[firstToken + t][k] * W[row + j][k], f32
    accumulation by fused multiply-adds, where N = size / tokens. The
    activations are read from region `x` (all its columns), so the weights
    are streamed once for all the step's tokens. An e4m3 weight (32x32 E8M0
    blocks in `weightScales`) takes an MXFP8 activation (`x` e4m3, `xScales`
    e8m0 [rows, k/32]); a bf16 weight takes a bf16 or f32 activation. An
    e2m1 weight (MXFP4) is read in AITER's shuffled layouts (docs/numerics.md
    section 2): its bytes permuted per 16-row group, and its scales (one E8M0
    per 32 along k, [rows padded to 256, k/32 padded to 8]) permuted too; it
    takes an MXFP8 activation.

    An optional runtime `count` (0 .. tokens) computes only tokens
    [0, count): the others' results are 0, their rows of `x` are not read,
    and a count of 0 reads no weights (a task over fewer tokens than its
    tile, or none). The handoff still covers all `tokens` rows.

    `lowering` (set by mono-lower-tiles from the target description) names
    the building block it becomes: `fma_chains` (mono_gemv_rows, any
    target), `warp_mma` (mono_gemv_mma, the 16x8x16 f16 warp mma),
    `scaled_mfma` (mono_gemv_mfma, the 16x16x128 scaled MFMA with the E8M0
    scales in hardware), `fp8_mfma` (mono_gemv_mfma's gfx942 form, the
    16x16x32 FNUZ fp8 MFMA a 32-k block with the scales applied in
    software), `bf16_mfma` (mono_gemv_mfma over bf16, the 16x16x32
    bf16 MFMA).
  }];
  let arguments = (ins FlatSymbolRefAttr:$weight,
                       OptionalAttr<FlatSymbolRefAttr>:$weightScales, Index:$row,
                       FlatSymbolRefAttr:$x, OptionalAttr<FlatSymbolRefAttr>:$xScales,
                       Index:$firstToken, I64Attr:$tokens, Optional<Index>:$count,
                       OptionalAttr<Mono_GemvLowering>:$lowering);
  let results = (outs Mono_AnyTile:$result);
  let assemblyFormat = [{
    $weight (`scaled` $weightScales^)? `[` $row `]` `,` $x (`scaled` $xScales^)?
    `[` $firstToken `]` `tokens` $tokens (`count` $count^)? (`lowered` `to` $lowering^)?
    attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getOutputs() {
      return ::llvm::cast<TileType>(getResult().getType()).getSize() / getTokens();
    }
  }];
}

//===----------------------------------------------------------------------===//
// Peer memory (tensor parallelism)
//===----------------------------------------------------------------------===//

def Mono_StorePeerOp : Mono_Op<"store_peer"> {
  let summary = "store a tile into rank `rank`'s copy of a peer region, in this rank's slot";
  let description = [{
    Each rank's peer buffer holds one slot per source rank (and two halves,
    chosen by epoch parity); the store lands in the destination rank's buffer,
    in the slot of the rank that runs it.
  }];
  let arguments = (ins Mono_AnyTile:$value, FlatSymbolRefAttr:$region, Index:$row, Index:$col,
                       I64Attr:$rank);
  let assemblyFormat = "$value `,` $region `[` $row `,` $col `]` `to` `rank` $rank attr-dict `:` type($value)";
  let hasVerifier = 1;
}

def Mono_LoadPeerOp : Mono_Op<"load_peer"> {
  let summary = "load from this rank's peer buffer, the slot rank `rank` wrote";
  let arguments = (ins FlatSymbolRefAttr:$region, Index:$row, Index:$col, I64Attr:$rank);
  let results = (outs Mono_AnyTile:$result);
  let assemblyFormat = "$region `[` $row `,` $col `]` `from` `rank` $rank attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Mono_PublishPeerOp : Mono_Op<"publish_peer"> {
  let summary = "publish this task's peer stores to every rank, at system scope";
  let arguments = (ins FlatSymbolRefAttr:$flags, Index:$task);
  let assemblyFormat = "$flags `[` $task `]` attr-dict";
  let hasVerifier = 1;
}

def Mono_WaitPeerOp : Mono_Op<"wait_peer"> {
  let summary = "wait until rank `rank`'s flags [first, first + count) carry this step's tag";
  let arguments = (ins FlatSymbolRefAttr:$flags, Index:$first, Index:$count, I64Attr:$rank);
  let assemblyFormat = "$flags `[` $first `,` $count `]` `from` `rank` $rank attr-dict";
  let hasVerifier = 1;
}

#endif // MONODC_DIALECT_MONO_OPS_TD
