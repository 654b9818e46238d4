// Tuffy's output files: MAP (docs/tuffy-reference.md §8.1) and marginal (§8.2).
#pragma once

#include <string>

namespace mln::worker { class Conn; }

namespace mln::cli {

// Formats one argument: quoted with Java escapes, unless it starts with a
// digit and contains no space (then bare).
std::string format_arg(const std::string& v);
// Writes the true query atoms of `program` to `path` (gzipped to path.gz
// with gz).
void write_map_output(mln::worker::Conn& c, const std::string& program, const std::string& path, bool gz);
// Writes the marginal probabilities of `program`'s active query atoms (hard
// evidence and inactive atoms are not listed) with probability >= min_prob:
// predicates sorted by name, then most probable first, one
// "%.4f<TAB>Atom" line each ("tuffyPrediction(%.4f, Atom)." with
// `prolog_facts`), with " // prior = %.4f ; delta = %.4f" when the atom
// has a prior (soft evidence).  Returns the number of lines.
long long write_marginal_output(mln::worker::Conn& c, const std::string& program, const std::string& path, bool gz,
                                double min_prob, bool prolog_facts);
// Writes the weights learning job `job` gave `program`, as Tuffy's -learnwt
// output (docs/tuffy-reference.md section 7.4): the predicate declarations,
// then "//AVERAGE WEIGHT OF ALL THE ITERATIONS" and "//WEIGHT OF LAST
// ITERATION", each with one "<weight %.4f> <clause> //<clause no>" line per
// clause (hard clauses: "<clause>. //<no>").
// -learnrules: mln.learn_rules_from's rules for `target`, one a line, each
// followed by its coverage as a comment; returns how many were written.
int write_learned_rules(mln::worker::Conn& c, const std::string& program, const std::string& target,
                        const std::string& options, const std::string& path);

void write_learned_weights(mln::worker::Conn& c, const std::string& program, long long job, const std::string& path,
                           bool gz);

}  // namespace mln::cli
