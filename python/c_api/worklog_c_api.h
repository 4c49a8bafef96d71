/* The steps of the worklog as a C library (libworklog_steps.so), for callers that are not C++: the
 * PyTorch operators of python/worklog_torch/ load it with ctypes. It holds every step the build has,
 * and finds them through the steps' registry (common/step.hpp), so it names none of them.
 *
 * The problem is the steps' own: C = alpha·A·B + beta·C with row-major A (M×K), B (K×N) and C (M×N),
 * each with its leading dimension in elements (lda ≥ K, ldb ≥ N, ldc ≥ N). A and B are FP32 for the
 * steps whose precision is WORKLOG_FP32 (01 to 04) and FP16 for those of WORKLOG_FP16 (05 on); C and
 * the scalars are FP32 for all. With beta == 0, C is not read. Pointers are device pointers.
 *
 * A step is named as its folder is ("10_persistent_clusters"), a variant as the registry names it,
 * "<step>/<variant>" ("07_async_pipeline/stages2").
 *
 * Every function returns a status: 0 on success, otherwise one of the exit codes of the worklog's
 * programs (common/exit_codes.hpp): 2 for an argument it refuses (an unknown step, a leading
 * dimension below its row, a workspace too small), 4 for a GPU the step cannot run on, 5 for a CUDA
 * error, 77 for no CUDA device. worklog_last_error() then says why in one line, in the words a
 * step's executable prints for the same cause. Strings returned live as long as the library.
 */
#ifndef WORKLOG_C_API_H
#define WORKLOG_C_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Changes whenever a signature below does, so that a caller can refuse a library it was not written for. */
#define WORKLOG_C_API_VERSION 1

/* The input precision of a step (A and B): FP32, or FP16 accumulated in FP32 on the tensor cores. */
#define WORKLOG_FP32 1
#define WORKLOG_FP16 2

int worklog_api_version(void);

/* The one-line reason of the last failure on this thread ("" when none has failed yet). */
const char* worklog_last_error(void);

/* The steps linked into the library, sorted by name (so in the worklog's order): *count of them,
 * and the name of the one at `index`. */
int worklog_step_count(int* count);
int worklog_step_name(int index, const char** name);

/* A step's variants, in their order of registration: how many, and the name of one (after the
 * step's: "stages2"). `step` is a step's name, not a variant's. */
int worklog_variant_count(const char* step, int* count);
int worklog_variant_name(const char* step, int index, const char** name);

/* What a step or variant is: its input precision (WORKLOG_FP32 or WORKLOG_FP16), what it adds (the
 * result table's words), and the compute capabilities it runs on (major·10 + minor; *highest 0
 * when there is no upper limit). */
int worklog_step_precision(const char* step, int* precision);
int worklog_step_description(const char* step, const char** description);
int worklog_step_compute_capability(const char* step, int* lowest, int* highest);

/* The factor f of the step's error bound against an exact result (common/gemm_math.hpp,
 * exact_reference_scale): each element of a correct C is within
 * f·(|alpha|·(|A|·|B|)_ij + |beta|·|C_ij|) of the exact alpha·A·B + beta·C, f from K and the
 * precision's unit roundoff. */
int worklog_error_scale(const char* step, int64_t k, double* scale);

/* 0 when CUDA device `device` can be used; otherwise 77 (no device: the reason, as the steps give
 * it) or 2 (no device of that number). */
int worklog_check_device(int device);

/* Bytes of device memory the step needs as workspace for this problem on `device` (0 for most
 * steps). A step that needs one may ask the device, so this can fail as worklog_gemm does. */
int worklog_workspace_bytes(const char* step, int device, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb,
                            int64_t ldc, size_t* bytes);

/* Enqueues the step on `stream` (a cudaStream_t; NULL for the legacy default stream) of `device`,
 * and returns without waiting for it. `workspace` must hold worklog_workspace_bytes() bytes, zeroed
 * before the first launch that uses it; a launch leaves it ready for the next (the harness's
 * contract, common/step.hpp). A step's first launch in the process sets up what later launches
 * reuse (its watchdog's mailbox, kernel attributes) with calls that a CUDA graph capture forbids, so
 * a launch into a capturing stream is refused until the step has run once outside a capture. */
int worklog_gemm(const char* step, int device, int64_t m, int64_t n, int64_t k, float alpha, const void* a, int64_t lda,
                 const void* b, int64_t ldb, float beta, float* c, int64_t ldc, void* workspace, size_t workspace_bytes,
                 void* stream);

#ifdef __cplusplus
}
#endif

#endif /* WORKLOG_C_API_H */
