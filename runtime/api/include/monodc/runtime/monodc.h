/*===- monodc.h - the C ABI of the monodc runtime ------------------------===*\
 *
 * Opaque handles and error strings, for serving engines written in C or with
 * a C FFI. Every function that can fail returns NULL on success or an error
 * the caller frees with monodc_error_free(). Kernels belong to their session
 * and stay valid until it is closed.
 *
 * Runtime-only library (libmonodc_runtime): sessions serve code objects that
 * a compile-only build placed in a cache directory (monodc matrix --cache).
 * With the compiler linked in (monodc_jit), monodc_jit_session_open() builds
 * what the cache lacks.
 *
\*===----------------------------------------------------------------------===*/
#ifndef MONODC_RUNTIME_MONODC_H
#define MONODC_RUNTIME_MONODC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct monodc_error monodc_error;
typedef struct monodc_session monodc_session;
typedef struct monodc_kernel monodc_kernel;
typedef struct monodc_launcher monodc_launcher;
typedef struct monodc_peer_group monodc_peer_group;
typedef struct monodc_layer_step monodc_layer_step;

/* One line saying what failed and why. Valid until the error is freed. */
const char *monodc_error_message(const monodc_error *error);
void monodc_error_free(monodc_error *error);

/* A session over a cache directory (NULL: $MONODC_CACHE_DIR, else
 * $XDG_CACHE_HOME/monodc, else ~/.cache/monodc). Runtime-only: never compiles. */
monodc_error *monodc_session_open(const char *cache_dir, monodc_session **session);
/* The same with the compiler: builds missing keys (only in monodc_jit). */
monodc_error *monodc_jit_session_open(const char *cache_dir, monodc_session **session);
void monodc_session_close(monodc_session *session);

/* The step width a step of `rows` rows runs on (1, 2, 4, 8, then every 8 up
 * to 48: the widths `monodc matrix` builds by default), its other rows pad
 * rows with slot_mapping -1; 0 when rows is outside 1..48. */
int64_t monodc_step_width(int64_t rows);

/* ---- when the fused decode path runs (docs/runtime.md, "Eligibility") ---- */

typedef struct monodc_deployment {
  const char *model;          /* "dsv41" */
  const char *arch;           /* the device's processor, e.g. "gfx950" */
  const char *built_archs;    /* comma-separated processors it has kernels for; NULL or "": all */
  int64_t tp;                 /* tensor-parallel ranks */
  int64_t expert_parallel;    /* expert-parallel ranks (0 counts as 1) */
  int64_t data_parallel;      /* data-parallel attention ranks (0 counts as 1) */
  const char *routed_weights; /* NULL: "mxfp4_aiter" (MXFP4 in AITER's shuffled layout) */
  int64_t compute_units;      /* CUs (SMs) the device offers the engine */
  int64_t grid;               /* CTAs the kernels were built for; 0: the arch's compute units */
  int64_t kv_cache_pages;     /* pages of the engine's KV caches (32 tokens each); 0: not checked */
  int64_t max_positions;      /* positions the engine serves (its RoPE table's rows); 0: not checked */
} monodc_deployment;

typedef struct monodc_step_facts {
  int64_t rows;          /* tokens in the step */
  int uniform_decode;    /* 1: every request decodes one token (no prefill, no mixed step) */
  int piecewise_capture; /* 1: a graph capture that may replay mixed batches */
  int causal;            /* 1: causal attention windows */
  int metadata;          /* 1: positions, slot mapping, block tables and top-k lists at hand */
  int64_t max_position;  /* the step's largest position (0: the first, or not checked) */
} monodc_step_facts;

typedef struct monodc_eligibility_result {
  int runs;             /* 1: the fused path runs the layer for this step */
  const char *launches; /* "k1+k2" or "ffn" when it runs, else "" (static strings) */
  int64_t ratio;        /* the layer's compress ratio (K2's build key) */
  int64_t width;        /* the step width it runs on (its other rows pad rows) */
  char reason[256];     /* why not, when it does not run ("" when it does) */
} monodc_eligibility_result;

/* An error naming the first fact that rules the fused path out for this
 * deployment: an arch outside the built ones, TP other than 2 or 4, expert
 * or data parallelism, other routed weights, too few compute units (a
 * partitioned GPU), an unknown model. An engine that opted in fails here. */
monodc_error *monodc_deployment_check(const monodc_deployment *deployment);
/* Whether the fused path runs `layer` for this step, with which launches,
 * or why the engine's own path takes it (*out). An error where the
 * deployment fails monodc_deployment_check or the layer is not the model's. */
monodc_error *monodc_eligibility(const monodc_deployment *deployment, int64_t layer,
                                 const monodc_step_facts *step, monodc_eligibility_result *out);

/* A kernel by request, e.g. "model=dsv41 launch=attention_front arch=gfx950
 * tp=2 rows=6" (fields left out keep their defaults), or by whole key text. */
monodc_error *monodc_session_kernel(monodc_session *session, const char *request,
                                    const monodc_kernel **kernel);
monodc_error *monodc_session_kernel_by_key(monodc_session *session, const char *key_text,
                                           const monodc_kernel **kernel);

const char *monodc_kernel_key(const monodc_kernel *kernel);
const char *monodc_kernel_symbol(const monodc_kernel *kernel);
const void *monodc_kernel_code_object(const monodc_kernel *kernel, size_t *size);
int64_t monodc_kernel_grid(const monodc_kernel *kernel);
int64_t monodc_kernel_block(const monodc_kernel *kernel);
/* Tensor parallelism through peer memory: the ranks of the launch and the
 * bytes of one rank's peer buffer (0 when it has none). */
int64_t monodc_kernel_ranks(const monodc_kernel *kernel);
int64_t monodc_kernel_peer_buffer_bytes(const monodc_kernel *kernel);

typedef struct monodc_kernel_resources {
  int64_t vgprs, agprs, sgprs;
  int64_t vgpr_spills, sgpr_spills;
  int64_t lds_bytes, scratch_bytes;
  int64_t wavefront_size;
  int64_t kernarg_bytes;
} monodc_kernel_resources;

/* The AMDGPU metadata of the kernel; an error for code objects without it. */
monodc_error *monodc_kernel_resources_get(const monodc_kernel *kernel,
                                          monodc_kernel_resources *resources);

typedef struct monodc_kernel_argument {
  const char *name;     /* region name, "mono_scratch", "mono_epoch", "mono_peers", "mono_rank"
                           or "<region>.rows" */
  const char *kind;     /* input, output, weight; scratch; epoch; peers, rank; rows */
  int64_t offset;       /* in the kernarg buffer */
  int64_t size;         /* bytes of the argument (a pointer: 8) */
  int64_t bytes;        /* bytes the buffer behind it holds */
  int launcher_owned;   /* 1: the launcher allocates it (scratch); 0: the caller binds it */
  const char *format;   /* a region's number format: f32, bf16, e4m3, e2m1, e8m0, byte
                           (records), i32, i64 (indices); "" for the launch's own buffers */
  /* In a layer step: an input an earlier launch of the step wrote (its
   * kernel and output region; "" otherwise), and whether an output is a
   * step result (the step's caller reads it; the step owns other outputs). */
  const char *handed_from_kernel, *handed_from_region;
  int step_result;
  /* A region sized at launch (a KV cache, its pages): the caller gives its
   * rows with monodc_launcher_set_rows / monodc_layer_step_set_rows, binds
   * rows x row_bytes, and the kernel takes the count as the next argument
   * ("<region>.rows", kind "rows", 8 bytes); `bytes` is then only the
   * build's nominal size. row_bytes: bytes of one row of any region. */
  int rows_at_launch;
  int64_t row_bytes;
  /* A region whose columns are given at launch (a block table, its pages a
   * row): the caller gives them with monodc_launcher_set_cols /
   * monodc_layer_step_set_cols (the build's count until then) before it binds
   * rows x columns entries, and the kernel takes the count as the next
   * argument ("<region>.cols", kind "cols", 8 bytes). */
  int cols_at_launch;
} monodc_kernel_argument;

size_t monodc_kernel_argument_count(const monodc_kernel *kernel);
monodc_error *monodc_kernel_argument_get(const monodc_kernel *kernel, size_t index,
                                         monodc_kernel_argument *argument);
int64_t monodc_kernel_kernarg_bytes(const monodc_kernel *kernel);

/* Loads the kernel on `device` through the HIP runtime, or for an sm_90
 * kernel the CUDA driver (each loaded with dlopen), checks that its grid is
 * resident, allocates and zeroes its own buffers. */
monodc_error *monodc_launcher_create(const monodc_kernel *kernel, int device,
                                     monodc_launcher **launcher);
/* The same for `ranks_on_device` ranks that launch this kernel on one device
 * at once (TP ranks sharing a GPU, each with the kernel's grid, e.g. one
 * built with `--grid` for its share): their grids must be resident
 * together, or it refuses. monodc_launcher_create is this with 1. */
monodc_error *monodc_launcher_create_shared(const monodc_kernel *kernel, int device,
                                            int ranks_on_device,
                                            monodc_launcher **launcher);
monodc_error *monodc_launcher_bind(monodc_launcher *launcher, const char *region,
                                   void *device_pointer);
/* The same for a buffer of `bytes` bytes: refused (nothing bound) when it is
 * smaller than the argument's `bytes`, or for a region sized at launch when
 * it is not a whole number of rows (row_bytes), whose count it then sets. */
monodc_error *monodc_launcher_bind_buffer(monodc_launcher *launcher, const char *region,
                                          void *device_pointer, int64_t bytes);
/* A launch with peer memory: "mono_peers" is bound to a device array of
 * every rank's peer buffer (monodc_kernel_peer_buffer_bytes each, zeroed
 * once, in rank order), and this is its rank. */
monodc_error *monodc_launcher_bind_rank(monodc_launcher *launcher, int rank);
/* The rows of a region sized at launch (rows_at_launch: a KV cache's
 * pages, 1 .. 2^24); every later launch takes them. */
monodc_error *monodc_launcher_set_rows(monodc_launcher *launcher, const char *region,
                                       int64_t rows);
/* The columns of a region whose columns are given at launch (cols_at_launch:
 * a block table's pages a row, 1 .. 2^24); every later launch takes them. A
 * buffer bound with monodc_launcher_bind_buffer must hold them. */
monodc_error *monodc_launcher_set_cols(monodc_launcher *launcher, const char *region,
                                       int64_t cols);
/* Launches on a hipStream_t (NULL: the default stream). */
monodc_error *monodc_launcher_launch(monodc_launcher *launcher, void *stream);
/* Bounded waits: every poll of the kernel gives up past the rank's budget,
 * and the first to give up writes a record into the epoch buffer. Sets the
 * budget in microseconds (0: the default, 5 s) in the bound epoch buffer,
 * while none of the step sequence's launches runs. */
monodc_error *monodc_launcher_set_wait_budget(monodc_launcher *launcher, uint32_t microseconds);
/* Waits for `stream`, then an error naming the wait (rank, CTA, stage,
 * flags, tags) if a poll gave up: the outputs are then not valid, and the
 * caller zeroes the epoch and peer buffers and calls
 * monodc_launcher_reset_scratch before the next step. */
monodc_error *monodc_launcher_check_waits(monodc_launcher *launcher, void *stream);
/* Zeroes the launcher's own scratch buffer, as when it was created. */
monodc_error *monodc_launcher_reset_scratch(monodc_launcher *launcher);
void monodc_launcher_destroy(monodc_launcher *launcher);

/* Tensor parallelism across processes: each rank creates its peer group for
 * a kernel with peer memory (its buffer, monodc_kernel_peer_buffer_bytes,
 * allocated shareable and zeroed), gives every other rank its handle (bytes
 * the caller moves through its own process group), connects with every
 * rank's handle in rank order (its own included) and binds the table as
 * "mono_peers". monodc_peer_group_exchange moves the handles through a
 * directory the ranks share (fresh for each group), waiting up to
 * timeout_ms for the others, then connects. */
monodc_error *monodc_peer_group_create(const monodc_kernel *kernel, int device, int rank,
                                       monodc_peer_group **group);
size_t monodc_peer_group_handle(const monodc_peer_group *group, const uint8_t **bytes);
monodc_error *monodc_peer_group_connect(monodc_peer_group *group, const uint8_t *const *handles,
                                        const size_t *sizes, int count);
monodc_error *monodc_peer_group_exchange(monodc_peer_group *group, const char *directory,
                                         int timeout_ms);
void *monodc_peer_group_table(const monodc_peer_group *group);
/* One process driving several GPUs: the groups of all `ranks` ranks at once
 * (groups[r] for rank r, its buffer on devices[r]), peer access enabled
 * between the GPUs, every table built; no handles to exchange. Destroy
 * them together: each table holds the other ranks' buffers. */
monodc_error *monodc_peer_groups_create_local(const monodc_kernel *kernel, const int *devices,
                                              int ranks, monodc_peer_group **groups);
void monodc_peer_group_destroy(monodc_peer_group *group);

/* ---- one rank's decode layer run as steps (docs/runtime.md, "Layer steps") ----
 * `kernels` holds each step width's launches in step order (K1 then K2, or
 * the FFN launch), width after width: counts[w] launches for width w, of
 * `widths`. The step binds what the manifests say it owns: the inputs an
 * earlier launch hands over (K2's q, cache and seam streams from K1), the
 * outputs that live only inside the step, and the epoch buffer. Every
 * layer step of a rank must share one epoch buffer: pass the rank's first
 * layer step as `same_rank` (NULL for that first one); the steps then also
 * share their step-internal buffers (the layers run one after another). */
monodc_error *monodc_layer_step_create(const monodc_kernel *const *kernels, const size_t *counts,
                                       size_t widths, int device, int ranks_on_device,
                                       const monodc_layer_step *same_rank,
                                       monodc_layer_step **step);
/* Binds `region` (or "mono_peers") of every launch and width that has it:
 * inputs (a row input sized for the widest step), weights, step results. */
monodc_error *monodc_layer_step_bind(monodc_layer_step *step, const char *region,
                                     void *device_pointer);
/* The same for a buffer of `bytes` bytes, checked against every launch and
 * width (monodc_launcher_bind_buffer); a cache's rows are set from it. */
monodc_error *monodc_layer_step_bind_buffer(monodc_layer_step *step, const char *region,
                                            void *device_pointer, int64_t bytes);
monodc_error *monodc_layer_step_bind_rank(monodc_layer_step *step, int rank);
/* The rows of a region sized at launch in every launch and width of the
 * step that has it or is handed it (the KV cache's pages). */
monodc_error *monodc_layer_step_set_rows(monodc_layer_step *step, const char *region,
                                         int64_t rows);
/* The columns of a region whose columns are given at launch in every launch
 * and width of the step that has it (a block table's pages a row); set them
 * before monodc_layer_step_bind_buffer, which checks against them. */
monodc_error *monodc_layer_step_set_cols(monodc_layer_step *step, const char *region,
                                         int64_t cols);
/* Launches the step of width `rows` on a stream, its launches in step
 * order; nothing launches unless every argument is bound. */
monodc_error *monodc_layer_step_run(monodc_layer_step *step, int64_t rows, void *stream);
monodc_error *monodc_layer_step_set_wait_budget(monodc_layer_step *step, uint32_t microseconds);
/* Waits for `stream`; an error naming the launch and wait if a poll of the
 * last step gave up. */
monodc_error *monodc_layer_step_check_waits(monodc_layer_step *step, void *stream);
/* After a wait gave up: zeroes the rank's epoch buffer and the step's
 * scratch (reset every layer step of the rank; zero the peer buffers). */
monodc_error *monodc_layer_step_reset(monodc_layer_step *step);
void monodc_layer_step_destroy(monodc_layer_step *step);

#ifdef __cplusplus
}
#endif

#endif /* MONODC_RUNTIME_MONODC_H */
