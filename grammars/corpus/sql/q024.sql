select lower(name) from users where id = 7
