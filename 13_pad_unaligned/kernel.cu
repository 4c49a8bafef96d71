// Step 13 (Hopper) — any alignment at full speed: pad once, or read in place.
//
// Change from 12: shapes whose rows TMA cannot describe (K or N not a multiple of 8, or an operand
// whose pointer is not 16-byte aligned) no longer go to 08's element-wise kernel.
//   - TMA and cp.async copy 16-byte chunks that start on 16-byte boundaries; a row of K halves does
//     so only when K is a multiple of 8. One extra column therefore costs 12 (like 10 and 11) the
//     whole Hopper kernel: 08's element-wise path runs at a fraction of the aligned speed. cuBLAS
//     loses as much on the same shapes.
//   - The remedy PyTorch's compiler applies in front of cuBLAS (Inductor's pad_mm pass): copy the
//     operand once into a buffer whose rows are padded with zeros to a multiple of 8 (zeros in the
//     padded columns of A and rows of B add nothing to any sum), then run the aligned kernel on the
//     copy. The copy reads and writes the operand once: for M·N·K in the billions, a few percent of
//     the GEMM (README.md: the arithmetic). Here the copy is a kernel of this file (pad_copy: 16-byte
//     stores into the padded buffer, 16-byte loads shifted by funnel shifts from the unaligned
//     source), the buffers come from the harness's workspace, and the GEMM is 12's: the swap kernel
//     for M ≤ swap_max_m, 11 above.
//   - C with unaligned rows: 11 stores C by TMA and cannot take it. The swap kernel writes C with
//     ordinary stores and takes it as it is; so for M > swap_max_m, up to K = direct_c_max_k (where
//     writing C is most of the work), the swap kernel runs at its widest tile; above it, 11 writes a
//     padded C, which a second copy kernel (unpad_c) copies out, adding beta·C.
//   - Where the copy costs more than it saves: with few rows of A the GEMM itself is one pass over
//     B, and a copy of B would triple its traffic. There (M ≤ in_place_max_m, B's rows unaligned) a
//     kernel of this file reads A and B where they are: cp.async moves the aligned 16-byte chunks
//     that cover each row, the row starts a few halves into its shared-memory row, and mma.sync
//     fragments are read from there (12's swap, on mma.sync; the parts of K added up in a fixed
//     order). README.md derives the rule and where it crosses over.
//
// Aligned shapes copy nothing: they run 12's launch_config, unchanged. Below: 12's kernel.cu copied
// forward but for its names (12_swap_ab/kernel.cu has its header), then step 13's code, from
// "Step 13" on: the copy kernels, the in-place kernel, the decision and the padded hand-off.
// Variants (README.md's tables): the copy for every unaligned shape, C always staged, C always
// written by the swap kernel.

#include <algorithm>
#include <type_traits>

#include "async_copy.cuh"
#include "hopper.cuh"
#include "kernel_utils.cuh"
#include "mma_sync.cuh"
#include "step.hpp"
#include "tensor_map.hpp"
#include "watchdog.cuh"

namespace worklog {
namespace {

using namespace hopper;

// How the tiles are divided among the resident blocks (README.md: the arithmetic of waves).
enum class Decomposition {
  hybrid,         // data-parallel for the whole waves, the remaining tiles in aligned k-parts over all units
  hybrid_even,    // data-parallel for the whole waves but one, the rest's slices evenly over the units
  data_parallel,  // whole tiles only: 10's schedule
  stream_k,       // every tile's slices evenly over the units
  split_k,        // every tile's k-slices in Config::split_k equal parts, one unit each
};

// ---- Configuration ------------------------------------------------------------------------------
// One knob a line; README.md says how each value was chosen. The width of a block tile (rows of C,
// the wgmma's n) is not a knob: launch_config picks it from M (with_width).
struct Config {
  static constexpr int block_tile_n = 128;       // columns of C per block: one 64-row consumer warpgroup per wgmma_m
  static constexpr int block_tile_k = 64;        // K per stage: one 128-byte swizzled row of A, 64 rows of B's boxes
  static constexpr int max_stages = 16;          // as many stages as fit in 227 KiB, but no more than this
  static constexpr int swap_max_m = 128;         // a larger M runs faster as 11 (README.md: the crossover)
  static constexpr int group_rows = 8;           // grouped tile order, as in 07 to 11 (several column tiles: M > width)
  static constexpr int producer_registers = 40;  // after setmaxnreg: the copying thread needs few...
  static constexpr int consumer_registers = 232;  // ...the consumers' accumulators (up to 128) many
  static constexpr Decomposition decomposition = Decomposition::hybrid;  // 11's rule (README.md: measured)
  static constexpr int split_k = 1;                                      // parts per tile, for Decomposition::split_k
  static constexpr int fixup_slices = 16;            // 11's estimate of what splitting costs, for the hybrid rule
  static constexpr int fixup_alone_units = 1 << 30;  // every split tile fixed up by one unit: partials are small
};

// What the configuration and the width imply, and the checks that name the knob at fault.
template <class Config, int width>
struct Layout : Config {
  static constexpr int block_tile_m = width;                        // rows of C per block: the wgmma's n
  static constexpr int consumers = Config::block_tile_n / wgmma_m;  // consumer warpgroups, one per 64 columns
  static constexpr int threads = warpgroup_threads * (1 + consumers);
  static constexpr int a_tile_bytes = width * Config::block_tile_k * 2;          // width rows of 128 bytes: whole atoms
  static constexpr int b_box_bytes = Config::block_tile_k * swizzle_halves * 2;  // one TMA box of B: 64 columns
  static constexpr int b_boxes = Config::block_tile_n / swizzle_halves;          // one per consumer
  static constexpr int stage_bytes = a_tile_bytes + b_boxes * b_box_bytes;
  static constexpr int warps_per_consumer = warpgroup_threads / 32;
  // Shared memory: the stages and their 2·stages barriers, plus slack to align the start to a swizzle atom.
  static constexpr int stages_that_fit = (max_shared_bytes_per_block - swizzle_atom_bytes) / (stage_bytes + 16);
  static constexpr int stages = stages_that_fit < Config::max_stages ? stages_that_fit : Config::max_stages;
  static constexpr int shared_bytes = stages * stage_bytes + 2 * stages * 8 + swizzle_atom_bytes;
  // The accumulators of a consumer: its 64 columns of C × width rows, width / 2 floats per thread, in
  // groups of 8 rows of C (one float4 per thread each). A partial sum stores group i of thread t as
  // float4 i·128 + t; a piece of the fixup is one group of one consumer.
  static constexpr int accumulators = width / 2;
  static constexpr int groups = width / 8;
  static constexpr int pieces = consumers * groups;
  static constexpr int partial_float4s = groups * warpgroup_threads;

  static_assert(width == 8 || width == 16 || width == 32 || width == 64 || width == 128 || width == 256,
                "width must be one of the wgmma widths of hopper.cuh: 8, 16, 32, 64, 128, 256");
  static_assert(Config::block_tile_n % wgmma_m == 0 && consumers >= 1 && consumers <= 2,
                "block_tile_n must be 64 or 128: one or two consumer warpgroups of 64 columns");
  static_assert(b_boxes == consumers, "block_tile_n must be 64 per consumer: one 64-column box of B each");
  static_assert(Config::block_tile_k == swizzle_halves, "block_tile_k must be 64: one 128-byte swizzled row of A");
  static_assert(stages >= 2, "max_stages must be at least 2, and two stages must fit: copies overlap products");
  static_assert(shared_bytes <= max_shared_bytes_per_block, "stages × stage_bytes must fit in 227 KiB");
  static_assert(Config::swap_max_m >= 1, "swap_max_m must be at least 1");
  static_assert(Config::group_rows >= 1, "group_rows must be at least 1 (1: row-major order)");
  // setmaxnreg moves registers between the warpgroups of a block, within what the block was given at
  // launch (11's Layout says why the sum must fit).
  static constexpr int launch_registers = 65536 / threads / 8 * 8 * threads;
  static_assert(Config::producer_registers * warpgroup_threads +
                        Config::consumer_registers * warpgroup_threads * consumers <=
                    launch_registers,
                "producer_registers and consumer_registers must fit the registers the block gets at launch");
  static_assert(Config::decomposition != Decomposition::split_k || Config::split_k >= 2,
                "split_k must be at least 2 with Decomposition::split_k");
  static_assert(Config::fixup_slices >= 0, "fixup_slices must be at least 0");
  static_assert(Config::fixup_alone_units >= 1, "fixup_alone_units must be at least 1 (1: every split tile shared)");
};

// ---- The schedule ---------------------------------------------------------------------------------
// The work is T tiles × k_tiles slices. Tiles [0, sk_tiles) are "split": their iterations
// (tile · k_tiles + slice) are cut into `units` contiguous ranges, unit u's being [begin(u),
// begin(u + 1)): either `split` parts of each tile, or all of them dealt evenly. Block b of
// `blocks` walks units b, b + blocks, … (at most one with the step's rule), then the whole
// tiles sk_tiles + b, + blocks, … in the grouped order. The host fills it in (plan_schedule);
// producer and consumers walk it alike (Walk).
struct Schedule {
  long long tiles;     // tiles of C
  int k_tiles;         // 64-wide k-slices per tile
  long long sk_tiles;  // tiles [0, sk_tiles) are split by the units' ranges
  int units;           // ranges over the split tiles' iterations (0: every tile whole)
  int split;           // parts per split tile (units = sk_tiles · split); 0: the iterations evenly over the units
  long long q;         // iterations per unit (split: per part)...
  int rem;             // ...and how many units (split: parts of a tile) take one more
  int slots_per_unit;  // partial sums a unit can leave: 1 in parts, 2 dealt evenly (the tiles a range begins and ends
                       // in)
  int alone_units;     // Config::fixup_alone_units
  unsigned epoch;      // this launch's number: the value its flags are set to
  float4* partials;    // workspace: one partial per (slot, consumer)
  unsigned* flags;     // workspace: one flag per partial

  // The first iteration of unit u's range; begin(units) is the end of the last one.
  __host__ __device__ long long begin(int u) const {
    long long first = 0;
    // LAB BEGIN: Set first to the first iteration of unit u's range: q iterations to each unit, one more to
    // LAB: each of the first rem. Without parts (split 0) over all the split tiles' iterations; with them, unit u
    // LAB: is part u % split of tile u / split, dealt the same way over that tile's k_tiles slices.
    if (split > 0) {
      const int part = u % split;
      first = (long long)(u / split) * k_tiles + part * q + (part < rem ? part : rem);
    } else {
      first = u * q + (u < rem ? u : rem);
    }
    // LAB END
    return first;
  }
  // The unit whose range holds iteration x: begin() inverted. The first rem units (parts of a tile)
  // take q + 1 iterations, the others q. In 32 bits, as the walk (plan_schedule checks that every
  // iteration number fits): the fixup asks this of every tile it touches, and a search, or a 64-bit
  // division, there cost whole microseconds per launch (README.md).
  __host__ __device__ int unit_of(long long x) const {
    const int per_unit = int(q), longer = rem * (per_unit + 1);  // iterations of the first rem units
    int offset = int(x), first = 0;
    if (split > 0) {
      const int tile = offset / k_tiles;
      offset -= tile * k_tiles;
      first = tile * split;
    }
    return first + (offset < longer ? offset / (per_unit + 1) : rem + (offset - longer) / per_unit);
  }
  // The slot of unit u's partial sum of the tile whose slices it takes from k_begin on: a part has
  // one; a range dealt evenly one for the tile it begins inside (k_begin > 0), one for the tile it
  // ends inside.
  __host__ __device__ int slot(int u, int k_begin) const {
    return slots_per_unit == 1 ? u : 2 * u + (k_begin == 0 ? 1 : 0);
  }
  // The units holding part of `tile`, in the order of their k-slices: first … last.
  __host__ __device__ int first_unit(long long tile) const { return unit_of(tile * k_tiles); }
  __host__ __device__ int last_unit(long long tile) const { return unit_of((tile + 1) * k_tiles - 1); }
  // The slot of unit v's partial of `tile`.
  __host__ __device__ int slot_in(int v, long long tile) const {
    const long long first = begin(v), tile_first = tile * k_tiles;
    return slot(v, int((first > tile_first ? first : tile_first) - tile_first));
  }
  // How a split tile is fixed up: by the unit holding its slice 0 alone, when few units hold part
  // of it (that unit keeps its own sum in registers and adds the others' partials); else shared by
  // all of them, each adding up and writing a share of the tile's pieces.
  __host__ __device__ bool fixed_up_alone(long long tile) const {
    return last_unit(tile) - first_unit(tile) + 1 <= alone_units;
  }
  // The split tiles whose fixup unit u shares once its range is done: the tile the range begins in
  // and the one it ends in, each if other units hold part of it and it is not fixed up alone (-1: none).
  __host__ __device__ void tiles_to_share(int u, long long& first, long long& last) const {
    const long long first_tile = int(begin(u)) / k_tiles, last_tile = int(begin(u + 1) - 1) / k_tiles;
    first = first_unit(first_tile) != last_unit(first_tile) && !fixed_up_alone(first_tile) ? first_tile : -1;
    last = last_tile != first_tile && last_unit(last_tile) != u && !fixed_up_alone(last_tile) ? last_tile : -1;
  }
  // The pieces [first, end) of split tile `tile` that consumer warpgroup `consumer` of unit u adds
  // up and writes: the tile's `pieces` dealt out evenly over its units' `consumers` warpgroups each.
  __host__ __device__ void share(int u, long long tile, int consumer, int consumers, int pieces, int& first,
                                 int& end) const {
    const int c0 = first_unit(tile), shares = (last_unit(tile) - c0 + 1) * consumers;
    const int index = (u - c0) * consumers + consumer;
    first = pieces * index / shares;
    end = pieces * (index + 1) / shares;
  }
};

// One piece of work: slices [k_begin, k_end) of a tile; `unit` is the range it belongs to (-1 for
// a whole tile of the data-parallel part), ends_range when it is the range's last. Tiles and
// iterations are counted in 32 bits here (plan_schedule checks that tiles · k_tiles fits): the
// producer walks with 40 registers, and 64-bit counters cost it a spill and 64-bit divisions.
struct Segment {
  int tile;
  int k_begin, k_end;
  int unit;
  bool ends_range;
};

// Block `block`'s segments, in order: the pieces of its units' ranges, cut at tile boundaries,
// then its whole tiles.
class Walk {
 public:
  __host__ __device__ Walk(const Schedule& s, int block, int blocks)
      : s_(s), blocks_(blocks), unit_(block), whole_tile_(int(s.sk_tiles) + block) {
    enter_unit();
  }
  __host__ __device__ bool next(Segment& segment) {
    if (unit_ < s_.units) {
      const int tile = iteration_ / s_.k_tiles;
      const int k_begin = iteration_ - tile * s_.k_tiles;
      const int left = end_ - iteration_;
      const int k_end = left < s_.k_tiles - k_begin ? k_begin + left : s_.k_tiles;
      segment = {tile, k_begin, k_end, unit_, false};
      iteration_ += k_end - k_begin;
      if (iteration_ == end_) {
        segment.ends_range = true;
        unit_ += blocks_;
        enter_unit();
      }
      return true;
    }
    if (whole_tile_ < s_.tiles) {
      segment = {whole_tile_, 0, s_.k_tiles, -1, false};
      whole_tile_ += blocks_;
      return true;
    }
    return false;
  }

 private:
  // The range of unit_ or, if it is empty, of the next of this block's units that is not.
  __host__ __device__ void enter_unit() {
    for (; unit_ < s_.units; unit_ += blocks_) {
      iteration_ = int(s_.begin(unit_));
      end_ = int(s_.begin(unit_ + 1));
      if (iteration_ < end_) return;
    }
  }
  const Schedule& s_;
  int blocks_, unit_;
  int whole_tile_, iteration_ = 0, end_ = 0;  // < tiles · k_tiles + blocks: 32 bits (plan_schedule)
};

// ---- Descriptors ----------------------------------------------------------------------------------

// A shared-memory matrix descriptor for a tile stored with the 128-byte swizzle that TMA wrote
// (hopper.cuh: rows of 128 bytes in 1024-byte atoms, which must start 1024-byte aligned). Fields,
// in 16-byte units: start address (bits 0-13), leading-dimension byte offset (16-29),
// stride-dimension byte offset (32-45); swizzle mode 1 = 128 B (bits 62-63). What the two offsets
// mean depends on the operand's major-ness (README.md):
//   K-major (A's tile, wgmma's B here):  stride = 1024 B from one 8-row group to the next; leading unused (set to 1).
//   MN-major (B's tile, wgmma's A here): stride = 1024 B from one group of 8 k-rows to the next; leading = bytes from
//                                        one 64-element-wide column block to the next.
__device__ __forceinline__ std::uint64_t matrix_descriptor(const void* tile, std::uint32_t leading_bytes,
                                                           std::uint32_t stride_bytes) {
  return std::uint64_t((shared_address(tile) & 0x3FFFF) >> 4) | std::uint64_t((leading_bytes >> 4) & 0x3FFF) << 16 |
         std::uint64_t((stride_bytes >> 4) & 0x3FFF) << 32 | std::uint64_t(1) << 62;
}

// The descriptors of one consumer's operands in stage 0, k-step 0. wgmma's A operand is this
// consumer's 64 columns of B (its own 64-column box, MN-major: 128-byte rows of 64 n, one per k); its
// B operand is A's tile (K-major: width rows of 64 k).
struct StageDescriptors {
  std::uint64_t b, a;
};
template <class L>
__device__ __forceinline__ StageDescriptors stage0_descriptors(const unsigned char* a_tile0,
                                                               const unsigned char* b_tile0, int consumer) {
  // LAB BEGIN: The swapped operands. Build the descriptor of B's box (MN-major: the leading offset is the
  // LAB: distance to a next 64-column box, unused with one box, the stride one atom of 8 k-rows) and the one
  // LAB: of A's tile (K-major: leading unused, stride one atom of 8 rows).
  return {matrix_descriptor(b_tile0 + consumer * L::b_box_bytes, L::b_box_bytes, swizzle_atom_bytes),
          matrix_descriptor(a_tile0, 16, swizzle_atom_bytes)};
  // LAB END
}

// Issues the products of one stage for one consumer warpgroup: block_tile_k / 16 wgmma.m64n{width}k16
// of Cᵀ = Bᵀ·Aᵀ, from the stage's descriptors. k-step kk lies 16 rows of 128 bytes further into B's
// box and 32 bytes further into each row of A's tile: an addition to the descriptors' start address
// (in 16-byte units, which nothing carries out of: shared memory is below 256 KiB). With a narrow n,
// a wgmma is a few cycles of tensor-core work, so the instructions around it set the pace: nothing
// here is computed per k-step but that addition (README.md: the counters). The caller commits the
// group and waits for it.
template <class L>
__device__ __forceinline__ void multiply_stage(float (&acc)[L::accumulators], StageDescriptors stage) {
  wgmma_fence();
  fence_registers(acc);
#pragma unroll
  for (int kk = 0; kk < L::block_tile_k / wgmma_k; ++kk)
    wgmma_m64nk16_a_mn_major<L::block_tile_m>(acc, stage.b + (kk * wgmma_k * swizzle_bytes >> 4),
                                              stage.a + (kk * wgmma_k * 2 >> 4));
}

// ---- Write back -----------------------------------------------------------------------------------

// Writes `groups` groups of 8 rows of C from one consumer's accumulators, transposed: the consumer
// holds Cᵀ's rows col0 … col0 + 63 (columns of C) × columns row0 … (rows of C) in wgmma's layout
// (warp w: rows 16w … 16w + 15 of its 64; in group jj, lane l holds columns 8jj + 2(l % 4) + {0, 1} of
// row 16w + l/4, v[4jj], v[4jj + 1], and of the row 8 below, v[4jj + 2], v[4jj + 3]). So element
// (r, c) of the accumulators is C[row0 + c][col0 + r]: the 8 lanes of a lane group l % 4 write 8
// consecutive floats of one row of C (32 bytes, one sector). alpha·v + beta·C (beta == 0: C is not
// read), only inside C. No staging: C is a few rows, and every byte of DRAM time goes to B.
template <int groups>
__device__ __forceinline__ void store_transposed(const float (&v)[4 * groups], const GemmProblem<__half>& p,
                                                 long long row0, long long col0) {
  const int t = threadIdx.x % warpgroup_threads, warp = t / 32, lane = t % 32;
  // LAB BEGIN: Store v transposed: element i of group jj (i = 2·half + e) belongs to row row0 + 8jj + 2(lane % 4)
  // LAB: + e and column col0 + 16·warp + lane / 4 + 8·half of C; store_c only where both lie inside C.
#pragma unroll
  for (int jj = 0; jj < groups; ++jj) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const long long col = col0 + warp * 16 + lane / 4 + half * 8;
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const long long row = row0 + jj * 8 + 2 * (lane % 4) + e;
        const bool in_c = row < p.m && col < p.n;  // only what lies inside C is written
        if (in_c) store_c(p.c + row * p.n + col, v[4 * jj + 2 * half + e], p.alpha, p.beta);
      }
    }
  }
  // LAB END
}

// ---- The fixup ------------------------------------------------------------------------------------

// Stores one consumer's accumulators as a partial sum: group i of thread t at float4 i·128 + t, so
// that each store of the warpgroup is 2 KiB contiguous. L2 only (__stcg): another SM reads it.
template <class L>
__device__ __forceinline__ void store_partial(const float (&acc)[L::accumulators], float4* partial) {
  const int t = threadIdx.x % warpgroup_threads;
#pragma unroll
  for (int i = 0; i < L::groups; ++i)
    __stcg(partial + i * warpgroup_threads + t,
           make_float4(acc[4 * i], acc[4 * i + 1], acc[4 * i + 2], acc[4 * i + 3]));
}

// What the watchdog says when a wait never ends (watchdog.cuh).
struct FullWait {
  static constexpr WaitSite site{
      "13_pad_unaligned", "consumer", "full",
      "no copy arrived: are the stage's bytes announced (mbarrier_arrive_expect_bytes) and its "
      "TMA boxes issued?"};
};
struct EmptyWait {
  static constexpr WaitSite site{"13_pad_unaligned", "producer", "empty",
                                 "the stage was never released: does one lane of every consumer warp arrive on "
                                 "empty[s], as its count at init says?"};
};
struct FlagWait {
  static constexpr WaitSite site{
      "13_pad_unaligned", "consumer", "flags",
      "a partial sum was never published: do writer and reader compute the same slot (Schedule::slot), "
      "does every unit publish its partials before it waits for others', are all blocks resident?"};
};

// ---- The kernel -----------------------------------------------------------------------------------

template <class Config, int width>
__global__ void __launch_bounds__(Layout<Config, width>::threads, 1)
    swap_ab_gemm(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
                 const __grid_constant__ GemmProblem<__half> p, const __grid_constant__ Schedule s) {
  using L = Layout<Config, width>;
  constexpr int block_tile_n = L::block_tile_n, block_tile_k = L::block_tile_k, stages = L::stages;
  extern __shared__ unsigned char shared_raw[];
  // Swizzle atoms must be 1024-byte aligned: round the dynamic shared memory's start up.
  unsigned char* shared =
      reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(shared_raw) + swizzle_atom_bytes - 1) &
                                       ~std::uintptr_t(swizzle_atom_bytes - 1));
  auto a_tile = [&](int stage) { return shared + stage * L::stage_bytes; };
  auto b_tile = [&](int stage) { return shared + stage * L::stage_bytes + L::a_tile_bytes; };
  std::uint64_t* full = reinterpret_cast<std::uint64_t*>(shared + stages * L::stage_bytes);
  std::uint64_t* empty = full + stages;

  // A block tile is width rows × 128 columns of C; tile t is the t-th in grouped order (one row of
  // tiles unless M > width, a variant's case).
  const int tiles_m = int(ceil_div(p.m, width)), tiles_n = int(ceil_div(p.n, block_tile_n));
  auto tile_origin = [&](long long t) {
    const TileIndex tile = grouped_tile(t, tiles_m, tiles_n, L::group_rows);
    return TileOrigin{(long long)tile.row * width, (long long)tile.col * block_tile_n};
  };

  if (threadIdx.x == 0) {
    for (int stage = 0; stage < stages; ++stage) {
      mbarrier_init(&full[stage], 1);                                      // the producer's arrive, plus bytes
      mbarrier_init(&empty[stage], L::consumers * L::warps_per_consumer);  // every consumer warp
    }
    fence_barrier_init();
  }
  __syncthreads();

  const int warpgroup = threadIdx.x / warpgroup_threads;
  if (warpgroup == 0) {
    // ---- Producer: copies for every segment of the walk, `stages` slices ahead of the consumers ---
    setmaxnreg_decrease<Config::producer_registers>();
    if (threadIdx.x == 0) {
      int stage = 0, phase = 0;  // the ring of stages, over all segments: phase flips at each wrap
      Segment segment;
      for (Walk walk(s, blockIdx.x, gridDim.x); walk.next(segment);) {
        const TileOrigin origin = tile_origin(segment.tile);
        for (int kt = segment.k_begin; kt < segment.k_end; ++kt) {
          mbarrier_wait<EmptyWait>(&empty[stage], phase ^ 1, stage);  // first use: parity 1 counts as complete
          const int k0 = kt * block_tile_k;
          // A's box: width rows × 64 k (rows below M arrive as zeros); B's: 64 k × 64 columns per consumer.
          mbarrier_arrive_expect_bytes(&full[stage], L::stage_bytes);
          tma_load_2d(a_tile(stage), a_map, &full[stage], k0, int(origin.row));
#pragma unroll
          for (int j = 0; j < L::b_boxes; ++j)
            tma_load_2d(b_tile(stage) + j * L::b_box_bytes, b_map, &full[stage], int(origin.col) + j * swizzle_halves,
                        k0);
          if (++stage == stages) stage = 0, phase ^= 1;
        }
      }
    }
  } else {
    // ---- Consumers: for each segment, the K loop, then the write-back or the fixup -----------------
    setmaxnreg_increase<Config::consumer_registers>();
    const int consumer = warpgroup - 1;  // columns consumer·64 … +63 of the block tile
    const int t = threadIdx.x % warpgroup_threads, lane = threadIdx.x % 32;
    const int barrier = 1 + consumer;  // this warpgroup's named barrier
    auto release = [&](int stage) {
      if (lane == 0) mbarrier_arrive(&empty[stage]);
    };
    auto partial = [&](int slot, int half) { return s.partials + (slot * L::consumers + half) * L::partial_float4s; };
    auto flag = [&](int slot, int half) { return s.flags + slot * L::consumers + half; };
    // Publishes this consumer's partials stored since the last call (`pending`, bit b: the unit's
    // slot of type b, Schedule::slot): every thread's stores, then the flags (release).
    auto publish = [&](int u, int& pending) {
      if (pending == 0) return;
      named_barrier_sync<warpgroup_threads>(barrier);
      if (t == 0)
        for (int type = 0; type < 2; ++type)
          if (pending & (1 << type)) store_release_gpu(flag(s.slot(u, 1) + type, consumer), s.epoch);
      pending = 0;
    };

    // The shared fixup of split tile `tile` by unit u: the tile's contributors are units c0 … c1, in
    // the order of their k-slices; their consumer warpgroups share out its pieces (one group of 8
    // rows of C of one consumer's 64 columns each), and each adds up the partials of its pieces, in
    // that order, and writes them to C.
    auto fix_up_share = [&](int u, long long tile) {
      const int c0 = s.first_unit(tile), c1 = s.last_unit(tile), n = c1 - c0 + 1;
      int first_piece, end_piece;
      s.share(u, tile, consumer, L::consumers, L::pieces, first_piece, end_piece);
      if (first_piece == end_piece) return;
      // Every partial of the tile must be there: its flags, waited for by parallel threads.
      for (int i = t; i < n * L::consumers; i += warpgroup_threads) {
        const int v = c0 + i / L::consumers, slot = s.slot_in(v, tile);
        flag_wait<FlagWait>(flag(slot, i % L::consumers), s.epoch, slot);
      }
      named_barrier_sync<warpgroup_threads>(barrier);
      const TileOrigin origin = tile_origin(tile);
      for (int piece = first_piece; piece < end_piece; ++piece) {
        const int half = piece / L::groups, group = piece % L::groups;
        float sum[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        for (int v0 = c0; v0 <= c1; v0 += 4) {  // 4 partials' loads in flight, then their sums in order
          float4 part[4] = {};
#pragma unroll
          for (int b = 0; b < 4; ++b)
            if (v0 + b <= c1) part[b] = __ldcg(partial(s.slot_in(v0 + b, tile), half) + group * warpgroup_threads + t);
#pragma unroll
          for (int b = 0; b < 4; ++b)
            if (v0 + b <= c1) {  // the loaded partials only, in order
              sum[0] += part[b].x;
              sum[1] += part[b].y;
              sum[2] += part[b].z;
              sum[3] += part[b].w;
            }
        }
        store_transposed<1>(sum, p, origin.row + group * 8, origin.col + half * wgmma_m);
      }
    };

    // The fixup by one unit alone: unit u holds slice 0 of `tile` and adds the partials of the units
    // after it, in order, to its own accumulators.
    auto fix_up_alone = [&](int u, long long tile, float(&acc)[L::accumulators]) {
      const int c1 = s.last_unit(tile);
      for (int i = t; i < c1 - u; i += warpgroup_threads) {
        const int v = u + 1 + i, slot = s.slot_in(v, tile);
        flag_wait<FlagWait>(flag(slot, consumer), s.epoch, slot);
      }
      named_barrier_sync<warpgroup_threads>(barrier);
      constexpr int in_flight = L::groups < 8 ? L::groups : 8;
      for (int v = u + 1; v <= c1; ++v) {
        const float4* source = partial(s.slot_in(v, tile), consumer) + t;
#pragma unroll
        for (int batch = 0; batch < L::groups / in_flight; ++batch) {  // `in_flight` loads, then their sums
          float4 part[in_flight];
#pragma unroll
          for (int i = 0; i < in_flight; ++i) part[i] = __ldcg(source + (in_flight * batch + i) * warpgroup_threads);
#pragma unroll
          for (int i = 0; i < in_flight; ++i) {
            const int a = 4 * (in_flight * batch + i);
            acc[a] += part[i].x;
            acc[a + 1] += part[i].y;
            acc[a + 2] += part[i].z;
            acc[a + 3] += part[i].w;
          }
        }
      }
    };

    // The ring of stages, as the producer walks it; the descriptors of stage 0 (stage s: s·stage_bytes further).
    int stage = 0, phase = 0, previous = 0;
    const StageDescriptors stage0 = stage0_descriptors<L>(a_tile(0), b_tile(0), consumer);
    constexpr std::uint64_t stage_step = L::stage_bytes >> 4;
    int pending = 0;  // partials of the current unit not yet published (publish)
    float acc[L::accumulators];
    Segment segment;
    for (Walk walk(s, blockIdx.x, gridDim.x); walk.next(segment);) {
      const TileOrigin origin = tile_origin(segment.tile);
#pragma unroll
      for (int i = 0; i < L::accumulators; ++i) acc[i] = 0.0f;
      for (int kt = segment.k_begin; kt < segment.k_end; ++kt) {
        mbarrier_wait<FullWait>(&full[stage], phase, stage);
        multiply_stage<L>(acc, {stage0.b + stage * stage_step, stage0.a + stage * stage_step});
        wgmma_commit_group();
        wgmma_wait_group<1>();  // the previous slice's products are done: release its stage
        fence_registers(acc);
        if (kt > segment.k_begin) release(previous);
        previous = stage;
        if (++stage == stages) stage = 0, phase ^= 1;
      }
      wgmma_wait_group<0>();
      fence_registers(acc);
      release(previous);  // the segment's last slice; the producer is already on the next

      const long long col0 = origin.col + consumer * wgmma_m;
      if (segment.k_begin == 0 && segment.k_end == s.k_tiles) {
        // A whole tile: alpha·acc + beta·C, only inside C.
        store_transposed<L::groups>(acc, p, origin.row, col0);
      } else if (segment.k_begin == 0 && s.fixed_up_alone(segment.tile)) {
        // This unit holds slice 0 of a tile that few units share, and its range ends here: it
        // publishes what it left for others (before waiting, so that no unit waits on a waiting
        // one), adds the others' partials to its sum, and writes the tile.
        publish(segment.unit, pending);
        fix_up_alone(segment.unit, segment.tile, acc);
        store_transposed<L::groups>(acc, p, origin.row, col0);
      } else {
        // Part of a split tile: the partial goes to the workspace, published when the range ends.
        const int slot = s.slot(segment.unit, segment.k_begin);
        store_partial<L>(acc, partial(slot, consumer));
        pending |= 1 << (slot - s.slot(segment.unit, 1));
      }
      if (segment.ends_range) {
        // The range is done: publish, then share the fixup of the split tiles it began or ended in.
        publish(segment.unit, pending);
        long long first, last;
        s.tiles_to_share(segment.unit, first, last);
#pragma unroll 1
        for (int i = 0; i < 2; ++i) {
          const long long tile = i == 0 ? first : last;
          if (tile >= 0) fix_up_share(segment.unit, tile);
        }
      }
    }
  }
}

// ---- Launch -----------------------------------------------------------------------------------------

// Larger M goes to this step's kernel, shapes TMA cannot describe to that one.
constexpr const char* large_m_step = "11_stream_k";
constexpr const char* unaligned_fallback = "08_mma_ldmatrix";

// TMA needs A's and B's base and row stride 16-byte aligned (K and N multiples of 8). C is written
// with ordinary stores, which need nothing.
bool tma_path_possible(const GemmProblem<__half>& p) { return tma_describable(p.a, p.k) && tma_describable(p.b, p.n); }

// A step linked into this program (add_worklog_step(... FALLBACK)).
const Step<__half>& linked_step(const char* name) {
  const RegisteredStep* step = find_step(name);
  if (!step || !step->fp16) throw std::logic_error(std::string(name) + " is not linked into this program");
  return *step->fp16;
}

// Calls f with the width of block tile for M: the narrowest of the menu that holds M rows (every
// width the wgmma wrapper offers), 256 for any M above.
template <class F>
decltype(auto) with_width(int m, F&& f) {
  if (m <= 8) return f(std::integral_constant<int, 8>{});
  if (m <= 16) return f(std::integral_constant<int, 16>{});
  if (m <= 32) return f(std::integral_constant<int, 32>{});
  if (m <= 64) return f(std::integral_constant<int, 64>{});
  if (m <= 128) return f(std::integral_constant<int, 128>{});
  return f(std::integral_constant<int, 256>{});
}

// As many blocks as can be resident at once (one per SM: each takes most of the shared memory).
// Every unit must be resident: a unit waits for others' partials.
template <class Variant, int width>
int resident_blocks() {
  static const int count = [] {
    using L = Layout<Variant, width>;
    constexpr auto kernel = swap_ab_gemm<Variant, width>;
    allow_dynamic_shared_memory<kernel>(L::shared_bytes);
    int device = 0, sms = 0, per_sm = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, L::threads, L::shared_bytes));
    if (per_sm < 1) throw std::runtime_error("no block of this kernel fits on an SM");
    return per_sm * sms;
  }();
  return count;
}

// Which tiles are split, and how: sk_tiles (the first, in grouped order), each in `split` parts of
// its k-slices, or (split 0) with all their iterations dealt evenly over the units.
struct Division {
  long long sk_tiles;
  int split;
};

// The decomposition rule (README.md derives and measures it). T tiles on G resident blocks,
// T = w·G + r, k slices per tile. Data-parallel, the last wave keeps r blocks busy for k slices
// while G − r idle. Cutting each of the r tiles into s = ⌊G / r⌋ equal k-parts gives r·s ≤ G units
// of ⌈k / s⌉ slices: the last wave shrinks to ⌈k / s⌉ slices plus a fixup, which costs about
// fixup_slices. So: r = 0, s < 2, or a saving k − ⌈k / s⌉ no larger than fixup_slices: every tile
// whole. The parts are aligned (part p of every split tile covers the same slices), so that the units
// running at the same moment read the same k-slices of A and B, as whole tiles do.
template <class Variant>
Division divide(long long tiles, int k_tiles, int blocks) {
  const long long waves = tiles / blocks, remainder = tiles % blocks;
  constexpr long long fixup = Variant::fixup_slices;
  switch (Variant::decomposition) {
    case Decomposition::data_parallel:
      return {0, 0};
    case Decomposition::stream_k:
      return {tiles, 0};
    case Decomposition::split_k:
      return {tiles, std::min(Variant::split_k, k_tiles)};
    case Decomposition::hybrid_even:
      // The rule first tried: the r remaining tiles plus one full wave, their iterations evenly over
      // the G units (each between one and two tiles' worth), when that saves k·(G − r)/G slices.
      if (remainder == 0 || k_tiles * (blocks - remainder) <= fixup * blocks) return {0, 0};
      return {waves >= 1 ? remainder + blocks : remainder, 0};
    case Decomposition::hybrid:
      break;
  }
  if (remainder == 0) return {0, 0};
  const int parts = int(std::min<long long>(blocks / remainder, k_tiles));
  if (parts < 2 || k_tiles - ceil_div(k_tiles, parts) <= fixup) return {0, 0};
  return {remainder, parts};
}

// The schedule of a shape (without its workspace pointers and epoch), the blocks to launch and the
// workspace it needs.
struct Plan {
  Schedule schedule;
  int blocks;
  std::size_t partial_bytes, flag_bytes;
};

template <class Variant, int width>
Plan plan_schedule(int m, int n, int k, int resident) {
  using L = Layout<Variant, width>;
  Schedule s{};
  s.tiles = ceil_div(m, width) * ceil_div(n, L::block_tile_n);
  s.k_tiles = int(ceil_div(k, L::block_tile_k));
  // The walk counts tiles and iterations in 32 bits (Walk, as in 11).
  if (s.tiles * s.k_tiles + resident > 2147483647LL)
    throw std::length_error("13_pad_unaligned: more than 2^31 tile iterations");
  const Division division = divide<Variant>(s.tiles, s.k_tiles, resident);
  s.sk_tiles = division.sk_tiles;
  const long long iterations = s.sk_tiles * s.k_tiles;
  if (division.split > 0) {  // every part at least one slice (split ≤ k_tiles)
    s.split = division.split;
    if (s.sk_tiles * s.split > 2147483647LL / 2) throw std::length_error("too many tiles for split-K");
    s.units = int(s.sk_tiles * s.split);
    s.q = s.k_tiles / s.split;
    s.rem = s.k_tiles % s.split;
    s.slots_per_unit = 1;  // a part lies inside one tile
  } else if (s.sk_tiles > 0) {
    s.units = int(std::min<long long>(resident, iterations));  // every unit at least one iteration
    s.q = iterations / s.units;
    s.rem = int(iterations % s.units);
    s.slots_per_unit = 2;
  }
  s.alone_units = Variant::fixup_alone_units;
  Plan plan{};
  plan.blocks = int(std::min<long long>(resident, std::max<long long>(s.units, s.tiles - s.sk_tiles)));
  // A unit waits for the other parts of its tile, which may come in a later round of units: that
  // cannot deadlock while at least `split` blocks run (11's README).
  if (s.split > 0 && plan.blocks < s.split) throw std::runtime_error("fewer resident blocks than split-K parts");
  const std::size_t partials = std::size_t(s.units) * s.slots_per_unit * L::consumers;
  plan.partial_bytes = partials * L::partial_float4s * sizeof(float4);
  plan.flag_bytes = partials * sizeof(unsigned);
  plan.schedule = s;
  return plan;
}

// Bytes of workspace for a shape: 11's for the shapes it takes; here one partial (64 × width FP32)
// and one flag per (slot, consumer). The step's aligned parts: one slot per unit, at most one unit
// per resident block: at most 132 × 2 × 32 KiB = 8.25 MiB at width 128 on a GPU of 132 SMs, 132 × 2
// × 4 KiB = 1 MiB at width 16. The even deal (a variant): two slots per unit, twice that; swap_all
// at width 256: 64 KiB partials, 33 MiB.
template <class Variant>
std::size_t workspace_bytes(Shape shape) {
  if (shape.k % 8 != 0 || shape.n % 8 != 0) return 0;  // the fallback's shapes
  if (shape.m > Variant::swap_max_m) return linked_step(large_m_step).workspace_bytes(shape);
  return with_width(shape.m, [&](auto width) {
    const Plan plan = plan_schedule<Variant, width>(shape.m, shape.n, shape.k, resident_blocks<Variant, width>());
    return plan.partial_bytes + plan.flag_bytes;
  });
}

// Every launch stores a new epoch in the flags it sets, and waits for flags that hold it: what a
// launch before it left in the workspace is never taken for this one's, and nothing is reset.
unsigned next_epoch() {
  static unsigned epoch = 0;
  if (++epoch == 0) ++epoch;  // 0 is the zeroed workspace's value
  return epoch;
}

// A and B as the copy engine reads them: A's rows of a_cols halves, B's b_rows rows of b_cols. Here
// the operands themselves (K, K, N); a later step hands over padded copies, whose rows are longer
// than the problem's K and N (C, written with ordinary stores, keeps the problem's N).
struct SwapOperands {
  const __half* a;
  long long a_cols;
  const __half* b;
  long long b_rows, b_cols;
};
SwapOperands operands_of(const GemmProblem<__half>& p) { return {p.a, p.k, p.b, p.k, p.n}; }

template <class Variant, int width>
void launch_swapped(const GemmProblem<__half>& p, const SwapOperands& operands, cudaStream_t stream) {
  using L = Layout<Variant, width>;
  constexpr auto kernel = swap_ab_gemm<Variant, width>;
  arm_watchdog();
  Plan plan = plan_schedule<Variant, width>(p.m, p.n, p.k, resident_blocks<Variant, width>());
  Schedule& s = plan.schedule;
  if (s.units > 0) {
    const std::size_t needed = plan.partial_bytes + plan.flag_bytes;
    if (!p.workspace || p.workspace_bytes < needed)
      throw std::runtime_error(
          "13_pad_unaligned: this shape needs " + std::to_string(needed) + " bytes of workspace, the " + "launch has " +
          std::to_string(p.workspace ? p.workspace_bytes : 0) + " (Step::needs_workspace, GemmProblem::workspace)");
    s.partials = static_cast<float4*>(p.workspace);
    s.flags = reinterpret_cast<unsigned*>(static_cast<unsigned char*>(p.workspace) + plan.partial_bytes);
    s.epoch = next_epoch();
  }
  // A: M rows, copied in boxes of width rows × 64 k. B: boxes of 64 k × 64 columns.
  const CUtensorMap a_map = make_tensor_map_2d(operands.a, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, p.m, operands.a_cols,
                                               width, swizzle_halves, CU_TENSOR_MAP_SWIZZLE_128B);
  const CUtensorMap b_map =
      make_tensor_map_2d(operands.b, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, operands.b_rows, operands.b_cols,
                         L::block_tile_k, swizzle_halves, CU_TENSOR_MAP_SWIZZLE_128B);
  kernel<<<plan.blocks, L::threads, L::shared_bytes, stream>>>(a_map, b_map, p, s);
  WORKLOG_CHECK_LAUNCH();
}

template <class Variant>
void launch_config(const GemmProblem<__half>& p, cudaStream_t stream) {
  if (!tma_path_possible(p)) return linked_step(unaligned_fallback).launch(p, stream);
  if (p.m > Variant::swap_max_m) return linked_step(large_m_step).launch(p, stream);
  with_width(p.m, [&](auto width) { launch_swapped<Variant, width>(p, operands_of(p), stream); });
}

// (12's variants, the swap for every M and other schedules, are 12's: not copied.)

// =================================================================================================
// Step 13: operands whose rows TMA cannot describe. Everything above is 12's, copied forward; what
// follows decides, for such a shape, whether to pad its operands once into the workspace and run the
// aligned kernels on the copies, or to read them where they are.
// =================================================================================================

// ---- Configuration (13) ---------------------------------------------------------------------------
// The knobs of the decision and of the two new kernels; README.md derives the first two.
struct PadConfig {
  static constexpr int in_place_max_m = 32;  // B's rows unaligned and M up to this: read in place (README.md: measured)
  static constexpr int direct_c_max_k = 4096;    // M > swap_max_m and C's rows unaligned: up to this K the swap kernel
                                                 // writes C with ordinary stores; above it, 11 into a padded C
  static constexpr int copy_threads = 256;       // threads per block of the copy kernels
  static constexpr int copy_blocks_per_sm = 8;   // blocks per SM of the copy kernels (a grid-stride loop does the rest)
  static constexpr int in_place_tile_n = 128;    // columns of C per in-place block: 32 per warp, 4 warps
  static constexpr int in_place_tile_k = 32;     // k rows per stage: two k-steps of 16
  static constexpr int in_place_stages = 6;      // stages of the in-place pipeline: 5 slices of B in flight
  static constexpr int in_place_max_split = 16;  // parts in k per column tile, at most
};

constexpr int halves_per_chunk = 8;             // one 16-byte chunk: what TMA, cp.async and the copy's stores move
constexpr std::size_t scratch_alignment = 256;  // every buffer in the workspace starts on this boundary

static_assert(PadConfig::in_place_max_m >= 0 && PadConfig::in_place_max_m <= 128,
              "in_place_max_m must be at most 128: the widest in-place tile (with_in_place_width)");
static_assert(PadConfig::in_place_max_m <= Config::swap_max_m,
              "in_place_max_m must not exceed swap_max_m: above swap_max_m the padded path is 11's");
static_assert(PadConfig::direct_c_max_k >= 0, "direct_c_max_k must be at least 0 (0: C always staged when unaligned)");
static_assert(PadConfig::copy_threads % 32 == 0, "copy_threads must be whole warps");
static_assert(PadConfig::in_place_tile_n == 4 * 32, "in_place_tile_n must be 128: 4 warps of 32 columns (2 mma m16)");
static_assert(PadConfig::in_place_tile_k == 32, "in_place_tile_k must be 32: two k-steps of the m16n8k16 mma");
static_assert(PadConfig::in_place_stages >= 2, "in_place_stages must be at least 2: copies overlap products");
static_assert(PadConfig::in_place_max_split >= 1, "in_place_max_split must be at least 1 (1: no split in k)");

long long round_up_8(long long x) { return ceil_div(x, halves_per_chunk) * halves_per_chunk; }
std::size_t round_up_scratch(std::size_t bytes) {
  return (bytes + scratch_alignment - 1) / scratch_alignment * scratch_alignment;
}

// ---- The copy into a padded operand -------------------------------------------------------------------

// The 8 halves at `source` (2-byte aligned, not 16) from the two aligned 16-byte chunks that hold
// them: words q … q + 4 of the 8 (q = the source's offset in words), each output word the funnel of
// two neighbours, shifted by 16 bits when the source sits in the middle of a word.
__device__ __forceinline__ uint4 load_8_halves_unaligned(const __half* source) {
  const std::uintptr_t address = reinterpret_cast<std::uintptr_t>(source);
  const uint4* window = reinterpret_cast<const uint4*>(address & ~std::uintptr_t(15));
  const uint4 lo = __ldg(window), hi = __ldg(window + 1);
  const unsigned w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
  const int q = int(address & 15) / 4;
  const unsigned shift = (address & 2) ? 16 : 0;
  unsigned out[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    unsigned low = w[i], high = w[i + 1];
#pragma unroll
    for (int j = 1; j < 4; ++j)  // registers, not a local array: every index is a constant
      if (q == j) {
        low = w[i + j];
        high = w[i + j + 1];
      }
    out[i] = __funnelshift_r(low, high, shift);
  }
  return make_uint4(out[0], out[1], out[2], out[3]);
}

// Copies a rows × cols row-major FP16 matrix at any 2-byte-aligned address into the rows_out ×
// cols_out one at `padded` (16-byte aligned, cols_out a multiple of 8), zeros in the rows and columns
// beyond. One 16-byte chunk of the destination per thread and turn of the grid-stride loop: a 16-byte
// store, fed by one 16-byte load where the source chunk is aligned, two (and funnel shifts) where it
// is not, element by element where the chunk crosses the end of a row or of the matrix. Bound by
// DRAM: it reads the source once and writes the copy once.
__global__ void __launch_bounds__(PadConfig::copy_threads)
    pad_copy(const __half* __restrict__ source, long long rows, long long cols, __half* __restrict__ padded,
             long long rows_out, long long cols_out) {
  const long long chunks_per_row = cols_out / halves_per_chunk, chunks = rows_out * chunks_per_row;
  const std::uintptr_t begin = reinterpret_cast<std::uintptr_t>(source),
                       end = reinterpret_cast<std::uintptr_t>(source + rows * cols);
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < chunks;
       i += (long long)gridDim.x * blockDim.x) {
    const long long row = i / chunks_per_row, col = i % chunks_per_row * halves_per_chunk;
    uint4 chunk = make_uint4(0, 0, 0, 0);  // +0.0 in every half
    if (row < rows && col < cols) {
      const __half* from = source + row * cols + col;
      const std::uintptr_t address = reinterpret_cast<std::uintptr_t>(from), window = address & ~std::uintptr_t(15);
      if (col + halves_per_chunk <= cols && address == window) {
        chunk = __ldg(reinterpret_cast<const uint4*>(from));
      } else if (col + halves_per_chunk <= cols && window >= begin && window + 32 <= end) {
        chunk = load_8_halves_unaligned(from);
      } else {  // the row's last chunk, or one whose aligned window leaves the matrix
        unsigned short h[halves_per_chunk];
#pragma unroll
        for (int e = 0; e < halves_per_chunk; ++e) h[e] = col + e < cols ? __half_as_ushort(from[e]) : 0;
        chunk = make_uint4(h[0] | unsigned(h[1]) << 16, h[2] | unsigned(h[3]) << 16, h[4] | unsigned(h[5]) << 16,
                           h[6] | unsigned(h[7]) << 16);
      }
    }
    *reinterpret_cast<uint4*>(padded + row * cols_out + col) = chunk;
  }
}

// C = padded + beta·C on the m × n of C (the padded C holds alpha·A·B, ld_padded floats a row; beta
// == 0: C is not read). One element per thread and turn; both reads and the write coalesce.
__global__ void __launch_bounds__(PadConfig::copy_threads)
    unpad_c(const float* __restrict__ padded, long long ld_padded, float* c, int m, int n, float beta) {
  const long long elements = (long long)m * n;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < elements;
       i += (long long)gridDim.x * blockDim.x) {
    const long long row = i / n, col = i % n;
    const float value = padded[row * ld_padded + col];
    c[i] = beta == 0.0f ? value : value + beta * c[i];
  }
}

// The grid of a copy kernel: enough blocks for every chunk, at most copy_blocks_per_sm per SM.
unsigned copy_grid(long long work) {
  static const int sms = [] {
    int device = 0, count = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
    return count;
  }();
  const long long blocks = ceil_div(work, PadConfig::copy_threads);
  return unsigned(std::max<long long>(1, std::min<long long>(blocks, (long long)sms * PadConfig::copy_blocks_per_sm)));
}

void launch_pad_copy(const __half* source, long long rows, long long cols, __half* padded, long long rows_out,
                     long long cols_out, cudaStream_t stream) {
  pad_copy<<<copy_grid(rows_out * cols_out / halves_per_chunk), PadConfig::copy_threads, 0, stream>>>(
      source, rows, cols, padded, rows_out, cols_out);
  WORKLOG_CHECK_LAUNCH();
}

// ---- In place: few rows of A, B's rows unaligned -----------------------------------------------------
// 12's swap (Cᵀ = Bᵀ·Aᵀ, M as the instruction's n) on mma.sync, with tiles staged by cp.async from the
// aligned 16-byte chunks that cover each unaligned row: a row of the tile then begins `shift` halves
// (0 … 7) into its row of shared memory, and the fragments are read from there two bytes at a time,
// since ldmatrix needs 16-byte rows. Nothing is copied in DRAM: B is read once, as by 12's kernel.
// Each block takes 128 columns of C × all M rows (M ≤ width) over one part of K; the parts of a
// column tile are added up in a fixed order by the block that finishes last.

template <int width>
struct InPlaceLayout : PadConfig {
  static constexpr int threads = 128;       // 4 warps, each 32 columns of C: two 16-row blocks of Bᵀ
  static constexpr int pieces = width / 8;  // mma n8 pieces of the M side
  static constexpr int b_chunks = in_place_tile_n / halves_per_chunk + 1;  // a row of 128 halves at any shift
  static constexpr int b_pitch = b_chunks * halves_per_chunk;              // halves per staged row of B
  static constexpr int a_chunks = in_place_tile_k / halves_per_chunk + 1;  // a row of A's 32 k at any shift
  static constexpr int a_pitch = a_chunks * halves_per_chunk;
  static constexpr int b_stage_halves = in_place_tile_k * b_pitch, a_stage_halves = width * a_pitch;
  static constexpr int stage_halves = b_stage_halves + a_stage_halves;
  static constexpr int shared_bytes = in_place_stages * stage_halves * 2;
  static constexpr int chunks_per_stage = in_place_tile_k * b_chunks + width * a_chunks;
  static constexpr int partial_float4s = 2 * pieces * threads;  // per (column tile, part): width × 128 floats

  static_assert(width == 8 || width == 16 || width == 32 || width == 64 || width == 128,
                "the in-place width must be 8, 16, 32, 64 or 128 (mma n8 pieces)");
  static_assert(shared_bytes <= max_shared_bytes_per_block, "in_place_stages × stage_bytes must fit in 227 KiB");
};

// Stages 16-byte chunk `chunk` (counted from the 16-byte boundary at or below `base`, which lies
// `misalignment` halves below it) of a matrix of `total` halves at `base` into shared `dst`: by
// cp.async when the chunk lies wholly inside the matrix, element by element (zeros outside) when it
// crosses either end, so that nothing outside the matrix is read.
__device__ __forceinline__ void stage_chunk(__half* dst, const __half* base, int misalignment, long long total,
                                            long long chunk) {
  const long long first = chunk * halves_per_chunk - misalignment;  // the chunk's first half, as an index of the matrix
  if (first >= 0 && first + halves_per_chunk <= total) {
    async_copy::copy_16_bytes_or_zeros(dst, base + first, true);
  } else {
    unsigned short h[halves_per_chunk];
#pragma unroll
    for (int e = 0; e < halves_per_chunk; ++e)
      h[e] = first + e >= 0 && first + e < total ? __half_as_ushort(base[first + e]) : 0;
    *reinterpret_cast<uint4*>(dst) = make_uint4(h[0] | unsigned(h[1]) << 16, h[2] | unsigned(h[3]) << 16,
                                                h[4] | unsigned(h[5]) << 16, h[6] | unsigned(h[7]) << 16);
  }
}

// How the in-place kernel divides K: `split` parts of the column tiles' k-slices (32 wide).
struct InPlacePlan {
  int col_tiles, k_tiles, split, blocks;
  std::size_t partial_bytes, counter_bytes;
};

template <int width>
__global__ void __launch_bounds__(InPlaceLayout<width>::threads)
    in_place_gemm(const __grid_constant__ GemmProblem<__half> p, const __grid_constant__ InPlacePlan plan,
                  float4* partials, unsigned* counters) {
  using L = InPlaceLayout<width>;
  constexpr int tile_k = L::in_place_tile_k, stages = L::in_place_stages;
  extern __shared__ uint4 in_place_shared[];
  __half* shared = reinterpret_cast<__half*>(in_place_shared);
  auto b_stage = [&](int stage) { return shared + stage * L::stage_halves; };
  auto a_stage = [&](int stage) { return shared + stage * L::stage_halves + L::b_stage_halves; };

  const int tile = blockIdx.x % plan.col_tiles, part = blockIdx.x / plan.col_tiles;
  const long long n0 = (long long)tile * L::in_place_tile_n;
  const int kt_begin = int((long long)plan.k_tiles * part / plan.split);
  const int kt_end = int((long long)plan.k_tiles * (part + 1) / plan.split);
  const int a_mis = int(reinterpret_cast<std::uintptr_t>(p.a) % 16) / 2;  // halves past a 16-byte boundary
  const int b_mis = int(reinterpret_cast<std::uintptr_t>(p.b) % 16) / 2;
  const long long a_total = (long long)p.m * p.k, b_total = (long long)p.k * p.n;
  // Where row r of the tile begins inside its staged row: its first element's offset from a 16-byte
  // boundary (mod 8, in unsigned arithmetic, which keeps the residue through any overflow).
  auto b_shift = [&](long long k_row) {
    return int((unsigned(b_mis) + unsigned(k_row) * unsigned(p.n) + unsigned(n0)) & 7u);
  };
  auto a_shift = [&](int m_row, long long k0) {
    return int((unsigned(a_mis) + unsigned(m_row) * unsigned(p.k) + unsigned(k0)) & 7u);
  };

  // Copies slice kt (k rows k0 … k0 + 31) into `stage`: B's 32 rows × 128 columns, A's width rows ×
  // 32 k; rows past K (B) or M (A) as zeros, without reading.
  auto load = [&](int stage, int kt) {
    const long long k0 = (long long)kt * tile_k;
    for (int i = threadIdx.x; i < L::chunks_per_stage; i += L::threads) {
      if (i < tile_k * L::b_chunks) {
        const int r = i / L::b_chunks, c = i % L::b_chunks;
        __half* dst = b_stage(stage) + r * L::b_pitch + c * halves_per_chunk;
        if (k0 + r < p.k)
          stage_chunk(dst, p.b, b_mis, b_total, (b_mis + (k0 + r) * p.n + n0) / halves_per_chunk + c);
        else
          *reinterpret_cast<uint4*>(dst) = make_uint4(0, 0, 0, 0);
      } else {
        const int j = i - tile_k * L::b_chunks, r = j / L::a_chunks, c = j % L::a_chunks;
        __half* dst = a_stage(stage) + r * L::a_pitch + c * halves_per_chunk;
        if (r < p.m)
          stage_chunk(dst, p.a, a_mis, a_total, (a_mis + (long long)r * p.k + k0) / halves_per_chunk + c);
        else
          *reinterpret_cast<uint4*>(dst) = make_uint4(0, 0, 0, 0);
      }
    }
  };

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  float acc[2][L::pieces][4];
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < L::pieces; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

  auto pack = [](__half lo, __half hi) {
    return unsigned(__half_as_ushort(lo)) | unsigned(__half_as_ushort(hi)) << 16;
  };

  // The products of one stage: per k-step of 16, the Bᵀ fragments of the warp's two 16-column blocks
  // (mma's A: element (n, k) is B[k][n], row k at its shift) and Aᵀ's of every n8 piece (mma's B:
  // element (k, m) is A[m][k]), k past K read as zero on A's side (B's rows past K are zeros).
  auto multiply = [&](int stage, int kt) {
    const long long k0 = (long long)kt * tile_k;
    const __half* bs = b_stage(stage);
    const __half* as = a_stage(stage);
    const int k_left = p.k - k0 < tile_k ? int(p.k - k0) : tile_k;
#pragma unroll
    for (int ks = 0; ks < tile_k / 16; ++ks) {
      // The Bᵀ fragments of the warp's two blocks: rows 16ks + 2t + {0, 1, 8, 9} of the slice, each at its shift.
      unsigned a[2][4];
      int row_start[4];
#pragma unroll
      for (int h = 0; h < 4; ++h) {  // rows 16ks + 2t + {0, 1, 8, 9}
        const int r = 16 * ks + 2 * t + (h & 1) + 8 * (h >> 1);
        row_start[h] = r * L::b_pitch + b_shift(k0 + r);
      }
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        const int col = warp * 32 + i * 16 + g;
        a[i][0] = pack(bs[row_start[0] + col], bs[row_start[1] + col]);
        a[i][1] = pack(bs[row_start[0] + col + 8], bs[row_start[1] + col + 8]);
        a[i][2] = pack(bs[row_start[2] + col], bs[row_start[3] + col]);
        a[i][3] = pack(bs[row_start[2] + col + 8], bs[row_start[3] + col + 8]);
      }
#pragma unroll
      for (int j = 0; j < L::pieces; ++j) {
        const int m_row = 8 * j + g;
        const __half* row = as + m_row * L::a_pitch + a_shift(m_row, k0);
        const int kk = 16 * ks + 2 * t;
        const __half zero = __ushort_as_half(0);
        unsigned b[2];
        b[0] = pack(kk < k_left ? row[kk] : zero, kk + 1 < k_left ? row[kk + 1] : zero);
        b[1] = pack(kk + 8 < k_left ? row[kk + 8] : zero, kk + 9 < k_left ? row[kk + 9] : zero);
#pragma unroll
        for (int i = 0; i < 2; ++i) mma_sync::mma_m16n8k16(acc[i][j], a[i], b);
      }
    }
  };

  // The pipeline: stages − 1 slices in flight while one is multiplied (07's, with cp.async groups).
#pragma unroll 1
  for (int s = 0; s < stages - 1; ++s) {
    if (kt_begin + s < kt_end) load(s, kt_begin + s);
    async_copy::commit_group();
  }
#pragma unroll 1
  for (int kt = kt_begin; kt < kt_end; ++kt) {
    async_copy::wait_group<stages - 2>();
    __syncthreads();  // slice kt is in, and every warp is done with the stage the next load overwrites
    const int next = kt + stages - 1;
    if (next < kt_end) load((next - kt_begin) % stages, next);
    async_copy::commit_group();
    multiply((kt - kt_begin) % stages, kt);
  }
  async_copy::wait_group<0>();

  // Element (i, j, e) of the accumulators is C[8j + 2t + (e & 1)][n0 + 32·warp + 16i + g + 8·(e >> 1)].
  auto store = [&](int i, int j, const float(&v)[4]) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const long long row = 8 * j + 2 * t + (e & 1), col = n0 + warp * 32 + i * 16 + g + 8 * (e >> 1);
      const bool inside_c = col < p.n && row < p.m;
      if (inside_c) store_c(&p.c[row * p.n + col], v[e], p.alpha, p.beta);
    }
  };
  if (plan.split == 1) {
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
      for (int j = 0; j < L::pieces; ++j) store(i, j, acc[i][j]);
    return;
  }
  // Split in k: this part's sums to the workspace (float4 (i·pieces + j)·128 + thread), then the
  // block that finishes the tile's last part adds every part, in the order of k, and writes C. The
  // counter goes back to 0 for the next launch.
  float4* mine = partials + ((long long)tile * plan.split + part) * L::partial_float4s;
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < L::pieces; ++j)
      __stcg(mine + (i * L::pieces + j) * L::threads + threadIdx.x,
             make_float4(acc[i][j][0], acc[i][j][1], acc[i][j][2], acc[i][j][3]));
  __threadfence();
  __syncthreads();
  __shared__ bool last;
  if (threadIdx.x == 0) last = atomicAdd(counters + tile, 1u) == unsigned(plan.split - 1);
  __syncthreads();
  if (!last) return;
  __threadfence();
  const float4* parts = partials + (long long)tile * plan.split * L::partial_float4s;
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < L::pieces; ++j) {
      float sum[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      for (int s = 0; s < plan.split; ++s) {
        const float4 v =
            __ldcg(parts + (long long)s * L::partial_float4s + (i * L::pieces + j) * L::threads + threadIdx.x);
        sum[0] += v.x;
        sum[1] += v.y;
        sum[2] += v.z;
        sum[3] += v.w;
      }
      store(i, j, sum);
    }
  if (threadIdx.x == 0) counters[tile] = 0;
}

// Calls f with the in-place width for M: the narrowest of 8 … 128 that holds M rows.
template <class F>
decltype(auto) with_in_place_width(int m, F&& f) {
  if (m <= 8) return f(std::integral_constant<int, 8>{});
  if (m <= 16) return f(std::integral_constant<int, 16>{});
  if (m <= 32) return f(std::integral_constant<int, 32>{});
  if (m <= 64) return f(std::integral_constant<int, 64>{});
  return f(std::integral_constant<int, 128>{});
}

// Enough parts in k for every resident block to have one (a part at least one slice, at most
// in_place_max_split); the partials, width × 128 floats per (column tile, part), and one counter per
// column tile. col_tiles × split < resident + col_tiles: the bound of the workspace.
template <int width>
InPlacePlan plan_in_place(Shape s) {
  using L = InPlaceLayout<width>;
  static const int resident = [] {
    constexpr auto kernel = in_place_gemm<width>;
    allow_dynamic_shared_memory<kernel>(L::shared_bytes);
    int device = 0, sms = 0, per_sm = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, L::threads, L::shared_bytes));
    if (per_sm < 1) throw std::runtime_error("no block of the in-place kernel fits on an SM");
    return per_sm * sms;
  }();
  InPlacePlan plan{};
  plan.col_tiles = int(ceil_div(s.n, L::in_place_tile_n));
  plan.k_tiles = int(std::max<long long>(1, ceil_div(s.k, L::in_place_tile_k)));
  const long long wanted = ceil_div(resident, plan.col_tiles);
  plan.split = int(std::max<long long>(1, std::min<long long>({wanted, plan.k_tiles, L::in_place_max_split})));
  if ((long long)plan.col_tiles * plan.split > 2147483647LL) throw std::length_error("too many in-place blocks");
  plan.blocks = plan.col_tiles * plan.split;
  plan.partial_bytes = plan.split > 1 ? std::size_t(plan.blocks) * L::partial_float4s * sizeof(float4) : std::size_t(0);
  plan.counter_bytes = plan.split > 1 ? std::size_t(plan.col_tiles) * sizeof(unsigned) : std::size_t(0);
  return plan;
}

std::size_t in_place_workspace_bytes(Shape s) {
  return with_in_place_width(s.m, [&](auto width) {
    const InPlacePlan plan = plan_in_place<width>(s);
    return round_up_scratch(plan.partial_bytes) + plan.counter_bytes;
  });
}

void launch_in_place(const GemmProblem<__half>& p, cudaStream_t stream) {
  with_in_place_width(p.m, [&](auto width) {
    using L = InPlaceLayout<width>;
    const InPlacePlan plan = plan_in_place<width>(Shape{p.m, p.n, p.k});
    float4* partials = nullptr;  // none without a split in k
    unsigned* counters = nullptr;
    if (plan.split > 1) {
      const std::size_t needed = round_up_scratch(plan.partial_bytes) + plan.counter_bytes;
      if (!p.workspace || p.workspace_bytes < needed)
        throw std::runtime_error("13_pad_unaligned: the in-place kernel needs " + std::to_string(needed) +
                                 " bytes of workspace, the launch has " +
                                 std::to_string(p.workspace ? p.workspace_bytes : 0));
      partials = static_cast<float4*>(p.workspace);
      counters =
          reinterpret_cast<unsigned*>(static_cast<unsigned char*>(p.workspace) + round_up_scratch(plan.partial_bytes));
    }
    in_place_gemm<width><<<plan.blocks, L::threads, L::shared_bytes, stream>>>(p, plan, partials, counters);
    WORKLOG_CHECK_LAUNCH();
  });
}

// Bytes of the swap kernel's workspace at a given width (12's workspace_bytes picks the width from M).
template <int width>
std::size_t swap_workspace_bytes(Shape s) {
  const Plan plan = plan_schedule<Config, width>(s.m, s.n, s.k, resident_blocks<Config, width>());
  return plan.partial_bytes + plan.flag_bytes;
}

// ---- The decision ---------------------------------------------------------------------------------------

// Which path a problem takes, which operands it pads, and where each buffer lies in the workspace.
enum class Route {
  aligned,            // nothing to pad: 12's launch_config, unchanged
  in_place,           // M ≤ in_place_max_m, B's rows unaligned: the in-place kernel reads A and B where they are
  swap_padded,        // M ≤ swap_max_m: the swap kernel on the padded A and/or B, C written in place
  stream_k_padded,    // M > swap_max_m, C's rows aligned: 11 on the padded A and B
  swap_direct_c,      // M > swap_max_m, C's rows unaligned, K ≤ direct_c_max_k: the swap kernel (width 256)
  stream_k_staged_c,  // M > swap_max_m, C's rows unaligned, K larger: 11 into a padded C, then copied out
};

struct Padding {
  Route route = Route::aligned;
  bool pad_a = false, pad_b = false, stage_c = false;
  long long k8 = 0, n8 = 0;                              // K and N rounded up to a multiple of 8
  std::size_t a_offset = 0, b_offset = 0, c_offset = 0;  // the padded A (M × K8), B (K8 × N8), C (M × N8 FP32)
  std::size_t rest_offset = 0, rest_bytes = 0;           // the aligned path's own workspace (partials and flags)
  std::size_t total = 0;
};

// a_ok, b_ok: TMA can describe A's and B's rows where they are (base and row stride 16-byte aligned);
// c_ok: so can 11's TMA store C's (N a multiple of 8, C 16-byte aligned).
template <class Pad>
Padding plan_padding(Shape s, bool a_ok, bool b_ok, bool c_ok) {
  Padding d;
  d.k8 = round_up_8(s.k);
  d.n8 = round_up_8(s.n);
  // LAB BEGIN: The decision (README.md derives it). Set d.route and, for the padded routes, d.pad_a (A when its
  // LAB: rows are unaligned), d.pad_b (B when its rows are unaligned, and for 11 also when K is padded: 11 reads
  // LAB: K8 rows of B) and d.stage_c (11 into a padded C): aligned when a_ok and b_ok; in place when B's rows are
  // LAB: unaligned and M ≤ Pad::in_place_max_m; else by M (Config::swap_max_m), c_ok and K (Pad::direct_c_max_k).
  if (a_ok && b_ok) {
    d.route = Route::aligned;
  } else if (!b_ok && s.m <= Pad::in_place_max_m) {
    d.route = Route::in_place;
  } else {
    d.pad_a = !a_ok;
    d.pad_b = !b_ok;
    if (s.m <= Config::swap_max_m) {
      d.route = Route::swap_padded;
    } else {
      d.pad_b = d.pad_b || s.k % halves_per_chunk != 0;
      if (c_ok)
        d.route = Route::stream_k_padded;
      else if (s.k <= Pad::direct_c_max_k)
        d.route = Route::swap_direct_c;
      else
        d.route = Route::stream_k_staged_c;
      d.stage_c = d.route == Route::stream_k_staged_c;
    }
  }
  // LAB END
  // The buffers, in this order, each on a 256-byte boundary; then the aligned path's workspace.
  std::size_t offset = 0;
  auto reserve = [&](bool needed, std::size_t bytes) {
    const std::size_t at = offset;
    if (needed) offset += round_up_scratch(bytes);
    return at;
  };
  d.a_offset = reserve(d.pad_a, std::size_t(s.m) * d.k8 * sizeof(__half));
  d.b_offset = reserve(d.pad_b, std::size_t(d.k8) * d.n8 * sizeof(__half));
  d.c_offset = reserve(d.stage_c, std::size_t(s.m) * d.n8 * sizeof(float));
  d.rest_offset = offset;
  const int k8 = int(d.k8), n8 = int(d.n8);
  switch (d.route) {
    case Route::aligned:
      d.rest_bytes = workspace_bytes<Config>(s);
      break;
    case Route::in_place:
      d.rest_bytes = in_place_workspace_bytes(s);
      break;
    case Route::swap_padded:
    case Route::stream_k_staged_c:
      d.rest_bytes = workspace_bytes<Config>(Shape{s.m, n8, k8});  // 12's: the swap's for small M, else 11's
      break;
    case Route::stream_k_padded:
      d.rest_bytes = workspace_bytes<Config>(Shape{s.m, s.n, k8});
      break;
    case Route::swap_direct_c:
      d.rest_bytes = swap_workspace_bytes<256>(Shape{s.m, n8, k8});
      break;
  }
  d.total = d.rest_offset + d.rest_bytes;
  return d;
}

// Bytes of workspace for a shape: 12's for an aligned one (nothing is copied). For an unaligned one
// the pointers are not known yet, so the bound covers both the alignment the shape implies and the
// worst case, both operands' pointers off a 16-byte boundary: the padded A (M × K8 halves), B (K8 ×
// N8 halves) and C (M × N8 floats, the staged route only), plus the aligned path's workspace for
// the padded shape (README.md: the bound).
template <class Pad>
std::size_t padded_workspace_bytes(Shape s) {
  if (s.k % halves_per_chunk == 0 && s.n % halves_per_chunk == 0) return workspace_bytes<Config>(s);
  const bool k_ok = s.k % halves_per_chunk == 0, n_ok = s.n % halves_per_chunk == 0;
  return std::max(plan_padding<Pad>(s, k_ok, n_ok, n_ok).total, plan_padding<Pad>(s, false, false, false).total);
}

// ---- Launch (13) ------------------------------------------------------------------------------------------

template <class Pad>
void launch_padded(const GemmProblem<__half>& p, cudaStream_t stream) {
  const bool a_ok = tma_describable(p.a, p.k), b_ok = tma_describable(p.b, p.n);
  const bool c_ok = p.n % halves_per_chunk == 0 && reinterpret_cast<std::uintptr_t>(p.c) % 16 == 0;
  const Padding d = plan_padding<Pad>(Shape{p.m, p.n, p.k}, a_ok, b_ok, c_ok);
  if (d.route == Route::aligned) return launch_config<Config>(p, stream);  // 12, unchanged
  // An aligned shape's workspace (12's) holds no padded copies: operands whose pointers alone are
  // unaligned go to 08's element-wise path, as in 12.
  if (d.total > (p.workspace ? p.workspace_bytes : 0)) return linked_step(unaligned_fallback).launch(p, stream);
  unsigned char* scratch = static_cast<unsigned char*>(p.workspace);
  GemmProblem<__half> q = p;  // the problem the aligned path solves
  q.workspace = d.rest_bytes ? scratch + d.rest_offset : nullptr;
  q.workspace_bytes = d.rest_bytes;
  if (d.route == Route::in_place) return launch_in_place(q, stream);
  __half* a_padded = reinterpret_cast<__half*>(scratch + d.a_offset);
  __half* b_padded = reinterpret_cast<__half*>(scratch + d.b_offset);
  float* c_padded = reinterpret_cast<float*>(scratch + d.c_offset);
  // LAB BEGIN: The padded hand-off. Copy A (M × K → M × K8) and B (K × N → K8 × N8) into a_padded and b_padded
  // LAB: where d says so (launch_pad_copy), then point q at the copies, with q.k = K8; when C is staged, q also
  // LAB: writes alpha·A·B (beta 0) into c_padded, N8 columns a row. The launches below then solve q.
  if (d.pad_a) launch_pad_copy(p.a, p.m, p.k, a_padded, p.m, d.k8, stream);
  if (d.pad_b) launch_pad_copy(p.b, p.k, p.n, b_padded, d.k8, d.n8, stream);
  q.a = d.pad_a ? a_padded : p.a;
  q.b = d.pad_b ? b_padded : p.b;
  q.k = int(d.k8);
  if (d.stage_c) {
    q.n = int(d.n8);
    q.c = c_padded;
    q.beta = 0.0f;
  }
  // LAB END
  // B as the kernels read it: the padded copy (K8 × N8), or B itself (K rows: TMA reads the rows past K
  // as zeros, and A's padded columns are zeros too). The swap kernel writes C through p's N.
  const long long b_rows = d.pad_b ? d.k8 : p.k, b_cols = d.pad_b ? d.n8 : p.n;
  switch (d.route) {
    case Route::swap_padded:
      with_width(p.m, [&](auto width) { launch_swapped<Config, width>(q, {q.a, d.k8, q.b, b_rows, b_cols}, stream); });
      break;
    case Route::swap_direct_c:
      launch_swapped<Config, 256>(q, {q.a, d.k8, q.b, b_rows, b_cols}, stream);
      break;
    case Route::stream_k_padded:
      linked_step(large_m_step).launch(q, stream);
      break;
    case Route::stream_k_staged_c:
      linked_step(large_m_step).launch(q, stream);
      // C = the padded C + beta·C, on C's own N columns.
      unpad_c<<<copy_grid((long long)p.m * p.n), PadConfig::copy_threads, 0, stream>>>(c_padded, d.n8, p.c, p.m, p.n,
                                                                                       p.beta);
      WORKLOG_CHECK_LAUNCH();
      break;
    case Route::aligned:
    case Route::in_place:
      break;  // launched above
  }
}

// Variants, for README.md's tables: each side of the decision forced.
struct PadAlways : PadConfig {  // B padded even for few rows: the copy where the rule reads in place
  static constexpr int in_place_max_m = 0;
};
struct CStaged : PadConfig {  // C always through a padded C and 11, never the swap kernel's stores
  static constexpr int direct_c_max_k = 0;
};
struct CDirect : PadConfig {  // C always written by the swap kernel's stores when its rows are unaligned
  static constexpr int direct_c_max_k = 1 << 30;
};

}  // namespace

// Aligned shapes are 12's; the reuse tile is 12's (the roofline's model sees 11's tile, to which the
// large squares go).
WORKLOG_REGISTER_STEP(
    Step<__half>{"13_pad_unaligned", launch_padded<PadConfig>}
        .adds("unaligned K or N: operands padded once into the workspace for 12's kernels, few rows read in place")
        .reuses_tile(256, 256)
        .needs_compute_capability(90, 90)
        .needs_workspace(padded_workspace_bytes<PadConfig>)
        .variant("pad_always", "the copy for every unaligned shape, few rows of A too (no in-place kernel)",
                 launch_padded<PadAlways>, padded_workspace_bytes<PadAlways>)
        .variant("c_staged", "C with unaligned rows always through a padded C and 11", launch_padded<CStaged>,
                 padded_workspace_bytes<CStaged>)
        .variant("c_direct", "C with unaligned rows always written by the swap kernel's stores", launch_padded<CDirect>,
                 padded_workspace_bytes<CDirect>))

}  // namespace worklog
