SELECT name FROM users WHERE NOT active = 1
