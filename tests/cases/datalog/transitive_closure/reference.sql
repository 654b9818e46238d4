-- path
WITH RECURSIVE path(src, dst) AS (
  SELECT c1, c2 FROM edge
  UNION SELECT p.src, e.c2 FROM path p JOIN edge e ON p.dst = e.c1)
SELECT src, dst FROM path;
