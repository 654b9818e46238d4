// Loading a program's catalog state and its symbol dictionary.
#include "pg/program_ctx.hpp"

#include <cerrno>
#include <cstdlib>

namespace mln::pg {

ProgramCtx load_program(Spi& spi, const std::string& name) {
  Rows r = spi.query("SELECT schema_name::text, source, coalesce(query, '') FROM mln.programs WHERE name = $1",
                     {text_param(name)});
  if (r.size() == 0)
    throw UserError{ERRCODE_UNDEFINED_OBJECT, "program \"" + name + "\" does not exist", "",
                    "create it with mln.create_program(name, program)"};
  ProgramCtx ctx;
  ctx.name = name;
  ctx.schema = r.text(0, 0);
  std::string source = r.text(0, 1);
  ctx.query = r.text(0, 2);
  ctx.prog = lang::parse_program(source);
  // The catalog's weights win over the source's: mln.learn_weights and
  // mln.restore_weights (and a user's UPDATE) change mln.clauses only.
  Rows w = spi.query("SELECT idx, weight FROM mln.clauses WHERE program = $1 AND NOT hard", {text_param(name)});
  for (size_t i = 0; i < w.size(); ++i) {
    const int idx = w.int4(i, 0);
    if (idx < 0 || static_cast<size_t>(idx) >= ctx.prog.clauses.size()) continue;
    lang::Clause& cl = ctx.prog.clauses[idx];
    if (!cl.hard && cl.weight_var.empty()) cl.weight = w.float8(i, 1);
  }
  ctx.bindings.resize(ctx.prog.preds.size());
  Rows b = spi.query(
      "SELECT idx, bound_relation::text, bound_columns, coalesce(truth_column, '') FROM mln.predicates "
      "WHERE program = $1 AND bound_relation IS NOT NULL",
      {text_param(name)});
  for (size_t i = 0; i < b.size(); ++i) {
    int idx = b.int4(i, 0);
    if (idx < 0 || static_cast<size_t>(idx) >= ctx.bindings.size()) continue;
    Binding& bd = ctx.bindings[idx];
    bd.bound = true;
    bd.relation = b.text(i, 1);
    bd.columns = b.text_array(i, 2);
    bd.truth_column = b.text(i, 3);
  }
  return ctx;
}

void SymbolTable::lock(Spi& spi, const std::string& schema) {
  table_ = qualified(schema, "_symbols");
  spi.exec("LOCK TABLE " + table_ + " IN SHARE ROW EXCLUSIVE MODE");
}

void SymbolTable::load(Spi& spi, const std::string& schema) {
  lock(spi, schema);
  spi_ = nullptr;
  Rows r = spi.query("SELECT id, name FROM " + table_);
  names_.assign(r.size() + 1, std::string());
  ids_.clear();
  ids_.reserve(r.size() * 2 + 16);
  for (size_t i = 0; i < r.size(); ++i) {
    int32_t id = r.int4(i, 0);
    if (id <= 0) continue;
    if (static_cast<size_t>(id) >= names_.size()) names_.resize(id + 1);
    names_[id] = r.text(i, 1);
    ids_.emplace(names_[id], id);
  }
  next_ = static_cast<int32_t>(names_.size());
  pending_.clear();
}

void SymbolTable::open(Spi& spi, const std::string& schema) {
  lock(spi, schema);
  spi_ = &spi;
  ids_.clear();
  names_.assign(1, std::string());
  next_ = spi.query("SELECT coalesce(max(id), 0) + 1 FROM " + table_).int4(0, 0);
  pending_.clear();
}

int32_t SymbolTable::find(const std::string& s) {
  auto it = ids_.find(s);
  if (it != ids_.end()) return it->second;
  if (!spi_) return 0;
  Rows r = spi_->query("SELECT id FROM " + table_ + " WHERE name = $1", {text_param(s)});
  const int32_t id = r.size() ? r.int4(0, 0) : 0;
  ids_.emplace(s, id);
  return id;
}

int32_t SymbolTable::intern(const std::string& s) {
  int32_t id = find(s);
  if (id != 0) return id;
  id = next_++;
  ids_[s] = id;
  if (!spi_) names_.push_back(s);
  pending_.emplace_back(id, s);
  return id;
}

std::vector<std::string> SymbolTable::all_names() {
  if (!spi_) return names_;
  std::vector<std::string> names(static_cast<size_t>(next_));
  Rows r = spi_->query("SELECT id, name FROM " + table_);
  for (size_t i = 0; i < r.size(); ++i) {
    const int32_t id = r.int4(i, 0);
    if (id > 0 && id < next_) names[id] = r.text(i, 1);
  }
  for (const auto& [id, name] : pending_) names[id] = name;
  return names;
}

void SymbolTable::flush(Spi& spi) {
  if (pending_.empty()) return;
  std::vector<int32_t> ids;
  std::vector<std::string> names;
  for (const auto& [id, name] : pending_) {
    ids.push_back(id);
    names.push_back(name);
  }
  spi.exec("INSERT INTO " + table_ + " SELECT * FROM unnest($1, $2)",
           {int4_array_param(ids), text_array_param(names)});
  pending_.clear();
}

int32_t parse_int_arg(const std::string& s, const std::string& pred, int line) {
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno != 0 || v < INT32_MIN || v > INT32_MAX)
    throw UserError{ERRCODE_INVALID_TEXT_REPRESENTATION,
                    "line " + std::to_string(line) + ": \"" + s + "\" is not an integer (argument of " + pred + ")",
                    "", ""};
  return static_cast<int32_t>(v);
}

}  // namespace mln::pg
