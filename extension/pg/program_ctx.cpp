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

void SymbolTable::load(Spi& spi, const std::string& schema) {
  spi.exec("LOCK TABLE " + qualified(schema, "_symbols") + " IN SHARE ROW EXCLUSIVE MODE");
  Rows r = spi.query("SELECT id, name FROM " + qualified(schema, "_symbols") + " ORDER BY id");
  names_.assign(r.size() + 1, std::string());
  ids_.clear();
  ids_.reserve(r.size() * 2 + 16);
  for (size_t i = 0; i < r.size(); ++i) {
    int32_t id = r.int4(i, 0);
    if (static_cast<size_t>(id) >= names_.size()) names_.resize(id + 1);
    names_[id] = r.text(i, 1);
    ids_.emplace(names_[id], id);
  }
  flushed_ = names_.size();
}

int32_t SymbolTable::intern(const std::string& s) {
  auto it = ids_.find(s);
  if (it != ids_.end()) return it->second;
  int32_t id = static_cast<int32_t>(names_.size());
  names_.push_back(s);
  ids_.emplace(s, id);
  return id;
}

int32_t SymbolTable::find(const std::string& s) const {
  auto it = ids_.find(s);
  return it == ids_.end() ? 0 : it->second;
}

void SymbolTable::flush(Spi& spi, const std::string& schema) {
  if (flushed_ >= names_.size()) return;
  std::vector<int32_t> ids;
  std::vector<std::string> names;
  for (size_t i = flushed_; i < names_.size(); ++i) {
    ids.push_back(static_cast<int32_t>(i));
    names.push_back(names_[i]);
  }
  spi.exec("INSERT INTO " + qualified(schema, "_symbols") + " SELECT * FROM unnest($1, $2)",
           {int4_array_param(ids), text_array_param(names)});
  flushed_ = names_.size();
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
