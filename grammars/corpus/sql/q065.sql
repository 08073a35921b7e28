SELEC name FROM users
