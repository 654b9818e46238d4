// Evidence in the database: mln.load_evidence(name, text), the streaming
// ingest of staged chunks (mln.ingest_evidence), and mln.set_query.
#include "pg/guard.hpp"
#include "pg/args.hpp"
#include "pg/heap_io.hpp"
#include "pg/program_ctx.hpp"
#include "pg/spi.hpp"

#include <string>
#include <vector>

extern "C" {
#include "fmgr.h"
#include "utils/builtins.h"
PG_FUNCTION_INFO_V1(mln_load_evidence);
PG_FUNCTION_INFO_V1(mln_ingest_evidence);
PG_FUNCTION_INFO_V1(mln_set_query);
}

namespace mln::pg {
namespace {

// Evidence rows gathered per predicate, columnar, then inserted with one
// INSERT ... SELECT FROM unnest(...) per predicate.
class EvidenceBuffer {
 public:
  EvidenceBuffer(const ProgramCtx& ctx, SymbolTable& syms) : ctx_(ctx), syms_(syms), preds_(ctx.prog.preds.size()) {}

  // Adds one parsed atom.
  void add(const lang::EvidenceAtom& a) {
    const auto& d = ctx_.prog.preds[a.pred];
    if (ctx_.bindings[a.pred].bound)
      throw UserError{ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                      "line " + std::to_string(a.line) + ": predicate " + d.name + " is bound to relation " +
                          ctx_.bindings[a.pred].relation + "; its evidence is read from there",
                      "", "insert the rows into the bound relation, or unbind the predicate"};
    Cols& c = preds_[a.pred];
    if (c.args.empty()) c.args.resize(d.arity());
    for (int k = 0; k < d.arity(); ++k) {
      if (d.arg_kinds[k] == lang::TypeKind::Int) {
        c.args[k].push_back(parse_int_arg(a.args[k], d.name, a.line));
        continue;
      }
      names_.push_back(a.args[k]);
      where_.push_back({static_cast<uint32_t>(a.pred), static_cast<uint32_t>(k), c.args[k].size()});
      c.args[k].push_back(0);  // its id: resolve()
    }
    c.truth.push_back(a.truth ? 1 : 0);
    c.prior.push_back(a.prior);
    ++count_;
    if (names_.size() >= kBatch) resolve();
  }

  // Writes everything gathered so far (the new names are the SymbolTable's
  // to write, by its flush()).
  void flush() {
    resolve();
    for (size_t p = 0; p < preds_.size(); ++p) {
      Cols& c = preds_[p];
      if (c.truth.empty()) continue;
      const auto& d = ctx_.prog.preds[p];
      append_evidence(qualified(ctx_.schema, d.name), c.args, c.truth, c.prior);
      c = Cols();
    }
  }

  int64_t count() const { return count_; }

 private:
  // The symbol arguments gathered since the last call get their ids, a
  // batch at a time (SymbolTable::intern_all), in the order they came.
  void resolve() {
    ids_.resize(names_.size());
    syms_.intern_all(names_.data(), names_.size(), ids_.data());
    for (size_t j = 0; j < names_.size(); ++j) preds_[where_[j].pred].args[where_[j].col][where_[j].row] = ids_[j];
    names_.clear();
    where_.clear();
  }
  static constexpr size_t kBatch = 4096;
  struct Slot {
    uint32_t pred, col;
    size_t row;
  };
  std::vector<std::string> names_;  // symbol arguments not yet resolved, and where their ids go
  std::vector<Slot> where_;
  std::vector<int32_t> ids_;
  struct Cols {
    std::vector<std::vector<int32_t>> args;
    std::vector<uint8_t> truth;
    std::vector<double> prior;
  };
  const ProgramCtx& ctx_;
  SymbolTable& syms_;
  std::vector<Cols> preds_;
  int64_t count_ = 0;
};

// Parses `text` (whose first line is `first_line`) into the buffer.
void parse_into(EvidenceBuffer& buf, const ProgramCtx& ctx, std::string_view text, int first_line) {
  try {
    lang::parse_evidence(ctx.prog, text, [&](const lang::EvidenceAtom& a) {
      if (buf.count() % 65536 == 0) check_interrupts();
      buf.add(a);
    });
  } catch (const lang::LangError& e) {
    if (first_line <= 1) throw;
    throw lang::LangError(e.kind(), e.line() + first_line - 1, e.col(), e.token(), e.what());
  }
}

// Marks the program's ground network stale and counts the new atoms.
void note_evidence(Spi& spi, const ProgramCtx& ctx, int64_t n) {
  spi.exec("UPDATE mln.programs SET evidence_atoms = evidence_atoms + $2, grounded_at = NULL WHERE name = $1",
           {text_param(ctx.name), int8_param(n)});
}


}  // namespace
}  // namespace mln::pg

using namespace mln::pg;

// mln.load_evidence(name text, evidence text) returns bigint
Datum mln_load_evidence(PG_FUNCTION_ARGS) {
  int64_t n = 0;
  MLN_GUARDED({
    std::string name = text_arg(fcinfo, 0);
    std::string text = text_arg(fcinfo, 1);
    Spi spi;
    ProgramCtx ctx = load_program(spi, name);
    SymbolTable syms;
    syms.load(spi, ctx.schema);
    EvidenceBuffer buf(ctx, syms);
    parse_into(buf, ctx, text, 1);
    buf.flush();  // first: it resolves the last names, which syms.flush() writes
    syms.flush();
    n = buf.count();
    note_evidence(spi, ctx, n);
  });
  PG_RETURN_INT64(n);
}

// mln.ingest_evidence(name text) returns bigint: parses the line-aligned
// chunks that a client COPYed into mln_<name>._staging(seq, first_line,
// body), in order, then empties the staging table.
Datum mln_ingest_evidence(PG_FUNCTION_ARGS) {
  int64_t n = 0;
  MLN_GUARDED({
    std::string name = text_arg(fcinfo, 0);
    Spi spi;
    ProgramCtx ctx = load_program(spi, name);
    SymbolTable syms;
    syms.load(spi, ctx.schema);
    EvidenceBuffer buf(ctx, syms);
    std::string staging = qualified(ctx.schema, "_staging");
    Rows seqs = spi.query("SELECT seq FROM " + staging + " ORDER BY seq");
    std::vector<int32_t> order;
    for (size_t i = 0; i < seqs.size(); ++i) order.push_back(seqs.int4(i, 0));
    for (int32_t seq : order) {
      Rows r = spi.query("SELECT first_line, body FROM " + staging + " WHERE seq = $1", {int4_param(seq)});
      if (r.size() != 1) continue;
      int first_line = r.int4(0, 0);
      std::string body = r.text(0, 1);
      parse_into(buf, ctx, body, first_line);
      // Bound memory: the atoms flushed every ~4M.  The new names wait for
      // the end (the dictionary holds them all already): in one batch they
      // get their index entries by a rebuild (SymbolTable::flush), where
      // each later batch, smaller than the names before it, would go into
      // the two btrees one by one (issue #45; CHANGELOG 0.12.0).
      if (buf.count() - n > (1 << 22)) {
        buf.flush();
        n = buf.count();
      }
    }
    buf.flush();  // first: it resolves the last names, which syms.flush() writes
    syms.flush();
    n = buf.count();
    spi.exec("TRUNCATE " + staging);
    note_evidence(spi, ctx, n);
  });
  PG_RETURN_INT64(n);
}

// mln.set_query(name text, query text): validates Tuffy query syntax against
// the program and stores it.
Datum mln_set_query(PG_FUNCTION_ARGS) {
  MLN_GUARDED({
    std::string name = text_arg(fcinfo, 0);
    std::string query = text_arg(fcinfo, 1);
    Spi spi;
    ProgramCtx ctx = load_program(spi, name);
    (void)mln::lang::parse_queries(ctx.prog, query);
    spi.exec("UPDATE mln.programs SET query = $2, grounded_at = NULL WHERE name = $1",
             {text_param(name), text_param(query)});
  });
  PG_RETURN_VOID();
}
