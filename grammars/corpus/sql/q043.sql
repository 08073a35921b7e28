SELECT a.id FROM a, b WHERE a.id = b.id
