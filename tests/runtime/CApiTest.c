/* The C ABI, from C: opens a session over a cache directory, asks for a
 * kernel by request, prints what it learns, then shows the errors. Usage:
 *   monodc_capi_test CACHE_DIR REQUEST
 * Exit status 0 when every call behaved as documented. */
#include "monodc/runtime/monodc.h"

#include <stdio.h>
#include <string.h>

static int failures = 0;

static void expectError(monodc_error *error, const char *what) {
  if (!error) {
    printf("FAIL: %s succeeded\n", what);
    ++failures;
    return;
  }
  printf("error (%s): %s\n", what, monodc_error_message(error));
  monodc_error_free(error);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s CACHE_DIR REQUEST\n", argv[0]);
    return 2;
  }
  if (monodc_step_width(6) != 8 || monodc_step_width(48) != 48 || monodc_step_width(1) != 1 ||
      monodc_step_width(0) != 0 || monodc_step_width(49) != 0) {
    printf("FAIL: step widths\n");
    return 1;
  }
  /* Eligibility: DSV41 TP 2 on a whole MI355X runs layer 21 (K1 + K2 at
   * ratio 1) for a 6-row decode step on width 8; a prefill step falls back
   * with its reason; TP 8 is an error. */
  monodc_deployment deployment = {"dsv41", "gfx950", "gfx950", 2, 1, 1, NULL, 256, 0, 100000};
  monodc_step_facts step = {6, 1, 0, 1, 1};
  monodc_eligibility_result verdict;
  monodc_error *refusal = monodc_eligibility(&deployment, 21, &step, &verdict);
  if (refusal || !verdict.runs || strcmp(verdict.launches, "k1+k2") != 0 || verdict.ratio != 1 ||
      verdict.width != 8 || verdict.reason[0] != '\0') {
    printf("FAIL: eligibility of a decode step: %s\n",
           refusal ? monodc_error_message(refusal) : verdict.reason);
    return 1;
  }
  step.uniform_decode = 0;
  refusal = monodc_eligibility(&deployment, 21, &step, &verdict);
  if (refusal || verdict.runs || strstr(verdict.reason, "prefill") == NULL) {
    printf("FAIL: a prefill step is not refused with its reason\n");
    return 1;
  }
  deployment.tp = 8;
  refusal = monodc_deployment_check(&deployment);
  if (!refusal || strstr(monodc_error_message(refusal), "TP 8") == NULL) {
    printf("FAIL: TP 8 is not an error naming it\n");
    return 1;
  }
  monodc_error_free(refusal);

  monodc_session *session = NULL;
  monodc_error *error;
#ifdef MONODC_CAPI_TEST_JIT
  error = monodc_jit_session_open(argv[1], &session);
#else
  error = monodc_session_open(argv[1], &session);
#endif
  if (error) {
    printf("FAIL: open: %s\n", monodc_error_message(error));
    return 1;
  }

  const monodc_kernel *kernel = NULL;
  error = monodc_session_kernel(session, argv[2], &kernel);
  if (error) {
    printf("FAIL: kernel: %s\n", monodc_error_message(error));
    monodc_error_free(error);
    monodc_session_close(session);
    return 1;
  }
  size_t size = 0;
  const unsigned char *code = (const unsigned char *)monodc_kernel_code_object(kernel, &size);
  printf("symbol %s\n", monodc_kernel_symbol(kernel));
  printf("grid %lld block %lld\n", (long long)monodc_kernel_grid(kernel),
         (long long)monodc_kernel_block(kernel));
  printf("ranks %lld peer buffer %lld\n", (long long)monodc_kernel_ranks(kernel),
         (long long)monodc_kernel_peer_buffer_bytes(kernel));
  printf("code object %s, %s\n", size > 4 && memcmp(code, "\x7f" "ELF", 4) == 0 ? "ELF" : "?",
         size > 1000 ? "over 1000 bytes" : "small");
  monodc_kernel_resources resources;
  error = monodc_kernel_resources_get(kernel, &resources);
  if (error) {
    printf("resources: %s\n", monodc_error_message(error));
    monodc_error_free(error);
  } else {
    printf("resources vgpr>0 %d scratch %lld wavefront %lld kernarg %lld\n", resources.vgprs > 0,
           (long long)resources.scratch_bytes, (long long)resources.wavefront_size,
           (long long)resources.kernarg_bytes);
  }
  size_t count = monodc_kernel_argument_count(kernel);
  for (size_t i = 0; i < count; ++i) {
    monodc_kernel_argument argument;
    if ((error = monodc_kernel_argument_get(kernel, i, &argument))) {
      printf("FAIL: argument %zu: %s\n", i, monodc_error_message(error));
      monodc_error_free(error);
      ++failures;
      continue;
    }
    printf("arg %zu %s %s offset %lld bytes %lld%s\n", i, argument.name, argument.kind,
           (long long)argument.offset, (long long)argument.bytes,
           argument.launcher_owned ? " (launcher)" : "");
  }
  monodc_kernel_argument unused;
  expectError(monodc_kernel_argument_get(kernel, count, &unused), "argument out of range");

  /* The same kernel by its whole key is the same handle. */
  const monodc_kernel *byKey = NULL;
  error = monodc_session_kernel_by_key(session, monodc_kernel_key(kernel), &byKey);
  if (error || byKey != kernel) {
    printf("FAIL: by key: %s\n", error ? monodc_error_message(error) : "another handle");
    ++failures;
  }
  monodc_error_free(error);

  const monodc_kernel *other = NULL;
#ifdef MONODC_CAPI_TEST_JIT
  expectError(monodc_session_kernel(session, "model=llama", &other), "unknown model");
#else
  expectError(monodc_session_kernel(session, "rows=47 tp=4", &other), "missing key");
#endif
  expectError(monodc_session_kernel(session, "rank=0", &other), "bad request");
  expectError(monodc_session_kernel_by_key(session, "not a key", &other), "bad key");

  monodc_launcher *launcher = NULL;
  expectError(monodc_launcher_create(kernel, 0, &launcher), "launcher without a GPU");
  expectError(monodc_launcher_create_shared(kernel, 0, 0, &launcher), "launcher of no ranks");
  expectError(monodc_launcher_create_shared(NULL, 0, 2, &launcher), "launcher of no kernel");
  expectError(monodc_launcher_bind_rank(NULL, 0), "rank of no launcher");

  monodc_session_close(session);
  printf("%s\n", failures ? "C ABI test FAILED" : "C ABI test passed");
  return failures ? 1 : 0;
}
