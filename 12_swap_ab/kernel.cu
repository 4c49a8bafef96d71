// Step 12 (Hopper) — swap AB: few rows of A, at the speed of DRAM.
//
// Change from 11: a second kernel for small M, the GEMM of a language model generating text (M =
// batch × new tokens, 1 to a few hundred, against weights of N × K = thousands × thousands).
//   - 11 cuts C into 128-row tiles: with M = 16, 7/8 of every wgmma multiplies rows that do not
//     exist, the lower block of each cluster lies wholly below C, and 4096 columns make 16 tiles.
//     Yet this work is bound by memory, not by the tensor cores: 2·M·N·K FLOP over the 2·N·K bytes
//     of B is M FLOP per byte, far below the ~200 at which an H200 stops waiting for DRAM
//     (README.md: the roofline). What counts is that many SMs keep bytes of B in flight.
//   - So compute Cᵀ = Bᵀ·Aᵀ instead. The long N becomes wgmma's 64-row side (each block tile is 128
//     columns of C, one 64-row wgmma per consumer warpgroup) and M becomes the instruction's n,
//     which may be any multiple of 8 up to 256: a menu of widths (8, 16, 32, 64, 128, 256) picked
//     from M at launch wastes at most the rounding. No operand is copied or transposed in memory:
//     B's tile, whose rows are contiguous in n, is wgmma's A operand read MN-major (the descriptor
//     of 09's B, with the instruction's "transpose A" flag); A's tile, contiguous in k, is its B
//     operand read K-major (09's A descriptor). The epilogue writes the transposed tile into C.
//   - The work is 11's (tile, k-slice) iterations and 11's schedule, copied forward: a few dozen
//     tiles of 128 columns leave most SMs idle unless K is split, so the tiles that do not fill
//     whole waves are cut into aligned k-parts, one per SM (11's rule; dealing every slice evenly,
//     the stream-K paper's way, measured slower here too). A split tile is fixed up, in a fixed
//     order, by the unit holding its slice 0: partials of a few rows of C are small.
//   - No clusters: A is a few KiB per slice, and L2 serves it to every block; B is read once.
//   - Shared memory holds nothing but stages: the epilogue writes straight from registers (a few
//     rows of C), and each stage is as small as the width allows, so the pipeline is as deep as
//     227 KiB permits.
//
// M above Config::swap_max_m goes to 11 (README.md: the crossover); shapes TMA cannot describe (K or
// N not a multiple of 8) to step 08's kernel. The workspace (partials and flags, 11's) comes from
// the harness. Variants (README.md's tables): the swap for every M, whole tiles only, the even deal,
// and 11's shared fixup.

#include <type_traits>

#include "hopper.cuh"
#include "kernel_utils.cuh"
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
      "12_swap_ab", "consumer", "full",
      "no copy arrived: are the stage's bytes announced (mbarrier_arrive_expect_bytes) and its "
      "TMA boxes issued?"};
};
struct EmptyWait {
  static constexpr WaitSite site{"12_swap_ab", "producer", "empty",
                                 "the stage was never released: does one lane of every consumer warp arrive on "
                                 "empty[s], as its count at init says?"};
};
struct FlagWait {
  static constexpr WaitSite site{
      "12_swap_ab", "consumer", "flags",
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
    throw std::length_error("12_swap_ab: more than 2^31 tile iterations");
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
      throw std::runtime_error("12_swap_ab: this shape needs " + std::to_string(needed) + " bytes of workspace, the " +
                               "launch has " + std::to_string(p.workspace ? p.workspace_bytes : 0) +
                               " (Step::needs_workspace, GemmProblem::workspace)");
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

// Variants, for the README's tables: the swap for every M, other schedules (whole tiles, the even
// deal, split-K in 2 and 4 parts, over several rounds of units), the fixup shared.
struct SwapAll : Config {
  static constexpr int swap_max_m = 1 << 30;
};
struct DataParallel : Config {
  static constexpr Decomposition decomposition = Decomposition::data_parallel;
};
struct StreamK : Config {
  static constexpr Decomposition decomposition = Decomposition::stream_k;
};
struct SplitK2 : Config {
  static constexpr Decomposition decomposition = Decomposition::split_k;
  static constexpr int split_k = 2;
};
struct SplitK4 : SplitK2 {
  static constexpr int split_k = 4;
};
struct FixupShared : Config {
  static constexpr int fixup_alone_units = 2;  // 11's: tiles of more than 2 units share their fixup
};

}  // namespace

// For the shapes the swap takes, the reuse tile depends on M; the roofline's model (the worklog's
// large squares) sees 11's tile, to which those go.
WORKLOG_REGISTER_STEP(
    Step<__half>{"12_swap_ab", launch_config<Config>}
        .adds("few rows of A: Cᵀ = Bᵀ·Aᵀ with M as the wgmma's n (M ≤ 128), K split over the SMs; larger M as 11")
        .reuses_tile(256, 256)
        .needs_compute_capability(90, 90)
        .needs_workspace(workspace_bytes<Config>)
        .variant("swap_all", "the swap for every M (no hand-off to 11)", launch_config<SwapAll>,
                 workspace_bytes<SwapAll>)
        .variant("data_parallel", "whole tiles only: one block per tile", launch_config<DataParallel>,
                 workspace_bytes<DataParallel>)
        .variant("stream_k", "every tile's slices dealt evenly over all SMs", launch_config<StreamK>,
                 workspace_bytes<StreamK>)
        .variant("split_k2", "every tile in 2 k-parts", launch_config<SplitK2>, workspace_bytes<SplitK2>)
        .variant("split_k4", "every tile in 4 k-parts", launch_config<SplitK4>, workspace_bytes<SplitK4>)
        .variant("fixup_shared", "tiles of more than 2 units share their fixup (11's rule)", launch_config<FixupShared>,
                 workspace_bytes<FixupShared>))

}  // namespace worklog
