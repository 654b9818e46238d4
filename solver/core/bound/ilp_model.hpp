// Internal to ilp_map.cpp (built with COIN-OR CBC only): the ILP of a set
// of clauses as CBC's matrix, and a state's value for each of its columns
// (the MIP start).
#pragma once

#include <cmath>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include <CoinPackedMatrix.hpp>
#include <OsiClpSolverInterface.hpp>

#include "core/base/network_cost.hpp"
#include "format/network.hpp"

namespace mln::solver::ilp_detail {

// The ILP over a subset of the clauses, with a column per atom that occurs
// in it and one per clause of two or more literals.
struct Model {
  std::vector<int32_t> atom_of_col;            // column -> atom id (0 for z columns)
  std::vector<int64_t> clause_of_col;          // column -> clause of source (-1 for x columns)
  const mln::ClauseSet* source = nullptr;      // the clauses add_clause was given
  std::vector<int> x_cols;                     // the atoms' columns, in order of first use
  std::unordered_map<int32_t, int> col_of_atom;
  std::vector<double> obj, col_lb, col_ub;
  std::vector<double> row_lb, row_ub;
  std::vector<int> tri_row, tri_col;             // the constraint matrix as triplets
  std::vector<double> tri_val;
  double constant = 0;

  int x(int32_t atom) {
    auto it = col_of_atom.find(atom);
    if (it != col_of_atom.end()) return it->second;
    int j = static_cast<int>(obj.size());
    col_of_atom.emplace(atom, j);
    atom_of_col.push_back(atom);
    clause_of_col.push_back(-1);
    x_cols.push_back(j);
    obj.push_back(0);
    col_lb.push_back(0);
    col_ub.push_back(1);
    return j;
  }
  int z(double cost, size_t clause) {
    int j = static_cast<int>(obj.size());
    atom_of_col.push_back(0);
    clause_of_col.push_back(static_cast<int64_t>(clause));
    obj.push_back(cost);
    col_lb.push_back(0);
    col_ub.push_back(1);
    return j;
  }
  // Adds "sum coef * col >= lb" (a row).
  void row(const std::vector<int>& cols, const std::vector<double>& coef, double lb) {
    const int r = static_cast<int>(row_lb.size());
    for (size_t i = 0; i < cols.size(); ++i) {
      tri_row.push_back(r);
      tri_col.push_back(cols[i]);
      tri_val.push_back(coef[i]);
    }
    row_lb.push_back(lb);
    row_ub.push_back(COIN_DBL_MAX);
  }

  // Column j's value in the state `start` (by atom id): an atom's truth, or
  // whether a clause's z pays its cost (w > 0: the clause is violated; w <
  // 0: it holds), the least z its rows allow.
  double start_value(size_t j, const std::vector<uint8_t>& start) const {
    if (atom_of_col[j]) return start[atom_of_col[j]] ? 1.0 : 0.0;
    const int64_t c = clause_of_col[j];
    bool holds = false;
    for (int64_t i = source->offsets[c]; i < source->offsets[c + 1] && !holds; ++i) {
      const int32_t l = source->lits[i];
      holds = (start[l > 0 ? l : -l] != 0) == (l > 0);
    }
    return (source->weights[c] > 0) != holds ? 1.0 : 0.0;
  }

  // Adds clause c's cost terms and rows.  Literal l as a linear term:
  // l > 0 -> x, l < 0 -> 1 - x.
  void add_clause(const mln::ClauseSet& cs, size_t c) {
    const int32_t* lits = &cs.lits[cs.offsets[c]];
    const int64_t len = cs.offsets[c + 1] - cs.offsets[c];
    const double w = cs.weights[c];
    if (w == 0) return;
    if (len == 0) {
      if (w > 0) constant += w;
      return;
    }
    if (len == 1) {
      // The cost as a function of x: if_false + (if_true - if_false) x.
      const int32_t l = lits[0];
      const UnitCost u = unit_cost(l, w);
      constant += u.if_false;
      obj[x(l > 0 ? l : -l)] += u.if_true - u.if_false;
      return;
    }
    std::vector<int> cols;
    std::vector<double> coef;
    source = &cs;
    const int zc = z(std::fabs(w), c);
    if (w > 0) {  // sum l + z >= 1
      double rhs = 1;
      for (int64_t i = 0; i < len; ++i) {
        const int32_t l = lits[i];
        cols.push_back(x(l > 0 ? l : -l));
        coef.push_back(l > 0 ? 1.0 : -1.0);
        if (l < 0) rhs -= 1;  // 1 - x moves its 1 to the right-hand side
      }
      cols.push_back(zc);
      coef.push_back(1.0);
      row(cols, coef, rhs);
    } else {  // z >= l for each l:  z - x >= 0, or z + x >= 1
      for (int64_t i = 0; i < len; ++i) {
        const int32_t l = lits[i];
        const int j = x(l > 0 ? l : -l);
        row({zc, j}, {1.0, l > 0 ? -1.0 : 1.0}, l > 0 ? 0.0 : 1.0);
      }
    }
  }

  void load(OsiClpSolverInterface& si, bool integral) const {
    CoinPackedMatrix m(true, tri_row.data(), tri_col.data(), tri_val.data(), static_cast<CoinBigIndex>(tri_val.size()));
    m.setDimensions(static_cast<int>(row_lb.size()), static_cast<int>(obj.size()));
    si.loadProblem(m, col_lb.data(), col_ub.data(), obj.data(), row_lb.data(), row_ub.data());
    if (integral)
      for (int j : x_cols) si.setInteger(j);
    si.messageHandler()->setLogLevel(0);
  }
};

}  // namespace mln::solver::ilp_detail
