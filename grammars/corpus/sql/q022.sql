SELECT price - discount AS net FROM sales ORDER BY net LIMIT 5 OFFSET 10
