SELECT (name FROM users
