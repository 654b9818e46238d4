// Exact MAP with COIN-OR CBC and cutting-plane inference (the bounds it starts
// from: core/bound/lp_bound.*).
// See ilp_map.hpp for the formulation.
#include "core/map/ilp_map.hpp"

#include "core/base/network_cost.hpp"
#include "core/base/rng.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#ifdef MLN_HAVE_CBC
#include <CbcEventHandler.hpp>
#include <CbcModel.hpp>
#include <CbcSolver.hpp>
#include <ClpEventHandler.hpp>

#include "core/bound/cbc_stop.hpp"
#include "core/bound/ilp_model.hpp"
#include <ClpSolve.hpp>
#include <CoinPackedMatrix.hpp>
#include <OsiClpSolverInterface.hpp>
#endif

namespace mln::solver {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }


}  // namespace

#ifndef MLN_HAVE_CBC

bool ilp_available() { return false; }

IlpOutcome solve_ilp(const mln::Network&, const std::vector<uint8_t>&, const IlpOptions&) {
  throw std::runtime_error("the exact (ILP) solver is not available: pg_mln was built without COIN-OR CBC "
                           "(apt-get install coinor-libcbc-dev, then rebuild)");
}

#else

namespace {

// CBC's driver (CbcMain0/CbcMain1) keeps state in statics in 2.10; one
// solve at a time.
std::mutex g_cbc_mu;

using ilp_detail::Model;

using cbc_stop::CbcProgress;
using cbc_stop::ClpStop;
using cbc_stop::StopHandler;

int no_callback(CbcModel*, int) { return 0; }

struct IlpSolve {
  bool solved = false;       // proven optimal on its clauses
  bool have_solution = false;
  std::vector<double> x;     // per column
  double value = 0;          // objective of the solution (constant included)
  double bound = -std::numeric_limits<double>::infinity();  // CBC's proven bound (constant included)
  bool stalled = false;      // stopped because its gap stopped closing
  bool out_of_work = false;  // stopped at its work budget
  bool skipped = false;      // too little time left to start CBC (kMinCbcSeconds)
  bool timed_out = false;    // the caller's time cap ended it (or skipped it)
  double work = 0;           // CbcProgress::work
};

// Rows above which the root LP skips Clp's presolve (see run_cbc).
constexpr size_t kPresolveMaxRows = 100000;
// Rows above which CBC runs without its cut generators.  A root pass of one
// checks no clock: on the 43,000-60,000 rows of independent sets on 20,000
// nodes (mis-20000, IlpTest.AMidSizeIlpFromTheWalkHonoursItsTimeLimit)
// Gomory ran 2.4 s, two-MIR 9-10 s and, with those two off, zero-half 28 s,
// past a 10 s limit.  Proofs of smaller models need them (SolverSpread's
// ladder); class, class-hard and RC at 10^3 papers are proven as fast
// without them (docs/solver/map.md).  Nor its diving heuristics and RINS,
// for the same reason: from a coin flip (--solver ilp), mis-20000's second
// cutting-plane round spent 18 s in one node's heuristics and ran 40 s of a
// 30 s limit; without them it keeps the limit and ends lower (-8,154
// against -8,118 on its subset, rounding heuristics and branching).
constexpr size_t kCutsMaxRows = 20000;
// Seconds a clause of the ILP needs left for a round to start (solve_ilp).
constexpr double kSetupSecondsPerClause = 2e-6;
// Least time CBC is started with.  Stopped by its clock inside its
// preprocessing, CBC 2.10 crashes in CglPreProcess::postProcess (seen with
// limits of a few milliseconds, IlpTest.ATimeLimitLeavesAValidBound, two
// copies on 2 cores); with less left the round is not started at all.
constexpr double kMinCbcSeconds = 0.5;
constexpr const char* kTooLittleForCbc = "too little time left for CBC (under 0.5 s): the exact path was skipped";

// Solves the model with CBC's standard driver (presolve, cuts, heuristics),
// from the MIP start `start` (by atom id), within `work` units of simplex
// work (CbcProgress; <= 0: none) and the time cap `seconds` (<= 0: none).
IlpSolve run_cbc(const Model& md, const std::vector<uint8_t>& start, double seconds, double work, StopToken* stop,
                 bool stop_when_stalled, double stall_window) {
  std::lock_guard<std::mutex> lock(g_cbc_mu);
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(std::max(seconds, 0.0)));
  OsiClpSolverInterface si;
  md.load(si, true);
  // The root LP by the dual simplex: Clp's automatic choice takes the
  // primal with its Idiot crash on large models, which fires no iteration
  // event, so neither ClpStop nor CBC's -sec could stop it (RC 10^4 under
  // -timeout 5: 14 s in the crash).  The dual is also CBC's own choice
  // for the LPs of its tree.
  // Clp's presolve fires no event either (its duplicate-row pass alone
  // outlasted a 2 s limit on that model): off on large models.
  ClpSolve dual;
  dual.setSolveType(ClpSolve::useDual);
  if (md.row_lb.size() > kPresolveMaxRows) dual.setPresolveType(ClpSolve::presolveOff);
  si.setSolveOptions(dual);
  IlpSolve r;
  if (md.obj.empty()) {  // nothing to decide
    r.solved = r.have_solution = true;
    r.value = r.bound = md.constant;
    return r;
  }
  // What is left of `seconds` after the model's load (0: no limit).
  const double left = seconds > 0 ? std::chrono::duration<double>(deadline - Clock::now()).count() : 0.0;
  if (seconds > 0 && left < kMinCbcSeconds) {
    r.skipped = r.timed_out = true;
    return r;
  }
  CbcProgress progress(stall_window, work, left, static_cast<double>(md.row_lb.size() + md.obj.size()));
  progress.stall_rule = stop_when_stalled;
  ClpStop clp_stop(stop, &progress);
  si.getModelPtr()->passInEventHandler(&clp_stop);
  CbcModel model(si);
  model.setLogLevel(0);
  StopHandler handler(stop, &progress);
  model.passInEventHandler(&handler);
  // A MIP start by column name (CbcMain1 reads it from the model), every
  // column set: with the atoms alone CBC must complete it by an LP, which on
  // larger models it gave up ("mipstart values could not be used",
  // mis-20000), leaving its search without the walk's answer.
  std::vector<std::pair<std::string, double>> mip_start;
  const bool with_start = !start.empty();
  if (with_start) mip_start.reserve(md.obj.size());
  double start_objective = 0;
  for (size_t j = 0; j < md.obj.size(); ++j) {
    std::string nm = (md.atom_of_col[j] ? "x" : "z") + std::to_string(j);
    model.solver()->setColName(static_cast<int>(j), nm);
    if (!with_start) continue;
    const double v = md.start_value(j, start);
    start_objective += md.obj[j] * v;
    mip_start.emplace_back(std::move(nm), v);
  }
  if (with_start) progress.start_objective = start_objective;
  // Clp's presolve copies row names whenever columns have names: name
  // every row too (with column names only, CBC 2.10 reads past the empty
  // row-name list and crashes).
  for (size_t i = 0; i < md.row_lb.size(); ++i) model.solver()->setRowName(static_cast<int>(i), "r" + std::to_string(i));
  model.setMIPStart(mip_start);
  CbcSolverUsefulData data;
  data.noPrinting_ = true;
  CbcMain0(model, data);
  // MLN_CBC_LOG=1: CBC's own log on stdout (docs/solver/map.md).
  const bool log = std::getenv("MLN_CBC_LOG") != nullptr;
  if (log) model.setLogLevel(1);
  // No -sec: CBC's own clock would stop it at a point that depends on the
  // machine's speed (and, inside its preprocessing, crash CBC 2.10).  The
  // time cap is the handlers' (CbcProgress), checked at every node and
  // every 64 simplex iterations; one thread, so that its search repeats.
  std::vector<const char*> argv = {"pg_mln", "-log", log ? "1" : "0", "-slog", log ? "1" : "0",
                                   "-ratioGap", "0", "-allowableGap", "1e-7", "-threads", "0"};
  if (md.row_lb.size() > kCutsMaxRows)  // no cut generators, no diving or RINS; smaller models keep CBC's defaults
    argv.insert(argv.end(), {"-cuts", "off", "-DivingCoefficient", "off", "-DivingFractional", "off", "-Rins", "off"});
  argv.insert(argv.end(), {"-solve", "-quit"});
  CbcMain1(static_cast<int>(argv.size()), argv.data(), model, no_callback, data);
  const double* sol = model.bestSolution();
  if (sol) {
    r.have_solution = true;
    r.x.assign(sol, sol + md.obj.size());
    r.value = model.getObjValue() + md.constant;
  }
  // A run the deadline or the stop token reached proves nothing, whatever
  // CBC's status says: a node LP that ClpStop ended counts as solved (and
  // its node as pruned), a stop event can leave status 0, and CBC then
  // reported "proven optimal" 3-30% above the optimum (IlpTest.
  // AStoppedRunProvesNothing).  A proof finished just past the deadline is
  // given up with them; so is a run GapClosing stopped.
  if (seconds > 0 && Clock::now() >= deadline) progress.timed_out = true;
  const bool cut_short = progress.stalled || progress.out_of_work || progress.timed_out || (stop && stop->should_stop());
  r.stalled = progress.stalled;
  r.out_of_work = progress.out_of_work;
  r.timed_out = progress.timed_out;
  r.work = progress.work;
  r.solved = !cut_short && model.isProvenOptimal() && sol != nullptr;
  // CBC's best possible value is a bound only when its search finished:
  // after a stop inside the root LP it can be any number (seen: 16x the
  // optimum).  An unfinished round contributes no bound.
  if (r.solved) r.bound = std::min(model.getBestPossibleObjValue() + md.constant, r.value);
  return r;
}

// solve_ilp's starting state: `start` (by atom id), all false when empty.
std::vector<uint8_t> start_state(const mln::Network& net, const std::vector<uint8_t>& start) {
  std::vector<uint8_t> best(static_cast<size_t>(net.num_atoms) + 1, 0);
  if (start.empty()) return best;
  if (start.size() != best.size()) throw std::invalid_argument("solve_ilp: start must have num_atoms + 1 entries");
  best = start;
  best[0] = 0;
  return best;
}

// A fixed coin-flip state of size n (index 0 unused).
std::vector<uint8_t> fixed_coin_state(size_t n) {
  std::vector<uint8_t> coin(n, 0);
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (size_t a = 1; a < n; ++a) coin[a] = static_cast<uint8_t>(splitmix64(x) & 1);
  return coin;
}

// The ILP over the clauses marked in in_ilp.  Clauses with no literal are
// constant: they count in every ILP so that its value is comparable with
// the network's cost.
Model model_of(const ClauseSet& cs, const std::vector<uint8_t>& in_ilp) {
  Model md;
  for (size_t c = 0; c < cs.size(); ++c)
    if (in_ilp[c]) md.add_clause(cs, c);
  for (size_t c = 0; c < cs.size(); ++c)
    if (!in_ilp[c] && cs.offsets[c + 1] == cs.offsets[c] && cs.weights[c] > 0) md.constant += cs.weights[c];
  return md;
}

}  // namespace

bool ilp_available() { return true; }

IlpOutcome solve_ilp(const mln::Network& net, const std::vector<uint8_t>& start, const IlpOptions& opts) {
  const auto t0 = Clock::now();
  const auto& cs = net.clauses;
  const size_t m = cs.size();
  IlpOutcome out;
  out.best = start_state(net, start);
  out.cost = total_cost(cs, out.best);
  out.bound = unit_bound(net);
  auto time_left = [&]() { return opts.time_limit_s > 0 ? opts.time_limit_s - seconds_since(t0) : 0.0; };
  auto out_of_time = [&]() {
    const bool capped = opts.time_limit_s > 0 && time_left() <= 0;
    if (capped) out.timed_out = true;
    return capped || (opts.stop && opts.stop->should_stop());
  };

  std::vector<uint8_t> in_ilp(m, 0);
  size_t used = 0;
  auto add_violated = [&](const std::vector<uint8_t>& truth) {
    size_t added = 0;
    for (size_t c = 0; c < m; ++c)
      if (!in_ilp[c] && clause_cost_of(cs, static_cast<int64_t>(c), truth) > 0) {
        in_ilp[c] = 1;
        ++added;
      }
    used += added;
    return added;
  };
  if (opts.cutting_plane) {
    // The first set: the clauses a coin-flip state violates, and the start's.
    // With only the start's (a walk violates few) the later rounds, each a
    // full CBC solve, take far longer; the all-false state (RockIt's) violates
    // almost nothing on RC-like programs (docs/solver/map.md, "Cutting-plane").
    add_violated(fixed_coin_state(out.best.size()));
    add_violated(out.best);
  } else {
    std::fill(in_ilp.begin(), in_ilp.end(), 1);
    used = m;
  }
  std::vector<uint8_t> current = out.best;  // atoms outside the ILP keep these values
  out.finished = true;
  while (true) {
    if (used == 0) {  // the start violates nothing: cost 0 (or only empty clauses), optimal
      out.bound = std::max(out.bound, out.cost);
      out.optimal = true;
      out.status = "the starting state violates no clause";
      break;
    }
    if (out.rounds >= opts.max_rounds) {
      out.status = "stopped after " + std::to_string(out.rounds) + " cutting-plane rounds";
      break;
    }
    // Building and loading the model cannot be interrupted (about 1 us a
    // clause on 2 cores): with less time left than twice that, no round.
    const bool no_setup = opts.time_limit_s > 0 && time_left() < kSetupSecondsPerClause * static_cast<double>(used);
    if (no_setup) out.timed_out = true;
    if (opts.work_limit > 0 && out.work >= opts.work_limit) {
      out.finished = false;
      out.status = "the exact path's work budget was spent";
      break;
    }
    if (out_of_time() || no_setup) {
      out.finished = false;
      out.status = no_setup ? "too little time left to set up the ILP" : "time limit or cancel before the proof";
      break;
    }
    Model md = model_of(cs, in_ilp);
    if (out_of_time()) {  // building a large model takes time too (and 0 s would mean no limit below)
      out.finished = false;
      out.status = "time limit or cancel before the proof";
      break;
    }
    if (opts.time_limit_s > 0 && time_left() < kMinCbcSeconds) {
      out.finished = false, out.status = kTooLittleForCbc;
      out.timed_out = true;
      break;
    }
    IlpSolve s = run_cbc(md, current, opts.time_limit_s > 0 ? time_left() : 0.0,
                         opts.work_limit > 0 ? opts.work_limit - out.work : 0.0, opts.stop, opts.stop_when_stalled,
                         opts.stall_window);
    ++out.rounds;
    out.work += s.work;
    if (s.timed_out) out.timed_out = true;
    out.clauses_used = static_cast<int64_t>(used);
    if (std::getenv("MLN_ILP_TRACE"))  // docs/solver/map.md
      std::fprintf(stderr, "ilp round %d: %zu clauses, %zu cols, %.3f s, solved %d value %.4f bound %.4f\n", out.rounds,
                   used, md.obj.size(), seconds_since(t0), static_cast<int>(s.solved), s.value, s.bound);
    // The optimum over a subset of the clauses bounds the whole.
    if (s.solved && std::isfinite(s.bound)) out.bound = std::max(out.bound, s.bound);
    if (!s.have_solution) {
      out.finished = false;
      out.status = s.skipped ? kTooLittleForCbc : "the ILP found no solution within its time";
      break;
    }
    std::vector<uint8_t> cand = current;
    for (int j : md.x_cols) cand[md.atom_of_col[j]] = s.x[j] > 0.5 ? 1 : 0;
    const double cand_cost = total_cost(cs, cand);
    if (cand_cost < out.cost) {
      out.cost = cand_cost;
      out.best = cand;
    }
    current = cand;
    if (!s.solved) {
      out.finished = false;
      out.status = s.stalled       ? "stopped: CBC's gap stopped closing"
                   : s.out_of_work ? "the exact path's work budget was spent"
                                   : "the ILP did not finish within its time";
      break;
    }
    if (add_violated(cand) == 0) {  // violates no clause left out: optimal
      out.optimal = true;
      out.status = "proven optimal after " + std::to_string(out.rounds) + " round(s), " + std::to_string(used) + " of " +
                   std::to_string(m) + " clauses";
      break;
    }
  }
  if (out.optimal) out.bound = out.cost;  // the bound CBC proved, up to its gap tolerance
  if (out.bound > out.cost) out.bound = out.cost;
  if (!out.optimal && proven_within_tolerance(out.cost, out.bound)) out.optimal = true;
  return out;
}

#endif  // MLN_HAVE_CBC

}  // namespace mln::solver
