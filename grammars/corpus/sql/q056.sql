SELECT name users
