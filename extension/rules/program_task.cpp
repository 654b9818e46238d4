// A program's evidence as a rule learning task (program_task.hpp).
#include "rules/program_task.hpp"

#include <algorithm>
#include <memory>

namespace mln::rules {

const char* const kPredicatesSql =
    "SELECT name, array_to_string(arg_types, ','), array_to_string(arg_kinds, ','), "
    "array_to_string(arg_names, ',') FROM mln.predicates WHERE program = $1 ORDER BY idx";

namespace {

// Splits "a,b,c" (array_to_string of names that hold no comma).
std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> v;
  for (size_t a = 0, b = 0; a <= s.size(); a = b + 1) {
    b = s.find(',', a);
    if (b == std::string::npos) b = s.size();
    v.push_back(s.substr(a, b - a));
  }
  return v;
}

bool has_float(const DeclaredPredicate& p) {
  return std::find(p.kinds.begin(), p.kinds.end(), "float") != p.kinds.end();
}

}  // namespace

DeclaredPredicate declared_predicate(const std::string& name, const std::string& types, const std::string& kinds,
                                     const std::string& columns) {
  DeclaredPredicate p;
  p.name = name;
  p.types = split_commas(types);
  p.kinds = split_commas(kinds);
  p.columns = split_commas(columns);
  if (p.kinds.size() != p.types.size() || p.columns.size() != p.types.size())
    throw TaskError("predicate \"" + name + "\" has declarations of different lengths (internal)");
  return p;
}

std::string atoms_sql(const std::string& table, const std::vector<std::string>& columns, bool truth) {
  std::string sel;
  for (size_t c = 0; c < columns.size(); ++c) sel += (c ? ", " : "") + columns[c];
  return "SELECT DISTINCT " + sel + " FROM " + table + " WHERE truth = " + (truth ? "true" : "false");
}

std::string symbol_constant(const std::string& s) {
  return s.find('"') == std::string::npos ? "\"" + s + "\"" : "'" + s + "'";
}

std::string symbols_sql(const std::string& table) { return "SELECT id, name FROM " + table + " ORDER BY id"; }

const DeclaredPredicate& find_target(const std::vector<DeclaredPredicate>& preds, const std::string& program,
                                     const std::string& target) {
  for (const DeclaredPredicate& p : preds)
    if (p.name == target && !has_float(p)) return p;
  throw ProgramError(ProgramError::Kind::kNoPredicate,
                     "program \"" + program + "\" has no predicate \"" + target + "\"",
                     "the target is one of the program's predicates (of integer or symbol arguments)");
}

Task program_task(const std::vector<DeclaredPredicate>& preds, const std::string& program, const std::string& target,
                  EvidenceSource& src, int64_t negatives_per_positive, uint64_t seed) {
  find_target(preds, program, target);
  // Types by declared name; a type is of symbols when any column of it is.
  auto is_symbol = std::make_shared<std::vector<char>>();
  Task task;
  auto type_of = [&](const std::string& t, bool symbol) {
    auto it = std::find(task.type_names.begin(), task.type_names.end(), t);
    const size_t k = static_cast<size_t>(it - task.type_names.begin());
    if (it == task.type_names.end()) task.type_names.push_back(t), is_symbol->push_back(0);
    if (symbol) (*is_symbol)[k] = 1;
    return static_cast<int>(k);
  };
  for (const DeclaredPredicate& d : preds) {
    if (has_float(d)) continue;  // not a relation of ids
    Predicate p;
    p.name = d.name;
    for (size_t c = 0; c < d.types.size(); ++c) p.types.push_back(type_of(d.types[c], d.kinds[c] == "symbol"));
    if (d.name != target) {
      p.rows = src.atoms(d, true);
      task.background.push_back(std::move(p));
      continue;
    }
    task.pos = src.atoms(d, true);
    task.neg = src.atoms(d, false);
    task.target = std::move(p);
  }
  if (task.pos.rows() == 0)
    throw ProgramError(ProgramError::Kind::kNoExamples, "the evidence holds no true atom of \"" + target + "\"",
                       "rules are learned from the program's evidence (mln.load_evidence)");
  if (task.neg.rows() == 0)
    task.neg = sample_negatives(task, static_cast<size_t>(negatives_per_positive) * task.pos.rows(), seed);
  auto names = std::make_shared<std::vector<std::string>>();  // by id (ids start at 1)
  for (auto& [id, name] : src.symbols()) {
    if (id <= 0) continue;
    if (static_cast<size_t>(id) >= names->size()) names->resize(static_cast<size_t>(id) + 1);
    (*names)[static_cast<size_t>(id)] = std::move(name);
  }
  task.show = [is_symbol, names](int type, int32_t v) {
    if (!(*is_symbol)[static_cast<size_t>(type)]) return std::to_string(v);
    return v > 0 && static_cast<size_t>(v) < names->size() ? symbol_constant((*names)[static_cast<size_t>(v)])
                                                          : std::to_string(v);
  };
  return task;
}

}  // namespace mln::rules
