SELECT name FROM pets WHERE weight / 2 > 10
