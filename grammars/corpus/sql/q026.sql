SELECT t.a FROM t WHERE t.b = 'x' AND (t.c = 1 OR t.d = 2)
