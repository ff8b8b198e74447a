// The mono dialect through its C++ API: ops built by hand verify, print and
// parse back to the same text; the verifier names the op it rejects.
#include "monodc/Dialect/Mono/MonoDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace monodc::mono;

namespace {

struct Built {
  OwningOpRef<ModuleOp> module;
  LaunchOp launch;
};

Built buildNormLaunch(MLIRContext &ctx, Type storeType) {
  ctx.loadDialect<MonoDialect, arith::ArithDialect>();
  OpBuilder b(&ctx);
  Location loc = b.getUnknownLoc();
  Built out{ModuleOp::create(loc), {}};
  b.setInsertionPointToEnd(out.module->getBody());
  out.launch = LaunchOp::create(b, loc, b.getStringAttr("l"), b.getStringAttr("gfx950"),
                                b.getI64IntegerAttr(4), b.getI64IntegerAttr(256),
                                b.getI64IntegerAttr(2));
  b.setInsertionPointToStart(&out.launch.getBody().emplaceBlock());
  RegionOp::create(b, loc, "x", monodc::mono::MemoryKind::Input, b.getBF16Type(), ArrayRef<int64_t>{2, 64},
                   IntegerAttr(), FlatSymbolRefAttr(), SymbolRefAttr());
  RegionOp::create(b, loc, "y", monodc::mono::MemoryKind::Output, storeType, ArrayRef<int64_t>{2, 64},
                   IntegerAttr(), FlatSymbolRefAttr(), SymbolRefAttr());
  auto stage = StageOp::create(b, loc, b.getStringAttr("s"), b.getI64IntegerAttr(2));
  Block &body = stage.getBody().emplaceBlock();
  Value t = body.addArgument(b.getIndexType(), loc);
  b.setInsertionPointToStart(&body);
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  auto bf16Tile = TileType::get(&ctx, 64, b.getBF16Type());
  auto f32Tile = TileType::get(&ctx, 64, b.getF32Type());
  auto scalar = TileType::get(&ctx, 1, b.getF32Type());
  Value x = LoadOp::create(b, loc, bf16Tile, "x", t, c0);
  Value xf = CastOp::create(b, loc, f32Tile, x);
  Value sq = MulOp::create(b, loc, f32Tile, xf, xf);
  Value s = ReduceOp::create(b, loc, scalar, ReduceKind::Sum, sq, DenseI64ArrayAttr(), IntegerAttr(),
                              RearrangementAttr());
  Value r = RsqrtOp::create(b, loc, scalar, s);
  Value y = MulOp::create(b, loc, f32Tile, xf, r);
  Value yb = CastOp::create(b, loc, bf16Tile, y);
  StoreOp::create(b, loc, yb, "y", t, c0, Value(), Value());
  return out;
}

std::string print(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->print(os);
  return text;
}

TEST(Dialect, BuiltLaunchVerifiesAndRoundTrips) {
  MLIRContext ctx;
  Built built = buildNormLaunch(ctx, BFloat16Type::get(&ctx));
  ASSERT_TRUE(succeeded(verify(*built.module)));
  std::string text = print(*built.module);
  auto reparsed = parseSourceString<ModuleOp>(text, &ctx);
  ASSERT_TRUE(reparsed);
  EXPECT_EQ(print(*reparsed), text);
}

TEST(Dialect, VerifierNamesTheOpAndRegion) {
  MLIRContext ctx;
  // The stage stores a bf16 tile into an f32 region.
  Built built = buildNormLaunch(ctx, Float32Type::get(&ctx));
  std::string message;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    message += d.str();
    return success();
  });
  EXPECT_TRUE(failed(verify(*built.module)));
  EXPECT_NE(message.find("'mono.store' op stores a bf16 tile into f32 region 'y'"),
            std::string::npos)
      << message;
}

TEST(Dialect, RegionAccessors) {
  MLIRContext ctx;
  Built built = buildNormLaunch(ctx, BFloat16Type::get(&ctx));
  auto regions = llvm::to_vector(built.launch.getBodyBlock().getOps<RegionOp>());
  ASSERT_EQ(regions.size(), 2u);
  EXPECT_FALSE(regions[0].isWritable());
  EXPECT_TRUE(regions[1].isWritable());
  EXPECT_EQ(regions[0].getRows(), 2);
  EXPECT_EQ(regions[0].getCols(), 64);
}

} // namespace
