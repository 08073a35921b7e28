SELECT name FROM products WHERE category IN ('toys', 'games')
