// mln.ground through live grounding (live_ground.hpp).
// The standard headers first: PostgreSQL's port.h redefines snprintf.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <list>
#include <memory>
#include <random>
#include <stdexcept>

#include "pg/json.hpp"
#include "pg/live_ground.hpp"

namespace mln::pg {

bool guc_live_grounding = true;

namespace {

// At most this many programs' states per backend (the least recently used
// goes): a state holds the predicate tables and the network on the host,
// about as much memory as a grounding's output.
constexpr size_t kMaxStates = 4;
// Networks of more clauses are grounded from scratch: the state holds each
// consolidated clause in a node of its own (about 200 bytes with its weight
// multiset), and a grounding from scratch on the engine is the faster way
// to a network of that size.  The first grounding of a program is from
// scratch too (the engine's plans beat the host's per-binding build on
// class by 5x); the state is built when the program is grounded again.
constexpr long long kMaxClauses = 1000000;
// A first grounding goes through the live build where KBMC would
// materialise at least this many candidate tuples: ground()'s closure reads
// them all, the live build never does (entity resolution: 11x faster at
// 6,000 records, 36M candidates; class, 20,000: the engine is 5x faster).
constexpr double kFirstMinCandidates = 1e6;

struct State {
  std::string name, schema, key, nonce;
  std::unique_ptr<lang::Program> prog;  // the LiveGrounder reads it for its lifetime
  std::unique_ptr<ground::LiveGrounder> live;
  std::vector<int32_t> stored_ids;  // id of the stored network -> the state's atom id ([0] = 0)
};

std::list<State>& states() {
  static std::list<State> s;  // front: the most recently used
  return s;
}

// What the state depends on besides the data: the program's declarations
// and clauses, its query, and unit propagation.
std::string program_key(const ProgramCtx& ctx, const ground::GroundOptions& opts) {
  std::string k = ctx.schema + '\n' + ctx.query + '\n' + (opts.unit_propagate ? "up" : "no-up") + '\n';
  for (const lang::PredicateDecl& d : ctx.prog.preds) {
    k += (d.completely_specified ? "**" : d.closed_world ? "*" : "") + d.name + '(';
    for (const std::string& t : d.arg_types) k += t + ',';
    k += ")\n";
  }
  for (const lang::Clause& c : ctx.prog.clauses)
    k += json_num(c.weight) + (c.hard ? "!" : "") + ' ' + c.text + '\n';
  return k;
}

// The stored nonce and clause count of ctx.name's network (an empty
// result: never grounded).
Rows stored_live(Spi& spi, const ProgramCtx& ctx) {
  return spi.query("SELECT ground_stats->'live'->>'nonce', ground_stats->>'clauses' FROM mln.programs WHERE name = $1",
                   {text_param(ctx.name)});
}

// Whether `st` is the stored network's state: the same program, options
// and schema, and the nonce of the grounding that stored it.
bool trusted(const State& st, const std::string& key, const ProgramCtx& ctx, const std::string& stored_nonce) {
  return st.live && st.key == key && st.schema == ctx.schema && !stored_nonce.empty() && st.nonce == stored_nonce;
}

std::string fresh_nonce() {
  static std::mt19937_64 rng{std::random_device{}()};
  static uint64_t counter = 0;
  char buf[40];
  snprintf(buf, sizeof buf, "%016llx-%llu", static_cast<unsigned long long>(rng()),
                static_cast<unsigned long long>(++counter));
  return buf;
}

}  // namespace

std::string LiveRun::json() const {
  if (!used) return "{\"used\": false, \"why_not\": " + json_quote(why_not) + "}";
  const ground::LiveDelta& d = delta;
  return "{\"used\": true, \"built\": " + std::string(built ? "true" : "false") + ", \"nonce\": " + json_quote(nonce) +
         ", \"seconds\": " + json_num(seconds) + ", \"tuples_changed\": " + std::to_string(d.tuples_changed) +
         ", \"atoms_added\": " + std::to_string(d.atoms_added) + ", \"atoms_removed\": " +
         std::to_string(d.atoms_removed) + ", \"clauses_added\": " + std::to_string(d.clauses_added) +
         ", \"clauses_removed\": " + std::to_string(d.clauses_removed) + ", \"clauses_reweighted\": " +
         std::to_string(d.clauses_reweighted) + "}";
}

bool ground_live(Spi& spi, const ProgramCtx& ctx, ground::GroundInput& in, const ground::GroundOptions& opts,
                 ground::GroundOutput& out, LiveRun& run) {
  if (!guc_live_grounding) {
    run.why_not = "mln.live_grounding is off";
    return false;
  }
  run.why_not = ground::live_unsupported(in, opts);
  if (!run.why_not.empty()) return false;
  const auto t0 = std::chrono::steady_clock::now();
  Rows stored = stored_live(spi, ctx);
  const bool first = stored.size() == 0 || stored.isnull(0, 1);
  if (first && ground::LiveGrounder::candidate_tuples(in, opts) < kFirstMinCandidates) {
    run.why_not = "a program's first grounding is from scratch (few KBMC candidates)";
    return false;
  }
  if (!first && std::stoll(stored.text(0, 1)) > kMaxClauses) {
    run.why_not = "its network has more than " + std::to_string(kMaxClauses) + " clauses";
    return false;
  }
  const std::string stored_nonce = stored.isnull(0, 0) ? "" : stored.text(0, 0);
  const std::string key = program_key(ctx, opts);
  std::list<State>& all = states();
  auto it = all.begin();
  while (it != all.end() && it->name != ctx.name) ++it;
  if (it != all.end()) all.splice(all.begin(), all, it);  // most recently used first
  else all.emplace_front(State{ctx.name, "", "", "", nullptr, nullptr, {}});
  State& st = all.front();
  while (all.size() > kMaxStates) all.pop_back();
  try {
    if (trusted(st, key, ctx, stored_nonce)) {
      in.program = st.prog.get();  // the same program, the object the state reads
      run.delta = st.live->update(in);
    } else {
      st.live.reset();
      st.prog = std::make_unique<lang::Program>(ctx.prog);
      in.program = st.prog.get();
      st.live = std::make_unique<ground::LiveGrounder>(in, opts, kMaxClauses);
      st.key = key;
      st.schema = ctx.schema;
      run.built = true;
    }
    std::vector<int32_t> id_map;
    out = st.live->output(true, &id_map);
    auto new_id = [&](int32_t a) { return a > 0 && static_cast<size_t>(a) < id_map.size() ? id_map[a] : 0; };
    for (int32_t& a : run.delta.touched_atoms) a = new_id(a);
    run.delta.touched_atoms.erase(std::remove(run.delta.touched_atoms.begin(), run.delta.touched_atoms.end(), 0),
                                  run.delta.touched_atoms.end());
    // The stored network's ids to the new ones (an atom no longer active
    // has none), for the previous answer.
    if (!run.built) {
      run.old_to_new.assign(st.stored_ids.size(), 0);
      for (size_t a = 1; a < st.stored_ids.size(); ++a) run.old_to_new[a] = new_id(st.stored_ids[a]);
    }
    st.stored_ids.assign(static_cast<size_t>(out.network.num_atoms) + 1, 0);
    for (size_t i = 1; i < id_map.size(); ++i)
      if (id_map[i] > 0) st.stored_ids[id_map[i]] = static_cast<int32_t>(i);
  } catch (const std::length_error& e) {  // the network outgrew the live path: from scratch
    all.pop_front();
    in.program = &ctx.prog;  // the state's copy went with it
    run = LiveRun();
    run.why_not = e.what();
    return false;
  } catch (...) {
    all.pop_front();  // a state half moved is never used again
    throw;
  }
  st.nonce = fresh_nonce();
  run.nonce = st.nonce;
  run.used = true;
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out.phases.push_back({run.built ? "live_build" : "live_update", run.seconds});
  return true;
}

bool live_state_ready(Spi& spi, const ProgramCtx& ctx, const ground::GroundInput& in, const ground::GroundOptions& opts) {
  if (!guc_live_grounding || !ground::live_unsupported(in, opts).empty()) return false;
  Rows stored = stored_live(spi, ctx);
  if (stored.size() == 0 || stored.isnull(0, 0) || stored.isnull(0, 1) || std::stoll(stored.text(0, 1)) > kMaxClauses)
    return false;
  const std::string key = program_key(ctx, opts), nonce = stored.text(0, 0);
  for (const State& st : states())
    if (st.name == ctx.name) return trusted(st, key, ctx, nonce);
  return false;
}

}  // namespace mln::pg
