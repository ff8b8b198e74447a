MONO_STAGE void mono_k1_stage0() {
  // stage 0: seam.fold, 30 tasks
}
MONO_STAGE void mono_k1_stage1() {
  // stage 1: seam.mix, 24 tasks
}
