// Output files in Tuffy's format: MAP (Pred("A", "B"), one true query atom
// a line) and marginals (0.6225<TAB>Pred("A"), most probable first).
#include "cli/output.hpp"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <vector>

#include "cli/embedded.hpp"
#include "cli/server.hpp"
#include "lang/lexer.hpp"
#include "worker/pq.hpp"

namespace mln::cli {

std::string format_arg(const std::string& v) {
  if (!v.empty() && std::isdigit(static_cast<unsigned char>(v[0])) && v.find(' ') == std::string::npos) return v;
  return lang::detail::quoted_string(v);
}

namespace {

// Pred("A", 7) from a predicate name and its arguments as a JSON array of
// strings (array_to_json(text[])).
std::string atom_line(const std::string& pred, const std::string& js) {
  std::string line = pred + "(";
  std::vector<std::string> args;
  for (size_t p = 0; p < js.size(); ++p) {
    if (js[p] != '"') continue;
    std::string s;
    for (++p; p < js.size() && js[p] != '"'; ++p) {
      if (js[p] == '\\' && p + 1 < js.size()) {
        char e = js[++p];
        if (e == 'n') s += '\n';
        else if (e == 't') s += '\t';
        else if (e == 'r') s += '\r';
        else if (e == 'u' && p + 4 < js.size()) { s += static_cast<char>(std::stoi(js.substr(p + 1, 4), nullptr, 16)); p += 4; }
        else s += e;
      } else {
        s += js[p];
      }
    }
    args.push_back(s);
  }
  for (size_t k = 0; k < args.size(); ++k) line += (k ? ", " : "") + format_arg(args[k]);
  return line + ")";
}

void close_output(std::ofstream& f, const std::string& path, bool gz) {
  f.close();
  if (!f) throw std::runtime_error("error writing output file " + path);
  if (gz && run_shell("gzip -f " + shq(path), false) != 0) throw std::runtime_error("gzip failed for " + path);
}

// Runs an answer query with JIT off: the planner's estimate over the answer
// views (one branch per predicate, joined with the names) passes JIT's
// thresholds, and compiling their hundreds of functions costs more than the
// query itself (docs/performance.md, "Measured choices").  The session's
// setting is restored after, whatever happened.
template <class F>
mln::worker::Result without_jit(mln::worker::Conn& c, F&& query) {
  c.exec("SET jit = off");
  try {
    mln::worker::Result r = query();
    c.exec("RESET jit");
    return r;
  } catch (...) {
    try { c.exec("RESET jit"); } catch (...) {}
    throw;
  }
}

}  // namespace

void write_map_output(mln::worker::Conn& c, const std::string& program, const std::string& path, bool gz) {
  // The worker materialises the decoded answer as <schema>.map_result when it
  // finishes a job; reading it avoids decoding the arguments a second time.
  mln::worker::Result t =
      c.exec("SELECT quote_ident(schema_name), to_regclass(quote_ident(schema_name) || '.map_result') IS NOT NULL "
            "FROM mln.programs WHERE name = $1",
            {program});
  const std::string source = t.rows() == 1 && t.get(0, 1) == "t" ? t.get(0, 0) + ".map_result" : "mln.map($1)";
  mln::worker::Result r = without_jit(c, [&] {
    return c.exec("SELECT predicate, array_to_json(arguments)::text FROM " + source + " WHERE truth ORDER BY 1, 2",
                  source == "mln.map($1)" ? std::vector<std::string>{program} : std::vector<std::string>{});
  });
  std::ofstream f(path, std::ios::trunc);
  if (!f) throw std::runtime_error("cannot write output file " + path + ": " + std::strerror(errno));
  for (int i = 0; i < r.rows(); ++i) f << atom_line(r.get(i, 0), r.get(i, 1)) << "\n";
  close_output(f, path, gz);
}

long long write_marginal_output(mln::worker::Conn& c, const std::string& program, const std::string& path, bool gz,
                                double min_prob, bool prolog_facts) {
  // mln._marginal_program raises the clear errors (no result yet, ...).
  mln::worker::Result t = c.exec("SELECT quote_ident((mln._marginal_program($1)).schema_name)", {program});
  // The same rows as mln.marginals, with the prior of soft-evidence atoms.
  // Predicates sort by name in byte order (Tuffy sorts Java strings).
  const std::string sql =
      "SELECT a.predicate, array_to_json(a.arguments)::text, m.probability, a.prior "
      "FROM mln.ground_atoms($1) a JOIN " + t.get(0, 0) + "._marginal m ON m.atom = a.id "
      "WHERE a.is_query AND (a.evidence IS NULL OR a.prior IS NOT NULL) AND m.probability >= $2::float8 "
      "ORDER BY a.predicate COLLATE \"C\", m.probability DESC, a.arguments";
  char min[40];
  std::snprintf(min, sizeof min, "%.17g", min_prob);
  mln::worker::Result r = without_jit(c, [&] { return c.exec(sql, {program, min}); });
  std::ofstream f(path, std::ios::trunc);
  if (!f) throw std::runtime_error("cannot write output file " + path + ": " + std::strerror(errno));
  char buf[96];
  for (int i = 0; i < r.rows(); ++i) {
    const double p = r.dbl(i, 2);
    const std::string atom = atom_line(r.get(i, 0), r.get(i, 1));
    if (prolog_facts) {
      std::snprintf(buf, sizeof buf, "%.4f", p);
      f << "tuffyPrediction(" << buf << ", " << atom << ").";
    } else {
      std::snprintf(buf, sizeof buf, "%.4f\t", p);
      f << buf << atom;
    }
    if (!r.null(i, 3)) {
      const double prior = r.dbl(i, 3);
      std::snprintf(buf, sizeof buf, " // prior = %.4f ; delta = %.4f", prior, p - prior);
      f << buf;
    }
    f << "\n";
  }
  close_output(f, path, gz);
  return r.rows();
}

}  // namespace mln::cli

namespace mln::cli {

int write_learned_rules(mln::worker::Conn& c, const std::string& program, const std::string& target,
                        const std::string& options, const std::string& path) {
  mln::worker::Result r = c.exec(
      "SELECT rule, positives, negatives FROM mln.learn_rules_from($1, $2, $3::jsonb)", {program, target, options});
  std::ofstream f(path, std::ios::trunc);
  if (!f) throw std::runtime_error("cannot write output file " + path + ": " + std::strerror(errno));
  for (int i = 0; i < r.rows(); ++i)
    f << r.get(i, 0) << "  // covers " << r.get(i, 1) << " true and " << r.get(i, 2) << " false atoms\n";
  return r.rows();
}

void write_learned_weights(mln::worker::Conn& c, const std::string& program, long long job, const std::string& path,
                           bool gz) {
  mln::worker::Result preds = c.exec(
      "SELECT CASE WHEN closed_world THEN '*' ELSE '' END || name || '(' || array_to_string(arg_types, ',') || ')' "
      "FROM mln.predicates WHERE program = $1 ORDER BY idx",
      {program});
  // Per clause: the current weight (the job's result, or as written for
  // clauses that were not learned) and the mean over the job's iterations.
  mln::worker::Result cl = c.exec(
      "SELECT c.idx + 1, c.clause, c.hard, c.weight, a.avg FROM mln.clauses c "
      "LEFT JOIN (SELECT u.idx, avg(u.w) AS avg FROM mln.learn_iterations i, unnest(i.clauses, i.weights) AS u(idx, w) "
      "           WHERE i.job = $2::bigint AND i.iteration > 0 GROUP BY u.idx) a ON a.idx = c.idx "
      "WHERE c.program = $1 ORDER BY c.idx",
      {program, std::to_string(job)});
  std::ofstream f(path, std::ios::trunc);
  if (!f) throw std::runtime_error("cannot write output file " + path + ": " + std::strerror(errno));
  for (int i = 0; i < preds.rows(); ++i) f << preds.get(i, 0) << "\n";
  auto section = [&](const char* title, bool average) {
    f << "\n//" << title << "\n";
    char buf[64];
    for (int i = 0; i < cl.rows(); ++i) {
      if (cl.get(i, 2) == "t") {
        f << cl.get(i, 1) << ". //" << cl.get(i, 0) << "\n";
        continue;
      }
      const double w = average && !cl.null(i, 4) ? cl.dbl(i, 4) : cl.dbl(i, 3);
      std::snprintf(buf, sizeof buf, "%.4f ", w);
      f << buf << cl.get(i, 1) << " //" << cl.get(i, 0) << "\n";
    }
  };
  // Tuffy's two sections; its second repeats the averages by a bug, ours
  // holds the last iteration's weights (what mln.clauses now holds).
  section("AVERAGE WEIGHT OF ALL THE ITERATIONS", true);
  section("WEIGHT OF LAST ITERATION", false);
  close_output(f, path, gz);
}

}  // namespace mln::cli
