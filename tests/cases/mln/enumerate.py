#!/usr/bin/env python3
"""The MLN cases' expected answers, by enumerating every world.

An independent reference for tests/cases/mln/<case>: it grounds prog.mln
over the whole domain (not Tuffy's closure of active atoms) and visits every
assignment of the atoms that evidence leaves open, component by component:
P(world) is proportional to exp(sum of the weights of the ground clauses it
satisfies), hard clauses (ending in '.') must hold.  It prints what
expected.tsv must hold: the MAP world's true query atoms, or with -marginal
in the case's flags each open query atom's probability.  For MAP it checks
that the optimum is unique on the query atoms and prints the margin to the
best world that differs on them (stderr).

The language is a subset of Tuffy's, one declaration or rule per line:
  [*]Pred(type [!], ...)                 declaration; * closed world; ! a label
                                         (exactly one true label per key)
  w [EXIST v, ...] clause                soft rule (w may be negative)
  [EXIST v, ...] clause .                hard rule
  clause := lit {v lit} | lit {, lit} => lit {v lit}
  lit    := [!]Pred(term, ...) | term = term | term != term
Variables start lower case; constants upper case, digits or "quoted".  The
evidence: [p] [!]Pred(Const, ...) a line (p a prior: a unit clause of weight
ln(p / (1 - p))).  The queries: Pred(term, ...) or Pred, a line.  A type's
domain is every constant met at its positions in the program, the evidence
and the queries.

Usage: enumerate.py CASE_DIR [--check]  (--check: compare with expected.tsv;
exit 1 when it differs or a MAP optimum is not unique)."""
import itertools
import math
import os
import re
import sys

TOKEN = re.compile(r'\s*(=>|!=|<>|"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|[A-Za-z][A-Za-z0-9_]*|[(),!=.*])')
HARD = None  # the weight of a hard clause


def tokens(line):
    out, pos = [], 0
    line = line.strip()
    while pos < len(line):
        m = TOKEN.match(line, pos)
        if not m:
            raise SyntaxError(f"cannot read {line[pos:]!r}")
        out.append(m.group(1))
        pos = m.end()
    return out


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return [re.sub(r"//.*$", "", line) for line in text.splitlines()]


def is_var(t):
    return t[0].islower()


def const(t):
    return t[1:-1] if t.startswith('"') else t


class Parser:
    def __init__(self, toks):
        self.t, self.i = toks, 0

    def peek(self):
        return self.t[self.i] if self.i < len(self.t) else None

    def take(self, want=None):
        t = self.peek()
        if want is not None and t != want:
            raise SyntaxError(f"expected {want!r}, got {t!r} in {' '.join(self.t)}")
        self.i += 1
        return t

    def atom(self):
        name = self.take()
        args = []
        if self.peek() == "(":
            self.take("(")
            while True:
                args.append(self.take())
                if self.take() == ")":
                    break
        return name, args

    def literal(self):
        """('atom', positive, pred, args) or ('cmp', positive, left, right)."""
        neg = self.peek() == "!"
        if neg:
            self.take()
        if self.i + 1 < len(self.t) and self.t[self.i + 1] in ("=", "!=", "<>"):
            left, op, right = self.take(), self.take(), self.take()
            return ("cmp", (op == "=") != neg, left, right)
        name, args = self.atom()
        return ("atom", not neg, name, args)


def parse_program(path):
    preds, rules = {}, []   # preds: name -> (types, closed, label index or None)
    for line in strip_comments(open(path, encoding="utf-8").read()):
        toks = tokens(line)
        if not toks:
            continue
        weighted = re.fullmatch(r"-?\d+(\.\d+)?([eE][-+]?\d+)?", toks[0]) is not None
        if not weighted and toks[-1] != ".":   # a declaration
            closed = toks[0] == "*"
            p = Parser(toks[1:] if closed else toks)
            name = p.take()
            p.take("(")
            types, label = [], None
            while True:
                types.append(p.take())
                if p.peek() == "!":
                    p.take()
                    label = len(types) - 1
                if p.take() == ")":
                    break
            preds[name] = (types, closed, label)
            continue
        weight = float(toks[0]) if weighted else HARD
        p = Parser(toks[1:] if weighted else toks[:-1])
        exist = []
        if p.peek() in ("EXIST", "Exist", "exist"):
            p.take()
            exist.append(p.take())
            while p.peek() == ",":
                p.take()
                exist.append(p.take())
        lits = [p.literal()]
        while p.peek() in (",", "v", "=>"):
            s = p.take()
            if s == "=>":   # the literals so far are the body: negate them
                lits = [(k, not pos, a, b) for k, pos, a, b in lits]
            lits.append(p.literal())
        if p.peek() is not None:
            raise SyntaxError(f"unread {p.peek()!r} in {line!r}")
        rules.append((weight, exist, lits))
    return preds, rules


def parse_atoms(path, evidence):
    out = []
    if not os.path.exists(path):
        return out
    for line in strip_comments(open(path, encoding="utf-8").read()):
        toks = tokens(line)
        if not toks:
            continue
        prior = None
        if evidence and re.fullmatch(r"-?\d+(\.\d+)?", toks[0]) and len(toks) > 1:
            prior = float(toks[0])
            toks = toks[1:]
        positive = toks[0] != "!"
        p = Parser(toks if positive else toks[1:])
        name, args = p.atom()
        out.append((name, tuple(args), positive, prior))
    return out


class Network:
    def __init__(self, case):
        self.preds, self.rules = parse_program(os.path.join(case, "prog.mln"))
        self.evidence = parse_atoms(os.path.join(case, "evidence.db"), True)
        self.queries = parse_atoms(os.path.join(case, "query.db"), False)
        self.domain = {}
        for _, _, lits in self.rules:
            for kind, _, pred, args in lits:
                if kind == "atom":
                    self.add(pred, args, lambda a: not is_var(a))
        for pred, args, _, _ in self.evidence + self.queries:
            self.add(pred, args, lambda a: not is_var(a))
        self.fixed, self.priors = {}, {}
        for pred, args, positive, prior in self.evidence:
            atom = (pred, tuple(const(a) for a in args))
            if prior is None or (prior if positive else 1 - prior) in (0.0, 1.0):
                truth = positive if prior is None else (prior if positive else 1 - prior) == 1.0
                self.fixed[atom] = truth
            else:
                self.priors[atom] = prior if positive else 1 - prior
        self.atoms, self.clauses = [], []   # clauses: (weight, [(atom index, positive)])
        self.index = {}
        self.ground()

    def add(self, pred, args, keep):
        types = self.preds[pred][0]
        if len(types) != len(args):
            raise SyntaxError(f"{pred} takes {len(types)} arguments, got {len(args)}")
        for t, a in zip(types, args):
            if keep(a):
                self.domain.setdefault(t, [])
                if const(a) not in self.domain[t]:
                    self.domain[t].append(const(a))

    def value(self, atom):
        """True/False where the atom is fixed, else its index."""
        if atom in self.fixed:
            return self.fixed[atom]
        if self.preds[atom[0]][1] and atom not in self.priors:
            return False   # closed world
        if atom not in self.index:
            self.index[atom] = len(self.atoms)
            self.atoms.append(atom)
        return self.index[atom]

    def var_types(self, lits):
        types = {}
        for kind, _, pred, args in lits:
            if kind == "atom":
                for t, a in zip(self.preds[pred][0], args):
                    if is_var(a):
                        types[a] = t
        return types

    def emit(self, weight, lits):
        """Adds a ground clause given as [(True/False/index, positive)]."""
        out = set()
        for v, pos in lits:
            if v is True or v is False:
                if v == pos:
                    return   # satisfied whatever the world
                continue
            out.add((v, pos))
        if not out:
            if weight is HARD:
                raise ValueError("a hard clause is violated by the evidence")
            return   # a constant
        self.clauses.append((weight, sorted(out)))

    def ground(self):
        for weight, exist, lits in self.rules:
            types = self.var_types(lits)
            free = sorted(v for v in types if v not in exist)
            for binding in itertools.product(*(self.domain[types[v]] for v in free)):
                env = dict(zip(free, binding))
                ground = []
                for ex in itertools.product(*(self.domain[types[v]] for v in exist)):
                    env.update(zip(exist, ex))
                    for kind, pos, a, b in lits:
                        val = (lambda t: env[t] if is_var(t) else const(t))
                        if kind == "cmp":
                            ground.append((val(a) == val(b), pos))
                        else:
                            ground.append((self.value((a, tuple(val(x) for x in b))), pos))
                self.emit(weight, ground)
        for atom, p in self.priors.items():
            self.emit(math.log(p / (1 - p)), [(self.value(atom), True)])
        for pred, (types, _, label) in self.preds.items():
            if label is None:
                continue
            keys = [self.domain.get(t, []) for k, t in enumerate(types) if k != label]
            for key in itertools.product(*keys):
                atoms = []
                for lab in self.domain.get(types[label], []):
                    args = list(key)
                    args.insert(label, lab)
                    atoms.append(self.value((pred, tuple(args))))
                self.emit(HARD, [(a, True) for a in atoms])                   # at least one
                for a, b in itertools.combinations(atoms, 2):
                    self.emit(HARD, [(a, False), (b, False)])                 # at most one
        for pred, args, _, _ in self.queries:   # every query atom is a variable or fixed
            types = self.preds[pred][0]
            if not args:
                args = ["v%d" % k for k in range(len(types))]
            vs = [a for a in args if is_var(a)]
            for binding in itertools.product(*(self.domain[types[args.index(v)]] for v in vs)):
                env = dict(zip(vs, binding))
                self.value((pred, tuple(env[a] if is_var(a) else const(a) for a in args)))

    def query_atoms(self):
        """The ground query atoms of open-world predicates (Tuffy reports no other)."""
        out = []
        for pred, args, _, _ in self.queries:
            if self.preds[pred][1]:
                continue
            types = self.preds[pred][0]
            if not args:
                args = ["v%d" % k for k in range(len(types))]
            for combo in itertools.product(*(self.domain[t] if is_var(a) else [const(a)] for t, a in zip(types, args))):
                if (pred, combo) not in out:
                    out.append((pred, combo))
        return out

    def components(self):
        parent = list(range(len(self.atoms)))

        def find(a):
            while parent[a] != a:
                parent[a] = parent[parent[a]]
                a = parent[a]
            return a
        for _, lits in self.clauses:
            for v, _ in lits[1:]:
                parent[find(v)] = find(lits[0][0])
        groups = {}
        for a in range(len(self.atoms)):
            groups.setdefault(find(a), []).append(a)
        return list(groups.values())


def solve(net, marginal, query_ids):
    """MAP: {atom: truth}, margin; marginal: {atom: P(true)}."""
    answer, margin = {}, math.inf
    for comp in net.components():
        if len(comp) > 22:
            raise ValueError(f"a component of {len(comp)} atoms is too large to enumerate")
        pos = {a: k for k, a in enumerate(comp)}
        clauses = [(w, [(pos[v], p) for v, p in lits]) for w, lits in net.clauses if lits[0][0] in pos]
        scores = []
        for state in range(1 << len(comp)):
            s, ok = 0.0, True
            for w, lits in clauses:
                sat = any(((state >> k) & 1) == p for k, p in lits)
                if w is HARD:
                    if not sat:
                        ok = False
                        break
                elif sat:
                    s += w
            scores.append(s if ok else None)
        valid = [(s, st) for st, s in enumerate(scores) if s is not None]
        if not valid:
            raise ValueError("the hard clauses cannot all hold")
        best = max(s for s, _ in valid)
        if marginal:
            z = sum(math.exp(s - best) for s, _ in valid)
            for k, a in enumerate(comp):
                answer[a] = sum(math.exp(s - best) for s, st in valid if (st >> k) & 1) / z
            continue
        qk = [k for k, a in enumerate(comp) if a in query_ids]
        best_states = [st for s, st in valid if s >= best - 1e-9]
        key = lambda st: tuple((st >> k) & 1 for k in qk)
        if len({key(st) for st in best_states}) > 1:
            margin = 0.0
        top = key(best_states[0])
        others = [s for s, st in valid if key(st) != top]
        if others:
            margin = min(margin, best - max(others))
        for k, a in enumerate(comp):
            answer[a] = (best_states[0] >> k) & 1
    return answer, margin


def fmt(atom):
    args = [a if a[:1].isdigit() and " " not in a else '"' + a.replace("\\", "\\\\").replace('"', '\\"') + '"' for a in atom[1]]
    return f"{atom[0]}({', '.join(args)})"


def main():
    case = sys.argv[1]
    flags = open(os.path.join(case, "flags")).read().split() if os.path.exists(os.path.join(case, "flags")) else []
    marginal = "-marginal" in flags
    net = Network(case)
    queries = net.query_atoms()
    query_ids = {net.index[a] for a in queries if a in net.index}
    answer, margin = solve(net, marginal, query_ids)
    lines = []
    for a in queries:
        if marginal:
            if a in net.index:   # open atoms only: Tuffy prints no hard evidence
                lines.append(f"{answer[net.index[a]]:.6f}\t{fmt(a)}")
        elif (net.fixed.get(a) is True) or (a in net.index and answer[net.index[a]]):
            lines.append(fmt(a))
    lines.sort()
    text = "".join(line + "\n" for line in lines)
    sys.stdout.write(text)
    print(f"{os.path.basename(case)}: {len(net.atoms)} open atoms, {len(net.clauses)} ground clauses" +
          ("" if marginal else f", MAP margin {margin:.4f}"), file=sys.stderr)
    if "--check" in sys.argv:
        bad = not marginal and margin <= 1e-6
        if bad:
            print("  the MAP optimum is not unique on the query atoms", file=sys.stderr)
        if open(os.path.join(case, "expected.tsv"), encoding="utf-8").read() != text:
            print("  expected.tsv differs from this", file=sys.stderr)
            bad = True
        sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
