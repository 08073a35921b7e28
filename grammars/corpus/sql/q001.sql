SELECT id, name FROM users WHERE age > 30
