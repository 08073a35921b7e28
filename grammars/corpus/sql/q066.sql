SELECT name FROM users JOIN ON x = y
