-- path
WITH RECURSIVE path(s, d) AS (SELECT c1, c2 FROM edge UNION SELECT p.s, e.c2 FROM path p JOIN edge e ON e.c1 = p.d)
SELECT s, d FROM path;
-- cyclic
WITH RECURSIVE path(s, d) AS (SELECT c1, c2 FROM edge UNION SELECT p.s, e.c2 FROM path p JOIN edge e ON e.c1 = p.d)
SELECT s FROM path WHERE s = d;
-- allowed
WITH RECURSIVE path(s, d) AS (SELECT c1, c2 FROM edge UNION SELECT p.s, e.c2 FROM path p JOIN edge e ON e.c1 = p.d)
SELECT s, d FROM path WHERE s NOT IN (SELECT c1 FROM banned);
-- blocked
WITH RECURSIVE path(s, d) AS (SELECT c1, c2 FROM edge UNION SELECT p.s, e.c2 FROM path p JOIN edge e ON e.c1 = p.d)
SELECT DISTINCT c1 FROM banned JOIN path ON path.s = banned.c1;
