-- reach
WITH RECURSIVE reach(x) AS (SELECT c1 FROM start UNION SELECT e.c2 FROM reach r JOIN edge e ON e.c1 = r.x)
SELECT x FROM reach;
-- unreached
WITH RECURSIVE reach(x) AS (SELECT c1 FROM start UNION SELECT e.c2 FROM reach r JOIN edge e ON e.c1 = r.x)
SELECT c1 FROM node WHERE c1 NOT IN (SELECT x FROM reach);
-- apart
WITH RECURSIVE reach(x) AS (SELECT c1 FROM start UNION SELECT e.c2 FROM reach r JOIN edge e ON e.c1 = r.x),
  u(x) AS (SELECT c1 FROM node WHERE c1 NOT IN (SELECT x FROM reach))
SELECT a.x, b.x FROM u a, u b WHERE a.x < b.x
  AND NOT EXISTS (SELECT 1 FROM edge WHERE (c1 = a.x AND c2 = b.x) OR (c1 = b.x AND c2 = a.x));
-- no_out
SELECT c1 FROM node WHERE c1 NOT IN (SELECT c1 FROM edge);
