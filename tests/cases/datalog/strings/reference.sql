-- same_city
SELECT a.c1, b.c1 FROM person a JOIN person b ON a.c2 = b.c2 WHERE a.c1 <> b.c1;
-- parisian
SELECT c1 FROM person WHERE c2 = 'Paris';
-- not_rome
SELECT c1 FROM person WHERE c2 <> 'Rome';
-- label
SELECT c1, 'it''s', 'a''b' FROM person WHERE c2 = 'Berlin';
-- big
SELECT p.c1 FROM person p JOIN pop ON pop.c1 = p.c2 WHERE pop.c2 > 3000000;
