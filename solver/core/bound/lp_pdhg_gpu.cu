// The PDHG bound with its iterations on the GPU (lp_pdhg_gpu.hpp).
//
// The same method as lp_pdhg.cpp, by the same formulas (lp_pdhg_rules.hpp)
// and the same loop (pdhg_loop, lp_pdhg_detail.hpp); only the iterate lives
// in device memory.  Layout, uploaded once from the host's Lp:
//  - the LP's clauses compacted (clauses of two or more literals, w != 0):
//    literal offsets, literals, weights and first rows;
//  - per atom: c, the step 1 / nonzeros, and its entries of A^T, a
//    transposed CSR sorted on the device (row << 1 | coefficient < 0).
// One iteration is three kernels on a stream of its own (beside the walk's
// kernels): the atoms' x step; the clauses' z and y steps (a thread per
// clause, reading x at random); the atoms' A^T y gathered from the
// transpose, then their Halpern update.  A^T y is gathered rather than
// scattered with atomicAdd: the gather reads each row's y once per nonzero
// as the scatter would write it, needs no zeroing pass, and sums each
// atom's entries in a fixed order, so that a run is a function of its
// input (atomic adds of doubles land in any order).
// The distances a step moved (the restart test reads them every
// eval_every iterations) are block sums in a fixed order, summed on the
// host; other steps do not wait for the device.
//
// The bound stays certified: every eval_every iterations the multipliers y
// and the step's x come back to the host and g(y) is evaluated there by
// lp_pdhg.cpp's evaluate (long double, less its rounding margin), the one
// bound formula of both backends.  Whatever the device computed, g of any
// y is at most the LP optimum.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/bound/lp_bound.hpp"
#include "core/bound/lp_pdhg_detail.hpp"
#include "core/bound/lp_pdhg_gpu.hpp"
#include "core/bound/lp_pdhg_rules.hpp"
#include "core/walk/walksat_gpu_common.cuh"

namespace mln::solver {

namespace {

using namespace pdhg_detail;
using gpu_detail::DeviceArray;

constexpr int kBlock = 256;       // threads per block (block_sum2's shared arrays)
constexpr int kMaxBlocks = 1024;  // blocks of a kernel: its partial sums come back to the host

int blocks_for(int64_t n) {
  return static_cast<int>(std::min<int64_t>(std::max<int64_t>(1, (n + kBlock - 1) / kBlock), kMaxBlocks));
}

// The LP on the device (see the file's comment); atoms 1..n.
struct DevLp {
  int32_t n;
  int64_t K;
  const int64_t* off;     // clause k's literals: lit[off[k] .. off[k + 1])
  const int32_t* lit;
  const double* w;
  const int64_t* row;     // clause k's rows: [row[k], row[k + 1])
  const double* c;        // per atom
  const double* tx;
  const int64_t* t_off;   // atom a's entries of A^T: t_ent[t_off[a] .. t_off[a + 1])
  const uint32_t* t_ent;  // row << 1 | (its coefficient is -1)
};

// The iterate, its anchor, the step's x and A^T y (lp_pdhg.cpp's CpuPdhg).
struct DevIter {
  double *x, *xn, *x0, *z, *z0, *y, *y0, *aty;
};

// The block's sums of a and b into part[2 blockIdx.x] and part[2 blockIdx.x
// + 1], in a fixed order.  Every thread of the block calls it; blockDim.x
// is kBlock.
__device__ void block_sum2(double a, double b, double* part) {
  __shared__ double sa[kBlock], sb[kBlock];
  sa[threadIdx.x] = a;
  sb[threadIdx.x] = b;
  __syncthreads();
  for (int s = kBlock / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      sa[threadIdx.x] += sa[threadIdx.x + s];
      sb[threadIdx.x] += sb[threadIdx.x + s];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    part[2 * blockIdx.x] = sa[0];
    part[2 * blockIdx.x + 1] = sb[0];
  }
}

#define MLN_GRID_STRIDE(i, count) \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (count); i += int64_t(gridDim.x) * blockDim.x)

__global__ void x_step_kernel(DevLp lp, DevIter s, double tau) {
  MLN_GRID_STRIDE(i, lp.n) {
    const int64_t a = i + 1;
    s.xn[a] = x_step(s.x[a], lp.tx[a], lp.c[a], s.aty[a], tau);
  }
}

template <bool Norms>
__global__ void clause_step_kernel(DevLp lp, DevIter s, StepCoef p, double* part) {
  double px = 0, dy = 0;
  MLN_GRID_STRIDE(k, lp.K) {
    const int64_t off = lp.off[k], r0 = lp.row[k];
    clause_step(lp.lit + off, lp.off[k + 1] - off, lp.w[k], s.y + r0, s.y0 + r0, s.z[k], s.z0[k], s.xn, s.x, p, px,
                dy);
  }
  if (Norms) block_sum2(px, dy, part);
}

template <bool Norms>
__global__ void aty_kernel(DevLp lp, DevIter s, StepCoef p, double* part) {
  double px = 0;
  MLN_GRID_STRIDE(i, lp.n) {
    const int64_t a = i + 1;
    double sum = 0;
    for (int64_t e = lp.t_off[a]; e < lp.t_off[a + 1]; ++e) {
      const uint32_t v = lp.t_ent[e];
      const double yv = s.y[v >> 1];
      sum += (v & 1u) ? -yv : yv;
    }
    s.aty[a] = sum;
    px += x_update(s.x[a], s.xn[a], s.x0[a], lp.tx[a], p);
  }
  if (Norms) block_sum2(px, 0, part);
}

__global__ void restart_atoms_kernel(DevLp lp, DevIter s, double* part) {
  double dx = 0;
  MLN_GRID_STRIDE(i, lp.n) {
    const int64_t a = i + 1;
    if (lp.tx[a] > 0) dx += (s.x[a] - s.x0[a]) * (s.x[a] - s.x0[a]) / lp.tx[a];
  }
  block_sum2(dx, 0, part);
}

__global__ void restart_clauses_kernel(DevLp lp, DevIter s, double* part) {
  double dx = 0, dy = 0;
  MLN_GRID_STRIDE(k, lp.K) {
    const int64_t r0 = lp.row[k];
    clause_restart_norms(lp.off[k + 1] - lp.off[k], lp.w[k], s.y + r0, s.y0 + r0, s.z[k], s.z0[k], dx, dy);
  }
  block_sum2(dx, dy, part);
}

// Per literal: its atom (the sort key) and its A^T entry.
__global__ void transpose_keys_kernel(DevLp lp, uint32_t* key, uint32_t* val) {
  MLN_GRID_STRIDE(k, lp.K) {
    const int64_t off = lp.off[k], len = lp.off[k + 1] - off, r0 = lp.row[k];
    const double w = lp.w[k];
    for (int64_t i = 0; i < len; ++i) {
      const int32_t l = lp.lit[off + i];
      const int64_t r = w > 0 ? r0 : r0 + i;
      key[off + i] = static_cast<uint32_t>(l > 0 ? l : -l);
      val[off + i] = static_cast<uint32_t>(r) << 1 | (x_coef_negative(l, w) ? 1u : 0u);
    }
  }
}

// t_off[a] = the first sorted entry of atom a or later, a = 0..n + 1.
__global__ void transpose_offsets_kernel(int32_t n, const uint32_t* key, int64_t len, int64_t* t_off) {
  MLN_GRID_STRIDE(a, static_cast<int64_t>(n) + 2) {
    int64_t lo = 0, hi = len;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (key[mid] < static_cast<uint32_t>(a)) lo = mid + 1;
      else hi = mid;
    }
    t_off[a] = lo;
  }
}

// A non-blocking stream: the PDHG's kernels and copies do not wait for the
// walk's work on the legacy default stream, nor it for them.
struct Stream {
  cudaStream_t s = nullptr;
  Stream() { MLN_CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); }
  ~Stream() {
    if (s) cudaStreamDestroy(s);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
};

// The set-up ran out of time or was stopped (GpuPdhg's constructor).
struct SetupStopped {};

// The device backend (pdhg_loop's B).
class GpuPdhg {
 public:
  // Throws SetupStopped where out_of_time(opts, t0) between its steps.
  GpuPdhg(const Lp& lp, int nt, const PdhgOptions& opts, Clock::time_point t0);
  Eval evaluate();
  void keep_best() { x_best = hx_; }
  // An evaluation is on the host's threads (long double, the certified
  // bound) and costs some hundred of the device's iterations at 10^8
  // clauses, where a small LP's costs about one: a stride of one per 2^24
  // literals, at most 16.
  int eval_stride() const { return static_cast<int>(std::clamp<int64_t>(lp_.nnz >> 24, 1, 16)); }
  double omega() const { return omega_; }
  StepNorms step(double lambda, double gamma, bool norms);
  void restart();
  std::vector<double> x_best;
  int64_t evals = 0;  // evaluations, and their seconds (MLN_MAP_DEBUG's timeline)
  double eval_s = 0;
  double t_uploaded = 0, t_transposed = 0;  // the clauses up, A^T built: seconds into the constructor
  // The upload's seconds by step (MLN_MAP_DEBUG: where a bound beside the walk waits, issue #45).
  struct UploadSeconds {
    double alloc = 0, gather = 0, enqueue = 0, wait = 0, max_wait = 0;
    int64_t blocks = 0;
  } up_s;

 private:
  template <class T>
  void up(DeviceArray<T>& d, const std::vector<T>& v) {
    d.resize(v.size());
    if (!v.empty()) MLN_CUDA_TRY(cudaMemcpyAsync(d.get(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice, st_.s));
  }
  template <class T>
  void down(std::vector<T>& v, const DeviceArray<T>& d, size_t n) {
    v.resize(n);
    if (n) MLN_CUDA_TRY(cudaMemcpyAsync(v.data(), d.get(), n * sizeof(T), cudaMemcpyDeviceToHost, st_.s));
  }
  void zeros(DeviceArray<double>& d, size_t n) {
    d.resize(n);
    MLN_CUDA_TRY(cudaMemsetAsync(d.get(), 0, std::max<size_t>(1, n) * sizeof(double), st_.s));  // 0.0 is all zero bits
  }
  void upload_clauses(const PdhgOptions& opts, Clock::time_point t0);
  void build_transpose();
  // The sums of the even (which 0) or odd (1) entries of the first `blocks`
  // pairs of partial sums, in block order.
  static double sum_parts(const std::vector<double>& part, int blocks, int which) {
    double s = 0;
    for (int b = 0; b < blocks; ++b) s += part[2 * b + which];
    return s;
  }

  Stream st_;  // first: destroyed after the arrays
  const Lp& lp_;
  const int nt_;
  DeviceArray<int64_t> off_, row_, t_off_;
  DeviceArray<int32_t> lit_;
  DeviceArray<double> w_, c_, tx_;
  DeviceArray<uint32_t> t_ent_;
  DeviceArray<double> x_, xn_, x0_, z_, z0_, y_, y0_, aty_, part_c_, part_a_;
  std::vector<double> hx_, hy_, hpc_, hpa_;  // host copies: xn and y (evaluate), partial sums
  std::vector<std::vector<long double>> lacc_;
  DevLp dl_{};
  DevIter di_{};
  double omega_ = 1;         // primal weight
  const double eta_ = 0.99;  // step; < 1 by the preconditioning
};

// The compacted clauses (the LP's, in its order), their literals checked,
// copied up a block of clauses at a time (whole host copies would add 28
// bytes per clause to the host's peak: 28 GB at 10^9 clauses, issue #45),
// each block gathered on OpenMP threads.
void GpuPdhg::upload_clauses(const PdhgOptions& opts, Clock::time_point t0) {
  const ClauseSet& cs = *lp_.cs;
  const int64_t K = static_cast<int64_t>(lp_.clause.size());
  constexpr int64_t kBlockClauses = int64_t{1} << 18;  // PdhgGpuTest's larger network takes two
  off_.resize(static_cast<size_t>(K) + 1);
  lit_.resize(static_cast<size_t>(lp_.nnz));
  w_.resize(static_cast<size_t>(K));
  std::vector<int64_t> off;  // the block's literal offsets, global: off[j] for its clause k0 + j
  std::vector<int32_t> lit;
  std::vector<double> w;
  int64_t at = 0;  // literals uploaded so far
  auto ts = Clock::now();
  auto lap = [&ts](double& into) {
    const auto now = Clock::now();
    const double d = std::chrono::duration<double>(now - ts).count();
    into += d;
    ts = now;
    return d;
  };
  lap(up_s.alloc);
  for (int64_t k0 = 0; k0 < K || k0 == 0; k0 += kBlockClauses) {
    if (out_of_time(opts, t0)) throw SetupStopped{};
    ++up_s.blocks;
    const int64_t k1 = std::min(K, k0 + kBlockClauses), nk = k1 - k0;
    off.resize(static_cast<size_t>(nk) + 1);
    w.resize(static_cast<size_t>(nk));
    off[0] = at;
#pragma omp parallel for schedule(static) num_threads(nt_) if (nk > 4096)
    for (int64_t j = 0; j < nk; ++j) {
      const int64_t c = lp_.clause[k0 + j];
      off[j + 1] = cs.offsets[c + 1] - cs.offsets[c];
      w[j] = cs.weights[c];
    }
    for (int64_t j = 0; j < nk; ++j) off[j + 1] += off[j];
    lit.resize(static_cast<size_t>(off[nk] - at));
    int bad = 0;
#pragma omp parallel for schedule(static) num_threads(nt_) reduction(| : bad) if (nk > 4096)
    for (int64_t j = 0; j < nk; ++j) {
      const int64_t c = lp_.clause[k0 + j];
      int32_t* d = lit.data() + (off[j] - at);
      for (int64_t i = cs.offsets[c]; i < cs.offsets[c + 1]; ++i) {
        const int32_t l = cs.lits[i];
        bad |= l == 0 || l < -lp_.n || l > lp_.n;
        *d++ = l;
      }
    }
    if (bad) throw std::invalid_argument("lp_bound_pdhg: literal out of range");
    lap(up_s.gather);
    // The first block's offsets start at entry 0; a later block's at k0 + 1.
    const size_t skip = k0 == 0 ? 0 : 1;
    MLN_CUDA_TRY(cudaMemcpyAsync(off_.get() + k0 + skip, off.data() + skip, (off.size() - skip) * sizeof(int64_t),
                                 cudaMemcpyHostToDevice, st_.s));
    if (!lit.empty())
      MLN_CUDA_TRY(cudaMemcpyAsync(lit_.get() + at, lit.data(), lit.size() * sizeof(int32_t), cudaMemcpyHostToDevice, st_.s));
    if (!w.empty()) MLN_CUDA_TRY(cudaMemcpyAsync(w_.get() + k0, w.data(), w.size() * sizeof(double), cudaMemcpyHostToDevice, st_.s));
    at = off[nk];
    lap(up_s.enqueue);
    MLN_CUDA_TRY(cudaStreamSynchronize(st_.s));  // before the host blocks are reused
    up_s.max_wait = std::max(up_s.max_wait, lap(up_s.wait));
    if (k1 >= K) break;
  }
}

// A^T as a CSR by atom: a stable radix sort of (atom, entry) pairs keeps
// each atom's entries in row order (gpu_detail::sort_pairs_by_key, which
// ping-pongs between two buffers: issue #45's device-memory peak).
void GpuPdhg::build_transpose() {
  const int64_t len = lp_.nnz;
  DeviceArray<uint32_t> key(len), key_alt(len), val(len);
  t_ent_.resize(len);
  t_off_.resize(static_cast<size_t>(lp_.n) + 2);
  transpose_keys_kernel<<<gpu_detail::grid_for(dl_.K, kBlock), kBlock, 0, st_.s>>>(dl_, key.get(), val.get());
  MLN_CUDA_LAUNCHED("transpose_keys_kernel");
  int bits = 1;
  while (bits < 32 && (uint64_t{1} << bits) <= static_cast<uint64_t>(lp_.n)) ++bits;
  // The sorted entries end in t_ent_: they are A^T's.
  const uint32_t* sorted = gpu_detail::sort_pairs_by_key(key, key_alt, val, t_ent_, len, bits, st_.s);
  transpose_offsets_kernel<<<gpu_detail::grid_for(static_cast<int64_t>(lp_.n) + 2, kBlock), kBlock, 0, st_.s>>>(
      lp_.n, sorted, len, t_off_.get());
  MLN_CUDA_LAUNCHED("transpose_offsets_kernel");
  // Every literal is an entry: atoms 1..n end at the last one.
  int64_t ends[2] = {-1, -1};
  MLN_CUDA_TRY(cudaMemcpyAsync(ends, t_off_.get(), sizeof(int64_t), cudaMemcpyDeviceToHost, st_.s));
  MLN_CUDA_TRY(cudaMemcpyAsync(ends + 1, t_off_.get() + lp_.n + 1, sizeof(int64_t), cudaMemcpyDeviceToHost, st_.s));
  MLN_CUDA_TRY(cudaStreamSynchronize(st_.s));  // before the sort's arrays are freed
  if (ends[0] != 0 || ends[1] != len) throw GpuError("lp_bound_pdhg: the device's A^T has the wrong size");
}

GpuPdhg::GpuPdhg(const Lp& lp, int nt, const PdhgOptions& opts, Clock::time_point t0) : lp_(lp), nt_(nt) {
  const auto tc = Clock::now();
  // Entries of A^T hold a row in 31 bits.
  if (lp.rows() >= (int64_t{1} << 31)) throw GpuError("the LP has 2^31 rows or more: PDHG runs on the CPU");
  const size_t n1 = static_cast<size_t>(lp.n) + 1, K = lp.clause.size(), rows = static_cast<size_t>(lp.rows());
  upload_clauses(opts, t0);
  t_uploaded = seconds_since(tc);
  up(row_, lp.row_off);
  up(c_, lp.c);
  up(tx_, lp.tx);
  hx_ = initial_x(lp);
  up(x_, hx_);
  up(xn_, hx_);
  up(x0_, hx_);
  zeros(z_, K);
  zeros(z0_, K);
  zeros(y_, rows);
  zeros(y0_, rows);
  zeros(aty_, n1);
  part_c_.resize(2 * kMaxBlocks);
  part_a_.resize(2 * kMaxBlocks);
  dl_ = DevLp{lp.n, static_cast<int64_t>(K), off_.get(), lit_.get(), w_.get(), row_.get(), c_.get(), tx_.get(),
              nullptr, nullptr};
  if (out_of_time(opts, t0)) throw SetupStopped{};
  build_transpose();
  t_transposed = seconds_since(tc);
  dl_.t_off = t_off_.get();
  dl_.t_ent = t_ent_.get();
  di_ = DevIter{x_.get(), xn_.get(), x0_.get(), z_.get(), z0_.get(), y_.get(), y0_.get(), aty_.get()};
  x_best = hx_;
  lacc_.resize(static_cast<size_t>(eval_threads(nt, lp.n)));  // sized by evaluate's threads
}

Eval GpuPdhg::evaluate() {
  const auto t = Clock::now();
  down(hx_, xn_, static_cast<size_t>(lp_.n) + 1);
  down(hy_, y_, static_cast<size_t>(lp_.rows()));
  MLN_CUDA_TRY(cudaStreamSynchronize(st_.s));
  const Eval e = pdhg_detail::evaluate(lp_, hx_.data(), hy_.data(), lacc_, nt_);
  ++evals;
  eval_s += seconds_since(t);
  return e;
}

StepNorms GpuPdhg::step(double lambda, double gamma, bool norms) {
  StepCoef p;
  p.tau = eta_ / omega_;
  p.sigma = eta_ * omega_;
  p.a1 = lambda * (1 + gamma);
  p.a2 = lambda * gamma;
  p.a3 = 1 - lambda;
  const int ga = blocks_for(lp_.n), gc = blocks_for(dl_.K);
  x_step_kernel<<<ga, kBlock, 0, st_.s>>>(dl_, di_, p.tau);
  MLN_CUDA_LAUNCHED("x_step_kernel");
  if (norms) {
    clause_step_kernel<true><<<gc, kBlock, 0, st_.s>>>(dl_, di_, p, part_c_.get());
    aty_kernel<true><<<ga, kBlock, 0, st_.s>>>(dl_, di_, p, part_a_.get());
  } else {
    clause_step_kernel<false><<<gc, kBlock, 0, st_.s>>>(dl_, di_, p, part_c_.get());
    aty_kernel<false><<<ga, kBlock, 0, st_.s>>>(dl_, di_, p, part_a_.get());
  }
  MLN_CUDA_LAUNCHED("clause_step_kernel / aty_kernel");
  if (!norms) return {};  // the loop does not read them: no wait for the device
  down(hpc_, part_c_, 2 * static_cast<size_t>(gc));
  down(hpa_, part_a_, 2 * static_cast<size_t>(ga));
  MLN_CUDA_TRY(cudaStreamSynchronize(st_.s));
  return {sum_parts(hpc_, gc, 0) + sum_parts(hpa_, ga, 0), sum_parts(hpc_, gc, 1)};
}

void GpuPdhg::restart() {
  const int ga = blocks_for(lp_.n), gc = blocks_for(dl_.K);
  restart_atoms_kernel<<<ga, kBlock, 0, st_.s>>>(dl_, di_, part_a_.get());
  restart_clauses_kernel<<<gc, kBlock, 0, st_.s>>>(dl_, di_, part_c_.get());
  MLN_CUDA_LAUNCHED("restart kernels");
  down(hpa_, part_a_, 2 * static_cast<size_t>(ga));
  down(hpc_, part_c_, 2 * static_cast<size_t>(gc));
  MLN_CUDA_TRY(cudaStreamSynchronize(st_.s));
  omega_ = next_omega(omega_, sum_parts(hpa_, ga, 0) + sum_parts(hpc_, gc, 0), sum_parts(hpc_, gc, 1));
  const size_t n1 = static_cast<size_t>(lp_.n) + 1, K = lp_.clause.size(), rows = static_cast<size_t>(lp_.rows());
  auto copy = [&](DeviceArray<double>& dst, const DeviceArray<double>& src, size_t n) {
    if (n) MLN_CUDA_TRY(cudaMemcpyAsync(dst.get(), src.get(), n * sizeof(double), cudaMemcpyDeviceToDevice, st_.s));
  };
  copy(x0_, x_, n1);
  copy(z0_, z_, K);
  copy(y0_, y_, rows);
}

}  // namespace

PdhgOutcome lp_bound_pdhg_gpu(const mln::Network& net, const PdhgOptions& opts) {
  const auto t0 = Clock::now();
  const int nt = opts.threads > 0 ? opts.threads : default_threads();
  const Lp lp = build_lp(net, [&] { return out_of_time(opts, t0); });
  const double t_lp = seconds_since(t0);
  PdhgOutcome out;
  out.bound = unit_bound(net);
  out.device = "gpu";
  std::vector<double> x_best;
  double t_ready = 0, t_loop = 0, eval_s = 0, t_up = 0, t_at = 0;
  int64_t evals = 0;
  GpuPdhg::UploadSeconds up_s;
  try {
    if (lp.stopped || out_of_time(opts, t0)) throw SetupStopped{};  // in the LP's build, or already after it
    GpuPdhg b(lp, nt, opts, t0);  // its device memory is given back before the rounding
    t_ready = seconds_since(t0);
    t_up = b.t_uploaded;
    t_at = b.t_transposed;
    up_s = b.up_s;
    pdhg_loop(b, opts, t0, out);
    t_loop = seconds_since(t0);
    x_best = std::move(b.x_best);
    evals = b.evals;
    eval_s = b.eval_s;
  } catch (const SetupStopped&) {  // the unit bound, no state
    out.seconds = seconds_since(t0);
    if (std::getenv("MLN_MAP_DEBUG"))
      std::fprintf(stderr, "[pdhg gpu] LP %s at %.3f s, stopped in its set-up at %.3f s\n",
                   lp.stopped ? "build cut" : "built", t_lp, out.seconds);
    return out;
  }
  const double t_freed = seconds_since(t0);
  round_best(net, lp, x_best, nt, t0, out);
  if (std::getenv("MLN_MAP_DEBUG")) {  // where the bound's seconds go (docs/solver/map.md)
    std::fprintf(stderr,
                 "[pdhg gpu] clauses' upload: %lld blocks; allocation %.3f s, gather %.3f s, copies queued %.3f s, "
                 "waits %.3f s (longest %.3f s)\n",
                 static_cast<long long>(up_s.blocks), up_s.alloc, up_s.gather, up_s.enqueue, up_s.wait, up_s.max_wait);
    std::fprintf(stderr,
                 "[pdhg gpu] LP built at %.3f s, on the device at %.3f s (clauses up after %.3f s, A^T after %.3f s); "
                 "%lld iterations, %lld evaluations (%.3f s), iterations ended at %.3f s (bound %f), device freed at "
                 "%.3f s, rounded at %.3f s\n",
                 t_lp, t_ready, t_up, t_at, static_cast<long long>(out.iterations), static_cast<long long>(evals), eval_s, t_loop,
                 out.bound, t_freed, out.seconds);
  }
  return out;
}

}  // namespace mln::solver
