SELECT coalesce(nickname, name) FROM users
