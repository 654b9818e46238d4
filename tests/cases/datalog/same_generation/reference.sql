-- sg
WITH RECURSIVE sg(x, y) AS (
  SELECT a.c1, b.c1 FROM parent a JOIN parent b ON a.c2 = b.c2 WHERE a.c1 <> b.c1
  UNION SELECT a.c1, b.c1 FROM sg JOIN parent a ON a.c2 = sg.x JOIN parent b ON b.c2 = sg.y)
SELECT x, y FROM sg;
