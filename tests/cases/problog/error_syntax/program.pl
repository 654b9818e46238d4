0.1::burglary.
0.9::alarm :- burglary
query(alarm).
